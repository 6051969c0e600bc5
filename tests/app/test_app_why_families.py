"""The "Why this word?" page on a T5 folder and a GPT-2 folder (tiny random checkpoints written by
transformers, offered through $ANATOMY_MODELS): every analysis shows, nothing fails, and what does
not apply to a decoder-only model says why."""

from __future__ import annotations

import re

import pytest
from hf_fixtures import make_gpt2_dir, make_t5_dir
from test_analysis_families import GPT2_SHARPEN, T5_SHARPEN
from test_app import assert_clean, chart_titled, run
from test_app_models import texts
from test_families import _sharpen

from model import load_bundle

PAGE = "pages/8_why.py"
SENTENCE = "The small girl sees a white bird."
DONOR = "The small bird sees a white girl."  # as many pieces in both tiny vocabularies
METHOD_LINES = ["attention", "rollout", "gradient", "integrated-gradients", "occlusion"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {
        "t5": _sharpen(make_t5_dir(root / "t5-tiny", variant="t5", seed=1), T5_SHARPEN),
        "gpt2": _sharpen(make_gpt2_dir(root / "gpt2-tiny"), GPT2_SHARPEN),
    }


@pytest.fixture(autouse=True)
def models_env(folders, monkeypatch):
    monkeypatch.setenv("ANATOMY_MODELS", ":".join(str(path) for path in folders.values()))


def _method_lines(at) -> list[str]:
    shaded = next(m.value for m in at.markdown if "<span title=" in m.value)
    return re.findall(r"<b style=\"min-width:[\d.]+em\">([^<]+)</b>", shaded)


def _piece_on_show(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("#### "))


def _roles(at):
    return next(frame.value for frame in at.dataframe if "role" in frame.value.columns)


def test_the_page_explains_a_t5_translation_source_prefix_included():
    at = run(PAGE, {"model": "t5-tiny", "sentence": SENTENCE, "donor": DONOR, "step": "2"})
    assert_clean(at)
    assert _piece_on_show(at).startswith("#### Output piece 2,")
    assert _method_lines(at) == METHOD_LINES
    words = texts(at)
    assert "task prefix" in words and "translate English to French:" in words
    assert "start from the padding piece's embedding" in words and "positions are a bias" in words
    assert "rescale by 1/√d_model" in words  # the tied t5 head: the lens goes through project()
    table = chart_titled(at, "Attribution: occlusion")
    assert table["layout"]["xaxis"]["title"]["text"].startswith("source piece")
    lens = at.dataframe[0].value
    assert list(lens.index) == ["layer 1", "layer 2"] and lens.iloc[-1, 0].startswith("✓")
    grid = chart_titled(at, "Output piece 2")
    assert list(grid["data"][0]["y"]) == ["source embeddings", "encoder layer 1", "encoder layer 2", "encoder memory"]
    assert any(m.value.startswith("The biggest change") for m in at.markdown)
    assert any(m.value.startswith("> ") for m in at.markdown)  # the translation under the biggest patch
    roles = _roles(at)
    assert set(roles["block"]) == {"encoder self", "decoder self", "decoder cross"}


def test_the_page_explains_a_gpt2_continuation_over_its_prompt(folders):
    at = run(PAGE, {"model": "gpt2-tiny", "sentence": SENTENCE, "donor": DONOR})
    assert_clean(at)
    assert at.title[0].value == "Why this word?"
    assert _piece_on_show(at).startswith("#### New piece 1,")
    assert _method_lines(at) == METHOD_LINES
    words = texts(at)
    assert "Continuation" in words and "decoder-only" in words and "no cross-attention" in words
    shaded = next(m.value for m in at.markdown if "<span title=" in m.value)
    prompt = load_bundle(folders["gpt2"]).tokenizer.encode_source(SENTENCE)
    subscript = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")  # each piece's position, after it (viz.labels.at_position)
    shaded_positions = {int(i.translate(subscript)) for i in re.findall(r'<span title="[^"]*?([₀-₉]+): ', shaded)}
    assert shaded_positions == set(range(len(prompt)))  # every method shades the prompt's pieces
    grid = chart_titled(at, "New piece 1")
    assert list(grid["data"][0]["y"]) == ["prompt embeddings", "decoder layer 1", "decoder layer 2"]
    assert grid["layout"]["xaxis"]["title"]["text"].startswith("prompt position")
    assert any(m.value.startswith("The biggest change") for m in at.markdown)
    assert any("continued with that one activation" in m.value for m in at.markdown)
    lens = at.dataframe[0].value
    assert list(lens.index) == ["layer 1", "layer 2"] and lens.iloc[-1, 0].startswith("✓")
    roles = _roles(at)
    assert set(roles["block"]) == {"decoder self"} and "last" not in roles.columns and "alignment" not in roles.columns
    assert "no alignment with a gold word alignment" in words and "no encoder heads" in words


def test_a_gpt2_prompt_patched_with_itself_changes_nothing():
    at = run(PAGE, {"model": "gpt2-tiny", "sentence": SENTENCE, "donor": SENTENCE, "step": "3"})
    assert_clean(at)
    assert _piece_on_show(at).startswith("#### New piece 3,")
    assert any("No single position changes the piece" in c.value for c in at.caption)


def test_at_a_costly_size_the_piece_on_show_gets_the_costly_methods_when_asked(monkeypatch):
    """Integrated gradients and occlusion of one piece take seconds at a real GPT-2's size: above the
    page's eager work (0 here stands in for that size), they wait for a button; the rest show at once."""
    monkeypatch.setattr("ui.page.ondemand.EAGER_WORK", 0.0)
    at = run(PAGE, {"model": "gpt2-tiny", "sentence": "The old man reads a book.", "donor": DONOR})  # none cached
    assert_clean(at)
    assert _method_lines(at) == ["attention", "rollout"]
    assert "cost more than this page computes unasked" in texts(at)
    at.button(key="why-costly-methods").click().run()
    assert_clean(at)
    assert _method_lines(at) == METHOD_LINES


def test_at_a_costly_size_the_lens_of_every_piece_waits_for_its_button(monkeypatch):
    """Every new piece's lens projects each layer x piece onto the whole vocabulary: at a real size (EAGER_WORK
    0 stands in for it) the table of the piece on show comes at once, the same as the whole lens's, and the
    heatmap over every piece waits for its button."""
    monkeypatch.setattr("ui.page.ondemand.EAGER_WORK", 0.0)
    params = {"model": "gpt2-tiny", "sentence": "A small bird sees the old man.", "donor": DONOR, "step": "2"}
    at = run(PAGE, params)
    assert_clean(at)
    alone = at.dataframe[0].value
    assert list(alone.index) == ["layer 1", "layer 2"] and alone.iloc[-1, 0].startswith("✓")
    assert not any(c.key == "lens" for c in at.get("plotly_chart"))
    assert "computed when you ask" in texts(at)
    at.button(key="why-lens-all").click().run()
    assert_clean(at)
    assert any(c.key == "lens" for c in at.get("plotly_chart"))
    assert at.dataframe[0].value.equals(alone)

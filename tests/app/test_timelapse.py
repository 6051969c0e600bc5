"""The Training page's time-lapse: a step slider over the snapshots of a checkpoint trained with
--snapshots, the scores of each snapshot, the play button, and what it says when there are none."""

from __future__ import annotations

import re

import pytest
from test_app import assert_clean, charts, run

from model import load_bundle

pytestmark = pytest.mark.slow
PAGE = "pages/7_training.py"
SENTENCE = "The cat sees the dog."


@pytest.fixture(scope="module")
def snapshots_checkpoint(trained_tiny, monkeypatch_module):
    """The shared scored `tiny` run with four snapshots (conftest.trained_tiny), opened by the app."""
    checkpoint = trained_tiny[0] / "ckpt"
    monkeypatch_module.setenv("ANATOMY_CHECKPOINT", str(checkpoint))
    return checkpoint


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def step_on_show(at) -> int:
    caption = next(c.value for c in at.caption if c.value.startswith("At step "))
    return int(re.match(r"At step ([\d,]+)", caption).group(1).replace(",", ""))


def snapshot_translation(at) -> str:
    return [m.value for m in at.markdown if m.value.startswith("<div style='font-size")][0]


def button(at, label: str):
    return next(b for b in at.button if b.label == label)


def test_the_slider_runs_the_sentence_through_each_snapshot(snapshots_checkpoint):
    steps = load_bundle(snapshots_checkpoint).snapshots
    assert len(steps) == 4
    at = run(PAGE, {"sentence": SENTENCE})
    assert_clean(at)
    slider = at.select_slider(key="w_snapshot")
    assert slider.options == [f"{step:,}" for step in steps], "the slider names the training steps"
    assert step_on_show(at) == steps[-1], "the last snapshot (the final weights) first"
    last = snapshot_translation(at)
    at.select_slider(key="w_snapshot").set_value(1).run()
    assert_clean(at)
    assert step_on_show(at) == steps[0]
    assert at.query_params["snapshot"] in ("1", ["1"])
    assert snapshot_translation(at) != last, "the first snapshot translates differently from the final weights"
    views = [spec for spec in charts(at) if "Cross-attention at step" in spec["layout"]["title"]["text"]]
    assert views and f"step {steps[0]:,}" in views[0]["layout"]["title"]["text"]


def test_the_curves_mark_the_step_on_show(snapshots_checkpoint):
    steps = load_bundle(snapshots_checkpoint).snapshots
    at = run(PAGE, {"sentence": SENTENCE, "snapshot": "2"})
    curves = next(spec for spec in charts(at) if spec["layout"]["title"]["text"] == "Scores of every snapshot")
    assert [trace["x"] for trace in curves["data"]][0] == steps
    assert {trace["name"] for trace in curves["data"]} == {
        "best head agrees with the alignment",
        "test exact match",
        "test BLEU",
    }
    [line] = curves["layout"]["shapes"]
    assert line["x0"] == steps[1] == line["x1"]


def test_play_runs_the_time_lapse_from_the_first_snapshot_to_the_last(snapshots_checkpoint):
    steps = load_bundle(snapshots_checkpoint).snapshots
    at = run(PAGE, {"sentence": SENTENCE})
    button(at, "Play the time-lapse").click().run()
    assert_clean(at)
    assert step_on_show(at) == steps[0]
    shown = [(s.key, s.disabled) for s in at.select_slider if s.key.startswith("w_snapshot")]
    assert shown == [("w_snapshot_at_1", True), ("w_snapshot", True)], "a read-only copy, the bound one kept under it"
    at.run()  # what the timer does every second
    assert step_on_show(at) == steps[1]
    button(at, "Pause").click().run()
    at.run()
    assert step_on_show(at) == steps[1], "paused: no step forward"
    button(at, "Resume").click().run()
    for _ in range(4):
        at.run()
    assert_clean(at)
    assert step_on_show(at) == steps[-1]
    assert any(b.label == "Play the time-lapse" for b in at.button), "stopped by itself at the last snapshot"
    assert any(b.label == "Play decoding" for b in run("pages/2_attention.py").button), (
        "the decoding player is another player"
    )


def test_a_checkpoint_without_snapshots_says_how_to_keep_them(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))
    at = run(PAGE)
    assert_clean(at)
    assert any("keeps no training snapshots" in info.value and "--snapshots" in info.value for info in at.info)
    assert not at.get("select_slider")

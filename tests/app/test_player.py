"""The play button: decoding steps itself forward on the Attention and Translate pages (AppTest
reruns stand in for the one-second timer; the browser test lets the timer run)."""

from __future__ import annotations

import re

from test_app import assert_clean, charts, run


def step_shown(at) -> int:
    """The step the Attention page says it shows."""
    for markdown in at.markdown:
        match = re.search(r"Step \*\*t = (\d+)\*\* of (\d+)", markdown.value)
        if match:
            return int(match.group(1))
    raise AssertionError("no step line on the page")


def button(at, label: str):
    return next(b for b in at.button if b.label == label)


def test_attention_page_plays_pauses_and_resumes():
    at = run("pages/2_attention.py", {"step": "4"})
    assert_clean(at)
    assert step_shown(at) == 4
    button(at, "Play decoding").click().run()  # goes on from the step on show
    assert_clean(at)
    assert step_shown(at) == 5
    for expected in (6, 7):
        at.run()  # what the timer does every second
        assert step_shown(at) == expected
        sliders = [(s.key, s.value, s.disabled) for s in at.slider if s.key.startswith("w_step")]
        # a copy shows the step, read-only; the bound slider stays under it, hidden (ui/page/binding.py)
        assert sliders == [(f"w_step_at_{expected}", expected, True), ("w_step", expected, True)], sliders
    assert at.query_params["step"] in ("7", ["7"])
    highlighted = [spec for spec in charts(at) if spec["layout"].get("shapes")]
    assert highlighted, "the produced row is outlined in the decoder plots"
    button(at, "Pause").click().run()
    assert step_shown(at) == 7
    at.run()
    assert step_shown(at) == 7, "paused: no step forward"
    # at rest, a slider of a new key: the browser's late reports of the one the play moved cannot move it back
    sliders = [(s.key, s.value, s.disabled) for s in at.slider if s.key.startswith("w_step")]
    assert sliders == [("w_step_1", 7, False)], sliders
    button(at, "Resume").click().run()
    assert step_shown(at) == 8
    button(at, "Pause").click().run()
    assert [s.key for s in at.slider if s.key.startswith("w_step")] == ["w_step_2"]
    at.slider(key="w_step_2").set_value(3).run()  # a person's change at rest still moves the step
    assert step_shown(at) == 3


def test_play_on_the_last_step_starts_over():
    at = run("pages/2_attention.py", {"sentence": "The cat eats the apple."})
    n_steps = int(re.search(r"of (\d+)", next(m.value for m in at.markdown if "Step **t" in m.value)).group(1))
    at = run("pages/2_attention.py", {"sentence": "The cat eats the apple.", "step": str(n_steps)})
    assert step_shown(at) == n_steps
    button(at, "Play decoding").click().run()
    assert step_shown(at) == 1


def test_playing_to_the_end_stops_on_the_last_step():
    at = run("pages/2_attention.py", {"sentence": "The cat eats the apple."})
    n_steps = int(re.search(r"of (\d+)", next(m.value for m in at.markdown if "Step **t" in m.value)).group(1))
    button(at, "Play decoding").click().run()
    for _ in range(n_steps + 2):
        at.run()
    assert_clean(at)
    assert step_shown(at) == n_steps
    assert any(b.label == "Play decoding" for b in at.button)  # stopped by itself, ready to play again


def test_translate_page_builds_the_output_piece_by_piece():
    at = run("pages/1_translate.py", {"sentence": "The small girl sees a white bird."})
    full = [m.value for m in at.markdown if m.value.startswith("<div style='font-size")][0]
    rows = len(charts(at)[0]["data"][0]["z"]) if isinstance(charts(at)[0]["data"][0]["z"], list) else None
    button(at, "Play decoding").click().run()
    assert_clean(at)
    assert any("step t = 1 of" in c.value for c in at.caption)
    partial = [m.value for m in at.markdown if m.value.startswith("<div style='font-size")][0]
    assert partial != full and "…" in partial
    steps = charts(at)[0]
    assert steps["layout"]["shapes"], "the step being produced is outlined"
    at.run()
    assert any("step t = 2 of" in c.value for c in at.caption)
    button(at, "Pause").click().run()
    button(at, "Show the whole output").click().run()
    assert [m.value for m in at.markdown if m.value.startswith("<div style='font-size")][0] == full
    assert rows is None or len(charts(at)[0]["data"][0]["z"]) == rows


def test_translate_page_shows_the_grammar_reference_or_says_the_sentence_is_outside_the_language():
    at = run("pages/1_translate.py", {"sentence": "The small girl sees a white bird."})
    assert_clean(at)
    reference = next(m.value for m in at.markdown if m.value.startswith("**Reference**"))
    assert "La petite fille voit un oiseau blanc" in reference.replace("\\", "")
    at = run("pages/1_translate.py", {"sentence": "the boy and the girl read a book in the kitchen"})
    assert_clean(at)
    assert any("outside the language the model was trained on" in w.value and "guess" in w.value for w in at.warning)
    assert not any(m.value.startswith("**Reference**") for m in at.markdown)

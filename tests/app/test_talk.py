"""A talk given in the app (ui/page/talk.py), run as the browser runs it, from app.py: its address opens its first
view under a bar; the keys step through a view's Play steps, then on to the next view and back; each view opens as
its file says; the address of any moment reproduces it; the next view is prepared while one is shown; the notes
window follows the projector; a view added in the app reads back from the talk's file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app import TIMEOUT, assert_clean

from ui.page import talk, talk_editor
from views.talks import dump, parse

ROOT = Path(__file__).resolve().parents[2]
WAIT = 120.0  # seconds: a bound only a broken test reaches

FOUR = """
[talk]
title = "Four views"
title_zh = "四个视图"

[talk.controls]
sentence = "The cat eats the apple."

[[view]]
page = "translate"
title = "Writing it"
title_zh = "逐步写出"
note = "Press through the steps."
note_zh = "一步步按下去。"

[view.controls]
step = 1

[[view]]
page = "translate"
title = "Without positions"
note = "Ask first."
steps = false

[view.controls]
pe = "off"

[[view]]
page = "attention"
title = "Encoder heads"
steps = false

[view.controls]
view = "enc-self"
layer = 2
head = 3

[[view]]
page = "positional_encoding"
title = "Sinusoids"
"""


@pytest.fixture
def four(tmp_path, monkeypatch, shipped_model) -> str:
    (tmp_path / "four.toml").write_text(FOUR, encoding="utf-8")
    monkeypatch.setattr(talk, "TALKS_DIR", tmp_path)
    monkeypatch.setenv("ANATOMY_ROOMS_DIR", str(tmp_path / "rooms"))
    return "four"


def opened(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def bar_line(at: AppTest) -> str:
    return next((m.value for m in at.markdown if " · " in m.value and " / " in m.value), "")


def bar(at: AppTest) -> str:
    """Where the talk stands, without what the bar says is switched."""
    return bar_line(at).split(" · :orange[")[0]


def press(at: AppTest, key: str = "talk-pagedown") -> AppTest:
    at.button(key=key).click()
    return at.run()


def test_a_talk_s_address_opens_its_first_view_under_its_bar(four):
    at = opened({"talk": four})
    assert_clean(at)
    assert bar(at) == "1 / 4 · Writing it"
    assert at.query_params["talk"] == "four" and at.query_params["at"] == "1"
    assert at.query_params["present"] == "on", "a talk is given in presentation mode"
    assert at.query_params["sentence"] == "The cat eats the apple."


def test_presses_step_through_play_then_move_on_and_back(four):
    at = opened({"talk": four})
    steps = []
    while bar(at).startswith("1 /"):
        steps.append(at.query_params["step"])
        at = press(at)
        assert_clean(at)
        assert len(steps) < 60, "never moved on"
    # the first press shows the step on show, played so far; then one step a press; then the next view
    assert steps[0] == steps[1] == "1" and steps[1:] == [str(k) for k in range(1, len(steps))]
    assert bar(at) == "2 / 4 · Without positions" and at.query_params["pe"] == "off"
    assert bar_line(at).endswith(":orange[not as trained: positional encoding is off]"), "the bar says it"
    assert not [w for w in at.warning if "Not the model as trained" in w.value], "not the banner: it takes the room"
    at = press(at)  # a view without steps: a press moves on at once
    assert bar(at) == "3 / 4 · Encoder heads"
    at = press(at, "talk-pageup")
    assert bar(at) == "2 / 4 · Without positions"
    at = press(at, "talk-left")
    assert bar(at).startswith("1 / 4"), "the arrow keys move as the clicker's keys do"
    at = press(at, "talk-pageup")  # at the first view's first step: nothing before it
    assert bar(at).startswith("1 / 4")


def test_each_view_opens_as_its_file_says_whatever_the_one_before_changed(four):
    at = opened({"talk": four, "at": "2"})
    assert at.query_params["pe"] == "off"
    at.sidebar.toggle(key="w_causal").set_value(False).run()  # the lecturer changes a control on view 2
    assert at.query_params["causal"] == "off"
    at = press(at)
    assert bar(at) == "3 / 4 · Encoder heads"
    assert at.query_params["pe"] == "on", "view 3 has its positions: the switch of view 2 did not follow"
    assert at.query_params["causal"] == "on", "nor did the lecturer's change on view 2"
    assert at.query_params["layer"] == "2" and at.query_params["head"] == "3"
    assert at.query_params["view"] == "enc-self"
    assert_clean(at)


def test_the_address_of_a_moment_reproduces_it(four):
    at = opened({"talk": four})
    for _ in range(4):
        at = press(at)
    moment = {key: at.query_params[key] for key in at.query_params}
    assert moment["step"] == "4" and moment["at"] == "1" and moment["played"] == "on"
    again = opened(moment)
    assert bar(again) == bar(at)
    assert {key: again.query_params[key] for key in again.query_params} == moment
    assert [m.value for m in again.markdown if "apple" in m.value or "pomme" in m.value] == [
        m.value for m in at.markdown if "apple" in m.value or "pomme" in m.value
    ]


def test_a_talk_that_is_not_there_says_so_and_the_page_works(four):
    at = opened({"talk": "nothing-here", "sentence": "The cat eats the apple."})
    assert_clean(at)
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "no talk 'nothing-here' under talks/" in said and "four" in said
    assert bar(at) == "" and "talk" not in at.query_params
    at = opened({"talk": "../etc/passwd"})
    assert "A talk's name is its file's name" in " ".join(w.value for w in at.warning)


def test_the_next_view_is_prepared_while_one_is_shown(four):
    from model import Interventions
    from model.engine.interventions import DecodeOptions
    from ui.session import engine
    from ui.session.cache import RESULTS

    bundle = engine.get_bundle(engine.checkpoint_path())
    no_positions = Interventions(positional_encoding=False)
    sentence = "The cat eats the apple."
    RESULTS.clear()  # another test may have translated it already
    at = opened({"talk": four, "at": "1", "sentence": sentence, "step": "1"})
    assert_clean(at)
    end = time.monotonic() + WAIT
    while not engine.in_cache(bundle, sentence, no_positions, DecodeOptions()):
        assert time.monotonic() < end, "view 2's translation was never prepared"
        time.sleep(0.05)


def test_the_notes_window_follows_the_projector_in_its_language(four):
    projector = opened({"talk": four})
    token = projector.session_state[talk.SESSION].cue
    notes = opened({"notes": "on", "cue": token, "lang": "zh"})
    assert_clean(notes)
    said = " ".join(m.value for m in notes.markdown)
    assert "1 / 4 · 逐步写出" in said and "一步步按下去。" in said
    assert "Without positions" in " ".join(c.value for c in notes.caption), "the next view's title"
    assert not notes.get("plotly_chart"), "the notes window draws no page"
    projector = press(projector, "talk-on")  # the bar's own button moves on as a press does, after the steps
    while bar(projector).startswith("1 /"):
        projector = press(projector, "talk-on")
    notes.run()
    said = " ".join(m.value for m in notes.markdown)
    assert "2 / 4 · Without positions" in said and "Ask first." in said
    stranger = opened({"notes": "on", "cue": "not-a-cue"})
    assert "Open the notes from the projector's sidebar" in " ".join(i.value for i in stranger.info)


def test_a_view_added_in_the_app_reads_back_from_the_talk_s_file(four):
    at = opened({"sentence": "The cat eats the apple.", "pe": "off", "layer": "2"})
    at.button(key="talk-add").click().run()
    made = at.session_state[talk_editor.DRAFT]
    assert len(made.views) == 1
    view = made.views[0]
    assert view.page == "translate"
    assert view.controls == {"sentence": "The cat eats the apple.", "layer": "2", "pe": "off"}
    again = parse(dump(made))
    assert again == made
    at.button(key="talk-give").click().run()
    assert bar(at) == "1 / 1 · Translate"
    assert at.query_params["talk"].startswith("@"), "a talk made here is named by its saved file"
    moment = {key: at.query_params[key] for key in at.query_params}
    assert bar(opened(moment)) == "1 / 1 · Translate", "its address reproduces it"


@pytest.mark.slow
def test_the_shipped_talk_runs_view_after_view_with_the_keys_alone(shipped_model):
    at = opened({"talk": "transformer-in-20-views"})
    seen = []
    for _ in range(200):
        assert_clean(at)
        where = bar(at)
        if not seen or seen[-1] != where:
            seen.append(where)
        if where.startswith("20 / 20") and at.query_params.get("played") == "on":
            break
        at = press(at)
    assert [title.split(" · ")[0] for title in seen] == [f"{k} / 20" for k in range(1, 21)]


@pytest.mark.slow
def test_every_view_of_the_shipped_talk_opens_in_chinese(shipped_model):
    """Each view by its own address (AppTest cannot press a button on a page drawn in Chinese: its selectboxes
    look their English value up among the Chinese options; the browser test presses through it)."""
    for at_view in range(1, 21):
        at = opened({"talk": "transformer-in-20-views", "at": str(at_view), "lang": "zh"})
        assert_clean(at)
        assert bar(at).startswith(f"{at_view} / 20 · ")
        assert at.query_params["lang"] == "zh"
    assert bar(opened({"talk": "transformer-in-20-views", "lang": "zh"})) == "1 / 20 · 输入一句英语，输出一句法语"


def test_the_talk_being_made_is_retitled_annotated_moved_and_cut_in_its_editor(four):
    at = opened({"sentence": "The cat eats the apple."})
    at.button(key="talk-add").click().run()
    at.sidebar.toggle(key="w_causal").set_value(False).run()
    at.button(key="talk-add").click().run()

    def edit() -> None:  # AppTest reruns the whole page after a change in the dialog, which closes it: open it again
        at.button(key="talk-edit").click().run()

    edit()
    at.text_input(key="talk-title-1-en").input("Without the mask").run()
    edit()
    at.text_area(key="talk-note-1-en").input("Ask what changes.").run()
    edit()
    at.button(key="talk-up-1").click().run()
    made = at.session_state[talk_editor.DRAFT]
    assert [view.titles["en"] for view in made.views] == ["Without the mask", "Translate"]
    assert made.views[0].notes == {"en": "Ask what changes."} and made.views[0].controls["causal"] == "off"
    assert "causal" not in made.views[1].controls
    assert parse(dump(made)) == made
    edit()
    at.button(key="talk-drop-0").click().run()
    assert [view.titles["en"] for view in at.session_state[talk_editor.DRAFT].views] == ["Translate"]
    assert_clean(at)


@pytest.mark.parametrize(
    "given, seconds",
    [
        ("", talk.FIRST_PAUSE),
        ("0", 0.0),
        ("0.2", 0.2),
        ("-1", 0.0),
        ("9", 1.0),
        ("nan", talk.FIRST_PAUSE),
        ("soon", talk.FIRST_PAUSE),
    ],
)
def test_the_pause_after_a_talk_view_s_first_picture_is_bounded_whatever_the_environment_says(
    monkeypatch, given, seconds
):
    if given:
        monkeypatch.setenv(talk.PAUSE_ENV, given)
    else:
        monkeypatch.delenv(talk.PAUSE_ENV, raising=False)
    assert talk.first_pause() == pytest.approx(seconds)

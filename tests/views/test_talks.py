"""A talk's file (views/talks.py): read, written and read again to the same talk; a bad file refused in one
sentence that names the view; the shipped talk valid on the models of the menu."""

from __future__ import annotations

from pathlib import Path

import pytest

from views.models import menu_models
from views.talks import TALK_KEYS, Talk, TalkError, View, dump, parse

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "talks" / "transformer-in-20-views.toml"

GOOD = '''
[talk]
title = "Two views"
title_zh = "两个视图"

[talk.controls]
sentence = "The cat eats the apple."

[[view]]
page = "attention"
title = "Cross-attention at step 3"
note = """Ask where "mange" looks.
Then press on."""
note_zh = "问大家：“mange”在看哪里？"

[view.controls]
view = "dec-cross"
step = 3
causal = false
layer = 2

[[view]]
page = "positional_encoding"
title = "Sinusoids"
steps = false

[view.controls]
sentence = "Quotes \\" and \\\\ and a tab\\t, 中文, and é."
'''


def test_a_talk_reads_as_its_views_with_the_talks_controls_and_their_own():
    talk = parse(GOOD)
    assert talk.title("zh") == "两个视图" and len(talk.views) == 2
    first, second = talk.views
    assert first.page == "attention"
    assert first.controls == {
        "sentence": "The cat eats the apple.",
        "view": "dec-cross",
        "step": "3",
        "causal": "off",
        "layer": "2",
    }
    assert first.steps and not second.steps
    assert second.controls["sentence"] == 'Quotes " and \\ and a tab\t, 中文, and é.'
    assert first.note("en").startswith("Ask where") and first.note("zh").startswith("问大家")
    assert second.note("zh") == "" and second.title("zh") == "Sinusoids"  # English where Chinese is not given


def test_a_talk_written_and_read_again_is_the_same_talk():
    talk = parse(GOOD)
    again = parse(dump(talk))
    assert again == talk
    assert parse(dump(again)) == again


def test_odd_text_survives_the_round_trip():
    odd = "a\x7fb \x00c \"d\" 'e' \\f \n g \u2028 h 😀"
    view = View("translate", {"sentence": "x"}, {"en": odd}, {"en": odd, "zh": odd}, True)
    made = Talk({"en": odd.strip()}, (view,))
    assert parse(dump(made)).views[0].titles["en"] == odd.strip()
    assert parse(dump(made)).views[0].notes["zh"] == odd.strip()


def _views(*tables: str) -> str:
    return '[talk]\ntitle = "T"\n' + "".join(f"\n[[view]]\n{table}\n" for table in tables)


@pytest.mark.parametrize(
    "text, said",
    [
        (_views('page = "atention"\ntitle = "Heads"'), "View 1 (“Heads”): no page 'atention'"),
        (
            _views('page = "attention"\ntitle = "A"', 'page = "attention"\ntitle = "B"\n[view.controls]\nhed = 2'),
            "View 2 (“B”): no control hed on this page",
        ),
        (
            _views('page = "attention"\ntitle = "A"\n[view.controls]\nstep = "three"'),
            "View 1 (“A”): step = 'three' is refused (expected a whole number",
        ),
        (
            _views('page = "attention"\ntitle = "A"\n[view.controls]\ncausal = "maybe"'),
            "View 1 (“A”): causal = 'maybe'",
        ),
        (_views('page = "attention"\ntitle = "A"\n[view.controls]\nmodel = "gpt-9"'), "View 1 (“A”): no model 'gpt-9'"),
        (_views('page = "attention"\ntitle = "A"\n[view.controls]\nroom = "abc"'), "View 1 (“A”): room belong"),
        (_views('page = "attention"\ntitle = "A"\ncolour = "red"'), "View 1 (“A”): unknown entries colour"),
        (_views('page = "attention"'), "View 1 has no title"),
        (_views('page = "attention"\ntitle = "A"\nsteps = "no"'), "“steps” must be true or false"),
        ('[talk]\ntitle = "T"\n', "The talk has no views"),
        ("[[view]]\npage = 'attention'\ntitle = 'A'\n", "The talk has no title"),
        ("this is = not [toml", "This is not a TOML file"),
        ("\x00", "This is not a TOML file"),
    ],
)
def test_a_bad_file_is_refused_in_one_sentence_naming_the_view(text, said):
    with pytest.raises(TalkError) as refused:
        parse(text, models=["default", "smollm2-135m-instruct"])
    message = str(refused.value)
    assert said in message, message
    assert "\n" not in message and "Traceback" not in message


def test_the_person_s_own_keys_are_never_a_view_s():
    for key in TALK_KEYS:
        with pytest.raises(TalkError, match="belong to whoever gives the talk"):
            parse(_views(f'page = "attention"\ntitle = "A"\n[view.controls]\n{key} = "x"'))


def test_a_huge_file_is_refused_unread():
    with pytest.raises(TalkError, match="at most"):
        parse("#" * 300_000)


def test_the_shipped_talk_is_valid_on_the_menu_s_models_in_both_languages():
    talk = parse(SHIPPED.read_text(encoding="utf-8"), models=menu_models())
    assert len(talk.views) == 20
    assert parse(dump(talk)) == talk
    for view in talk.views:
        assert view.titles.keys() == {"en", "zh"} and view.notes.keys() == {"en", "zh"}, view.titles["en"]
    pages = {view.page for view in talk.views}
    assert pages >= {"translate", "attention", "positional_encoding", "masks_and_heads", "tensor_shapes", "training"}

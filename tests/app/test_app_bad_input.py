"""Whatever a person types or puts in a URL: a clear message, the app keeps serving, nothing else changes."""

from __future__ import annotations

import pytest
from test_app import PAGES, assert_clean, run, translation

TRANSLATE, ATTENTION = PAGES["translate"][0], PAGES["attention"][0]
TYPED = {
    "emoji": "The 🐱 sleeps 😀",
    "right-to-left": "القط ينام في البيت",
    "cjk": "猫は寝る 我爱你",
    "control": "The cat\x00 sleeps\x07\u200b",
    "script": "<script>alert(1)</script><style>body{display:none}</style>",
    "markdown": "**bold** _it_ # Title [link](http://example.com) `code` $x^2$ :red[red]",
    "outside the lexicon": "The zebra juggles quantum pineapples",
    "400 words": " ".join(["the cat sees the dog"] * 80),
}


def messages(at) -> str:
    return " ".join(m.value for m in list(at.warning) + list(at.error) + list(at.info))


@pytest.mark.parametrize("name", sorted(TYPED))
def test_odd_typed_text_translates_with_a_message_and_no_traceback(name):
    at = run(TRANSLATE)
    at.sidebar.toggle(key="w_causal").set_value(False).run()
    at.sidebar.text_input(key="w_sentence").input(TYPED[name]).run()
    assert_clean(at)
    assert translation(at)
    assert at.sidebar.toggle(key="w_causal").value is False, "another control changed"
    if name in ("emoji", "right-to-left", "cjk", "outside the lexicon"):
        assert "Never seen in training" in messages(at)
    if name == "control":
        assert "control character" in messages(at)
    if name == "400 words":
        assert "cut to its first" in messages(at)
    for block in at.markdown:  # typed text never becomes markup
        assert "<script" not in block.value and "](http" not in block.value.replace("\\]\\(http", "")


@pytest.mark.parametrize("text", ["", "   ", "\t\n", "...", "?!"])
def test_empty_input_is_refused_and_the_next_sentence_works(text):
    at = run(ATTENTION)
    at.sidebar.text_input(key="w_sentence").input(text).run()
    assert not at.exception
    assert "Type an English sentence" in messages(at)
    at.sidebar.text_input(key="w_sentence").input("The cat sleeps").run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) >= 5


@pytest.mark.parametrize(
    "params, key",
    [
        ({"sentence": "x" * 10_000}, "sentence"),
        ({"sentence": " ".join(["word"] * 500)}, "sentence"),
        ({"layer": "-1"}, "layer"),
        ({"layer": "2.5"}, "layer"),
        ({"head": "99"}, "head"),
        ({"beam": "1e9"}, "beam"),
        ({"decode": "sampling"}, "decode"),
        ({"pe": "sometimes"}, "pe"),
        ({"ablate": "enc-cross-1-1"}, "ablate"),
        ({"ablate": "dec-self-1-99"}, "ablate"),
        ({"step": "100000"}, "step"),
        ({"present": "<b>"}, "present"),
        ({"scale": "half"}, "scale"),
        ({"embscale": "2"}, "embscale"),
        ({"fill": "-1e4"}, "fill"),
        ({"fill": "nan"}, "fill"),
        ({"model": "../../etc"}, "model"),
    ],
)
def test_bad_url_parameters_fall_back_to_defaults_and_say_so(params, key):
    for page in (TRANSLATE, ATTENTION):
        at = run(page, params)
        assert_clean(at)
        assert f"URL parameter {key}" in messages(at)
        assert at.query_params[key] != params[key]


@pytest.mark.parametrize("box", ["vocabulary-known", "vocabulary-offered"])
def test_the_vocabulary_is_written_only_when_its_box_is_opened(box):
    at = run(TRANSLATE, {"sentence": TYPED["outside the lexicon"]})
    assert_clean(at)
    tables_closed = len(at.dataframe)
    assert "Nouns" not in " ".join(m.value for m in at.markdown)
    at.session_state[box] = True  # what a click on the box does, then Streamlit reruns
    at.run()
    assert_clean(at)
    assert len(at.dataframe) - tables_closed >= 9, "a table per category of the corpus lexicon"
    assert any(m.value.startswith("**Nouns**") for m in at.markdown)
    assert translation(at), "the page around it is whole"

"""The "Why this word?" page on the shipped model, as a person uses it: click an output piece, read
the highlighted source, the lens table and the patching grid, ask for the whole table."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest
from test_app import array, assert_clean, chart_titled, charts
from test_app import run as run_page

from views.why import piece_chips
from viz.labels import display_piece

GIRL = "The small girl sees a white bird."
BOY = "The small boy sees a white bird."


pytestmark = pytest.mark.usefixtures("shipped_model")


def run(**params: str) -> AppTest:
    return run_page("pages/8_why.py", {"sentence": GIRL, **params})


def piece_on_show(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("#### Output piece"))


def method_lines(at: AppTest) -> list[str]:
    shaded = next(m.value for m in at.markdown if "<span title=" in m.value)
    return re.findall(r"<b style=\"min-width:[\d.]+em\">([^<]+)</b>", shaded)


def test_clicking_an_output_piece_explains_that_piece(default_bundle_pieces):
    at = run()
    assert_clean(at)
    pills = at.pills(key="w_why_piece")
    assert pills.options == piece_chips(default_bundle_pieces)
    assert piece_on_show(at).startswith("#### Output piece 1,")
    pills.set_value(2).run()
    assert_clean(at)
    assert piece_on_show(at).startswith(f"#### Output piece 3, **{display_piece(default_bundle_pieces[2])}**")
    assert at.slider(key="w_step").value == 3 and at.query_params["step"] == "3"
    assert method_lines(at) == ["attention", "rollout", "gradient", "integrated-gradients", "occlusion"]


def test_a_repeated_pieces_chips_each_open_their_own_piece():
    """In "La fille voit la fille." the two "fille" chips are told apart by their positions, and each opens its
    own piece (with one label for both, Streamlit mapped either chip to the last)."""
    at = run(sentence="The girl sees the girl.")
    assert_clean(at)
    pills = at.pills(key="w_why_piece")
    assert len(set(pills.options)) == len(pills.options)
    assert [option for option in pills.options if "fille" in option] == ["fille₂", "fille₅"]
    for picked in (2, 5):
        at.pills(key="w_why_piece").set_value(picked).run()
        assert piece_on_show(at).startswith(f"#### Output piece {picked + 1}, **fille**")
        assert at.pills(key="w_why_piece").value == picked


def test_the_patching_grid_finds_the_word_that_differs_and_translates_with_it():
    at = run(step="4", donor=BOY)  # La petite fille ...: piece 4 is "fille"
    assert_clean(at)
    assert "fille" in piece_on_show(at)
    grid = chart_titled(at, "Output piece 4")
    assert grid["data"][0]["y"][0] == "source embeddings" and grid["data"][0]["y"][-1] == "encoder layer 3 (memory)"
    biggest = next(m.value for m in at.markdown if m.value.startswith("The biggest change"))
    assert "**girl**" in biggest
    assert "at position 2 (**girl**" in biggest, "positions count from 0, as on every page (Translate puts girl at 2)"
    assert any(m.value.startswith("> ") and "garçon" in m.value for m in at.markdown)


def test_a_donor_equal_to_the_sentence_changes_nothing():
    at = run(donor=GIRL)
    assert_clean(at)
    assert (abs(array(chart_titled(at, "Output piece 1")["data"][0]["z"])) < 1e-4).all()  # float rounding at most
    assert any("No single position" in c.value for c in at.caption)


def test_the_lens_table_checks_the_piece_the_model_wrote():
    at = run(step="4")
    table = at.dataframe[0].value
    assert list(table.index) == ["layer 1", "layer 2", "layer 3"]
    assert table.iloc[-1, 0].startswith("✓ fille")  # the last layer's first choice is what was written


def test_integrated_gradients_fill_the_whole_table_when_asked():
    """Past about half a second of work (pages/8_why.py EAGER_WORK), a whole table waits for the button:
    on the shipped model, integrated gradients over a ten-word sentence's thirteen output pieces."""
    at = run(method="integrated-gradients", sentence="My sister will give the red apple to the old teacher.")
    assert_clean(at)
    assert not any(spec["layout"]["title"]["text"].startswith("Attribution") for spec in charts(at))
    at.button(key="why-whole-table").click().run()
    assert_clean(at)
    table = array(chart_titled(at, "Attribution: integrated-gradients")["data"][0]["z"])
    assert table.shape[0] == len(at.pills(key="w_why_piece").options)
    at.slider(key="w_step").set_value(2).run()  # cached now: shown without asking again
    assert chart_titled(at, "Attribution: integrated-gradients")


@pytest.fixture(scope="module")
def default_bundle_pieces():
    from model import load_bundle

    result = load_bundle(None).translate(GIRL, trace=False)
    return result.trace.out_pieces if result.trace else load_bundle(None).tokenizer.pieces(list(result.output_ids))


def test_play_walks_the_output_pieces_and_pause_keeps_one():
    at = run(step="5")
    assert piece_on_show(at).startswith("#### Output piece 5,")
    next(b for b in at.button if b.label == "Play decoding").click().run()  # goes on from the piece on show
    assert_clean(at)
    assert piece_on_show(at).startswith("#### Output piece 6,") and at.pills(key="w_why_piece").disabled
    at.run()  # what the timer does every second
    assert piece_on_show(at).startswith("#### Output piece 7,")
    next(b for b in at.button if b.label == "Pause").click().run()
    at.run()
    assert piece_on_show(at).startswith("#### Output piece 7,") and not at.pills(key="w_why_piece").disabled

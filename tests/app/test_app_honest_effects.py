"""Issue 32's honest small effects, on the shipped model as a lecturer meets them: the Why page's
patching headline and its gradient caveat, and the Masks lab's knock-out tab and sweep."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest
from test_app import ROOT, TIMEOUT, array, assert_clean, chart_titled, charts

WHY = str(ROOT / "pages/8_why.py")
MASKS = str(ROOT / "pages/5_masks_and_heads.py")
GIRL = "The small girl sees a white bird."
BOY = "The small boy sees a white bird."  # differs at one word only: "oiseau" does not hang on it


pytestmark = pytest.mark.usefixtures("shipped_model")


@pytest.fixture(scope="module")
def card() -> dict:
    return json.loads((ROOT / "checkpoints/default/card.json").read_text(encoding="utf-8"))


def run(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(page, default_timeout=TIMEOUT)
    for key, value in {"sentence": GIRL, **params}.items():
        at.query_params[key] = value
    return at.run()


def headline(at: AppTest) -> str | None:
    return next((m.value for m in at.markdown if m.value.startswith("The biggest change")), None)


def test_a_change_within_rounding_is_said_in_words_and_no_translation_is_shown_as_changed():
    at = run(WHY, step="7", donor=BOY)  # "oiseau": the grid's biggest cell is below 0.001
    assert_clean(at)
    grid = array(chart_titled(at, "Output piece 7")["data"][0]["z"])
    assert 1e-4 < abs(grid).max() < 0.005  # a real but tiny change: it would read "-0.00"
    assert headline(at) is None  # no "The biggest change (-0.00)"
    assert not any(m.value.startswith("> ") for m in at.markdown)  # no patched translation presented as a change
    said = next(c.value for c in at.caption if c.value.startswith("No single position changes the piece"))
    assert "**oiseau**" in said and "**girl** (donor: **boy**)" in said and "shown as 0.00" in said
    # the pieces this donor does move are offered, each a click away; "fille" is one of them
    offered = {b.label.split(" (")[0]: b for b in at.button if b.key and b.key.startswith("why-moved-")}
    assert {"L", "a", "petite", "fille"} <= set(offered) and "oiseau" not in offered
    offered["fille"].click().run()
    assert_clean(at)
    assert at.query_params["step"] == "4"
    big = headline(at)
    assert big is not None and "**girl**, the donor's **boy**" in big
    assert abs(float(big.split("(")[1].split(")")[0])) > 1  # a clear effect, not a rounding one
    assert any(m.value.startswith("> ") and "garçon" in m.value for m in at.markdown)


def test_the_default_donor_moves_the_piece_on_show_and_the_default_piece():
    """Measured on the shipped model: the default donor moves 7 of the 10 pieces of the default sentence by
    7 to 12 in log-probability, "oiseau" at "bird" and the first piece at "girl"."""
    for step, word in (("1", "girl"), ("7", "bird")):
        at = run(WHY, step=step)
        assert_clean(at)
        big = headline(at)
        assert big is not None and f"**{word}**" in big and abs(float(big.split("(")[1].split(")")[0])) > 5
    assert any(m.value.startswith("> ") for m in at.markdown)  # a translation that really changed
    colorbar = chart_titled(at, "Output piece 7")["data"][0]["colorbar"]
    assert colorbar.get("exponentformat") == "power"  # never plotly's SI "500μ"


def test_input_times_gradient_carries_the_cards_figure_and_what_it_does_here(card):
    from model import load_bundle
    from model.analysis import attribute

    at = run(WHY, step="7")
    figure = card["explanations"]["attribution_agreement"]["gradient"]
    note = next(c.value for c in at.caption if "known to disagree" in c.value)
    assert f"**{figure:g}%**" in note and "input × gradient" in note.lower()
    # true for this sentence: the gradient gives "bird" the other sign than the two other signed methods
    bundle = load_bundle(None)
    output = bundle.translate(GIRL, trace=False).output_ids
    bird = bundle.translate(GIRL).trace.src_pieces.index("▁bird")
    values = {m: attribute(bundle, GIRL, output, m, pieces=(6,))[0][bird] for m in ("gradient", "occlusion")}
    assert "it says **bird** lowers **oiseau**" in note
    assert values["gradient"] < 0 < values["occlusion"]


def test_the_knockout_tab_offers_the_knockout_that_changes_the_most_in_one_click():
    at = run(MASKS, lab="knockout")
    assert_clean(at)
    suggestion = at.button(key="knockout-layer-tab")
    assert suggestion.label == "Knock out decoder cross-attention L3 (all 4 heads)"  # measured: a drop of 7.16
    suggestion.click().run()
    assert_clean(at)
    assert at.query_params["ablate"] == "dec-cross-3-1,dec-cross-3-2,dec-cross-3-3,dec-cross-3-4"
    texts = [m.value for m in at.markdown]
    assert any("La petite fille voit un oiseau blanc." in t for t in texts)  # before
    assert any("modèle" in t for t in texts)  # after: the translation really changes
    probabilities = next(s for s in charts(at) if s["layout"]["title"]["text"].startswith("Probability of each"))
    assert probabilities["layout"]["yaxis"]["range"] == [0, 1]


def test_the_sweep_caption_describes_blue_bars_as_blue_and_says_no_single_head_matters():
    at = run(MASKS)
    next(b for b in at.button if b.label == "Run the knock-out sweep").click().run()
    assert_clean(at)
    sweep = chart_titled(at, "Heads ranked by the drop")
    red = "#D55E00"
    assert red not in sweep["data"][0]["marker"]["color"]  # the shipped model: no single head changes the output
    caption = next(c.value for c in at.caption if c.value.startswith("The 20 heads"))
    assert "red" not in caption and "every bar is blue" in caption and "No single head matters much" in caption
    assert sweep["layout"]["xaxis"]["exponentformat"] == "power"
    assert at.button(key="knockout-layer-sweep").label.startswith("Knock out decoder cross-attention L3")

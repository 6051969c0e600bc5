"""viz.shares: which heads wrote a piece (each component's share of its logit), drawn from small hand-made inputs
(no model)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from viz.margins import fit_margins
from viz.shares import KNOCKED_OUT, shares_cell, shares_heatmap, signed, top_bars, writes_bars
from viz.style import Style, keeps_its_width

STYLES = [Style(), Style(presentation=True)]


def _two_blocks(**extra) -> go.Figure:
    rng = np.random.default_rng(0)
    blocks = [("self heads", rng.normal(size=(3, 4))), ("cross heads", 5 * rng.normal(size=(3, 4)))]
    return shares_heatmap(blocks, rng.normal(size=3), Style(), "feed-forward", **extra)


def _heatmaps(fig: go.Figure) -> list[go.Heatmap]:
    return [trace for trace in fig.data if trace.type == "heatmap"]


def _cells(fig: go.Figure) -> list[dict]:
    """Every marker point as Streamlit hands a clicked one over: a dict with its customdata (a list)."""
    points = []
    for trace in fig.data:
        if trace.type == "scatter" and trace.customdata is not None:
            for x, y, data in zip(trace.x, trace.y, trace.customdata, strict=True):
                points.append({"x": x, "y": y, "customdata": json.loads(json.dumps(list(data)))})
    return points


def test_the_shares_heatmap_shares_one_colour_range_symmetric_around_zero():
    fig = _two_blocks()
    reach = max(np.abs(np.asarray(h.z, dtype=float)).max() for h in _heatmaps(fig))
    assert len(_heatmaps(fig)) == 3  # two attention blocks and the feed-forward panel
    assert all(h.coloraxis == "coloraxis" for h in _heatmaps(fig))
    assert fig.layout.coloraxis.cmin == -fig.layout.coloraxis.cmax == pytest.approx(-reach)
    zero = shares_heatmap([("heads", np.zeros((2, 2)))], np.zeros(2), Style(), "ffn")  # no zero-width scale
    assert 0 < zero.layout.coloraxis.cmax < 1e-3 and zero.layout.coloraxis.cmin == -zero.layout.coloraxis.cmax


def test_layer_one_is_the_bottom_row():
    fig = _two_blocks()
    heatmap = _heatmaps(fig)[0]
    assert list(heatmap.y) == [0, 1, 2]
    low, high = fig.layout.yaxis.range
    assert low < high  # not reversed: row 0 (layer 1) at the bottom
    assert dict(zip(fig.layout.yaxis.tickvals, fig.layout.yaxis.ticktext, strict=True))[0] == "L1"


def test_knocked_out_cells_carry_a_cross_and_the_selected_one_is_outlined():
    fig = _two_blocks(off=[(1, 2, 3), (0, 0, 1)], selected=(1, 0, 2))
    self_heads, cross_heads, ffn = _heatmaps(fig)
    assert cross_heads.text[2][3] == KNOCKED_OUT and self_heads.text[0][1] == KNOCKED_OUT
    assert sum(cell == KNOCKED_OUT for row in cross_heads.text for cell in row) == 1
    assert ffn.texttemplate is None
    (outline,) = fig.layout.shapes
    assert (outline.xref, outline.yref) == ("x2", "y2")
    assert (outline.x0, outline.x1, outline.y0, outline.y1) == (1.5, 2.5, -0.5, 0.5)
    assert outline.line.color == Style().highlight
    assert not _two_blocks(selected=(2, 0, 0)).layout.shapes  # no such block: nothing outlined


def test_a_clicked_cell_reads_back_as_its_block_layer_and_head():
    points = _cells(_two_blocks())
    heads = [shares_cell(point) for point in points]
    every = {(block, layer, head) for block in range(2) for layer in range(3) for head in range(4)}
    assert {cell for cell in heads if cell is not None} == every
    assert sum(cell is None for cell in heads) == 3  # the feed-forward panel's cells
    for point, cell in zip(points, heads, strict=True):
        if cell is not None:
            assert (point["y"], point["x"]) == cell[1:]
    assert shares_cell({}) is None and shares_cell({"customdata": ["ffn", 0, -1]}) is None


def test_the_hover_says_the_share_with_its_sign():
    fig = shares_heatmap([("self heads", np.array([[0.42, -1.3]]))], np.array([0.0]), Style(), "ffn")
    hovers = [text for trace in fig.data if trace.type == "scatter" for text in trace.hovertext]
    assert "+0.42" in hovers[0] and "head 1" in hovers[0] and "layer 1" in hovers[0]
    assert signed(-1.3) in hovers[1] and "self heads" in hovers[1]
    assert signed(0.004) == "+0.004" and signed(-1.3) == "−1.30"


def test_a_30_layer_heatmap_is_tall_enough_to_read_and_the_small_one_has_room():
    rng = np.random.default_rng(1)
    big = shares_heatmap([("self heads", rng.normal(size=(30, 9)))], rng.normal(size=30), Style(), "ffn")
    small = _two_blocks()
    assert 30 * 18 <= big.layout.height and small.layout.height >= 280
    assert len(big.layout.yaxis.tickvals) == 30  # every layer labelled
    assert keeps_its_width(small)  # panels side by side


def test_top_bars_draw_the_first_label_at_the_top_and_colour_by_sign():
    labels = ["L12 H3 self", "FFN L7", "embeddings"]
    fig = top_bars(labels, np.array([0.9, -0.5, 0.1]), Style(), "logit share")
    low, high = fig.layout.yaxis.range
    first = fig.layout.yaxis.tickvals[list(fig.layout.yaxis.ticktext).index("L12 H3 self")]
    assert low > high and first == min(fig.layout.yaxis.tickvals)  # reversed: the first row on top
    raising, lowering = fig.data
    assert list(raising.x) == [0.9, 0.1] and list(lowering.x) == [-0.5]
    assert raising.marker.color != lowering.marker.color
    assert list(raising.text) == ["+0.90", "+0.10"]
    assert fig.layout.xaxis.zeroline


def test_writes_bars_show_byte_level_pieces_as_words():
    fig = writes_bars([("Ġcat", 1.5), ("Ġdog", 0.5)], [("Ġthe", -0.8), ("âĢĵ", -0.2)], Style())
    assert list(fig.layout.yaxis.ticktext) == ["cat", "dog"]
    assert list(fig.layout.yaxis2.ticktext) == ["the", "–"]
    assert [a.text for a in fig.layout.annotations] == ["pieces it raises most", "pieces it lowers most"]
    raised, lowered = fig.data
    assert list(raised.y) == [0, 1] and fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # largest on top
    assert max(lowered.x) < 0 and lowered.marker.color != raised.marker.color


@pytest.mark.parametrize("style", STYLES, ids=["screen", "projector"])
def test_every_figure_builds_in_both_styles_and_serialises(style):
    rng = np.random.default_rng(3)
    figures = [
        shares_heatmap([("self", rng.normal(size=(30, 9)))], rng.normal(size=30), style, "ffn", title="t"),
        _two_blocks(),
        top_bars(["a", "b"], np.array([0.3, -0.1]), style, "share", title="t"),
        writes_bars([("▁le", 0.4)], [], style, title="t"),
    ]
    for fig in figures:
        json.loads(fig.to_json())
        fit_margins(fig)

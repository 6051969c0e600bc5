"""viz.shares and viz.routes: which heads wrote a piece (each component's share of its logit) and the routes
information took to it, drawn from small hand-made inputs (no model)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly_form import assert_in_plotly_s_own_form

from model.results import RouteEdge, Routes
from viz.margins import fit_margins
from viz.routes import BOUNDS, KINDS, PROJECTOR_HEIGHT_PX, WIDTHS, routes_cell, routes_chart
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
    assert_in_plotly_s_own_form(fig)


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


def _routes(edges: list[RouteEdge], sources: tuple[int, ...] = ()) -> Routes:
    return Routes(3, (0, 2, 5, 6), sources, 6, 0.05, tuple(edges))


def _random_routes(count: int) -> Routes:
    rng = np.random.default_rng(2)
    positions = (0, 1, 3, 4, 7, 8, 9, 12)
    edges = []
    for _ in range(count):
        kind = str(rng.choice(KINDS))
        target = int(rng.choice(positions[1:]))
        source = int(rng.integers(5)) if kind == "cross" else target
        if kind == "self":
            source = int(rng.choice([p for p in positions if p <= target]))
        heads = (
            tuple((int(h), 0.5 / (i + 1)) for i, h in enumerate(rng.permutation(6)[:3]))
            if kind in ("self", "cross")
            else ()
        )
        edges.append(RouteEdge(kind, int(rng.integers(30)), source, target, float(rng.random()), heads))
    return Routes(30, positions, tuple(range(5)), 12, 0.05, tuple(edges))


def _line_traces(fig: go.Figure) -> list[go.Scatter]:
    return [t for t in fig.data if t.type == "scatter" and t.mode == "lines" and t.x is not None and t.x != (None,)]


def test_the_routes_lines_are_one_trace_per_kind_and_width_class_not_per_edge():
    routes = _random_routes(300)
    fig = routes_chart(routes, [f"p{i}" for i in range(13)], [f"s{i}" for i in range(5)], Style())
    lines = _line_traces(fig)
    assert len(lines) <= len(KINDS) * (len(BOUNDS) + 1)
    segments = sum(list(t.x).count(None) for t in lines)
    assert segments == len(routes.edges)  # every edge drawn, each ended by None
    legend = [t.name for t in fig.data if t.showlegend]
    assert sorted(legend) == sorted(["residual stream", "feed-forward", "self-attention", "cross-attention"])


def test_every_attention_edge_has_a_click_marker_that_reads_back_as_its_top_head():
    routes = _random_routes(120)
    fig = routes_chart(routes, [f"p{i}" for i in range(13)], [f"s{i}" for i in range(5)], Style())
    clicked = sorted(routes_cell(point) for point in _cells(fig))
    wanted = sorted((e.kind, e.layer, e.heads[0][0]) for e in routes.edges if e.kind in ("self", "cross"))
    assert clicked == wanted
    marker = next(t for t in fig.data if t.customdata is not None).marker
    assert marker.size >= 8 and marker.opacity in (None, 1)  # clickable: colour all but transparent, never opacity
    assert routes_cell({"customdata": ["ffn", 1, 0]}) is None and routes_cell({"x": 1}) is None
    # 0->6 and 2->5 of one layer share a midpoint: their markers must not (one would hide the other)
    crossing = [RouteEdge("self", 1, 0, 6, 0.5, ((0, 1.0),)), RouteEdge("self", 1, 2, 5, 0.5, ((1, 1.0),))]
    places = {(p["x"], p["y"]) for p in _cells(routes_chart(_routes(crossing), list("abcdefg"), [], Style()))}
    assert len(places) == 2
    assert routes_cell({"customdata": ["self", 2, 4]}) == ("self", 2, 4)


def _trace_of(fig: go.Figure, start: tuple[float, float], end: tuple[float, float]) -> go.Scatter:
    """The line trace holding a line from `start` to `end`."""
    for trace in _line_traces(fig):
        points = list(zip(trace.x, trace.y, strict=True))
        ends = [i for i, point in enumerate(points) if point == (None, None)]
        for first, last in zip([-1, *ends], ends, strict=False):
            if points[first + 1] == start and points[last - 1] == end:
                return trace
    raise AssertionError(f"no line from {start} to {end}")


def test_a_heavier_edge_is_wider_and_more_opaque_and_the_selected_head_is_highlighted():
    heavy = RouteEdge("self", 1, 0, 6, 0.9, ((2, 0.8),))
    light = RouteEdge("self", 1, 2, 6, 0.05, ((1, 0.6),))
    fig = routes_chart(_routes([heavy, light]), [f"p{i}" for i in range(7)], [], Style(), selected=("self", 1, 1))
    strong, weak = _trace_of(fig, (0, 1), (3, 2)), _trace_of(fig, (1, 1), (3, 2))
    assert strong.line.width > weak.line.width and strong.line.width == WIDTHS[-1]
    faint = routes_chart(_routes([heavy, light]), [f"p{i}" for i in range(7)], [], Style())
    assert _trace_of(faint, (0, 1), (3, 2)).opacity > _trace_of(faint, (1, 1), (3, 2)).opacity
    assert weak.line.color == Style().highlight and strong.line.color != Style().highlight


def test_source_columns_sit_left_of_the_decoders_and_the_target_is_at_the_top():
    edges = [
        RouteEdge("cross", 2, 1, 6, 0.6, ((3, 0.7), (0, 0.2))),
        RouteEdge("residual", 2, 6, 6, 0.3),
        RouteEdge("ffn", 2, 6, 6, 0.1),
        RouteEdge("self", 0, 5, 5, 0.4, ((0, 0.9),)),
    ]
    fig = routes_chart(_routes(edges, sources=(0, 1, 2)), list("abcdefg"), ["▁le", "▁chat", "</s>"], Style())
    ticks = dict(zip(fig.layout.xaxis.ticktext, fig.layout.xaxis.tickvals, strict=True))
    assert max(ticks[s] for s in ("le", "chat", "&lt;/s&gt;")) + 1 < min(ticks[p] for p in "acfg")  # a gap between
    cross = _trace_of(fig, (ticks["chat"], 0), (ticks["g"], 3))
    assert cross.line.color == Style().palette[1]
    target = next(t for t in fig.data if t.mode == "markers" and t.marker.symbol == "diamond")
    assert list(target.x) == [ticks["g"]] and list(target.y) == [3]
    assert fig.layout.yaxis.ticktext[0] == "embeddings" and fig.layout.yaxis.range[0] < fig.layout.yaxis.range[1]
    assert not fig.layout.xaxis.showgrid and not fig.layout.xaxis.zeroline
    hover = next(t for t in fig.data if t.customdata is not None and t.customdata[0][0] == "cross").hovertext[0]
    assert "L3 H4 70%" in hover and "60%" in hover and "chat" in hover


@pytest.mark.parametrize("style", STYLES, ids=["screen", "projector"])
def test_every_figure_builds_in_both_styles_and_serialises(style):
    rng = np.random.default_rng(3)
    wide = _random_routes(400)
    figures = [
        shares_heatmap([("self", rng.normal(size=(30, 9)))], rng.normal(size=30), style, "ffn", title="t"),
        _two_blocks(),
        top_bars(["a", "b"], np.array([0.3, -0.1]), style, "share", title="t"),
        writes_bars([("▁le", 0.4)], [], style, title="t"),
        routes_chart(wide, [f"p{i}" for i in range(13)], [f"s{i}" for i in range(5)], style, ("self", 3, 2), "t"),
        routes_chart(_routes([RouteEdge("residual", 0, 6, 6, 1.0)]), list("abcdefg"), [], style),
    ]
    for fig in figures:
        json.loads(fig.to_json())
        fit_margins(fig)
    if style.presentation:  # a screen of its own on a 1280×720 projector
        assert figures[4].layout.height <= PROJECTOR_HEIGHT_PX < 720
    assert keeps_its_width(figures[4])  # 13 columns
    assert figures[4].layout.height >= 30 * (18 if style.picture_px is None else 0)

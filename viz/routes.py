"""The routes information took to the position that predicts a piece (model.results.Routes), as a graph: a column
per decoder position drawn (and, for an encoder-decoder, a block of source columns at the left: the encoder's
output), a row per point of the residual stream (the embeddings at the bottom, each decoder layer's output above),
and what each layer moved along it (attention edges, feed-forward blocks, the residual step), each as thick as its
share of what it writes."""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from i18n import N_, _, listing
from model.results import RouteEdge, Routes

from .labels import axis_labels, reads_bytes
from .margins import PHONE_CHART_PX, text_px
from .style import KEEPS_WIDTH, RIGHT_LEGEND, WIDE_FIGURE_PX, Style

KINDS = ("residual", "ffn", "self", "cross")  # drawn in this order: the heads' edges over the stream
ATTENTION = ("self", "cross")
KIND_NAMES = {
    "residual": N_("residual stream"),
    "ffn": N_("feed-forward"),
    "self": N_("self-attention"),
    "cross": N_("cross-attention"),
}
GREY = "#a0a0a0"
KIND_COLOURS = {"residual": None, "ffn": 2, "self": 0, "cross": 1}  # style.palette's (the residual stream: GREY)
BOUNDS = (0.1, 0.25, 0.5)  # the weights between the four width classes
# each class's line width at 13 px type: PRESENTATION_WIDER times on a projector, thinner where rows are thinner
# than they would like (a projector's 30 layers); nodes and feed-forward squares likewise
WIDTHS = (1.0, 2.5, 4.5, 7.0)
OPACITIES = (0.35, 0.55, 0.8, 1.0)
PRESENTATION_WIDER = 1.4
THINNEST = 0.35  # the least of that scale
BEND = 0.22  # in columns: a head reading its own position bows right of the stream, a feed-forward block sits left
# An attention edge's click marker sits this far along it, not halfway: edges a->b and c->d of one layer share a
# midpoint whenever a + b = c + d (0->4 and 1->3), and two markers on one point leave one of them unclickable
CLICK_AT = 0.62
BOW = (0.0, 0.15, 0.5, 0.85, 1.0)  # where along such a bow its points sit (its middle one is its click marker's)
SOURCE_GAP = 1.2  # columns between the source block and the decoder's
NO_CLICK = "rgba(0,0,0,0.01)"  # an edge's click marker: all but invisible, and still one a browser hovers and clicks
CLICK_PX = 12
NODE, NODE_PX = "#555555", 6.0
SOURCE_SHADE = "#f3f3f3"
ROW_PX, PRESENTATION_ROW_PX, LEAST_HEIGHT_PX = 24, 30, 320
# A 1280×720 projector's screen under the browser's bar, less the chart's heading: the graph whole when scrolled to
PROJECTOR_HEIGHT_PX = 560
KEEPS_WIDTH_COLUMNS = 8  # more columns than this: a phone draws the graph WIDE_FIGURE_PX wide and scrolls it
STRIDES = (1, 2, 5, 10, 20)  # every layer labelled, or every 2nd, 5th...


@dataclass(frozen=True)
class _Columns:
    """Where each column sits on the x axis: decoder positions and source positions, evenly spaced."""

    decoder: dict[int, float]
    sources: dict[int, float]

    @classmethod
    def of(cls, routes: Routes) -> _Columns:
        start = len(routes.sources) + SOURCE_GAP if routes.sources else 0.0
        return cls(
            {position: start + i for i, position in enumerate(routes.positions)},
            {position: float(i) for i, position in enumerate(routes.sources)},
        )

    def drawn(self, edge: RouteEdge) -> bool:
        """Whether both ends of `edge` are columns of the graph."""
        read = self.sources if edge.kind == "cross" else self.decoder
        return edge.target in self.decoder and edge.source in read


def _width_class(weight: float) -> int:
    return bisect.bisect_right(BOUNDS, weight)


def _path(edge: RouteEdge, columns: _Columns) -> list[tuple[float, float]]:
    """The points of an edge's line: from where it reads to (layer + 1, target), an attention edge through the
    point CLICK_AT along it (its click marker's place), bowed aside when it reads its own column."""
    x1, y1 = columns.decoder[edge.target], edge.layer + 1.0
    if edge.kind == "residual":
        return [(x1, float(edge.layer)), (x1, y1)]
    if edge.kind == "ffn":
        return [(x1 - BEND, edge.layer + 0.5), (x1, y1)]
    x0, y0 = (columns.sources[edge.source], 0.0) if edge.kind == "cross" else (columns.decoder[edge.source], edge.layer)
    if x0 != x1:
        return [(x0, y0), (x0 + CLICK_AT * (x1 - x0), y0 + CLICK_AT * (y1 - y0)), (x1, y1)]
    return [(x0 + BEND * math.sin(math.pi * t), y0 + t * (y1 - y0)) for t in BOW]


def _click_point(edge: RouteEdge, columns: _Columns) -> tuple[float, float]:
    """Where an attention edge's click marker sits (its line's middle point); a feed-forward block's square."""
    path = _path(edge, columns)
    return path[len(path) // 2] if edge.kind != "ffn" else path[0]


def _top_head(edge: RouteEdge) -> int:
    return edge.heads[0][0] if edge.heads else -1


def _picked(edge: RouteEdge, selected: tuple[str, int, int] | None) -> bool:
    """Whether `edge`'s largest head is the selected (kind, layer, head)."""
    return selected is not None and (edge.kind, edge.layer, _top_head(edge)) == tuple(selected)


def _lines(
    edges: Sequence[RouteEdge], columns: _Columns, selected: tuple[str, int, int] | None, style: Style, scale: float
) -> list[dict]:
    """The edges' lines: one trace per kind and width class (a line's width is its trace's), its lines parted by
    None; the selected head's edges in the highlight colour instead, drawn over the others."""
    groups: dict[tuple[bool, int, int], tuple[list, list]] = {}
    for edge in edges:
        key = (_picked(edge, selected), KINDS.index(edge.kind), _width_class(edge.weight))
        xs, ys = groups.setdefault(key, ([], []))
        for x, y in _path(edge, columns):
            xs.append(x)
            ys.append(y)
        xs.append(None)
        ys.append(None)
    traces = []
    for (picked, kind_index, width), (xs, ys) in sorted(groups.items()):
        kind = KINDS[kind_index]
        colour = style.highlight if picked else _colour(kind, style)
        traces.append(
            dict(
                type="scatter",
                x=xs,
                y=ys,
                mode="lines",
                line=dict(color=colour, width=WIDTHS[width] * scale),
                opacity=1.0 if picked else OPACITIES[width],
                hoverinfo="skip",
                showlegend=False,
                legendgroup=kind,
            )
        )
    return traces


def _colour(kind: str, style: Style) -> str:
    index = KIND_COLOURS[kind]
    return GREY if index is None else style.palette[index]


def _heads_said(edge: RouteEdge) -> str:
    """An attention edge's heads with their shares: "L3 H2 41%, L3 H5 12%" (its three largest)."""
    return listing(f"L{edge.layer + 1} H{head + 1} {share:.0%}" for head, share in edge.heads[:3])


def _edge_hover(edge: RouteEdge, read: str, written: str) -> str:
    """What hovering an edge's click marker (or a feed-forward block) says: what it is, its weight, its heads."""
    at = dict(
        kind=_(KIND_NAMES[edge.kind]), layer=edge.layer + 1, read=read, written=written, weight=f"{edge.weight:.0%}"
    )
    if edge.kind == "ffn":
        return _("{kind}, layer {layer}, at “{written}”<br>weight {weight}", **at)
    return _(
        "{kind}, layer {layer}: “{read}” → “{written}”<br>weight {weight}<br>heads: {heads}",
        heads=_heads_said(edge),
        **at,
    )


def _markers(
    edges: Sequence[RouteEdge], columns: _Columns, labels: tuple[list[str], list[str]], style: Style, scale: float
) -> list[dict]:
    """A click marker on every attention edge (CLICK_AT along it), one trace per kind, its customdata [kind, layer,
    head of the largest share]; and the feed-forward blocks' squares beside the stream, larger as they weigh more."""
    targets, sources = labels
    traces = []
    for kind in (*ATTENTION, "ffn"):
        chosen = [edge for edge in edges if edge.kind == kind]
        if not chosen:
            continue
        places = [_click_point(edge, columns) for edge in chosen]
        reads = [(sources if kind == "cross" else targets)[edge.source] for edge in chosen]
        hover = [_edge_hover(e, read, targets[e.target]) for e, read in zip(chosen, reads, strict=True)]
        marker: dict
        if kind == "ffn":
            sizes = [(6 + 8 * edge.weight) * scale for edge in chosen]
            marker = dict(size=sizes, symbol="square", color=_colour(kind, style), line=dict(width=0))
            data = None
        else:
            marker = dict(size=CLICK_PX, color=NO_CLICK, line=dict(width=0))
            data = [[edge.kind, edge.layer, _top_head(edge)] for edge in chosen]
        traces.append(
            dict(
                type="scatter",
                x=[x for x, _y in places],
                y=[y for _x, y in places],
                mode="markers",
                marker=marker,
                customdata=data,
                hovertext=hover,
                hoverinfo="text",
                showlegend=False,
                legendgroup=kind,
            )
        )
    return traces


def _node_hover(row: int, label: str, position: int, source: bool) -> str:
    if source:
        return _("source “{label}” (position {position}): the encoder's output", label=label, position=position)
    if row == 0:
        return _("embeddings of “{label}” (position {position})", label=label, position=position)
    return _("layer {layer}'s output at “{label}” (position {position})", layer=row, label=label, position=position)


def _nodes(routes: Routes, columns: _Columns, labels: tuple[list[str], list[str]], scale: float) -> list[dict]:
    """A dot at every point of the stream an edge touches (the sources' on row 0), and the point that predicts
    the piece, (routes.layers, routes.target), drawn large."""
    targets, sources = labels
    touched: set[tuple[bool, int, int]] = set()
    for edge in routes.edges:
        if not columns.drawn(edge):
            continue
        touched.add((False, edge.layer + 1, edge.target))
        if edge.kind == "cross":
            touched.add((True, 0, edge.source))
        elif edge.kind != "ffn":
            touched.add((False, edge.layer, edge.source))
    touched.discard((False, routes.layers, routes.target))
    nodes = sorted(touched)
    xs = [(columns.sources if source else columns.decoder)[position] for source, _row, position in nodes]
    hover = [_node_hover(row, (sources if s else targets)[p], p, s) for s, row, p in nodes]
    small = NODE_PX * scale
    traces = [
        dict(
            type="scatter",
            x=xs,
            y=[row for _source, row, _position in nodes],
            mode="markers",
            marker=dict(size=small, color=NODE),
            hovertext=hover,
            hoverinfo="text",
            showlegend=False,
        )
    ]
    if routes.target in columns.decoder:
        said = _(
            "“{label}” (position {position}): its last layer's output predicts the piece",
            label=targets[routes.target],
            position=routes.target,
        )
        traces.append(
            dict(
                type="scatter",
                x=[columns.decoder[routes.target]],
                y=[routes.layers],
                mode="markers",
                marker=dict(size=small * 2.5, symbol="diamond", color="#111111", line=dict(width=2, color="white")),
                hovertext=[said],
                hoverinfo="text",
                showlegend=False,
            )
        )
    return traces


def _legend(kinds: set[str], style: Style) -> list[dict]:
    """One legend entry per kind of edge drawn (its traces share its legendgroup: a click hides them all)."""
    return [
        dict(
            type="scatter",
            x=[None],
            y=[None],
            mode="lines+markers" if kind == "ffn" else "lines",
            line=dict(color=_colour(kind, style), width=WIDTHS[2]),
            marker=dict(symbol="square", size=10, color=_colour(kind, style)),
            name=_(KIND_NAMES[kind]),
            legendgroup=kind,
            showlegend=True,
            hoverinfo="skip",
        )
        for kind in KINDS
        if kind in kinds
    ]


def _ticks_turned(labels: Sequence[str], style: Style) -> tuple[bool, float, bool]:
    """Whether the columns' labels stand upright (flat when they fit side by side in WIDE_FIGURE_PX), how tall
    they stand in px, and whether the graph keeps WIDE_FIGURE_PX on a phone (many columns, or flat labels a
    phone's width does not hold)."""
    widest = max((text_px(label, style.tick) for label in labels), default=0.0) + 8
    columns = max(len(labels), 1)
    turned = widest > (WIDE_FIGURE_PX - 200) / columns
    keeps = columns > KEEPS_WIDTH_COLUMNS or (not turned and widest > (PHONE_CHART_PX - 130) / columns)
    return turned, widest if turned else style.tick * 1.5, keeps


def _source_block(width: int, layers: int, style: Style) -> dict:
    """The source block's shade behind its `width` columns, and its name at its top."""
    shade = dict(type="rect", x0=-0.5, x1=width - 0.5, y0=-0.5, y1=layers + 0.5, fillcolor=SOURCE_SHADE)
    name = dict(
        text=_("source<br>(the encoder's output)"),
        x=(width - 1) / 2,
        y=layers + 0.5,
        yanchor="top",
        showarrow=False,
        font=dict(size=style.tick, color="#555555"),
    )
    return dict(shapes=[dict(shade, line=dict(width=0), layer="below")], annotations=[name])


def _layout(routes: Routes, columns: _Columns, ticks: list[str], style: Style, title: str | None) -> dict:
    """The graph's axes, height, legend and source block (shaded and named): layer 1 above the embeddings,
    every layer labelled when the rows leave room, else every 2nd, 5th... On a projector the graph is at most
    PROJECTOR_HEIGHT_PX tall: a screen of its own, title included, when scrolled to."""
    turned, labels_px, keeps = _ticks_turned(ticks, style)
    rows = routes.layers + 1
    top = 60 if title else 30
    height = max(LEAST_HEIGHT_PX, rows * (PRESENTATION_ROW_PX if style.presentation else ROW_PX) + top + labels_px + 30)
    if style.presentation:
        height = min(height, PROJECTOR_HEIGHT_PX)
    row_px = max(height - top - labels_px - 30, 1) / rows
    wanted = PRESENTATION_ROW_PX if style.presentation else ROW_PX
    scale = max(THINNEST, min(1.0, row_px / wanted)) * (PRESENTATION_WIDER if style.presentation else 1.0)
    stride = next((s for s in STRIDES if row_px * s >= style.tick * 1.4), STRIDES[-1])
    shown = list(range(0, rows, stride))
    places = [*columns.sources.values(), *columns.decoder.values()]
    layout = dict(
        height=int(height),
        scale=scale,
        xaxis=dict(
            tickmode="array",
            tickvals=places,
            ticktext=ticks,
            tickangle=-90 if turned else 0,
            range=[min(places, default=0) - 0.7, max(places, default=0) + 0.7],
            showgrid=False,
            zeroline=False,
        ),
        yaxis=dict(
            tickmode="array",
            tickvals=shown,
            ticktext=[_("embeddings") if row == 0 else f"L{row}" for row in shown],
            range=[-0.5, routes.layers + 0.5],
            showgrid=True,
            gridcolor="#f4f4f4",
            zeroline=False,
        ),
        legend=dict(RIGHT_LEGEND, font=dict(size=style.tick + 2)),
        hovermode="closest",
        meta=KEEPS_WIDTH if keeps else None,
        margin=dict(t=top),
    )
    if routes.sources:
        layout.update(_source_block(len(routes.sources), routes.layers, style))
    return layout


def routes_chart(
    routes: Routes,
    target_labels: Sequence[str],
    source_labels: Sequence[str],
    style: Style,
    selected: tuple[str, int, int] | None = None,
    title: str | None = None,
) -> go.Figure:
    """The routes as a graph: the embeddings (row 0) at the bottom up to the last layer's output at the top, a
    column per decoder position of `routes.positions` (evenly spaced, labelled with its piece,
    `target_labels[position]`), the source positions (`source_labels[position]`) a shaded block at the left
    whose nodes sit on row 0; grey residual steps, self-attention and cross-attention edges and feed-forward
    blocks (a square beside the stream) in three colours, each as wide and opaque as its weight's class
    (BOUNDS), the selected (kind, layer, head)'s edges in the highlight colour, the position that predicts the
    piece a large diamond at the top. A click on an attention edge's marker is read back with `routes_cell`;
    the edges of `routes.hidden` positions are not drawn (a caption may say so)."""
    columns = _Columns.of(routes)
    byte_level = reads_bytes([*target_labels, *source_labels])
    targets, sources = axis_labels(list(target_labels), byte_level), axis_labels(list(source_labels), byte_level)
    ticks = [sources[position] for position in routes.sources] + [targets[position] for position in routes.positions]
    edges = [edge for edge in routes.edges if edge.kind in KINDS and columns.drawn(edge)]
    layout = _layout(routes, columns, ticks, style, title)
    height, scale = layout.pop("height"), layout.pop("scale")
    traces = [
        *_lines(edges, columns, selected, style, scale),
        *_markers(edges, columns, (targets, sources), style, scale),
        *_nodes(routes, columns, (targets, sources), scale),
        *_legend({edge.kind for edge in edges}, style),
    ]
    return style.drawing(traces, title, height, **layout)


def routes_cell(point: Mapping) -> tuple[str, int, int] | None:
    """(kind, layer, head), 0-based, of the attention edge under a clicked point of `routes_chart` (a selection
    event's `points[0]`): the edge's kind ("self" or "cross"), its layer and its largest head; None for anything
    else (a node, a feed-forward block, the residual stream)."""
    data = point.get("customdata")
    if not isinstance(data, list | tuple) or len(data) != 3 or data[0] not in ATTENTION:
        return None
    try:
        layer, head = int(data[1]), int(data[2])
    except (TypeError, ValueError):
        return None
    return (str(data[0]), layer, head) if layer >= 0 and head >= 0 else None

"""T5's relative-position bias: each head's bias against the distance key - query, with the bucket each
distance falls in, and over the (query, key) pairs of a sentence (the absolute positions: viz.positional)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from i18n import _, sentences

from .heatmaps import PanelGrid, panel_title
from .labels import CONTAINER_PX, axis_labels, token_axis
from .lengths import Span, whole, window_note
from .style import RIGHT_LEGEND, Style


def distance_profile(buckets: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From a stack's square bucket map (n, n) and bias (heads, n, n) over positions 0..n-1: every
    distance key - query from -(n-1) to n-1, its bucket, and each head's bias there (heads, 2n-1).
    The last query's row holds the keys before it, the first query's row the keys after it."""
    n = buckets.shape[-1]
    if buckets.shape != (n, n) or bias.shape[1:] != (n, n):
        raise ValueError(f"expected a square bucket map and (heads, n, n) bias, got {buckets.shape} and {bias.shape}")
    distances = np.arange(-(n - 1), n)
    return (
        distances,
        np.concatenate([buckets[-1], buckets[0, 1:]]),
        np.concatenate([bias[:, -1], bias[:, 0, 1:]], axis=1),
    )


def bucket_spans(distances: np.ndarray, buckets: np.ndarray) -> list[tuple[int, int, int]]:
    """(bucket, first distance, last distance) of every run of one bucket along increasing distances."""
    if len(distances) != len(buckets):
        raise ValueError("give one bucket per distance")
    starts = [0] + [i for i in range(1, len(buckets)) if buckets[i] != buckets[i - 1]]
    ends = starts[1:] + [len(buckets)]
    return [(int(buckets[a]), int(distances[a]), int(distances[b - 1])) for a, b in zip(starts, ends, strict=True)]


def heatmap_words(stack: str) -> tuple[str, str]:
    """The title and caption of a stack's bias heatmaps (bias_heatmaps), in the language of this run."""
    if stack == "encoder":
        return _("Encoder self-attention: the bias each head adds (bidirectional buckets)"), _(
            "Each cell is the number added to the score of that query (row) and key (column) in every encoder "
            "layer, before the softmax: red raises the weight, blue lowers it. Cells on one diagonal share a "
            "distance, so they share a colour. Keys before and after the query have buckets of their own: the "
            "encoder reads both ways."
        )
    return _("Decoder self-attention: the bias each head adds (causal buckets)"), _(
        "Each cell is the number added to the score of that query (row) and key (column) in every decoder "
        "layer, before the softmax: red raises the weight, blue lowers it. Cells on one diagonal share a "
        "distance, so they share a colour. The decoder's buckets count only keys at or before the query: "
        "every later key falls in bucket 0 with the query itself (the upper triangle repeats the "
        "diagonal), and the causal mask hides those keys anyway."
    )


def distance_words(stack: str, n_buckets: int, max_distance: int, model: str) -> tuple[str, str]:
    """The title and caption of a stack's bias against distance (bias_against_distance), in the language of this
    run: its buckets, the exact ones (model.engine.positional.relative_buckets: half of a side's) and how far
    `model` (its name as markdown) tells keys apart."""
    per_side = n_buckets // 2 if stack == "encoder" else n_buckets
    rest = _(
        "The nearest {exact} distances each get a bucket of their own (one step each at the centre of the "
        "lower strip); beyond, buckets widen logarithmically (the shaded bands) up to {far}, and every key "
        "farther than that shares the last bucket, so each curve is flat there: {name} cannot tell a key "
        "{near} pieces away from one {farther} away. The dotted lines mark the farthest pair in your text.",
        exact=per_side // 2,
        far=max_distance,
        name=model,
        near=max_distance + 10,
        farther=10 * max_distance,
    )
    if stack == "encoder":
        return _("Encoder: each head's bias against distance, with its buckets"), sentences(
            _("The encoder has {side} buckets for keys before the query and {side} for keys after it.", side=per_side),
            rest,
        )
    return _("Decoder: each head's bias against distance, with its buckets"), sentences(
        _(
            "The decoder's {buckets} buckets all look back; every later key shares bucket 0 with distance 0.",
            buckets=n_buckets,
        ),
        rest,
    )


BAND = "rgba(0, 0, 0, 0.055)"  # every other bucket's span of distances, behind the curves


def bias_against_distance(
    distances: np.ndarray,
    buckets: np.ndarray,
    bias: np.ndarray,
    style: Style,
    title: str,
    max_distance: int,
    reach: int | None = None,
) -> go.Figure:
    """Each head's bias (heads, distances) against the distance key - query, above the bucket each
    distance falls in; every other bucket's span shaded, ±max_distance marked (every farther key
    shares the last bucket) and, with `reach`, the farthest pair of the person's sentence."""
    if bias.shape[-1] != len(distances):
        raise ValueError(f"bias of shape {bias.shape} does not match {len(distances)} distances")
    fig = make_subplots(
        rows=2, cols=1, shared_xaxes=True, row_heights=[0.74, 0.26], vertical_spacing=0.05, figure=style.figure()
    )
    spans = bucket_spans(distances, buckets)
    _shade_buckets(fig, spans)
    _add_bias_curves(fig, distances, buckets, bias, spans, style)
    fig.add_trace(
        go.Scatter(
            x=distances,
            y=buckets,
            mode="lines",
            line=dict(width=style.line_width, shape="hvh", color="#333333"),
            name=_("bucket"),
            showlegend=False,
            hovertemplate=_("distance %{x}<br>bucket %{y}<extra></extra>"),
        ),
        row=2,
        col=1,
    )
    _mark_max_distance(fig, distances, max_distance, style)
    if reach:
        _mark_reach(fig, reach, style)
    fig.update_layout(legend=RIGHT_LEGEND, hovermode="x unified")
    fig.update_yaxes(title_text=_("bias added to the score"), row=1, col=1)
    fig.update_yaxes(title_text=_("bucket"), row=2, col=1, rangemode="tozero")
    fig.update_xaxes(title_text=_("distance = key position − query position"), row=2, col=1)
    return style.apply(fig, title, height=500 if not style.presentation else 640)


def _shade_buckets(fig: go.Figure, spans: list[tuple[int, int, int]]) -> None:
    """Shade every other bucket's span of distances, behind the curves, down both rows."""
    for index, (_bucket, first, last) in enumerate(spans):
        if index % 2:
            fig.add_shape(
                type="rect",
                x0=first - 0.5,
                x1=last + 0.5,
                xref="x",
                y0=0,
                y1=1,
                yref="paper",
                fillcolor=BAND,
                line_width=0,
                layer="below",
            )


def _add_bias_curves(
    fig: go.Figure,
    distances: np.ndarray,
    buckets: np.ndarray,
    bias: np.ndarray,
    spans: list[tuple[int, int, int]],
    style: Style,
) -> None:
    """The upper row: one step curve of bias against distance per head, and unseen points that name the
    bucket under the pointer and its span of distances."""
    span_of = {d: (first, last) for _, first, last in spans for d in range(first, last + 1)}
    spanned = np.array([span_of[int(d)] for d in distances])
    for head in range(bias.shape[0]):
        fig.add_trace(
            go.Scatter(
                x=distances,
                y=bias[head],
                mode="lines",
                name=f"H{head + 1}",
                line=dict(width=style.line_width, shape="hvh"),
                hovertemplate="%{y:.3f}",
            ),
            row=1,
            col=1,
        )
    # unseen points that put the bucket of the distance under the pointer into the shared hover box
    fig.add_trace(
        go.Scatter(
            x=distances,
            y=bias[0],
            mode="markers",
            marker=dict(opacity=0),
            showlegend=False,
            name=_("bucket"),
            customdata=np.column_stack([buckets, spanned]),
            hovertemplate=_("bucket %{customdata[0]}: distances %{customdata[1]} to %{customdata[2]}<extra></extra>"),
        ),
        row=1,
        col=1,
    )


def _mark_max_distance(fig: go.Figure, distances: np.ndarray, max_distance: int, style: Style) -> None:
    """Dashed lines at ±max_distance (where they fall inside the distances shown), and what they mean."""
    edge = dict(color="#111111", dash="dash", width=max(1.0, style.line_width / 2))
    for side in (-1, 1):
        if distances.min() <= side * max_distance <= distances.max():
            fig.add_vline(x=side * max_distance, line=edge, row="all", col=1)
    fig.add_annotation(
        x=max_distance if distances.max() >= max_distance else distances.max(),
        y=1,
        yref="paper",
        yanchor="bottom",
        xanchor="right",
        showarrow=False,
        font=dict(size=style.tick),
        text=_("±{d} = max_distance: every farther key shares the last bucket", d=max_distance),
    )


def _mark_reach(fig: go.Figure, reach: int, style: Style) -> None:
    """Dotted lines in the upper row at ±reach, the farthest pair of the person's text, and their name."""
    sentence = dict(color=style.highlight, dash="dot", width=max(1.0, style.line_width / 2))
    for side in (-1, 1):
        fig.add_vline(x=side * reach, line=sentence, row=1, col=1)
    fig.add_annotation(
        x=reach,
        y=0.98,
        yref="paper",
        xanchor="left",
        yanchor="top",
        showarrow=False,
        font=dict(size=style.tick, color=style.highlight),
        text=_(" your text: ±{reach}", reach=reach),
    )


def bias_heatmaps(
    bias: np.ndarray,
    queries: list[str],
    keys: list[str],
    distances: np.ndarray,
    buckets: np.ndarray,
    style: Style,
    title: str,
    rows: Span | None = None,
    columns: Span | None = None,
) -> go.Figure:
    """Every head's relative-position bias (heads, queries, keys) as a heatmap over the pieces, on one
    diverging scale centred on 0, inside a window of rows and columns (default: all); the hover names
    the distance and its bucket, read from the bucket of each distance (`distance_profile`: a distance
    past either end shares the end's bucket, as every distance past max_distance does)."""
    heads = bias.shape[0]
    if bias.shape[1:] != (len(queries), len(keys)):
        raise ValueError(f"bias {bias.shape} does not match {len(queries)} queries x {len(keys)} keys")
    if len(distances) != len(buckets) or np.any(np.diff(distances) != 1):
        raise ValueError("give the bucket of every distance in one unbroken range")
    rows, columns = rows or whole(len(queries)), columns or whole(len(keys))
    bound = float(np.abs(bias).max()) or 1.0
    z = bias[:, rows[0] : rows[1], columns[0] : columns[1]]
    cells = _distance_cells(rows, columns, distances, buckets)
    qlabels, klabels = axis_labels(queries)[rows[0] : rows[1]], axis_labels(keys)[columns[0] : columns[1]]
    grid = _bias_grid(heads, len(qlabels), klabels, style)
    data, layout, notes = [], {}, []
    for h in range(heads):
        _col, x0, y1 = grid.corner(h)
        trace, axes = _bias_panel(h, grid, z, cells, (qlabels, klabels), style)
        data.append(trace)
        layout.update(axes)
        notes.append(panel_title(f"H{h + 1}", x0 + grid.cell_w / 2, y1, style))
    fig = style.figure(
        coloraxis=dict(
            colorscale=style.diverging, cmin=-bound, cmax=bound, colorbar=dict(title=_("bias"), thickness=14)
        ),
        annotations=notes,
        **layout,
    )
    fig.add_traces(data)
    return style.apply(fig, title + window_note(rows, columns, len(queries), len(keys)), height=grid.height)


def _distance_cells(rows: Span, columns: Span, distances: np.ndarray, buckets: np.ndarray) -> np.ndarray:
    """(query, key, [distance, bucket]) of every cell inside the window: key - query, and the bucket of
    that distance (a distance past either end of `distances` shares the end's bucket)."""
    distance = np.arange(columns[0], columns[1])[None, :] - np.arange(rows[0], rows[1])[:, None]
    bucket = buckets[np.clip(distance, distances[0], distances[-1]) - distances[0]]
    return np.stack([distance, bucket], axis=-1)


def _bias_grid(heads: int, n_queries: int, klabels: list[str], style: Style) -> PanelGrid:
    """Where the heads' panels go: rows of at most four, as even as they come, each panel about as tall
    as it is wide."""
    n_rows = math.ceil(heads / 4)
    per_row = math.ceil(heads / n_rows)  # 6 heads: two rows of 3, 8 heads: two rows of 4
    width_px = CONTAINER_PX / per_row - 60
    panel_h = int(min(width_px + 60, max(300 if style.presentation else 230, n_queries * (style.tick + 3) + 60)))
    label_px = max((len(label) for label in klabels), default=1) * style.tick * 0.62 + style.font * 2 + 12
    height = panel_h * n_rows + int(label_px) * (n_rows - 1) + 70
    gap_x, gap_y = (0.04 if per_row > 1 else 0.0), (label_px / (height - 100) if n_rows > 1 else 0.0)
    cell_w, cell_h = (1 - gap_x * (per_row - 1)) / per_row, (1 - gap_y * (n_rows - 1)) / n_rows
    return PanelGrid(per_row, panel_h, width_px, height, gap_x, gap_y, cell_w, cell_h)


def _bias_panel(
    h: int,
    grid: PanelGrid,
    z: np.ndarray,
    cells: np.ndarray,
    labels: tuple[list[str], list[str]],
    style: Style,
) -> tuple[go.Heatmap, dict]:
    """Head h's bias heatmap on axes of its own, its hover naming each cell's distance and bucket, and
    the layout of those two axes (the query labels only on the first panel of a row)."""
    qlabels, klabels = labels
    suffix = "" if h == 0 else str(h + 1)
    col, x0, y1 = grid.corner(h)
    trace = go.Heatmap(
        z=z[h].astype(np.float32),
        x=klabels,
        y=qlabels,
        customdata=cells,
        coloraxis="coloraxis",
        xaxis=f"x{suffix}",
        yaxis=f"y{suffix}",
        hovertemplate=_(
            "query %{{y}}<br>key %{{x}}<br>distance %{{customdata[0]}}, bucket %{{customdata[1]}}<br>bias "
            "%{{z:.3f}}<extra>{head}</extra>",
            head=f"H{h + 1}",
        ),
    )
    axes = {
        f"xaxis{suffix}": token_axis(
            klabels,
            grid.width_px,
            style.tick,
            tickangle=-90,
            domain=[max(0.0, x0), min(1.0, x0 + grid.cell_w)],
            anchor=f"y{suffix}",
        ),
        f"yaxis{suffix}": token_axis(
            qlabels if col == 0 else [],
            grid.panel_h - 60,
            style.tick,
            domain=[max(0.0, y1 - grid.cell_h), min(1.0, y1)],
            anchor=f"x{suffix}",
            autorange="reversed",
            showticklabels=(col == 0),
        ),
    }
    return trace, axes

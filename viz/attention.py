"""Attention patterns as heatmaps: heads side by side, the head average, and the model view."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

import numpy as np
import plotly.graph_objects as go

from .labels import CONTAINER_PX, axis_labels, token_axis
from .lengths import Span, bin_label, bins, colour_mode, colour_range, coloured, pool, pooled, whole, window_note
from .style import Style

MAP_MARGINS_PX = 250  # what a heatmap's query labels, margins and colour bar take of its width
HOVER = "query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>"


def check_pattern(pattern: np.ndarray, queries: list[str], keys: list[str]) -> None:
    """Refuse a pattern whose last two axes do not match the query and key tokens."""
    if pattern.ndim < 2 or tuple(pattern.shape[-2:]) != (len(queries), len(keys)):
        raise ValueError(
            f"attention pattern of shape {tuple(pattern.shape)} does not match "
            f"{len(queries)} query tokens x {len(keys)} key tokens"
        )


def _panel_height(n_queries: int, style: Style, low: int = 260, high: int = 620) -> int:
    low = int(low * 1.35) if style.presentation else low
    return int(min(high * 1.2 if style.presentation else high, max(low, n_queries * (style.tick + 5) + 90)))


def _row_outline(fig: go.Figure, row_index: int, n_keys: int, style: Style, xref: str, yref: str) -> None:
    fig.add_shape(
        type="rect",
        x0=-0.5,
        x1=n_keys - 0.5,
        y0=row_index - 0.5,
        y1=row_index + 0.5,
        xref=xref,
        yref=yref,
        line=dict(color=style.highlight, width=style.line_width + 1),
        fillcolor="rgba(0,0,0,0)",
    )


def _windowed(
    pattern: np.ndarray,
    queries: list[str],
    keys: list[str],
    rows: Span | None,
    columns: Span | None,
    colour: str,
    first: bool = False,
) -> tuple[np.ndarray, np.ndarray | None, list[str], list[str], Span, str]:
    """The part of a [..., q, k] pattern inside the window, coloured (rows scaled over their whole
    length), the real weights for the hover when colour values differ from them, the window's labels
    (numbered by their place in the whole sentence), the rows shown and the resolved colour mode.
    `first`: a key window that starts after the first key keeps that key as its first column (where a
    trained model's heads park most of their weight: an attention sink)."""
    rows, columns = rows or whole(len(queries)), columns or whole(len(keys))
    mode = colour_mode(colour, len(keys))
    keep = np.r_[0:1, columns[0] : columns[1]] if _pinned(first, columns) else np.arange(*columns)
    z = coloured(pattern, mode)[..., rows[0] : rows[1], :][..., keep]
    weights = None if mode == "linear" else pattern[..., rows[0] : rows[1], :][..., keep]
    qlabels, klabels = axis_labels(queries), axis_labels(keys)
    return z, weights, qlabels[rows[0] : rows[1]], [klabels[k] for k in keep], rows, mode


def _pinned(first: bool, columns: Span | None) -> bool:
    """Whether the first key is shown before a key window that leaves it out."""
    return first and columns is not None and columns[0] > 0


def _first_divider(xref: str, yref: str) -> dict:
    """A white line between the first key and the window of keys after it (positions that do not follow)."""
    return dict(
        type="line", x0=0.5, x1=0.5, y0=0, y1=1, xref=xref, yref=f"{yref} domain", line=dict(color="white", width=3)
    )


def _hover(weights: np.ndarray | None) -> str:
    return HOVER if weights is None else HOVER.replace("%{z:.3f}", "%{customdata:.3f}")


def attention_heads(
    pattern: np.ndarray,
    queries: list[str],
    keys: list[str],
    style: Style,
    title: str,
    highlight_row: int | None = None,
    knocked_out: tuple[int, ...] = (),
    rows: Span | None = None,
    columns: Span | None = None,
    colour: str = "linear",
    first: bool = False,
) -> go.Figure:
    """All heads of one attention block side by side on one colour scale ([heads, q, k]), inside a
    window of query rows and key columns (default: all) and in a colour mode of viz.lengths; `first`
    keeps the first key in view before a key window that starts after it."""
    check_pattern(pattern, queries, keys)
    z, weights, qlabels, klabels, rows, mode = _windowed(pattern, queries, keys, rows, columns, colour, first)
    zmin, zmax, bar = colour_range(mode)
    heads = pattern.shape[0]
    per_row = min(heads, 4 if len(klabels) <= 16 else 2)
    n_rows = math.ceil(heads / per_row)
    panel_h = _panel_height(len(qlabels), style)
    width_px = CONTAINER_PX / per_row - 60
    # between two rows: the upper row's rotated key labels, then the lower row's head titles
    label_px = max((len(label) for label in klabels), default=1) * style.tick * 0.62 + style.font * 2 + 12
    height = panel_h * n_rows + int(label_px) * (n_rows - 1) + 40
    gap_x, gap_y = (0.05 if per_row > 1 else 0.0), (label_px / (height - 100) if n_rows > 1 else 0.0)
    cell_w, cell_h = (1 - gap_x * (per_row - 1)) / per_row, (1 - gap_y * (n_rows - 1)) / n_rows
    data, layout, titles, shapes = [], {}, [], []
    outlined = highlight_row - rows[0] if highlight_row is not None else None
    for h in range(heads):
        row, col = divmod(h, per_row)
        suffix = "" if h == 0 else str(h + 1)
        x0, y1 = col * (cell_w + gap_x), 1 - row * (cell_h + gap_y)
        data.append(
            go.Heatmap(
                z=z[h],
                x=klabels,
                y=qlabels,
                hovertemplate=_hover(weights),
                coloraxis="coloraxis",
                customdata=None if weights is None else weights[h],
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
            )
        )
        layout[f"xaxis{suffix}"] = token_axis(
            klabels,
            width_px,
            style.tick,
            domain=[max(0.0, x0), min(1.0, x0 + cell_w)],
            anchor=f"y{suffix}",
            tickangle=-90,
        )
        layout[f"yaxis{suffix}"] = token_axis(
            qlabels if col == 0 else [],
            panel_h - 80,
            style.tick,
            domain=[max(0.0, y1 - cell_h), min(1.0, y1)],
            anchor=f"x{suffix}",
            autorange="reversed",
            showticklabels=(col == 0),
        )
        name = f"H{h + 1}" + (" (knocked out)" if h in knocked_out else "")
        titles.append(
            dict(
                text=name,
                x=x0 + cell_w / 2,
                y=y1,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=style.font),
            )
        )
        if _pinned(first, columns):
            shapes.append(_first_divider(f"x{suffix}", f"y{suffix}"))
        if outlined is not None and 0 <= outlined < len(qlabels):
            shapes.append(
                dict(
                    type="rect",
                    x0=-0.5,
                    x1=len(klabels) - 0.5,
                    y0=outlined - 0.5,
                    y1=outlined + 0.5,
                    xref=f"x{suffix}",
                    yref=f"y{suffix}",
                    line=dict(color=style.highlight, width=style.line_width + 1),
                )
            )
    fig = style.figure(
        coloraxis=dict(colorscale=style.weights, cmin=zmin, cmax=zmax, colorbar=dict(title=bar, thickness=14)),
        annotations=titles,
        shapes=shapes,
        **layout,
    )
    fig.add_traces(data)
    return style.apply(
        fig,
        title + window_note(rows, columns or whole(len(keys)), len(queries), len(keys), _pinned(first, columns)),
        height=height,
    )


def attention_map(
    matrix: np.ndarray,
    queries: list[str],
    keys: list[str],
    style: Style,
    title: str,
    highlight_row: int | None = None,
    show_values: bool | None = None,
    rows: Span | None = None,
    columns: Span | None = None,
    colour: str = "linear",
    first: bool = False,
    width_px: float = CONTAINER_PX,
) -> go.Figure:
    """One [queries, keys] weight matrix as a large heatmap (a single head or the head average),
    inside a window (default: all) and in a colour mode of viz.lengths; `first` keeps the first key in
    view before a key window that starts after it. `width_px`: the chart's width on the page (half of it in
    one of two columns), which the key labels are thinned to so that none overlaps."""
    check_pattern(matrix, queries, keys)
    z, weights, qlabels, klabels, rows, mode = _windowed(matrix, queries, keys, rows, columns, colour, first)
    zmin, zmax, bar = colour_range(mode)
    if show_values is None:  # only where a "0.00" fits in a cell (the map may fill half the page)
        show_values = z.size <= 300 and len(klabels) <= (7 if style.presentation else 12)
    height = _panel_height(len(qlabels), style, low=320, high=760)
    fig = style.figure(
        xaxis=token_axis(klabels, min(width_px - MAP_MARGINS_PX, 900), style.tick, tickangle=-90),
        yaxis=token_axis(qlabels, height - 100, style.tick, autorange="reversed"),
    )
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=klabels,
            y=qlabels,
            hovertemplate=_hover(weights),
            customdata=weights,
            zmin=zmin,
            zmax=zmax,
            colorscale=style.weights,
            colorbar=dict(title=bar, thickness=14),
            texttemplate=("%{z:.2f}" if weights is None else "%{customdata:.2f}") if show_values else None,
            textfont=dict(size=style.tick),
        )
    )
    if highlight_row is not None and 0 <= highlight_row - rows[0] < len(qlabels):
        _row_outline(fig, highlight_row - rows[0], len(klabels), style, "x", "y")
    if _pinned(first, columns):
        fig.add_shape(**_first_divider("x", "y"))
    return style.apply(
        fig,
        title + window_note(rows, columns or whole(len(keys)), len(queries), len(keys), _pinned(first, columns)),
        height=height,
    )


TILE_PX = 170  # a model-view tile's height on a wide page (presentation mode: × PRESENTED)
MANY_LAYERS = 12  # past this many layers the tiles shrink, so the whole view stays about VIEW_PX tall
VIEW_PX = 2400
SMALLEST_TILE_PX = 70
PRESENTED = 220 / 170


def _tile_px(layers: int, style: Style) -> float:
    """A model-view tile's height: TILE_PX up to MANY_LAYERS layers; for a deeper model (SmolLM2's 30) less,
    down to SMALLEST_TILE_PX, so that every layer fits in about VIEW_PX (5,180 px at 30 layers otherwise)."""
    px = TILE_PX if layers <= MANY_LAYERS else min(TILE_PX, max(SMALLEST_TILE_PX, VIEW_PX / layers))
    return px * (PRESENTED if style.presentation else 1.0)


def _tile_gap(n: int) -> int:
    return max(1, round(n * 0.15))


def model_view(
    patterns: list[np.ndarray],
    queries: list[str],
    keys: list[str],
    style: Style,
    title: str,
    selected: tuple[int, int] | None = None,
    knocked_out: Collection[tuple[int, int]] = (),
    colour: str = "linear",
    roles: Mapping[tuple[int, int], str] | None = None,
    group: int = 1,
) -> go.Figure:
    """Every layer (rows) x every head (columns) of one attention kind, tiled in one heatmap.

    `group` > 1 (grouped-query attention): each run of `group` query heads that share one key/value head
    is framed together, one frame down every layer, named above the first layer ("K/V 1 (H1-H3)", ...).

    Past TILE_BINS pieces an axis is pooled (viz.lengths.pool), so a tile costs the same at any
    length; its labels then name each bin's positions and first and last pieces. Columns are
    labelled "H2 · key" and rows "L1 · query", so a point maps back to (layer, head).

    Heatmaps cannot be selected in plotly.js, so a second trace holds one transparent marker per
    tile, as large as the tile: hovering anywhere on a tile names its head, and a click selects it.
    A head's role ((layer, head) -> "previous", "first", ... in `roles`) and a knock-out are written
    inside the top of its own tile; a role every head shares is said once, in the title.
    """
    roles = roles or {}
    if not patterns:
        raise ValueError("model view needs at least one layer")
    for pattern in patterns:
        check_pattern(pattern, queries, keys)
    layers, heads = len(patterns), patterns[0].shape[0]
    qbins, kbins = bins(len(queries)), bins(len(keys))
    cells = pool(np.stack(patterns).astype(np.float32, copy=False), qbins, kbins)  # (L, H, bq, bk)
    mode = colour_mode(colour, len(keys))
    zmin, zmax, bar = colour_range(mode)
    tiles = coloured(cells, mode)
    nq, nk = len(qbins), len(kbins)
    gq, gk = _tile_gap(nq), _tile_gap(nk)
    image = np.full((layers * (gq + nq), heads * (nk + gk) - gk), np.nan, dtype=np.float32)
    weights = None if mode == "linear" else np.full_like(image, np.nan)
    all_q, all_k = axis_labels(queries), axis_labels(keys)
    qlabels, klabels = [bin_label(all_q, b) for b in qbins], [bin_label(all_k, b) for b in kbins]
    xs: list[str] = []
    ys: list[str] = []
    for head in range(heads):
        xs += [f"H{head + 1} · {k}" for k in klabels] + ["\u200b" * (len(xs) + i + 1) for i in range(gk)]
    for layer in range(layers):  # the gap above a tile belongs to its layer: its click dots sit there
        ys += [f"L{layer + 1} · " + "\u200b" * (i + 1) for i in range(gq)] + [f"L{layer + 1} · {q}" for q in qlabels]
    xs = xs[: image.shape[1]]
    shared_role = _shared_role(roles, layers, heads)
    captions = {} if shared_role else dict(roles)
    for layer in range(layers):
        for head in range(heads):
            r0, c0 = layer * (gq + nq) + gq, head * (nk + gk)
            image[r0 : r0 + nq, c0 : c0 + nk] = tiles[layer, head]
            if weights is not None:
                weights[r0 : r0 + nq, c0 : c0 + nk] = cells[layer, head]
    centre_x = [xs[h * (nk + gk) + (nk - 1) // 2] for h in range(heads)]
    centre_y = [ys[layer * (gq + nq) + gq + (nq - 1) // 2] for layer in range(layers)]
    pooled_note = pooled(len(queries)) or pooled(len(keys))
    value = "pooled weight" if pooled_note else "weight"
    shown = "%{z:.3f}" if weights is None else "%{customdata:.3f}"
    fig = style.figure(
        xaxis=dict(
            type="category",
            tickmode="array",
            tickvals=centre_x,
            ticktext=[f"H{h + 1}" for h in range(heads)],
            side="top",
            showgrid=False,
            zeroline=False,
        ),
        yaxis=dict(
            type="category",
            tickmode="array",
            tickvals=centre_y,
            ticktext=[f"L{layer + 1}" for layer in range(layers)],
            autorange="reversed",
            showgrid=False,
            zeroline=False,
        ),
    )
    fig.add_trace(
        go.Heatmap(
            z=image,
            x=xs,
            y=ys,
            hoverongaps=False,
            zmin=zmin,
            zmax=zmax,
            colorscale=style.weights,
            customdata=weights,
            colorbar=dict(title=bar, thickness=14),
            hovertemplate=f"%{{y}}<br>%{{x}}<br>{value} {shown}<extra></extra>",
        )
    )
    tile_px = _tile_px(layers, style)
    tile_height = tile_px * max(0.5, min(1.5, nq / max(nk, 1))) * nq / (nq + gq)
    # a tile's width on a wide page (about 80% of it is the plot): a marker wider than its tile would
    # take the clicks of its neighbours; past its edge, the hover distance finds the nearest tile
    tile_width = 0.8 * CONTAINER_PX * nk / (heads * (nk + gk))
    fig.add_trace(
        go.Scatter(
            x=[centre_x[h] for layer in range(layers) for h in range(heads)],
            y=[centre_y[layer] for layer in range(layers) for h in range(heads)],
            mode="markers",
            showlegend=False,
            marker=dict(
                size=min(tile_height, tile_width),
                symbol=[
                    "x" if (layer, h) in knocked_out else "square" for layer in range(layers) for h in range(heads)
                ],
                color="rgba(0,0,0,0)",
                line=dict(width=0),
            ),
            hovertext=[
                f"L{layer + 1} H{h + 1}"
                + (" (knocked out)" if (layer, h) in knocked_out else "")
                + (f", role: {roles[layer, h]}" if (layer, h) in roles else "")
                + ": click to open this head"
                for layer in range(layers)
                for h in range(heads)
            ],
            hoverinfo="text",
        )
    )
    annotations = [
        dict(
            x=xs[head * (nk + gk)],
            y=ys[layer * (gq + nq) + gq],
            xref="x",
            yref="y",
            xanchor="left",
            yanchor="top",
            text=caption,
            showarrow=False,
            font=dict(size=style.tick - 1, color="#222222"),
            bgcolor="rgba(255,255,255,0.82)",
            borderpad=2,
        )
        for (layer, head), caption in _tile_captions(captions, knocked_out, layers, heads).items()
    ]
    shapes = []
    if selected is not None:
        layer, head = selected
        if 0 <= layer < layers and 0 <= head < heads:
            r0, c0 = layer * (gq + nq) + gq, head * (nk + gk)
            outline = dict(color=style.highlight, width=style.line_width + 1)
            shapes.append(dict(type="rect", x0=c0 - 0.5, x1=c0 + nk - 0.5, y0=r0 - 0.5, y1=r0 + nq - 0.5, line=outline))
    if group > 1 and heads % group == 0:
        frames, names = _group_frames(layers, heads, group, (nq, nk, gq, gk), xs, style)
        shapes, annotations = shapes + frames, annotations + names
    # one layout update with plain dicts: each add_annotation or add_shape copies all those already there, and
    # a layout re-set from its own objects validates each again (SmolLM2's 270 tiles, most tagged "sink": 3.5 s
    # of a 4.5-s Attention page one by one, 1.2 s re-set; 0.1 s so)
    fig.update_layout(annotations=annotations, shapes=shapes)
    if pooled_note:
        title += f" · tiles pooled to {nq}×{nk} cells"
    if shared_role:
        title += f" · every head: {shared_role}"
    fig = style.apply(fig, title, height=int(80 + layers * tile_px * max(0.5, min(1.5, nq / max(nk, 1)))))
    # the tiles' markers are as large as the tiles: without fixed ranges, plotly would pad the axes for them
    fig.update_layout(margin=dict(t=90 if group <= 1 else 130), hoverdistance=int(tile_px // 2))
    fig.update_xaxes(autorange=False, range=[-0.5, len(xs) - 0.5])
    fig.update_yaxes(autorange=False, range=[len(ys) - 0.5, -0.5])
    return fig


def _group_frames(
    layers: int, heads: int, group: int, sizes: tuple[int, int, int, int], xs: list[str], style: Style
) -> tuple[list[dict], list[dict]]:
    """One frame around each group of query heads sharing one key/value head, down every layer, and the
    group's name above it: (shapes, annotations)."""
    nq, nk, gq, gk = sizes
    # inside the axes' ranges, so that the outer frames' edges are drawn on the plot's border, not clipped
    top, bottom = gq - 0.5 - gq / 2, layers * (gq + nq) - 0.5
    left, right = -0.5, len(xs) - 0.5
    frames, names = [], []
    for kv in range(heads // group):
        c0 = kv * group * (nk + gk)
        c1 = c0 + group * (nk + gk) - gk
        frames.append(
            dict(
                type="rect",
                x0=max(left, c0 - 0.5 - gk / 2),
                x1=min(right, c1 - 0.5 + gk / 2),
                y0=top,
                y1=bottom,
                line=dict(color="#444444", width=1.5, dash="dot"),
                fillcolor="rgba(0,0,0,0)",
            )
        )
        names.append(
            dict(
                x=xs[min((c0 + c1) // 2, len(xs) - 1)],
                y=1.0,
                xref="x",
                yref="paper",
                yanchor="bottom",
                text=f"K/V {kv + 1} (H{kv * group + 1}-H{(kv + 1) * group})",
                showarrow=False,
                font=dict(size=style.tick, color="#222222"),
                yshift=30 if not style.presentation else 38,
            )
        )
    return frames, names


def _shared_role(roles: Mapping[tuple[int, int], str], layers: int, heads: int) -> str | None:
    """The role every head of the view has, if one does (written once then, not on every tile)."""
    tags = {roles.get((layer, head)) for layer in range(layers) for head in range(heads)}
    return next(iter(tags)) if len(tags) == 1 and None not in tags and layers * heads > 1 else None


def _tile_captions(
    roles: Mapping[tuple[int, int], str], knocked_out: Collection[tuple[int, int]], layers: int, heads: int
) -> dict[tuple[int, int], str]:
    """What is written inside the top of each tile: its role and whether it is knocked out."""
    captions = {}
    for layer in range(layers):
        for head in range(heads):
            said = [roles[layer, head]] if (layer, head) in roles else []
            said += ["✕ knocked out"] if (layer, head) in knocked_out else []
            if said:
                captions[layer, head] = " · ".join(said)
    return captions


def model_view_legend(
    roles: Mapping[tuple[int, int], str], knocked_out: Collection[tuple[int, int]], layers: int, heads: int
) -> str:
    """The tiles' captions as one line of text, for a screen too narrow to write them on the tiles."""
    captions = _tile_captions({} if _shared_role(roles, layers, heads) else roles, knocked_out, layers, heads)
    return "; ".join(f"L{layer + 1} H{head + 1}: {caption}" for (layer, head), caption in captions.items())


def model_view_cell(x: str, y: str) -> tuple[int, int] | None:
    """(layer, head) of the model-view tile under labels (x, y); None in a gap."""
    try:
        head = int(x.split(" · ", 1)[0].removeprefix("H")) - 1
        layer = int(y.split(" · ", 1)[0].removeprefix("L")) - 1
    except (ValueError, AttributeError):
        return None
    return layer, head

"""Attention patterns as heatmaps: heads side by side, the head average, and the model view (its tiles:
viz.tiles)."""

from __future__ import annotations

import html
import math
from collections.abc import Collection, Mapping

import numpy as np
import plotly.graph_objects as go

from i18n import N_, _

from .heatmaps import PanelGrid, panel_title, row_outline
from .labels import CONTAINER_PX, axis_labels, token_axis
from .lengths import Span, bin_label, bins, colour_mode, colour_range, coloured, pool, pooled, whole, window_note
from .style import Style
from .tiles import (
    caption_gap,
    caption_trace,
    click_markers,
    common_role,
    hovered_cells,
    marker_px,
    outlines,
    tile_captions,
    tile_centres,
    tile_gap,
    tile_heatmap,
    tile_image,
    tile_labels,
    tile_size_px,
    view_layout,
)

MAP_MARGINS_PX = 250  # what a heatmap's query labels, margins and colour bar take of its width
HOVER = N_("query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>")  # said with _(HOVER) where drawn


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


def _key_labels_px(klabels: list[str], style: Style) -> float:
    """How much of a map's height its rotated key labels take (at most 150 px: a longer label is cut by plotly);
    an escaped "&lt;" is one character wide."""
    longest = max((len(html.unescape(label)) for label in klabels), default=1)
    return min(150.0, longest * style.tick * 0.5)


def rows_that_fit(klabels: list[str], style: Style, most_px: int, most_rows: int) -> int:
    """How many query rows a map at most `most_px` tall can label every one of (its title and the key labels
    `klabels` below take their share), from 4 to `most_rows`: a projector's first picture labels every row."""
    room = most_px - 100 - _key_labels_px(klabels, style)
    return max(4, min(most_rows, int(room // (style.tick * 1.3))))


def _row_shape(row_index: int, n_keys: int, style: Style, xref: str, yref: str) -> dict:
    """The outline of the query row `row_index` across a map's n_keys columns, in plotly's own form."""
    return dict(
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
    said = _(HOVER)
    return said if weights is None else said.replace("%{z:.3f}", "%{customdata:.3f}")


def _cell_text(weights: np.ndarray) -> list[list[str]]:
    """Each cell's weight to two places, a masked (NaN) cell left blank. Plotly's heatmap text template knows
    z and text but not customdata, so the real weights under a log or per-row colour go in as text."""
    return [["" if np.isnan(w) else f"{w:.2f}" for w in row] for row in weights.tolist()]


def _head_grid(heads: int, n_queries: int, klabels: list[str], style: Style) -> PanelGrid:
    """The panels' grid of `heads` heads over n_queries rows and keys labelled `klabels`: four a row, two
    when there are more than 16 keys."""
    per_row = min(heads, 4 if len(klabels) <= 16 else 2)
    n_rows = math.ceil(heads / per_row)
    panel_h = _panel_height(n_queries, style)
    width_px = CONTAINER_PX / per_row - 60
    # between two rows: the upper row's rotated key labels, then the lower row's head titles
    label_px = max((len(label) for label in klabels), default=1) * style.tick * 0.62 + style.font * 2 + 12
    height = panel_h * n_rows + int(label_px) * (n_rows - 1) + 40
    gap_x, gap_y = (0.05 if per_row > 1 else 0.0), (label_px / (height - 100) if n_rows > 1 else 0.0)
    cell_w, cell_h = (1 - gap_x * (per_row - 1)) / per_row, (1 - gap_y * (n_rows - 1)) / n_rows
    return PanelGrid(per_row, panel_h, width_px, height, gap_x, gap_y, cell_w, cell_h)


def _head_panel(
    h: int,
    grid: PanelGrid,
    z: np.ndarray,
    weights: np.ndarray | None,
    labels: tuple[list[str], list[str]],
    style: Style,
) -> tuple[dict, dict]:
    """Head h's heatmap on axes of its own (a trace for Style.drawing), and the layout of those two axes (the
    query labels only on the first panel of a row)."""
    qlabels, klabels = labels
    suffix = "" if h == 0 else str(h + 1)
    col, x0, y1 = grid.corner(h)
    trace = dict(
        type="heatmap",
        z=z[h],
        x=klabels,
        y=qlabels,
        hovertemplate=_hover(weights),
        coloraxis="coloraxis",
        xaxis=f"x{suffix}",
        yaxis=f"y{suffix}",
    )
    if weights is not None:
        trace["customdata"] = weights[h]
    axes = {
        f"xaxis{suffix}": token_axis(
            klabels,
            grid.width_px,
            style.tick,
            domain=[max(0.0, x0), min(1.0, x0 + grid.cell_w)],
            anchor=f"y{suffix}",
            tickangle=-90,
        ),
        f"yaxis{suffix}": token_axis(
            qlabels if col == 0 else [],
            grid.panel_h - 80,
            style.tick,
            domain=[max(0.0, y1 - grid.cell_h), min(1.0, y1)],
            anchor=f"x{suffix}",
            autorange="reversed",
            showticklabels=(col == 0),
        ),
    }
    return trace, axes


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
    grid = _head_grid(heads, len(qlabels), klabels, style)
    data, layout, titles, shapes = [], {}, [], []
    outlined = highlight_row - rows[0] if highlight_row is not None else None
    for h in range(heads):
        suffix = "" if h == 0 else str(h + 1)
        _col, x0, y1 = grid.corner(h)
        trace, axes = _head_panel(h, grid, z, weights, (qlabels, klabels), style)
        data.append(trace)
        layout.update(axes)
        name = _("H{head} (knocked out)", head=h + 1) if h in knocked_out else f"H{h + 1}"
        titles.append(panel_title(name, x0 + grid.cell_w / 2, y1, style))
        if _pinned(first, columns):
            shapes.append(_first_divider(f"x{suffix}", f"y{suffix}"))
        if outlined is not None and 0 <= outlined < len(qlabels):
            shapes.append(row_outline(outlined, len(klabels), f"x{suffix}", f"y{suffix}", style))
    bar_title = dict(text=bar)
    return style.drawing(
        data,
        title + window_note(rows, columns or whole(len(keys)), len(queries), len(keys), _pinned(first, columns)),
        grid.height,
        coloraxis=dict(colorscale=style.weights, cmin=zmin, cmax=zmax, colorbar=dict(title=bar_title, thickness=14)),
        annotations=titles,
        shapes=shapes,
        **layout,
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
    most_px: int | None = None,
) -> go.Figure:
    """One [queries, keys] weight matrix as a large heatmap (a single head or the head average),
    inside a window (default: all) and in a colour mode of viz.lengths; `first` keeps the first key in
    view before a key window that starts after it. `width_px`: the chart's width on the page (half of it in
    one of two columns), which the key labels are thinned to so that none overlaps; `most_px`: the tallest it
    may be (a projector's first picture)."""
    check_pattern(matrix, queries, keys)
    z, weights, qlabels, klabels, rows, mode = _windowed(matrix, queries, keys, rows, columns, colour, first)
    zmin, zmax, bar = colour_range(mode)
    if show_values is None:  # only where a "0.00" fits in a cell (the map may fill half the page)
        show_values = z.size <= 300 and len(klabels) <= (7 if style.presentation else 12)
    height = _panel_height(len(qlabels), style, low=320, high=760)
    rows_px: float = height - 100
    if most_px is not None and height > most_px:  # the rotated key labels below take their share of a short map
        height = most_px
        rows_px = height - 100 - _key_labels_px(klabels, style)
    heatmap = dict(
        type="heatmap",
        z=z,
        x=klabels,
        y=qlabels,
        hovertemplate=_hover(weights),
        zmin=zmin,
        zmax=zmax,
        colorscale=style.weights,
        colorbar=dict(title=dict(text=bar), thickness=14),
        textfont=dict(size=style.tick),
    )
    if weights is not None:
        heatmap["customdata"] = weights
    if show_values:
        heatmap.update(text=_cell_text(z if weights is None else weights), texttemplate="%{text}")
    shapes = []
    if highlight_row is not None and 0 <= highlight_row - rows[0] < len(qlabels):
        shapes.append(_row_shape(highlight_row - rows[0], len(klabels), style, "x", "y"))
    if _pinned(first, columns):
        shapes.append(_first_divider("x", "y"))
    return style.drawing(
        [heatmap],
        title + window_note(rows, columns or whole(len(keys)), len(queries), len(keys), _pinned(first, columns)),
        height,
        xaxis=token_axis(klabels, min(width_px - MAP_MARGINS_PX, 900), style.tick, tickangle=-90),
        yaxis=token_axis(qlabels, rows_px, style.tick, autorange="reversed"),
        shapes=shapes,
    )


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
    most_px: int | None = None,
) -> go.Figure:
    """Every layer (rows) x every head (columns) of one attention kind, tiled in one heatmap, at most
    `most_px` tall when given (its tiles smaller).

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
    shared_role = common_role(roles, layers, heads)
    captions = tile_captions({} if shared_role else roles, knocked_out, layers, heads)
    aspect = max(0.5, min(1.5, nq / max(nk, 1)))
    tile_px = tile_size_px(layers, style)
    if most_px is not None:
        tile_px = min(tile_px, (most_px - 80) / (layers * aspect))
    gq = caption_gap(nq, tile_px * aspect, style) if captions else tile_gap(nq)
    gk = tile_gap(nk)
    sizes = (nq, nk, gq, gk)
    cell_hover = hovered_cells(tile_px, sizes, heads)
    image, weights = tile_image(cells, tiles, sizes, weights_too=cell_hover and mode != "linear")
    xs, ys = tile_labels(layers, heads, _bin_labels(queries, qbins), _bin_labels(keys, kbins), gq, gk)
    centre_x, centre_y = tile_centres(xs, ys, sizes, layers, heads)
    pooled_note = pooled(len(queries)) or pooled(len(keys))
    traces = [
        tile_heatmap(image, weights, (xs, ys), (zmin, zmax, bar), pooled_note, style, cell_hover),
        click_markers(centre_x, centre_y, marker_px(tile_px, sizes, heads), knocked_out, roles),
        *([caption_trace(captions, sizes, style)] if captions else []),
    ]
    shapes, annotations = outlines(selected, layers, heads, group, sizes, xs, style)
    # all in one go, with plain dicts: each add_annotation or add_shape copies all those already there, and a
    # layout re-set from its own objects checks each again (SmolLM2's 270 tiles, most tagged "sink": 3.5 s of a
    # 4.5-s Attention page one by one, 1.2 s re-set; 0.1 s so)
    return style.drawing(
        traces,
        _view_title(title, (nq, nk) if pooled_note else None, shared_role),
        int(80 + layers * tile_px * aspect),
        annotations=annotations,
        shapes=shapes,
        # room above for the K/V groups' names; hovering reaches half a tile
        margin=dict(t=90 if group <= 1 else 130),
        hoverdistance=int(tile_px // 2),
        **view_layout(centre_x, centre_y, len(xs), len(ys), bool(captions)),
    )


def _bin_labels(pieces: list[str], binned: list[Span]) -> list[str]:
    """Each bin's label on a model-view axis over `pieces` (viz.lengths.bin_label)."""
    labels = axis_labels(pieces)
    return [bin_label(labels, b) for b in binned]


def _view_title(title: str, pooled_to: tuple[int, int] | None, shared_role: str | None) -> str:
    """The model view's title, then the cells its tiles are pooled to (query x key bins, when pooled) and
    the role every head shares (when one does)."""
    if pooled_to:
        title = _("{title} · tiles pooled to {q}×{k} cells", title=title, q=pooled_to[0], k=pooled_to[1])
    if shared_role:
        title = _("{title} · every head: {role}", title=title, role=shared_role)
    return title


def model_view_legend(
    roles: Mapping[tuple[int, int], str], knocked_out: Collection[tuple[int, int]], layers: int, heads: int
) -> str:
    """The tiles' captions as one line of text, for a screen too narrow to write them on the tiles."""
    captions = tile_captions({} if common_role(roles, layers, heads) else roles, knocked_out, layers, heads)
    # i18n: between two tiles' captions in one line ("L1 H2: sink; L3 H1: previous")
    return _("; ").join(
        _("L{layer} H{head}: {caption}", layer=layer + 1, head=head + 1, caption=caption)
        for (layer, head), caption in captions.items()
    )


def model_view_cell(x: str, y: str) -> tuple[int, int] | None:
    """(layer, head) of the model-view tile under labels (x, y); None in a gap."""
    try:
        head = int(x.split(" · ", 1)[0].removeprefix("H")) - 1
        layer = int(y.split(" · ", 1)[0].removeprefix("L")) - 1
    except (ValueError, AttributeError):
        return None
    return layer, head

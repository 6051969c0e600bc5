"""The tiles of the model view (viz.attention.model_view): every layer's and head's tile in one image
with gaps between them, the image's labels and axes, a tile's size on the page, the markers that make
a tile clickable, the captions written on it, the outline of the selected one and the frames around
the heads that share keys and values."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np

from i18n import _

from .labels import CONTAINER_PX
from .levels import TOP, level_image, level_scale, level_ticks
from .style import Style

TILE_PX = 170  # a model-view tile's height on a wide page (presentation mode: × PRESENTED)
MANY_LAYERS = 12  # past this many layers the tiles shrink, so the whole view stays about VIEW_PX tall
VIEW_PX = 2400
# The name of a tile's caption annotation: a phone's small picture leaves them out (tiles too narrow for their
# words), the legend or the enlarged picture says them (ui.page.markup, ui/room/follow.html)
TILE_CAPTION = "tile-caption"
SMALLEST_TILE_PX = 70
PRESENTED = 220 / 170
# A cell smaller than this on a wide page is not hovered one by one: the mouse skips across it (SmolLM2's 30 layers'
# tiles of 32 pooled rows are 2.5 px a cell), and the cells' hover was most of the view's bytes (tile_heatmap)
HOVERED_CELL_PX = 4


def tile_size_px(layers: int, style: Style) -> float:
    """A model-view tile's height: TILE_PX up to MANY_LAYERS layers; for a deeper model (SmolLM2's 30) less,
    down to SMALLEST_TILE_PX, so that every layer fits in about VIEW_PX (5,180 px at 30 layers otherwise)."""
    px = TILE_PX if layers <= MANY_LAYERS else min(TILE_PX, max(SMALLEST_TILE_PX, VIEW_PX / layers))
    return px * (PRESENTED if style.presentation else 1.0)


def tile_gap(n: int) -> int:
    return max(1, round(n * 0.15))


def caption_gap(nq: int, layer_px: float, style: Style) -> int:
    """The gap rows above each tile when tiles carry captions: tall enough to hold one (its font, padding and
    border), so that a caption sits over the gap, never over the tile's first rows; at most a tile's height.
    `layer_px` is a layer's share of the figure's height (a tile and its gap)."""
    needed = style.tick + 7
    plot_px = 0.9 * layer_px  # the figure's margins take about a tenth of a layer's share
    if plot_px <= 2 * needed:
        return nq
    return min(nq, max(tile_gap(nq), int(np.ceil(needed * nq / (plot_px - needed)))))


Sizes = tuple[int, int, int, int]  # (cells down a tile, cells across it, gap rows above it, gap columns after it)


def tile_image(
    cells: np.ndarray, tiles: np.ndarray, sizes: Sizes, weights_too: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """Every tile (L, H, bq, bk) in one image, blank (NaN) in the gaps: the colour values, and with `weights_too`
    the pooled weights under them (the hover's, when the colours are not the weights)."""
    layers, heads = tiles.shape[:2]
    nq, nk, gq, gk = sizes
    image = np.full((layers * (gq + nq), heads * (nk + gk) - gk), np.nan, dtype=np.float32)
    weights = np.full_like(image, np.nan) if weights_too else None
    for layer in range(layers):
        for head in range(heads):
            r0, c0 = layer * (gq + nq) + gq, head * (nk + gk)
            image[r0 : r0 + nq, c0 : c0 + nk] = tiles[layer, head]
            if weights is not None:
                weights[r0 : r0 + nq, c0 : c0 + nk] = cells[layer, head]
    return image, weights


def tile_labels(
    layers: int, heads: int, qlabels: list[str], klabels: list[str], gq: int, gk: int
) -> tuple[list[str], list[str]]:
    """The image's category labels, one per column ("H2 · key") and row ("L1 · query"); a gap's labels
    are zero-width spaces, each of a length of its own so that no two are the same."""
    xs: list[str] = []
    ys: list[str] = []
    for head in range(heads):
        xs += [f"H{head + 1} · {k}" for k in klabels] + ["\u200b" * (len(xs) + i + 1) for i in range(gk)]
    for layer in range(layers):  # the gap above a tile belongs to its layer: its click dots sit there
        ys += [f"L{layer + 1} · " + "\u200b" * (i + 1) for i in range(gq)] + [f"L{layer + 1} · {q}" for q in qlabels]
    return xs[: heads * (len(klabels) + gk) - gk], ys


def tile_centres(xs: list[str], ys: list[str], sizes: Sizes, layers: int, heads: int) -> tuple[list[str], list[str]]:
    """The labels of the column at the middle of each head's tiles, and of the row at the middle of each layer's."""
    nq, nk, gq, gk = sizes
    centre_x = [xs[h * (nk + gk) + (nk - 1) // 2] for h in range(heads)]
    centre_y = [ys[layer * (gq + nq) + gq + (nq - 1) // 2] for layer in range(layers)]
    return centre_x, centre_y


def tile_heatmap(
    image: np.ndarray,
    weights: np.ndarray | None,
    labels: tuple[list[str], list[str]],
    colours: tuple[float, float, str],
    pooled_note: bool,
    style: Style,
    cell_hover: bool = True,
) -> dict:
    """The image of every tile as one heatmap over its (column, row) labels, on the colour scale
    (zmin, zmax, colour-bar title); with `cell_hover`, the hover shows the weights under a colour mode that is not
    linear, and says "pooled weight" when the tiles are pooled. Without it, cells too small to point at one by one
    (a tile's marker names its head, click_markers), the colours go as levels (viz/levels.py), a byte a cell.
    A trace for Style.drawing, in plotly's own form."""
    xs, ys = labels
    zmin, zmax, bar = colours
    if not cell_hover:
        return dict(
            type="heatmap",
            z=level_image(image, zmin, zmax),
            x=xs,
            y=ys,
            zmin=0,
            zmax=TOP,
            colorscale=level_scale(style.weights),
            colorbar=dict(title=dict(text=bar), thickness=14, **level_ticks(zmin, zmax)),
            hoverinfo="skip",
        )
    value = _("pooled weight") if pooled_note else _("weight")
    shown = "%{z:.3f}" if weights is None else "%{customdata:.3f}"
    heatmap = dict(
        type="heatmap",
        z=image,
        x=xs,
        y=ys,
        hoverongaps=False,
        zmin=zmin,
        zmax=zmax,
        colorscale=style.weights,
        colorbar=dict(title=dict(text=bar), thickness=14),
        hovertemplate=f"%{{y}}<br>%{{x}}<br>{value} {shown}<extra></extra>",
    )
    if weights is not None:
        heatmap["customdata"] = weights
    return heatmap


def _tile_box(tile_px: float, sizes: Sizes, heads: int) -> tuple[float, float]:
    """A tile's height (of a layer's `tile_px`, the gap above taken off) and width on a wide page, in px."""
    nq, nk, gq, gk = sizes
    tile_height = tile_px * max(0.5, min(1.5, nq / max(nk, 1))) * nq / (nq + gq)
    # about 80% of a wide page's width is the plot
    tile_width = 0.8 * CONTAINER_PX * nk / (heads * (nk + gk))
    return tile_height, tile_width


def marker_px(tile_px: float, sizes: Sizes, heads: int) -> float:
    """A click marker's size in px: its tile's height or its width, the smaller. A marker wider than its tile
    would take the clicks of its neighbours; past its edge, the hover distance finds the nearest tile."""
    return min(_tile_box(tile_px, sizes, heads))


def hovered_cells(tile_px: float, sizes: Sizes, heads: int) -> bool:
    """Whether a tile's cells are large enough on a wide page (HOVERED_CELL_PX) for a mouse to point at one."""
    height, width = _tile_box(tile_px, sizes, heads)
    return min(height / sizes[0], width / sizes[1]) >= HOVERED_CELL_PX


def view_layout(centre_x: list[str], centre_y: list[str], columns: int, rows: int, captions: bool) -> dict:
    """The view's axes over its `columns` x `rows` of cells (the first row on top): a head's name above the centre
    of its column of tiles, a layer's beside its row; with `captions`, the captions' axes over them too."""
    # the tiles' markers are as large as the tiles: without fixed ranges, plotly would pad the axes for them
    layout = dict(
        xaxis=dict(
            type="category",
            tickmode="array",
            tickvals=centre_x,
            ticktext=[f"H{h + 1}" for h in range(len(centre_x))],
            side="top",
            showgrid=False,
            zeroline=False,
            autorange=False,
            range=[-0.5, columns - 0.5],
        ),
        yaxis=dict(
            type="category",
            tickmode="array",
            tickvals=centre_y,
            ticktext=[f"L{layer + 1}" for layer in range(len(centre_y))],
            autorange=False,
            range=[rows - 0.5, -0.5],
            showgrid=False,
            zeroline=False,
        ),
    )
    return layout | caption_axes(columns, rows) if captions else layout


def click_markers(
    centre_x: list[str],
    centre_y: list[str],
    size: float,
    knocked_out: Collection[tuple[int, int]],
    roles: Mapping[tuple[int, int], str],
) -> dict:
    """One transparent marker of `size` px on the centre of every tile: its hover names the head (its
    role, whether it is knocked out) and a click on it selects the head. A trace for Style.drawing."""
    layers, heads = len(centre_y), len(centre_x)
    return dict(
        type="scatter",
        x=[centre_x[h] for layer in range(layers) for h in range(heads)],
        y=[centre_y[layer] for layer in range(layers) for h in range(heads)],
        mode="markers",
        showlegend=False,
        marker=dict(
            size=size,
            symbol=["x" if (layer, h) in knocked_out else "square" for layer in range(layers) for h in range(heads)],
            color="rgba(0,0,0,0)",
            line=dict(width=0),
        ),
        hovertext=[
            _tile_hover(layer, h, (layer, h) in knocked_out, roles.get((layer, h)))
            for layer in range(layers)
            for h in range(heads)
        ],
        hoverinfo="text",
    )


def _tile_hover(layer: int, head: int, knocked: bool, role: str | None) -> str:
    """What hovering a tile says: its head, whether it is knocked out, its role, and that a click opens it."""
    at = {"layer": layer + 1, "head": head + 1}
    if role is not None and knocked:
        return _("L{layer} H{head} (knocked out), role: {role}: click to open this head", role=role, **at)
    if role is not None:
        return _("L{layer} H{head}, role: {role}: click to open this head", role=role, **at)
    if knocked:
        return _("L{layer} H{head} (knocked out): click to open this head", **at)
    return _("L{layer} H{head}: click to open this head", **at)


def caption_trace(captions: Mapping[tuple[int, int], str], sizes: Sizes, style: Style) -> dict:
    """Each tile's caption ((layer, head) -> text) written in the gap over its top left corner (caption_gap makes
    room for it there): one text trace on CAPTION_AXES, whose coordinates are the cells' own, so that a caption
    starts at its tile's very edge. Not annotations: plotly measures an annotation's box in the page each time it
    lays the chart out (SmolLM2's 178 captions took 2.3 s of chromium's 10 s for a new prompt on Attention). A
    trace for Style.drawing."""
    nq, nk, gq, gk = sizes
    cells = list(captions)
    return dict(
        type="scatter",
        x=[head * (nk + gk) - 0.5 for _, head in cells],
        y=[layer * (gq + nq) + gq - 0.5 for layer, _ in cells],
        text=[captions[cell] for cell in cells],
        mode="text",
        textposition="top right",
        textfont=dict(size=style.tick - 1, color="#222222"),
        hoverinfo="skip",
        showlegend=False,
        name=TILE_CAPTION,
        xaxis="x2",
        yaxis="y2",
    )


def caption_axes(columns: int, rows: int) -> dict:
    """The hidden axes of the captions, over the tiles' own: column and row numbers, cell centres on integers."""
    hidden = dict(visible=False, autorange=False, fixedrange=False, showgrid=False, zeroline=False)
    return dict(
        xaxis2=dict(hidden, overlaying="x", range=[-0.5, columns - 0.5]),
        yaxis2=dict(hidden, overlaying="y", range=[rows - 0.5, -0.5]),
    )


def outlines(
    selected: tuple[int, int] | None, layers: int, heads: int, group: int, sizes: Sizes, xs: list[str], style: Style
) -> tuple[list[dict], list[dict]]:
    """What is drawn over the tiles: (shapes, annotations). The outline of the selected (layer, head)'s tile, and
    with `group` > 1 the frames of the heads that share keys and values, with their names."""
    shapes = selected_outline(selected, layers, heads, sizes, style)
    if group > 1 and heads % group == 0:
        frames, names = group_frames(layers, heads, group, sizes, xs, style)
        return shapes + frames, names
    return shapes, []


def selected_outline(
    selected: tuple[int, int] | None, layers: int, heads: int, sizes: Sizes, style: Style
) -> list[dict]:
    """The outline around the selected (layer, head)'s tile: one shape, or none when nothing (or a head
    outside the view) is selected."""
    shapes = []
    if selected is not None:
        layer, head = selected
        if 0 <= layer < layers and 0 <= head < heads:
            nq, nk, gq, gk = sizes
            r0, c0 = layer * (gq + nq) + gq, head * (nk + gk)
            outline = dict(color=style.highlight, width=style.line_width + 1)
            shapes.append(dict(type="rect", x0=c0 - 0.5, x1=c0 + nk - 0.5, y0=r0 - 0.5, y1=r0 + nq - 0.5, line=outline))
    return shapes


def group_frames(
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


def common_role(roles: Mapping[tuple[int, int], str], layers: int, heads: int) -> str | None:
    """The role every head of the view has, if one does (written once then, not on every tile)."""
    tags = {roles.get((layer, head)) for layer in range(layers) for head in range(heads)}
    return next(iter(tags)) if len(tags) == 1 and None not in tags and layers * heads > 1 else None


def tile_captions(
    roles: Mapping[tuple[int, int], str], knocked_out: Collection[tuple[int, int]], layers: int, heads: int
) -> dict[tuple[int, int], str]:
    """What is written inside the top of each tile: its role and whether it is knocked out."""
    captions = {}
    for layer in range(layers):
        for head in range(heads):
            said = [roles[layer, head]] if (layer, head) in roles else []
            said += [_("✕ knocked out")] if (layer, head) in knocked_out else []
            if said:
                captions[layer, head] = " · ".join(said)
    return captions

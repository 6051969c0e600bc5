"""Which heads wrote a piece (direct logit attribution, model.analysis): each component's share of one output
piece's logit as layers x heads heatmaps on one signed scale, the largest shares as bars, and the pieces one
head's output raises and lowers most."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from i18n import _

from .heatmaps import panel_title
from .labels import escape_plotly, plotly_piece, reads_bytes, thin_ticks
from .style import KEEPS_WIDTH, RIGHT_LEGEND, Style

LEAST_REACH = 1e-6  # the colour scale's half-width when every share is 0
ROW_PX, PRESENTATION_ROW_PX = 20, 28  # a layer's row at 13 px type, and at a projector's 20 px
LEAST_HEIGHT_PX, PRESENTATION_LEAST_HEIGHT_PX = 300, 400  # three layers still get cells a pointer finds
FFN_COLUMNS = 1.6  # the feed-forward panel's width in head columns: room for its title over one column
PANEL_GAP = 0.04  # between two panels, a share of the paper's width
PANELS_PX = 860  # what the panels share of a wide chart's width (its labels and colour bar aside)
KNOCKED_OUT = "×"
NO_CLICK = "rgba(0,0,0,0)"  # the cells' click markers: invisible (viz.tiles.click_markers does the same)
RAISES, LOWERS = 3, 0  # style.palette: vermillion raises the piece and blue lowers it, as the heatmaps' red and blue
BAR_PX, PRESENTATION_BAR_PX = 26, 36
VALUE_ROOM = 0.25  # past the longest bar, for its value's label, a share of the bars' span
ZERO_LINE = "#444444"
WRITES_GAP = 0.1  # between what a head raises and what it lowers: the bars' values face each other there


def signed(value: float) -> str:
    """A share with its sign: "+0.42", "−1.30" (a minus sign, as the axes write it; three decimals under 0.01:
    "+0.004")."""
    return f"{value:+.{2 if value == 0 or abs(value) >= 0.01 else 3}f}".replace("-", "−")


def _domains(widths: Sequence[float], gap: float = PANEL_GAP) -> list[tuple[float, float]]:
    """Side-by-side domains over the paper's width, each as wide as its share of `widths`, `gap` apart."""
    room = 1 - gap * (len(widths) - 1)
    found, x = [], 0.0
    for width in widths:
        span = room * width / sum(widths)
        found.append((x, min(1.0, x + span)))
        x += span + gap
    return found


def _cell_hover(block: str, layer: int, head: int | None, value: float, knocked: bool) -> str:
    """What hovering a cell says: its block, layer and head (1-based) and its share with its sign."""
    at = dict(block=block, layer=layer + 1, share=signed(value))
    if head is None:
        return _("{block}<br>layer {layer}<br>share of the logit: {share}", **at)
    if knocked:
        return _(
            "{block}<br>layer {layer}, head {head} (knocked out)<br>share of the logit: {share}", head=head + 1, **at
        )
    return _("{block}<br>layer {layer}, head {head}<br>share of the logit: {share}", head=head + 1, **at)


def _panel(
    values: np.ndarray,
    block: int | None,
    name: str,
    off: Collection[tuple[int, int, int]],
    where: tuple[str, float],
    style: Style,
) -> list[dict]:
    """One panel's traces, plotly's own dicts, on axes x{suffix}, y{suffix} (`where`: that suffix and the cells' size
    in px): its heatmap on the shared colour axis (knocked-out cells written KNOCKED_OUT) and one invisible marker
    per cell, which hovers and takes the click (plotly.js selects no heatmap cell), its customdata [block, layer,
    head] (["ffn", layer, -1] on the feed-forward panel)."""
    (suffix, size), layers, heads = where, *values.shape
    cells = [(layer, head) for layer in range(layers) for head in range(heads)]
    knocked = {(layer, head) for layer, head in cells if block is not None and (block, layer, head) in off}
    text = [[KNOCKED_OUT if (layer, head) in knocked else "" for head in range(heads)] for layer in range(layers)]
    axes = dict(xaxis=f"x{suffix}", yaxis=f"y{suffix}")
    heatmap = dict(
        type="heatmap",
        z=values,
        x=list(range(heads)),
        y=list(range(layers)),
        coloraxis="coloraxis",
        text=text,
        textfont=dict(size=style.font + 4, color="#111111"),
        hoverinfo="skip",
        **axes,
    )
    if knocked:
        heatmap["texttemplate"] = "%{text}"
    markers = dict(
        type="scatter",
        x=[head for _layer, head in cells],
        y=[layer for layer, _head in cells],
        mode="markers",
        showlegend=False,
        marker=dict(size=size, symbol="square", color=NO_CLICK, line=dict(width=0)),
        customdata=[
            [block if block is not None else "ffn", layer, head if block is not None else -1] for layer, head in cells
        ],
        hovertext=[
            _cell_hover(
                name, layer, head if block is not None else None, float(values[layer, head]), (layer, head) in knocked
            )
            for layer, head in cells
        ],
        hoverinfo="text",
        **axes,
    )
    return [heatmap, markers]


def _panel_axes(
    suffix: str, domain: tuple[float, float], ticks: list[str], rows: tuple[int, float], style: Style
) -> dict:
    """The x and y axes of one panel: its columns' labels below, layer 1 at the bottom (labelled on the first
    panel only, as many as `rows` (layers, plot px) leaves room for)."""
    layers, plot_px = rows
    shown, texts = thin_ticks(ticks, PANELS_PX * (domain[1] - domain[0]), style.tick * 1.6)
    rows_shown, row_texts = thin_ticks([f"L{layer + 1}" for layer in range(layers)], plot_px, style.tick)
    common = dict(showgrid=False, zeroline=False, tickmode="array", autorange=False)
    return {
        f"xaxis{suffix}": dict(
            domain=list(domain),
            anchor=f"y{suffix}",
            range=[-0.5, len(ticks) - 0.5],
            tickvals=shown,
            ticktext=texts,
            **common,
        ),
        f"yaxis{suffix}": dict(
            anchor=f"x{suffix}",
            range=[-0.5, layers - 0.5],
            tickvals=rows_shown,
            ticktext=row_texts,
            showticklabels=suffix == "",
            ticks="outside" if suffix == "" else "",
            **({"matches": "y"} if suffix else {}),
            **common,
        ),
    }


def _outline(selected: tuple[int, int, int] | None, shapes: Sequence[tuple[int, int]], style: Style) -> list[dict]:
    """The selected (block, layer, head)'s cell outlined on its panel's axes; none when nothing (or a cell outside
    the panels, `shapes`: each block's (layers, heads)) is selected."""
    if selected is None:
        return []
    block, layer, head = selected
    if not (0 <= block < len(shapes) and 0 <= layer < shapes[block][0] and 0 <= head < shapes[block][1]):
        return []
    suffix = "" if block == 0 else str(block + 1)
    return [
        dict(
            type="rect",
            x0=head - 0.5,
            x1=head + 0.5,
            y0=layer - 0.5,
            y1=layer + 0.5,
            xref=f"x{suffix}",
            yref=f"y{suffix}",
            line=dict(color=style.highlight, width=style.line_width + 1),
        )
    ]


def shares_heatmap(
    blocks: Sequence[tuple[str, np.ndarray]],
    ffn: np.ndarray,
    style: Style,
    ffn_title: str,
    off: Collection[tuple[int, int, int]] = (),
    selected: tuple[int, int, int] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Each attention head's share of one piece's logit, a panel of (layers, heads) per attention kind in `blocks`
    ((title, array) each, said already), and the feed-forward blocks' (`ffn`, one per layer) in a narrow panel of
    their own at the right titled `ffn_title`: one diverging scale around 0 for them all, layer 1 at the bottom.

    Heads knocked out (`off`: (block, layer, head), 0-based) are written KNOCKED_OUT; the `selected` one is
    outlined. A click on a head's cell is read back with `shares_cell`."""
    if not blocks:
        raise ValueError("give one attention block at least")
    arrays = [np.asarray(values, dtype=float) for _name, values in blocks]
    ffn = np.asarray(ffn, dtype=float).reshape(-1, 1)
    layers = ffn.shape[0]
    if any(values.ndim != 2 or values.shape[0] != layers for values in arrays):
        raise ValueError(f"every block needs one row per layer ({layers}, as ffn has)")
    every = np.concatenate([values.ravel() for values in [*arrays, ffn]])
    finite = np.abs(every[np.isfinite(every)])
    reach = max(float(finite.max()) if finite.size else 0.0, LEAST_REACH)
    row_px = PRESENTATION_ROW_PX if style.presentation else ROW_PX
    least = PRESENTATION_LEAST_HEIGHT_PX if style.presentation else LEAST_HEIGHT_PX
    top = (60 if title else 30) + style.font * 2
    height = max(least, layers * row_px + top + 3 * style.tick + 20)
    plot_px = height - top - 3 * style.tick - 20
    domains = _domains([values.shape[1] for values in arrays] + [FFN_COLUMNS])
    names = [name for name, _values in blocks] + [ffn_title]
    layout: dict = {}
    traces: list[dict] = []
    size = max(6.0, min(plot_px / layers, 40.0) - 2)
    for index, (values, domain) in enumerate(zip([*arrays, ffn], domains, strict=True)):
        suffix = "" if index == 0 else str(index + 1)
        block = index if index < len(arrays) else None
        ticks = [f"H{head + 1}" for head in range(values.shape[1])] if block is not None else [_("FFN")]
        layout.update(_panel_axes(suffix, domain, ticks, (layers, plot_px), style))
        traces += _panel(values, block, names[index], off, (suffix, size), style)
    return style.drawing(
        traces,
        title,
        int(height),
        coloraxis=dict(
            colorscale=style.diverging,
            cmin=-reach,
            cmax=reach,
            colorbar=dict(title=dict(text=_("share of the logit"), side="right"), thickness=12, len=0.9),
        ),
        annotations=[panel_title(name, (d[0] + d[1]) / 2, 1.0, style) for name, d in zip(names, domains, strict=True)],
        shapes=_outline(selected, [values.shape for values in arrays], style),
        hovermode="closest",
        margin=dict(t=top),
        **layout,
    )


def shares_cell(point: Mapping) -> tuple[int, int, int] | None:
    """(block, layer, head), 0-based, of the head cell under a clicked point of `shares_heatmap` (a selection
    event's `points[0]`); None for the feed-forward panel or anything else."""
    data = point.get("customdata")
    if not isinstance(data, list | tuple) or len(data) != 3:
        return None
    try:
        block, layer, head = (int(value) for value in data)
    except (TypeError, ValueError):
        return None
    return (block, layer, head) if min(block, layer, head) >= 0 else None


def _value_range(values: np.ndarray) -> list[float]:
    """An axis range over bars of `values` from 0, with VALUE_ROOM past the longest on each side that has any."""
    low, high = min(0.0, float(values.min(initial=0.0))), max(0.0, float(values.max(initial=0.0)))
    span = (high - low) or 1.0
    return [low - (VALUE_ROOM if low < 0 else 0.02) * span, high + (VALUE_ROOM if high > 0 else 0.02) * span]


def _bars(
    values: np.ndarray, rows: Sequence[int], hover: Sequence[str], colour: str, style: Style, **extra: object
) -> dict:
    """Horizontal bars of `values` at `rows` (plotly's own dict), each with its signed value at its end (at the
    ticks' size) and `hover` over it."""
    return dict(
        type="bar",
        x=values,
        y=list(rows),
        orientation="h",
        marker=dict(color=colour),
        text=[signed(float(value)) for value in values],
        textposition="outside",
        textfont=dict(size=style.tick),
        cliponaxis=False,
        customdata=list(hover),
        hovertemplate="%{customdata}<br>%{x:+.3f}<extra></extra>",
        **extra,
    )


def _bars_height(rows: int, style: Style, title: str | None) -> int:
    return max(220, rows * (PRESENTATION_BAR_PX if style.presentation else BAR_PX) + (110 if title else 80))


def top_bars(
    labels: Sequence[str], values: np.ndarray, style: Style, axis_title: str, title: str | None = None
) -> go.Figure:
    """The components with the largest shares (`labels`, said already, and their `values`, in the caller's order:
    the first drawn at the top), as horizontal bars from a zero line: raising the piece in vermillion, lowering it
    in blue, each bar's value written at its end."""
    values = np.asarray(values, dtype=float)
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} values")
    texts = [escape_plotly(label) for label in labels]
    rows = np.arange(len(values))
    bars = []
    for sign, name, colour in ((1, _("raises the piece"), RAISES), (-1, _("lowers the piece"), LOWERS)):
        picked = rows[values > 0] if sign > 0 else rows[values <= 0]
        if picked.size:
            hover = [texts[row] for row in picked]
            bars.append(_bars(values[picked], picked.tolist(), hover, style.palette[colour], style, name=name))
    return style.drawing(
        bars,
        title,
        _bars_height(len(values), style, title),
        xaxis=dict(
            title=dict(text=axis_title),
            range=_value_range(values),
            zeroline=True,
            zerolinecolor=ZERO_LINE,
            showgrid=True,
        ),
        yaxis=dict(
            tickmode="array", tickvals=list(rows), ticktext=texts, range=[len(values) - 0.5, -0.5], showgrid=False
        ),
        legend=RIGHT_LEGEND,
        barmode="overlay",
        bargap=0.3,
        showlegend=True,
        # the parts' long names at the left and the legend at the right leave a phone's bars no room for their values
        meta=KEEPS_WIDTH,
    )


def writes_bars(
    promoted: Sequence[tuple[str, float]],
    suppressed: Sequence[tuple[str, float]],
    style: Style,
    title: str | None = None,
) -> go.Figure:
    """What one head writes: the vocabulary pieces its output raises most (`promoted`, (piece, logit change > 0))
    at the left and lowers most (`suppressed`, changes < 0) at the right, each largest first at the top, the bars
    hanging from their zero line beside their pieces' labels (the right panel's on its right)."""
    byte_level = reads_bytes([piece for piece, _value in [*promoted, *suppressed]])
    rows = max(len(promoted), len(suppressed), 1)
    layout, notes, traces = {}, [], []
    sides = ((promoted, _("pieces it raises most"), RAISES), (suppressed, _("pieces it lowers most"), LOWERS))
    for index, (domain, (pairs, name, colour)) in enumerate(zip(_domains([1, 1], WRITES_GAP), sides, strict=True)):
        suffix = "" if index == 0 else "2"
        labels = [plotly_piece(piece, byte_level) for piece, _value in pairs]
        values = np.array([value for _piece, value in pairs], dtype=float)
        layout[f"xaxis{suffix}"] = dict(
            domain=list(domain),
            anchor=f"y{suffix}",
            title=dict(text=_("logit change")),
            range=_value_range(values),
            zeroline=True,
            zerolinecolor=ZERO_LINE,
        )
        layout[f"yaxis{suffix}"] = dict(
            anchor=f"x{suffix}",
            side="right" if index else "left",
            tickmode="array",
            tickvals=list(range(len(labels))),
            ticktext=labels,
            range=[rows - 0.5, -0.5],
            showgrid=False,
        )
        notes.append(panel_title(name, (domain[0] + domain[1]) / 2, 1.0, style))
        if pairs:
            axes = dict(xaxis=f"x{suffix}", yaxis=f"y{suffix}", showlegend=False)
            traces.append(_bars(values, range(len(values)), labels, style.palette[colour], style, **axes))
    return style.drawing(
        traces,
        title,
        _bars_height(rows, style, title),
        annotations=notes,
        bargap=0.3,
        margin=dict(t=(60 if title else 30) + style.font * 2),
        **layout,
    )

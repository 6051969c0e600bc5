"""Heatmap panels on labelled token axes: generic side-by-side panels, each with its own scale (`panels`),
and what every grid of panels draws (a panel's title, the outline of a query's row, the places of a grid of
one panel per head)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from i18n import _

from .labels import CONTAINER_PX, axis_labels, token_axis
from .lengths import Span, whole, window_note
from .style import WIDE_FIGURE_PX, Style


@dataclass(frozen=True)
class Scale:
    """A colour scale for one panel: name, range and colour-bar title."""

    colorscale: str | list[list]  # a plotly scale's name, or its [position, colour] stops
    zmin: float | None = None
    zmax: float | None = None
    label: str = ""


@dataclass(frozen=True)
class PanelGrid:
    """Where a grid of panels, one per head, sits: `per_row` a row, each `panel_h` px tall and `width_px`
    wide on a wide page, `cell_w` x `cell_h` of the paper apart by `gap_x` and `gap_y`; `height`: the
    figure's."""

    per_row: int
    panel_h: int
    width_px: float
    height: int
    gap_x: float
    gap_y: float
    cell_w: float
    cell_h: float

    def corner(self, h: int) -> tuple[int, float, float]:
        """(column, left x, top y) of head h's panel, in fractions of the paper."""
        row, col = divmod(h, self.per_row)
        return col, col * (self.cell_w + self.gap_x), 1 - row * (self.cell_h + self.gap_y)


def panel_title(text: str, x: float, y: float, style: Style) -> dict:
    """A panel's title: an annotation centred above the point (x, y) of the paper (the panel's top middle)."""
    return dict(
        text=text,
        x=x,
        y=y,
        xref="paper",
        yref="paper",
        xanchor="center",
        yanchor="bottom",
        showarrow=False,
        font=dict(size=style.font),
    )


def row_outline(row: int, n_keys: int, xref: str, yref: str, style: Style) -> dict:
    """The outline of one row (a query) across the n_keys columns of a panel on axes (xref, yref)."""
    return dict(
        type="rect",
        x0=-0.5,
        x1=n_keys - 0.5,
        y0=row - 0.5,
        y1=row + 0.5,
        xref=xref,
        yref=yref,
        line=dict(color=style.highlight, width=style.line_width + 1),
    )


def _panel_heatmap(
    matrix: np.ndarray,
    name: str,
    scale: Scale,
    labels: tuple[list[str], list[str]],
    suffix: str,
    right: float,
    value_name: str,
    masked_text: str | None,
    style: Style,
) -> go.Heatmap:
    """One panel's heatmap on axes x{suffix}, y{suffix} over (query, key) labels, non-finite entries
    blank (written `masked_text` when given), its colour bar just right of the panel's edge `right`."""
    qlabels, klabels = labels
    finite = np.where(np.isfinite(matrix), matrix, np.nan)
    text = None
    if masked_text is not None and not np.isfinite(matrix).all():
        text = np.where(np.isfinite(matrix), "", masked_text)
    return go.Heatmap(
        z=finite,
        x=klabels,
        y=qlabels,
        xaxis=f"x{suffix}",
        yaxis=f"y{suffix}",
        colorscale=scale.colorscale,
        zmin=scale.zmin,
        zmax=scale.zmax,
        text=text,
        texttemplate="%{text}" if text is not None else None,
        textfont=dict(size=max(8, style.tick - 2), color="#666666"),
        hoverongaps=False,
        colorbar=dict(title=dict(text=scale.label, side="right"), x=min(1.0, right) + 0.005, len=0.9, thickness=10),
        hovertemplate=_(
            "query %{{y}}<br>key %{{x}}<br>{value} %{{z:.3f}}<extra>{name}</extra>", value=value_name, name=name
        ),
    )


def panels(
    matrices: list[np.ndarray],
    titles: list[str],
    queries: list[str],
    keys: list[str],
    scales: list[Scale],
    style: Style,
    title: str,
    value_name: str | None = None,
    highlight_row: int | None = None,
    masked_text: str | None = None,
    rows: Span | None = None,
    columns: Span | None = None,
    most_px: int | None = None,
) -> go.Figure:
    """Matrices [queries, keys] side by side, one panel per matrix, each with its colour bar, inside a
    window of rows and columns (default: all; labels keep their place in the whole sentence), at most `most_px`
    tall when given (a projector's first picture).

    Non-finite entries (masked scores are -inf) are left blank and, with `masked_text`, labelled. `titles`,
    `title`, `value_name` (what the hover calls a cell's number: "value" unless given) and `masked_text` are said
    already; the hover's words are said in the language of this run.
    """
    value_name = value_name or _("value")
    if not matrices or len(matrices) != len(titles) or len(matrices) != len(scales):
        raise ValueError("give one title and one scale per matrix")
    for m in matrices:
        if m.shape != (len(queries), len(keys)):
            raise ValueError(f"matrix of shape {m.shape} does not match {len(queries)} queries x {len(keys)} keys")
    rows, columns = rows or whole(len(queries)), columns or whole(len(keys))
    note = window_note(rows, columns, len(queries), len(keys))
    matrices = [m[rows[0] : rows[1], columns[0] : columns[1]] for m in matrices]
    qlabels, klabels = axis_labels(queries)[rows[0] : rows[1]], axis_labels(keys)[columns[0] : columns[1]]
    if highlight_row is not None:
        highlight_row -= rows[0]
    n = len(matrices)
    gap = 0.12 if n > 1 else 0.0
    width = (1 - gap * (n - 1)) / n
    height = int(min(680, max(420 if style.presentation else 300, len(qlabels) * (style.tick + 5) + 120)))
    if most_px is not None:
        height = min(height, most_px)
    layout, notes, shapes, data = {}, [], [], []
    for i, (matrix, name, scale) in enumerate(zip(matrices, titles, scales, strict=True)):
        suffix = "" if i == 0 else str(i + 1)
        x0 = i * (width + gap)
        data.append(
            _panel_heatmap(matrix, name, scale, (qlabels, klabels), suffix, x0 + width, value_name, masked_text, style)
        )
        layout[f"xaxis{suffix}"] = token_axis(
            klabels,
            (CONTAINER_PX if n == 1 else WIDE_FIGURE_PX) / n - 80,  # panels side by side: a phone draws them 760 px
            style.tick,
            tickangle=-90,
            domain=[x0, min(1.0, x0 + width - 0.02)],
            anchor=f"y{suffix}",
        )
        layout[f"yaxis{suffix}"] = token_axis(
            qlabels, height - 120, style.tick, autorange="reversed", anchor=f"x{suffix}", showticklabels=(i == 0)
        )
        notes.append(panel_title(name, x0 + width / 2, 1.0, style))
        if highlight_row is not None and 0 <= highlight_row < len(qlabels):
            shapes.append(row_outline(highlight_row, len(klabels), f"x{suffix}", f"y{suffix}", style))
    fig = style.figure(annotations=notes, shapes=shapes, **layout)
    fig.add_traces(data)
    return style.apply(fig, title + note, height=height)

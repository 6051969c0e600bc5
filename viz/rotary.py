"""Rotary positions drawn: each base's frequencies, the angle of every position and pair, and a query and
a key of the text turned to every offset (the score depends on the distance alone)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from i18n import _

from .style import RIGHT_LEGEND, Style

TWO_PI = 2 * np.pi


def frequency_chart(
    frequencies: Sequence[np.ndarray], names: Sequence[str], style: Style, title: str, turned: int, d_head: int
) -> go.Figure:
    """θ_i (radians per position) against the pair index i, one line per base, log scale; with the
    wavelength 2π/θ_i in the hover. `turned` of `d_head` dims turn (partial rotary: the rest never do)."""
    fig = style.figure()
    for freqs, name, colour in zip(frequencies, names, style.palette, strict=False):
        pairs = np.arange(len(freqs))
        fig.add_trace(
            go.Scatter(
                x=pairs,
                y=freqs,
                mode="lines+markers",
                name=name,
                line=dict(color=colour, width=style.line_width),
                marker=dict(size=5),
                customdata=TWO_PI / freqs,
                hovertemplate=_(
                    "pair %{{x}}<br>θ = %{{y:.3g}} rad / position<br>a full turn every %{{customdata:,.1f}} "
                    "positions<extra>{name}</extra>",
                    name=name,
                ),
            )
        )
    fig.update_xaxes(
        title_text=_(
            "pair i (dims i and i + {half}); pairs of the first {turned} of {d_head} dims: the other {rest} never turn",
            half=turned // 2,
            turned=turned,
            d_head=d_head,
            rest=d_head - turned,
        )
        if turned < d_head
        else _("pair i (dims i and i + {half}); {half} pairs: all {d_head} dims turn", half=turned // 2, d_head=d_head)
    )
    fig.update_yaxes(title_text=_("θᵢ, radians per position (log)"), type="log", exponentformat="power")
    fig = style.apply(fig, title, height=360 if not style.presentation else 460)
    fig.update_layout(legend=RIGHT_LEGEND if len(names) > 1 else None, showlegend=len(names) > 1)
    return fig


def angle_heatmap(angles: np.ndarray, style: Style, title: str, marked: int | None = None) -> go.Figure:
    """(positions, pairs) angles, wrapped to [0, 2π) on a cyclic scale: fast pairs (left) spin, slow ones
    (right) barely move. `marked`: the last position of the text, outlined."""
    wrapped = np.mod(angles, TWO_PI).astype(np.float32)
    positions, pairs = wrapped.shape
    fig = style.figure()
    fig.add_trace(
        go.Heatmap(
            z=wrapped,
            x=np.arange(pairs),
            y=np.arange(positions),
            zmin=0,
            zmax=TWO_PI,
            colorscale="Twilight",
            customdata=angles.astype(np.float32),
            colorbar=dict(title=_("angle (rad)"), tickvals=[0, np.pi, TWO_PI], ticktext=["0", "π", "2π"], thickness=14),
            hovertemplate=_(
                "position %{y}<br>pair %{x}<br>angle %{customdata:.2f} rad (%{z:.2f} after whole turns)<extra></extra>"
            ),
        )
    )
    if marked is not None and 0 <= marked < positions:
        fig.add_shape(
            type="rect",
            x0=-0.5,
            x1=pairs - 0.5,
            y0=marked - 0.5,
            y1=marked + 0.5,
            line=dict(color=style.highlight, width=style.line_width + 1),
        )
    fig.update_xaxes(title_text=_("pair i (fast → slow)"))
    fig.update_yaxes(title_text=_("position"), autorange="reversed")
    return style.apply(fig, title, height=420 if not style.presentation else 540)


def relative_chart(
    offsets: np.ndarray,
    scores: np.ndarray,
    shifted: np.ndarray,
    shift: int,
    text_offset: int,
    unrotated: float,
    style: Style,
    title: str,
) -> go.Figure:
    """The score of one query and one key against the offset m − n: with the key at position 0 (a line),
    and with both moved by `shift` (dots: on the line). The offset of the text is marked; a dashed line
    gives the score without any rotation."""
    fig = style.figure()
    palette = style.palette
    fig.add_trace(
        go.Scatter(
            x=offsets,
            y=scores,
            mode="lines",
            name=_("key at n, query at n + offset"),
            line=dict(color=palette[0], width=style.line_width + 1),
            hovertemplate=_("m − n = %{x}<br>score %{y:.4f}<extra></extra>"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=offsets,
            y=shifted,
            mode="markers",
            name=_("both moved by k = {shift}", shift=shift),
            marker=dict(
                color=palette[1], size=8 if not style.presentation else 11, symbol="circle-open", line=dict(width=2)
            ),
            hovertemplate=_("m − n = %{x}<br>score %{y:.4f} (moved by k)<extra></extra>"),
        )
    )
    fig.add_hline(
        y=unrotated,
        line=dict(color="#777777", dash="dash", width=1.5),
        annotation_text=_("no rotation"),
        annotation_position="bottom right",
    )
    if offsets.min() <= text_offset <= offsets.max():
        fig.add_vline(
            x=text_offset,
            line=dict(color=style.highlight, width=style.line_width),
            annotation_text=_("in the text: m − n = {offset}", offset=text_offset),
            annotation_position="top left",
        )
    fig.update_xaxes(title_text=_("offset m − n (query position − key position)"))
    fig.update_yaxes(title_text=_("score q·k / √d"))
    fig = style.apply(fig, title, height=380 if not style.presentation else 480)
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, xanchor="left"))
    fig.update_layout(margin=dict(t=100))
    return fig


def score_grid(
    grid: np.ndarray, style: Style, title: str, query: int | None = None, key: int | None = None
) -> go.Figure:
    """(m, n) score of the same query turned to position m and key turned to n: equal along every
    diagonal (one distance). The text's (query, key) cell is outlined when it falls on the grid."""
    size = grid.shape[0]
    limit = float(np.abs(grid).max()) or 1.0
    fig = style.figure()
    fig.add_trace(
        go.Heatmap(
            z=grid.astype(np.float32),
            zmin=-limit,
            zmax=limit,
            colorscale=style.diverging,
            colorbar=dict(title=_("score"), thickness=14),
            hovertemplate=_("query at m = %{y}<br>key at n = %{x}<br>score %{z:.4f}<extra></extra>"),
        )
    )
    if query is not None and key is not None and query < size and key < size:
        fig.add_shape(
            type="rect",
            x0=key - 0.5,
            x1=key + 0.5,
            y0=query - 0.5,
            y1=query + 0.5,
            line=dict(color=style.highlight, width=style.line_width + 1),
        )
    fig.update_xaxes(title_text=_("key position n"))
    fig.update_yaxes(title_text=_("query position m"), autorange="reversed", scaleanchor="x")
    return style.apply(fig, title, height=420 if not style.presentation else 540)


def two_bases(angles: Sequence[np.ndarray], names: Sequence[str], style: Style, title: str) -> go.Figure:
    """Angle heatmaps of two bases side by side (Gemma 3's sliding and full layers), one scale."""
    fig = make_subplots(
        rows=1, cols=len(angles), subplot_titles=list(names), horizontal_spacing=0.08, figure=style.figure()
    )
    for column, table in enumerate(angles, start=1):
        fig.add_trace(
            go.Heatmap(
                z=np.mod(table, TWO_PI).astype(np.float32),
                zmin=0,
                zmax=TWO_PI,
                colorscale="Twilight",
                showscale=column == len(angles),
                colorbar=dict(title=_("angle"), tickvals=[0, np.pi, TWO_PI], ticktext=["0", "π", "2π"], thickness=14),
                hovertemplate=_("position %{y}<br>pair %{x}<br>%{z:.2f} rad after whole turns<extra></extra>"),
            ),
            row=1,
            col=column,
        )
        fig.update_xaxes(title_text=_("pair i"), row=1, col=column)
        fig.update_yaxes(autorange="reversed", row=1, col=column)
    fig.update_yaxes(title_text=_("position"), row=1, col=1)
    return style.apply(fig, title, height=420 if not style.presentation else 540)

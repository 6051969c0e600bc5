"""Figures of the Design choices page: why sqrt(d_k), and where a NaN goes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from i18n import _

from .labels import escape_plotly
from .style import RIGHT_LEGEND, Style


def dot_variance_by_head(variances: np.ndarray, d_k: int, style: Style, title: str) -> go.Figure:
    """Grouped bars: the variance of each head's raw q·k ([layers, heads]), with d_k marked."""
    if variances.ndim != 2:
        raise ValueError(f"expected [layers, heads], got shape {variances.shape}")
    fig = style.figure(
        barmode="group",
        legend=RIGHT_LEGEND,
        yaxis=dict(title=_("variance of raw q·k")),
        xaxis=dict(title=_("layer"), type="category"),
    )
    layers = [f"L{i + 1}" for i in range(variances.shape[0])]
    for head in range(variances.shape[1]):
        fig.add_trace(
            go.Bar(
                x=layers,
                y=variances[:, head],
                name=f"H{head + 1}",
                hovertemplate=_("%{{x}} H{head}<br>variance %{{y:.1f}}<extra></extra>", head=head + 1),
            )
        )
    fig.add_hline(
        y=d_k,
        line=dict(color="#111111", dash="dash", width=style.line_width),
        annotation_text=f"d_k = {d_k}",
        annotation_position="top left",
    )
    return style.apply(fig, title, height=380 if not style.presentation else 480)


def log_axis(values: Sequence[float] | np.ndarray, most: int, **axis: object) -> dict:
    """A log axis whose ticks are powers of two spanning `values`, at most `most` of them, written as
    plain numbers (plotly's own log ticks label 2 and 5 between the decades, and they collide)."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite) & (finite > 0)]
    if finite.size == 0:
        return dict(type="log", **axis)
    low, high = int(np.floor(np.log2(finite.min()))), int(np.ceil(np.log2(finite.max())))
    powers = [2.0**p for p in range(low, high + 1)]
    step = -(-len(powers) // max(1, most))
    ticks = powers[::step]
    return dict(
        type="log",
        tickmode="array",
        tickvals=ticks,
        ticktext=[f"{t:g}" for t in ticks],
        minor=dict(showgrid=False),
        **axis,
    )


def variance_against_width(dims: list[int], variances: np.ndarray, style: Style, title: str) -> go.Figure:
    """Measured variance of q·k of random unit-variance vectors against d_k, beside the line y = d_k."""
    most = 5 if style.presentation else 9
    fig = style.figure(
        legend=RIGHT_LEGEND,
        xaxis=log_axis(dims, most, title="d_k"),
        yaxis=log_axis([*dims, *np.asarray(variances).ravel()], most, title=_("variance of q·k")),
    )
    fig.add_trace(
        go.Scatter(
            x=dims,
            y=dims,
            mode="lines",
            name="y = d_k",
            line=dict(color="#888888", dash="dash", width=style.line_width),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=dims,
            y=variances,
            mode="markers+lines",
            name=_("measured"),
            marker=dict(size=9),
            line=dict(width=style.line_width),
            hovertemplate=_("d_k %{x}<br>variance %{y:.1f}<extra></extra>"),
        )
    )
    return style.apply(fig, title, height=360 if not style.presentation else 460)


def softmax_against_width(
    dims: list[int], raw: dict[str, np.ndarray], scaled: dict[str, np.ndarray], style: Style, title: str
) -> go.Figure:
    """Three panels against d_k: largest weight, entropy and gradient size of the softmax, with the
    scores raw (solid) and divided by sqrt(d_k) (dashed)."""
    names = [("largest", _("largest weight")), ("entropy", _("entropy (nats)")), ("gradient", _("gradient size"))]
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=[label for _key, label in names],
        horizontal_spacing=0.08,
        figure=style.figure(),
    )
    for col, (key, label) in enumerate(names, start=1):
        for values, name, dash, colour in (
            (raw[key], _("raw q·k"), "solid", style.palette[3]),
            (scaled[key], "q·k / √d_k", "dash", style.palette[0]),
        ):
            fig.add_trace(
                go.Scatter(
                    x=dims,
                    y=values,
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=col == 1,
                    line=dict(dash=dash, color=colour, width=style.line_width),
                    hovertemplate=f"d_k %{{x}}<br>{label} %{{y:.3f}}<extra>{name}</extra>",
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(log_axis(dims, 3 if style.presentation else 4, title_text="d_k"), row=1, col=col)
    fig.update_layout(legend=RIGHT_LEGEND)
    return style.apply(fig, title, height=360 if not style.presentation else 460)


def nan_spread(shares: list[tuple[str, float]], style: Style, title: str) -> go.Figure:
    """One bar per recorded stage, in execution order: the share of its entries that are NaN."""
    names = [escape_plotly(name) for name, _share in shares]
    values = [share for _name, share in shares]
    colours = [style.palette[3] if v > 0 else style.palette[2] for v in values]
    fig = style.figure(
        xaxis=dict(title=_("stage, in the order it runs"), showticklabels=False),
        yaxis=dict(title=_("share of NaN entries"), range=[0, 1.05], tickformat=".0%"),
    )
    fig.add_trace(
        go.Bar(
            x=list(range(len(values))),
            y=values,
            marker_color=colours,
            customdata=names,
            hovertemplate="%{customdata}<br>NaN: %{y:.0%}<extra></extra>",
        )
    )
    return style.apply(fig, title, height=320 if not style.presentation else 420)

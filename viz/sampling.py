"""How a sampled piece was drawn: one step's distribution before and after temperature, what top-k and top-p
cut, and the piece the draw fell on; and how temperature flattens or sharpens one step's distribution."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from i18n import _
from model.engine.draws import Draw

from .labels import plotly_piece, reads_bytes
from .style import RIGHT_LEGEND, Style

MODEL_GREY = "#b8b8b8"
CUT_OPACITY = 0.3
TEMPERATURE_TICKS = (0.05, 0.1, 0.2, 0.5, 1, 2, 5)
ENTROPY_RIGHT_PX = 24


def _ranked_labels(pieces: list[str], ranks: list[int]) -> list[str]:
    """A bar's label: its rank (from 1) and its piece, so that two pieces that read alike stay two bars."""
    byte_level = reads_bytes(pieces)
    return [f"{rank + 1} · {plotly_piece(piece, byte_level)}" for piece, rank in zip(pieces, ranks, strict=True)]


def _fate(rank: int, draw: Draw) -> str:
    """What the cuts did to the piece of `rank`, said for its hover."""
    if rank >= draw.after_top_k:
        return _("cut by top-k")
    if rank >= draw.kept:
        return _("cut by top-p")
    return _("kept")


def draw_chart(pieces: list[str], draw: Draw, temperature: float, style: Style, title: str) -> go.Figure:
    """`draw`'s candidates as bars, most likely first (`pieces`: their pieces, in `draw.ids`' order): the model's
    probability in grey and the probability after temperature in colour beside it, faded where top-k or top-p cut
    the piece; the drawn piece outlined and named with its rank; the kept mass and the number drawn in the
    subtitle line. `title` is said already."""
    ranks = list(draw.ranks)
    labels = _ranked_labels(pieces, ranks)
    kept = np.array([rank < draw.kept for rank in ranks])
    fates = [_fate(rank, draw) for rank in ranks]
    fig = style.figure(
        barmode="group",
        bargap=0.25,
        xaxis=dict(tickangle=-45, type="category"),
        yaxis=dict(title=_("probability"), rangemode="tozero"),
        legend=RIGHT_LEGEND,
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=draw.model,
            name=_("model (T = 1)"),
            marker=dict(color=MODEL_GREY),
            hovertemplate=_("%{x}<br>model: %{y:.3f}<extra></extra>"),
        )
    )
    chosen = style.highlight
    fig.add_trace(
        go.Bar(
            x=labels,
            y=draw.tempered,
            name=_("after temperature (T = {t})", t=f"{temperature:g}"),
            marker=dict(color=style.palette[0], opacity=np.where(kept, 1.0, CUT_OPACITY)),
            customdata=np.array(
                [[fate, f"{p:.3f}"] for fate, p in zip(fates, draw.sampled, strict=True)], dtype=object
            ),
            hovertemplate=_(
                "%{x}<br>after temperature: %{y:.3f}<br>%{customdata[0]}<br>drawn with p = %{customdata[1]}"
                "<extra></extra>"
            ),
        )
    )
    drawn_at = ranks.index(draw.rank)
    fig.add_annotation(
        x=labels[drawn_at],
        y=max(draw.model[drawn_at], draw.tempered[drawn_at]),
        text=_("drawn (rank {r})", r=draw.rank + 1),
        showarrow=True,
        arrowcolor=chosen,
        font=dict(color=chosen, size=style.tick + 1),
        ay=-28,
    )
    _shade_the_cut(fig, labels, ranks, draw, style)
    subtitle = _(
        "kept: {n} pieces, {mass} of the probability after temperature · number drawn: {u}",
        n=draw.kept,
        mass=f"{draw.kept_mass:.1%}",
        u=f"{draw.uniform:.3f}",
    )
    return style.apply(fig, f"{title}<br><sup>{subtitle}</sup>", height=style.picture_px or 400)


def _shade_the_cut(fig: go.Figure, labels: list[str], ranks: list[int], draw: Draw, style: Style) -> None:
    """A grey band behind the bars of the pieces top-k and top-p cut, named."""
    cut = [index for index, rank in enumerate(ranks) if rank >= draw.kept]
    if not cut:
        return
    fig.add_vrect(
        x0=cut[0] - 0.5,
        x1=len(labels) - 0.5,
        fillcolor="#888888",
        opacity=0.12,
        line_width=0,
        layer="below",
        annotation=dict(text=_("cut"), font=dict(size=style.tick)),
        annotation_position="top right",
    )


def temperature_chart(pieces: list[str], probabilities: dict[float, np.ndarray], style: Style, title: str) -> go.Figure:
    """One step's most likely pieces (`pieces`, best first) with their probability at each temperature of
    `probabilities` (temperature -> probabilities of those pieces), a bar group each. `title` is said already."""
    labels = _ranked_labels(pieces, list(range(len(pieces))))
    bars = [
        dict(
            type="bar",
            x=labels,
            y=probs,
            name=f"T = {temperature:g}",
            marker=dict(color=colour),
            hovertemplate="%{x}<br>T = " + f"{temperature:g}" + ": %{y:.3f}<extra></extra>",
        )
        for colour, (temperature, probs) in zip(style.palette, probabilities.items(), strict=False)
    ]
    return style.drawing(
        bars,
        title,
        style.picture_px or 380,
        barmode="group",
        xaxis=dict(tickangle=-45, type="category"),
        yaxis=dict(title=dict(text=_("probability")), rangemode="tozero"),
        legend=RIGHT_LEGEND,
    )


def entropy_chart(
    temperatures: np.ndarray, entropies: np.ndarray, marked: list[float], style: Style, title: str
) -> go.Figure:
    """The entropy (bits) of one step's distribution against the temperature (log scale), `marked` temperatures
    dotted. `title` is said already."""
    at = np.interp(np.log(marked), np.log(temperatures), entropies)
    curve = dict(
        type="scatter",
        x=temperatures,
        y=entropies,
        mode="lines",
        line=dict(width=style.line_width, color=style.palette[0]),
        hovertemplate=_("T = %{x:.2f}<br>entropy: %{y:.2f} bits<extra></extra>"),
    )
    dots = dict(
        type="scatter",
        x=marked,
        y=at,
        mode="markers+text",
        text=[f"T = {t:g}" for t in marked],
        textposition="top left",
        marker=dict(size=10, color=style.palette[1]),
        hoverinfo="skip",
    )
    return style.drawing(
        [curve, dots],
        title,
        style.picture_px or 320,
        xaxis=dict(
            title=dict(text=_("temperature T")),
            type="log",
            tickvals=list(TEMPERATURE_TICKS),
            ticktext=[f"{t:g}" for t in TEMPERATURE_TICKS],
        ),
        yaxis=dict(title=dict(text=_("entropy (bits)")), rangemode="tozero"),
        showlegend=False,
        margin=dict(r=ENTROPY_RIGHT_PX),  # the last tick (5) and the last point's label reach past the plot's right end
    )

"""The masks and heads lab: scores to softmax, before/after probabilities, the knock-out ranking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import i18n
from i18n import N_, _, n_, sentences
from model.results import Step

from .heatmaps import Scale, panels
from .labels import axis_labels, display_piece, escape_plotly, thin_ticks
from .lengths import Span, whole
from .style import KEEPS_WIDTH, RIGHT_LEGEND, Style


def score_pipeline(
    scores: np.ndarray,
    masked: np.ndarray,
    pattern: np.ndarray,
    queries: list[str],
    keys: list[str],
    style: Style,
    title: str,
    highlight_row: int | None = None,
    rows: Span | None = None,
    columns: Span | None = None,
    most_px: int | None = None,
) -> go.Figure:
    """Raw scores QK^T/sqrt(d_k) -> masked scores (-inf blank) -> softmax weights, side by side (inside
    a window of rows and columns; the score scale is the whole matrix's), at most `most_px` tall when given."""
    finite = scores[np.isfinite(scores)]
    bound = float(np.abs(finite).max()) if finite.size else 1.0
    scale = Scale(style.diverging, -bound, bound, _("score"))
    fig = panels(
        [scores, masked, pattern],
        [_("raw scores QKᵀ/√d_k"), _("masked scores"), _("softmax weights")],
        queries,
        keys,
        [scale, scale, Scale(style.weights, 0.0, 1.0, _("weight"))],
        style,
        title,
        highlight_row=highlight_row,
        rows=rows,
        columns=columns,
        most_px=None if most_px is None else most_px - LEGEND_PX,
    )
    rows = rows or whole(len(queries))
    columns = columns or whole(len(keys))
    # the cells the mask wrote into (-inf, or the -1e9 fill), inside the window the panels show
    written = masked_cells(scores, masked)
    blocked = written[rows[0] : rows[1], columns[0] : columns[1]]
    if blocked.any():
        name = i18n._(MASKED_NAME) if np.isneginf(masked[written]).all() else _("masked (set to −10⁹)")
        qlabels = axis_labels(queries)[rows[0] : rows[1]]
        klabels = axis_labels(keys)[columns[0] : columns[1]]
        add_masked_overlay(fig, blocked, qlabels, klabels, "2", name, style)
    return fig


def masked_cells(scores: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """Where a mask wrote into the scores (−∞, or the −1e9 fill): a boolean array of their shape."""
    if scores.shape != masked.shape:
        raise ValueError(f"scores {scores.shape} and masked scores {masked.shape} differ in shape")
    return ~np.isfinite(masked) | (masked != scores)


MASKED_NAME = N_("masked (−∞)")  # the overlay's legend entry, said with i18n._ where drawn
MASKED_GREY = "#a8a8a8"
LEGEND_PX = 28  # the masked cells' legend line above the panels (add_masked_overlay)


def add_masked_overlay(
    fig: go.Figure, blocked: np.ndarray, qlabels: list[str], klabels: list[str], suffix: str, name: str, style: Style
) -> None:
    """Draw the masked cells of one panel (axes x{suffix}, y{suffix}) as one grey area, with one legend
    entry at the figure's top right; no text in the cells. `fig` is the figure being built; `name` is said."""
    fig.add_trace(
        go.Heatmap(
            z=np.where(blocked, 1.0, np.nan),
            x=klabels,
            y=qlabels,
            xaxis=f"x{suffix}",
            yaxis=f"y{suffix}",
            colorscale=[[0.0, MASKED_GREY], [1.0, MASKED_GREY]],
            zmin=0.0,
            zmax=1.0,
            showscale=False,
            hoverongaps=False,
            name=name,
            hovertemplate=_("query %{{y}}<br>key %{{x}}<br>{name}: weight exactly 0<extra></extra>", name=name),
        )
    )
    fig.add_trace(  # the legend entry: a grey square, no data
        go.Scatter(
            x=[None],
            y=[None],
            xaxis=f"x{suffix}",
            yaxis=f"y{suffix}",
            mode="markers",
            marker=dict(symbol="square", size=style.font + 2, color=MASKED_GREY, line=dict(color="#666666", width=1)),
            name=name,
            showlegend=True,
            hoverinfo="skip",
        )
    )
    # the legend sits at the top right, under the toolbar plotly shows there on hover and above the panels'
    # titles: the top margin grows by a line, and the figure with it, so the panels keep their size
    margin = fig.layout.margin.t if fig.layout.margin.t is not None else 60
    height = (fig.layout.height or 450) + LEGEND_PX
    fig.update_layout(
        height=height,
        margin_t=margin + LEGEND_PX,
        showlegend=True,
        legend=dict(
            orientation="h",
            xref="container",
            yref="container",
            x=1.0,
            y=1.0 - LEGEND_PX / height,
            xanchor="right",
            yanchor="top",
            font=dict(size=style.font),
            bgcolor="rgba(255,255,255,0)",
        ),
    )


def mask_comparison(
    with_mask: np.ndarray,
    without_mask: np.ndarray,
    queries: list[str],
    keys: list[str],
    style: Style,
    title: str,
    names: tuple[str, str] | None = None,
    rows: Span | None = None,
    columns: Span | None = None,
) -> go.Figure:
    """One head's weights with and without a mask, and where they differ (off minus on), inside a window;
    `names` (said already) name the two, "mask on" and "mask off" unless given."""
    weights = Scale(style.weights, 0.0, 1.0, _("weight"))
    return panels(
        [with_mask, without_mask, without_mask - with_mask],
        [*(names or (_("mask on"), _("mask off"))), _("difference (off − on)")],
        queries,
        keys,
        [weights, weights, Scale(style.diverging, -1.0, 1.0, "Δ")],
        style,
        title,
        value_name=_("weight"),
        rows=rows,
        columns=columns,
    )


# Probabilities stop at 1: the axis too (its title is said where it is drawn)
PROBABILITY_AXIS = dict(range=[0, 1], dtick=0.2, tickformat=".1f")
# A knock-out that lowers the output's log-probability by less than this leaves its probability within 5%
SMALL_DROP = 0.05


def probability_comparison(before: list[Step], after: list[Step], style: Style, title: str | None = None) -> go.Figure:
    """Per decoding step: the probability of the piece chosen without and with the intervention (`title`: said).

    The x axis names step t and the piece chosen before; an "after" bar is labelled only
    where the intervention made the model choose a different piece.
    """
    steps = max(len(before), len(after))
    ticks = []
    for t in range(steps):
        piece = escape_plotly(display_piece(before[t].chosen)) if t < len(before) else "–"
        ticks.append(f"t={t + 1}<br>{piece}")
    _positions, shown = thin_ticks(ticks, 1000, style.tick * 1.6)
    fig = style.figure(
        barmode="group",
        legend=RIGHT_LEGEND,
        yaxis=dict(PROBABILITY_AXIS, title=_("probability")),
        xaxis=dict(type="category", tickmode="array", tickvals=shown, ticktext=shown),
        meta=KEEPS_WIDTH,  # a step's two-line label under each pair of bars
    )
    was = _("before")
    now = _("after")
    fig.add_trace(
        go.Bar(
            x=ticks[: len(before)],
            y=[s.probability for s in before],
            name=was,
            marker_color=style.palette[0],
            hovertemplate=f"%{{x}}<br>p = %{{y:.3f}}<extra>{was}</extra>",
        )
    )
    changed = [
        escape_plotly(display_piece(s.chosen)) if t >= len(before) or s.chosen != before[t].chosen else ""
        for t, s in enumerate(after)
    ]
    fig.add_trace(
        go.Bar(
            x=ticks[: len(after)] + [f"t={t + 1}<br>–" for t in range(len(before), len(after))],
            y=[s.probability for s in after],
            name=now,
            marker_color=style.palette[1],
            text=changed,
            textposition="outside",
            cliponaxis=False,
            textangle=-90 if steps > 12 else 0,
            customdata=[escape_plotly(display_piece(s.chosen)) for s in after],
            hovertemplate=_("%{{x}}<br>after: %{{customdata}}, p = %{{y:.3f}}<extra>{after}</extra>", after=now),
        )
    )
    title = title if title is not None else _("Probability of each output piece, before and after")
    fig = style.apply(fig, title, height=440 if not style.presentation else 560)
    # a changed piece is written above its bar, over the axis' top (probabilities stop at 1): room for it
    longest = max((len(text) for text in changed if text), default=0)
    above = (longest * 0.62 if steps > 12 else 1.4) * (style.font if longest else 0)
    fig.update_layout(margin_t=int(60 + above))
    return fig


def fixed_output_probabilities(
    pieces: list[str], before: list[float], after: list[float], style: Style, title: str | None = None
) -> go.Figure:
    """Per piece of one fixed output: its probability (from log-probabilities) before and after (`title`: said,
    or "The same output, scored with and without the knock-out")."""
    if not len(pieces) == len(before) == len(after):
        raise ValueError("give one log-probability before and after per piece")
    labels = [f"t={t + 1}<br>{label}" for t, label in enumerate(axis_labels(pieces))]
    _positions, shown = thin_ticks(labels, 1000, style.tick * 1.6)
    fig = style.figure(
        barmode="group",
        legend=RIGHT_LEGEND,
        yaxis=dict(PROBABILITY_AXIS, title=_("probability")),
        xaxis=dict(type="category", tickmode="array", tickvals=shown, ticktext=shown),
        meta=KEEPS_WIDTH,  # a step's two-line label under each pair of bars
    )
    for name, values, colour in ((_("before"), before, style.palette[0]), (_("after"), after, style.palette[1])):
        fig.add_trace(
            go.Bar(
                x=labels,
                y=np.exp(np.asarray(values, dtype=float)),
                name=name,
                marker_color=colour,
                hovertemplate=f"%{{x}}<br>p = %{{y:.3f}}<extra>{name}</extra>",
            )
        )
    title = title if title is not None else _("The same output, scored with and without the knock-out")
    return style.apply(fig, title, height=420 if not style.presentation else 540)


# What the model makes of the sentence (the knock-out frames' `output`), said with i18n._ where shown
OUTPUT_NOUNS = {"translation": N_("translation"), "continuation": N_("continuation"), "answer": N_("answer")}


def knockout_frame(rows: list[dict], labels: dict[tuple, str], output: str = "translation") -> pd.DataFrame:
    """Rank heads by how far knocking each one out lowers the log-probability of the unablated output (`output`
    names it in the columns: "continuation" for a decoder-only model; codes, named by ui/parts/knockout.py)."""
    if output == "translation":  # what a row the sweep did not redo says
        again = _("(not translated again: a smaller drop)")
    else:
        again = _("(not made again: a smaller drop)")
    records = []
    for row in rows:
        drop = row["base_log_prob"] - row["log_prob"]
        translated = row["translation"] is not None
        records.append(
            {
                "head": labels.get(row["head"], str(row["head"])),
                f"{output} changed": translated and row["translation"] != row["base_translation"],
                "log-prob drop": drop,
                "log-prob of the original output": row["log_prob"],
                f"{output} with the head knocked out": row["translation"] if translated else again,
            }
        )
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    frame = frame.sort_values("log-prob drop", ascending=False, kind="stable")
    return frame.reset_index(drop=True)


def _ranked_bars(
    frame: pd.DataFrame,
    column: str,
    name: str,
    colours: list[str],
    style: Style,
    title: str,
    x_title: str,
    top: int,
) -> go.Figure:
    """Horizontal bars of the `top` largest values of `column` (a code; `name`: what the hover calls it), largest on
    top."""
    order = frame.sort_values(column, ascending=False).head(top).index[::-1]
    shown = frame.loc[order]
    fig = style.figure(xaxis=dict(title=x_title, exponentformat="power"), yaxis=dict(type="category"))
    fig.add_trace(
        go.Bar(
            x=shown[column],
            y=[escape_plotly(h) for h in shown["head"]],
            orientation="h",
            marker_color=[colours[i] for i in order],
            hovertemplate=f"%{{y}}<br>{name} %{{x:.4f}}<extra></extra>",
        )
    )
    return style.apply(fig, title, height=max(300, 26 * len(shown) + 120))


def knockout_chart(
    frame: pd.DataFrame, style: Style, top: int = 20, title: str | None = None, output: str = "translation"
) -> go.Figure:
    """Horizontal bars of the largest drops (changed outputs marked; `output` as in knockout_frame)."""
    colours = [style.palette[3] if changed else style.palette[0] for changed in frame[f"{output} changed"]]
    title = title if title is not None else _("Heads ranked by the drop in log-probability when knocked out")
    x_title = _("log-prob drop (higher = the head mattered more)")
    return _ranked_bars(frame, "log-prob drop", _("log-prob drop"), colours, style, title, x_title, top)


def knockout_caption(frame: pd.DataFrame, top: int = 20, output: str = "translation") -> str:
    """What knockout_chart draws for `frame`, in words: the colours only as they appear among its `top`
    bars, and, when no single head matters, that every drop is within a few percent."""
    if frame.empty:
        return _("No head to knock out.")
    shown = frame.sort_values("log-prob drop", ascending=False).head(top)
    red = int(shown[f"{output} changed"].sum())
    n = len(shown)
    most = float(shown["log-prob drop"].max())
    noun = i18n._(OUTPUT_NOUNS.get(output, output))
    if red == n:
        text = n_(
            "The {n} head whose knock-out lowers the original {output}'s log-probability most; every bar is red: "
            "each of these knock-outs changes the {output}.",
            "The {n} heads whose knock-out lowers the original {output}'s log-probability most; every bar is red: "
            "each of these knock-outs changes the {output}.",
            n,
            output=noun,
        )
    elif red:
        text = n_(
            "The {n} head whose knock-out lowers the original {output}'s log-probability most; red bars ({red}): "
            "knocking out that head changes the {output}; blue bars: the {output} stays the same.",
            "The {n} heads whose knock-out lowers the original {output}'s log-probability most; red bars ({red}): "
            "knocking out that head changes the {output}; blue bars: the {output} stays the same.",
            n,
            output=noun,
            red=red,
        )
    else:
        text = n_(
            "The {n} head whose knock-out lowers the original {output}'s log-probability most; every bar is blue: "
            "no single knock-out changes the {output}.",
            "The {n} heads whose knock-out lowers the original {output}'s log-probability most; every bar is blue: "
            "no single knock-out changes the {output}.",
            n,
            output=noun,
        )
    if most < SMALL_DROP and not red:
        text = sentences(
            text,
            _(
                "No single head matters much here: the largest drop is {most} in log-probability, so the "
                "{output}'s probability falls by {fall} at most. The model spreads each job over several heads; "
                "knock out a whole layer's heads to see an effect.",
                most=f"{most:.2g}",
                output=noun,
                fall=f"{1 - np.exp(-max(most, 0.0)):.1%}",
            ),
        )
    return text


def embedding_knockout_frame(rows: list[dict], labels: dict[tuple, str]) -> pd.DataFrame:
    """Rank heads by how far knocking each one out moves the sentence embedding (columns: codes, named for a
    person by ui/parts/knockout.py)."""
    frame = pd.DataFrame(
        [
            {
                "head": labels.get(row["head"], str(row["head"])),
                "embedding shift": 1 - row["cosine"],
                "cosine to the original": row["cosine"],
                "distance": row["distance"],
            }
            for row in rows
        ]
    )
    if frame.empty:
        return frame
    return frame.sort_values("embedding shift", ascending=False, kind="stable").reset_index(drop=True)


def embedding_knockout_chart(frame: pd.DataFrame, style: Style, top: int = 20, title: str | None = None) -> go.Figure:
    """Horizontal bars of the largest embedding shifts (1 - cosine to the unablated embedding)."""
    title = title if title is not None else _("Heads ranked by how far knocking them out moves the sentence embedding")
    colours = [style.palette[0]] * len(frame)
    x_title = _("1 − cosine similarity (higher = the head mattered more)")
    return _ranked_bars(frame, "embedding shift", _("embedding shift"), colours, style, title, x_title, top)


def future_weight(pattern: np.ndarray) -> float:
    """The mean, over heads and query rows, of the weight a self-attention pattern (heads, T, T) puts on
    positions after the query: 0 under a causal mask."""
    if pattern.ndim != 3 or pattern.shape[1] != pattern.shape[2]:
        raise ValueError(f"expected a self-attention pattern (heads, T, T), got shape {pattern.shape}")
    later = np.triu(np.ones(pattern.shape[1:], dtype=bool), k=1)
    return float(np.where(later, pattern, 0.0).sum(axis=-1).mean()) if pattern.shape[1] else 0.0


def largest_change(before: np.ndarray, after: np.ndarray, rows: int) -> float:
    """The largest change of any weight in the first `rows` query rows of two patterns (..., queries, keys)."""
    if before.shape != after.shape:
        raise ValueError(f"patterns of shapes {before.shape} and {after.shape} cannot be compared")
    part = np.abs(after[..., :rows, :] - before[..., :rows, :])
    return float(np.nan_to_num(part, nan=np.inf).max()) if part.size else 0.0

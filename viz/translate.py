"""What the Translate page shows: pieces with ids, the candidates of each step, the beams."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from i18n import _
from model.results import Beam, Step

from .labels import display_piece, plotly_piece, reads_bytes, thin_ticks
from .margins import PHONE_CHART_PX, needed, text_px
from .style import KEEPS_WIDTH, Style

CELL_PAD_PX = 8  # a cell's word keeps this much of its cell free, half on each side


def pieces_frame(pieces: list[str], ids: list[int]) -> pd.DataFrame:
    """One row per position: the raw SentencePiece piece, how it reads, and its id (the columns named in the
    language of this run)."""
    if len(pieces) != len(ids):
        raise ValueError(f"{len(pieces)} pieces but {len(ids)} ids")
    byte_level = reads_bytes(pieces)
    reads = [display_piece(p, byte_level) for p in pieces]
    return pd.DataFrame({_("position"): range(len(pieces)), _("piece"): pieces, _("reads"): reads, "id": list(ids)})


def _steps_read_bytes(steps: list[Step]) -> bool:
    """Whether the steps' pieces, chosen and candidates, are byte-level BPE's (`reads_bytes`)."""
    return reads_bytes([*(s.chosen for s in steps), *(piece for s in steps for piece, _ in s.top)])


def steps_frame(steps: list[Step]) -> pd.DataFrame:
    """One row per decoding step: the chosen piece, its probability and the top candidates (the columns named in
    the language of this run)."""
    width = max((len(s.top) for s in steps), default=0)
    byte_level = _steps_read_bytes(steps)
    rows = []
    for step in steps:
        chosen = display_piece(step.chosen, byte_level)
        row = {_("step"): step.position + 1, _("chosen"): chosen, _("p(chosen)"): step.probability}
        for rank in range(width):
            if rank < len(step.top):
                piece, prob = step.top[rank]
                row[f"#{rank + 1}"] = f"{display_piece(piece, byte_level)}  {prob:.1%}"
            else:
                row[f"#{rank + 1}"] = ""
        rows.append(row)
    return pd.DataFrame(rows)


def step_candidates(
    steps: list[Step],
    style: Style,
    title: str | None = None,
    highlight_row: int | None = None,
    first_step: int = 0,
) -> go.Figure:
    """Grid of steps (rows) x rank (columns): each cell is a candidate piece coloured by its
    probability; `highlight_row` outlines the step being produced; `title` (said already): "Top candidates at
    every decoding step" unless given; `first_step`: the step (from 0) of the first row, when the grid shows the
    later steps alone."""
    if not steps:
        raise ValueError("no decoding steps to show")
    width = max(len(s.top) for s in steps)
    probs = np.full((len(steps), width), np.nan)
    text = np.full((len(steps), width), "", dtype=object)
    byte_level = _steps_read_bytes(steps)
    for i, step in enumerate(steps):
        for rank, (piece, prob) in enumerate(step.top):
            probs[i, rank] = prob
            mark = " ✔" if piece == step.chosen else ""
            text[i, rank] = plotly_piece(piece, byte_level) + mark
    row_labels = [f"t={first_step + i + 1} → {plotly_piece(s.chosen, byte_level)}" for i, s in enumerate(steps)]
    row_px = style.tick + 12
    height = max(260, row_px * len(steps) + 110)
    yv, yt = thin_ticks(row_labels, height - 110, style.tick)
    fig = style.figure(
        xaxis=dict(side="top", showgrid=False),
        yaxis=dict(tickvals=yv, ticktext=yt, autorange="reversed", showgrid=False),
    )
    fig.add_trace(
        go.Heatmap(
            z=probs,
            text=text,
            texttemplate="%{text}",
            textfont=dict(size=style.tick),
            customdata=np.stack([text, np.array(row_labels, dtype=object)[:, None].repeat(width, 1)], axis=-1),
            hovertemplate="%{customdata[1]}<br>%{x}: %{customdata[0]}<br>p = %{z:.3f}<extra></extra>",
            zmin=0.0,
            zmax=1.0,
            colorscale=style.weights,
            colorbar=dict(title="p", thickness=14),
            x=[_("rank {r}", r=r + 1) for r in range(width)],
            hoverongaps=False,
        )
    )
    if highlight_row is not None and 0 <= highlight_row < len(steps):
        fig.add_shape(
            type="rect",
            x0=-0.5,
            x1=width - 0.5,
            y0=highlight_row - 0.5,
            y1=highlight_row + 0.5,
            line=dict(color=style.highlight, width=style.line_width + 1),
        )
    fig = style.apply(fig, title or _("Top candidates at every decoding step"), height=height)
    if not _words_fit_a_phone(fig, text, style.tick):
        fig.update_layout(meta=KEEPS_WIDTH)  # a phone scrolls it sideways (viz.style.keeps_its_width)
    return fig


def _words_fit_a_phone(fig: go.Figure, words: np.ndarray, size: float) -> bool:
    """Whether every column of `fig`'s grid holds its widest word (`words`, rows x columns, drawn at `size` px)
    in a phone's chart: a phone keeps this chart's words, since they are its picture."""
    sides = needed(fig, PHONE_CHART_PX)
    plot_px = PHONE_CHART_PX - max(sides.l, fig.layout.margin.l or 0) - max(sides.r, fig.layout.margin.r or 0)
    widest = max((text_px(word, size) for word in words.ravel()), default=0.0)
    return words.shape[1] * (widest + CELL_PAD_PX) <= plot_px


def beams_frame(beams: list[Beam], text_column: str | None = None) -> pd.DataFrame:
    """The final beams, best first, with log-probability and length-normalized score (`text_column`, said
    already, names the output: "continuation" for a decoder-only model; "translation" unless given)."""
    text_column = text_column or _("translation")
    return pd.DataFrame(
        [
            {
                _("rank"): i + 1,
                text_column: b.translation,
                _("pieces"): len(b.pieces),
                _("log-prob"): b.log_prob,
                _("score"): b.score,
                _("finished"): b.finished,
            }
            for i, b in enumerate(beams)
        ]
    )

"""Why this word: the logit lens and activation patching, drawn (attribution uses the tensor heatmap
for the whole table and viz.focus.shaded_text for one output piece)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import i18n
from i18n import N_, _, listing, n_

from .labels import CONTAINER_PX, axis_labels, display_piece, plotly_piece, reads_bytes, token_axis
from .lengths import Span, whole, window_note
from .style import Style

# Colour bars and value axes write 5×10⁻⁴, never plotly's SI prefixes (500μ reads as a unit, not a number)
EXPONENTS = "power"
# A method whose most-attributed word is the gold one for fewer than this share (%) of a card's words is flagged
KNOWN_TO_DISAGREE = 50.0
LENS_ROWS, LENS_PX = 8, 1400  # past LENS_ROWS layers, the lens heatmap's rows share about LENS_PX
SIGNED = ("gradient", "integrated-gradients", "occlusion")  # methods that can say a word lowers the piece
ROLE_SCORES = ("previous", "same", "first", "last", "broad", "alignment")  # model.analysis.roles.SCORES
# The head-role table's columns and tags (model.analysis.roles), said in the run's language where shown
ROLE_WORDS = {
    "block": N_("block"),
    "layer": N_("layer"),
    "head": N_("head"),
    "role": N_("role"),
    # i18n: a head role: weight on the piece before
    "previous": N_("previous"),
    # i18n: a head role: weight on the piece itself
    "same": N_("same"),
    # i18n: a head role: weight on the first piece
    "first": N_("first"),
    # i18n: a head role: weight on the source's last piece (</s> or [SEP])
    "last": N_("last"),
    # i18n: a head role: its weight spread out
    "broad": N_("broad"),
    # i18n: a head role: agreement with the gold word alignment
    "alignment": N_("alignment"),
    # i18n: a head role: an attention sink
    "sink": N_("sink"),
}
BLOCK_WORDS = {
    "encoder self": N_("encoder self"),
    "decoder self": N_("decoder self"),
    "decoder cross": N_("decoder cross"),
}


def lens_heatmap(
    final_prob: np.ndarray,
    top_pieces: list[list[str]],
    out_pieces: list[str],
    style: Style,
    title: str = N_("Logit lens: each decoder layer's guess"),
    columns: Span | None = None,
    piece_axis: str = N_("output piece (what the model wrote)"),
) -> go.Figure:
    """(decoder layers, output pieces): the probability each layer's lens gives the piece the model
    finally wrote (colour), with that layer's own first choice written in the cell; the words in the language
    of this run."""
    columns = columns or whole(final_prob.shape[1])
    title = i18n._(title) + window_note(
        whole(final_prob.shape[0]), columns, final_prob.shape[0], final_prob.shape[1], columns_as="output pieces"
    )
    z = final_prob[:, columns[0] : columns[1]]
    byte_level = reads_bytes([*out_pieces, *(p for row in top_pieces for p in row)])
    text = [[plotly_piece(p, byte_level) for p in row[columns[0] : columns[1]]] for row in top_pieces]
    labels = axis_labels(out_pieces, byte_level)[columns[0] : columns[1]]
    rows = [_("layer {n}", n=layer + 1) for layer in range(final_prob.shape[0])]
    fig = style.figure(
        xaxis=token_axis(labels, CONTAINER_PX - 200, style.tick, title=i18n._(piece_axis), tickangle=-90),
        yaxis=dict(type="category", autorange="reversed", showgrid=False),
    )
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=labels,
            y=rows,
            colorscale=style.weights,
            zmin=0.0,
            zmax=1.0,
            text=text,
            texttemplate="%{text}" if z.size <= 400 else None,
            colorbar=dict(title="p(final)", thickness=14, exponentformat=EXPONENTS),
            hovertemplate=_("%{y}, output %{x}<br>p(final piece) %{z:.3f}<br>its first choice: %{text}<extra></extra>"),
        )
    )
    layers = final_prob.shape[0]
    row = 90 if layers <= LENS_ROWS else max(32, LENS_PX / layers)  # SmolLM2's 30 layers: 47 px each, not 90
    return style.apply(fig, title, height=int(max(260, row * layers + 160)))


def patch_effect(
    own: np.ndarray,
    patched: np.ndarray,
    out_pieces: list[str],
    style: Style,
    title: str,
    piece_axis: str = N_("output piece"),
) -> go.Figure:
    """The receiver's log-probability of each output piece, as it is and with the patch (the words in the
    language of this run)."""
    labels = axis_labels(out_pieces)
    fig = style.figure(
        xaxis=token_axis(labels, CONTAINER_PX - 200, style.tick, title=i18n._(piece_axis), tickangle=-90),
        yaxis=dict(title=_("log-probability"), exponentformat=EXPONENTS),
    )
    fig.add_trace(go.Bar(x=labels, y=own, name=_("as it is"), marker_color=style.palette[0]))
    fig.add_trace(go.Bar(x=labels, y=patched, name=_("patched"), marker_color=style.palette[1]))
    fig.update_layout(barmode="group")
    return style.apply(fig, title, height=360)


def roles_frame(roles: pd.DataFrame) -> pd.DataFrame:
    """Head roles for a table: 1-based layers and heads, a block name, scores rounded; its columns, blocks and
    tags in the language of this run."""
    frame = roles.copy()
    frame.insert(0, "block", (frame["stack"] + " " + frame["kind"]).map(lambda block: _said(BLOCK_WORDS, block)))
    frame["layer"] += 1
    frame["head"] += 1
    frame["role"] = frame["role"].map(lambda tag: "—" if tag is None or tag != tag else _said(ROLE_WORDS, tag))
    frame = frame.drop(columns=["stack", "kind"]).dropna(axis=1, how="all").round(3)
    return frame.rename(columns=lambda column: _said(ROLE_WORDS, column))


def role_columns(names: tuple[str, ...]) -> list[str]:
    """The role table's columns of these scores (`roles_frame`), as the run's language names them."""
    return [_said(ROLE_WORDS, name) for name in names]


def _said(words: Mapping[str, str], code: str) -> str:
    """A code's word in the language of this run (the code itself when it has none)."""
    return i18n._(words[code]) if code in words else code


def roles_summary(roles: pd.DataFrame) -> str:
    """How many heads each role tags, in one sentence ("182 of 270 heads are tagged sink, 6 previous ...;
    the other 69 none"), most common first, in the language of this run; '' without heads."""
    if roles.empty:
        return ""
    counts = roles["role"].value_counts()
    if counts.empty:
        return n_("None of the {n} head is tagged.", "None of the {n} heads is tagged.", len(roles))
    named = listing(
        # i18n: how many heads a role tags: "5 sink"
        n_("{n} {role}", "{n} {role}", int(n), role=_said(ROLE_WORDS, str(tag)))
        for tag, n in counts.items()
    )
    untagged = len(roles) - int(counts.sum())
    if untagged:
        return n_(
            "Of the {n} head on this text: {named}; {untagged} untagged.",
            "Of the {n} heads on this text: {named}; {untagged} untagged.",
            len(roles),
            named=named,
            untagged=untagged,
        )
    return n_(
        "Of the {n} head on this text: {named}.", "Of the {n} heads on this text: {named}.", len(roles), named=named
    )


def lens_table(pieces: list[list[str]], probs: np.ndarray, final: str) -> pd.io.formats.style.Styler:
    """One output piece through the logit lens: a row per decoder layer, its top candidates in order
    ("piece  0.83"), the piece the model finally wrote marked with a check and shaded."""
    columns = [f"#{rank + 1}" for rank in range(probs.shape[1])]
    byte_level = reads_bytes([final, *(piece for row in pieces for piece in row)])
    frame = pd.DataFrame(
        [
            [
                f"{'✓ ' if piece == final else ''}{display_piece(piece, byte_level)}  {p:.2f}"
                for piece, p in zip(row, row_probs, strict=True)
            ]
            for row, row_probs in zip(pieces, probs, strict=True)
        ],
        index=[_("layer {n}", n=layer + 1) for layer in range(len(pieces))],
        columns=columns,
    )
    marked = pd.DataFrame([[piece == final for piece in row] for row in pieces], index=frame.index, columns=columns)
    return frame.style.apply(
        lambda _: marked.replace({True: "background-color: #c8f0c8; font-weight: bold", False: ""}), axis=None
    )


def patch_grid_map(
    grid: np.ndarray,
    hooks: list[str],
    src_pieces: list[str],
    style: Style,
    title: str,
    columns: Span | None = None,
    position_axis: str = N_("source position (your sentence)"),
) -> go.Figure:
    """(hook points, source positions): the change in one output piece's log-probability when that
    position's activation there comes from the donor; blue lowers it, red raises it. (A decoder-only
    model's source positions are its prompt's: `position_axis` says so.)"""
    columns = columns or whole(grid.shape[1])
    labels = axis_labels(src_pieces[: grid.shape[1]], reads_bytes(src_pieces))[columns[0] : columns[1]]
    z = grid[:, columns[0] : columns[1]]
    reach = float(np.abs(grid).max()) or 1.0
    fig = style.figure(
        xaxis=token_axis(labels, CONTAINER_PX - 200, style.tick, title=i18n._(position_axis), tickangle=-90),
        yaxis=dict(type="category", autorange="reversed", showgrid=False),
    )
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=labels,
            y=hooks,
            colorscale=style.diverging,
            zmid=0.0,
            zmin=-reach,
            zmax=reach,
            colorbar=dict(title="Δ log-prob", thickness=14, exponentformat=EXPONENTS),
            hovertemplate=_("%{y}, position %{x}<br>Δ log-probability %{z:+.3f}<extra></extra>"),
        )
    )
    return style.apply(
        fig,
        title + window_note(whole(grid.shape[0]), columns, grid.shape[0], grid.shape[1], columns_as="source positions"),
        height=int(120 + 40 * len(hooks) + 80),
    )


@dataclass(frozen=True)
class Doubt:
    """An attribution method a model card scores as unreliable, and what it does on the piece on show."""

    method: str
    agreement: float  # % of the card's French words whose most-attributed word is a gold one
    top: int  # the source position it weighs most (by |value|) for this piece
    others_top: int | None  # the position most of the other methods weigh most (None: none, or a tie)
    opposite: tuple[str, ...]  # the other signed methods that give others_top the opposite sign
    peak: float  # its largest |value| for this piece


def doubts(agreement: Mapping[str, float], rows: Mapping[str, np.ndarray]) -> list[Doubt]:
    """The methods on show (`rows`: method -> one piece's values over the source) whose card agreement
    is below KNOWN_TO_DISAGREE, each with where it points against where the others point."""
    flagged = [m for m in rows if m in agreement and float(agreement[m]) < KNOWN_TO_DISAGREE]
    found = []
    for method in flagged:
        row = np.asarray(rows[method], dtype=np.float64)
        others = [m for m in rows if m not in flagged]
        tops = [int(np.abs(np.asarray(rows[m])).argmax()) for m in others]
        counts = sorted(((tops.count(at), at) for at in set(tops)), reverse=True)
        # the position most of them weigh most; None when no other method is on show or two positions tie
        others_top = counts[0][1] if counts and (len(counts) == 1 or counts[0][0] > counts[1][0]) else None
        opposite: tuple[str, ...] = ()
        if others_top is not None and row[others_top] != 0:
            opposite = tuple(
                m for m in others if m in SIGNED and float(np.asarray(rows[m])[others_top]) * float(row[others_top]) < 0
            )
        found.append(
            Doubt(
                method,
                float(agreement[method]),
                int(np.abs(row).argmax()),
                others_top,
                opposite,
                float(np.abs(row).max()),
            )
        )
    return found

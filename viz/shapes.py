"""Every stage from token ids to logits: numeric and symbolic shapes, statistics, a flow diagram."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from model.engine import stages

from .labels import CONTAINER_PX, axis_labels, thin_ticks, token_axis
from .lengths import Span, whole, window_note
from .style import Style


def symbolic_shape(name: str, ndim: int) -> str:
    """The shape of a hook point in the paper's letters: (B, S, d_model), (B, h, T, S), ..."""
    stage = stages.parse(name)
    seq = "S" if stage.source_rows else "T"
    if name == stages.LOGITS:
        return "(B, T, vocab)"
    if stage.stage == "ids":
        return f"(B, {seq})"
    if stage.stage == stages.POSITION_BIAS:  # one bias for the whole batch
        return f"(1, h, {seq}, {seq})"
    if stage.keys is not None:
        return f"(B, h, {seq}, {'S' if stage.keys == 'source' else 'T'})"
    if stage.per_head:  # q, k, v, context
        return f"(B, h, {seq}, d_k)"
    if stage.in_ffn and stage.stage == "hidden":
        return f"(B, {seq}, d_ff)"
    if stage.stage == "concat":  # the heads side by side, before the output projection
        return f"(B, {seq}, h·d_k)"
    return f"(B, {seq}, d_model)" if ndim == 3 else "(" + ", ".join("?" * ndim) + ")"


def stage_stats(array: np.ndarray) -> dict[str, float]:
    """Mean, std, min and max over the finite entries, and how many entries are masked (-inf). Floats are
    summed in float64 where they lie (a real model's trace holds over 100 MB of float32: no float64 copy)."""
    values = np.asarray(array)
    if values.dtype.kind != "f":
        values = values.astype(np.float64)
    keep = np.isfinite(values)
    finite = values.ravel() if keep.all() else values[keep]
    if finite.size == 0:
        return {"mean": np.nan, "std": np.nan, "min": np.nan, "max": np.nan, "masked": int(values.size)}
    return {
        "mean": float(finite.mean(dtype=np.float64)),
        "std": float(finite.std(dtype=np.float64)),
        "min": float(finite.min()),
        "max": float(finite.max()),
        "masked": int(values.size - finite.size),
    }


def stages_frame(tensors: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per hook point in execution order: shape, symbolic shape and statistics."""
    rows = []
    for index, (name, array) in enumerate(tensors.items()):
        row = {
            "#": index + 1,
            "stage": name,
            "shape": str(tuple(array.shape)),
            "symbolic": symbolic_shape(name, array.ndim),
        }
        row.update(stage_stats(array))
        rows.append(row)
    return pd.DataFrame(rows)


def as_matrix(array: np.ndarray, head: int = 0) -> np.ndarray:
    """A 2-D view of a recorded tensor: batch dropped, one head picked for (B, h, ., .) tensors."""
    a = np.asarray(array)
    if a.ndim >= 1:
        a = a[0]
    if a.ndim == 3:
        a = a[min(head, a.shape[0] - 1)]
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise ValueError(f"cannot draw a tensor of shape {array.shape} as a heatmap")
    return a.astype(np.float64)


def top_columns(matrix: np.ndarray, count: int) -> np.ndarray:
    """Indices of the `count` columns with the highest value in any row, in index order (the
    vocabulary ids a logits heatmap can show: tens of thousands would not draw)."""
    best = np.nanmax(np.where(np.isfinite(matrix), matrix, -np.inf), axis=0)
    return np.sort(np.argsort(best)[::-1][:count])


def tensor_heatmap(
    matrix: np.ndarray,
    row_pieces: list[str] | None,
    style: Style,
    title: str,
    column_name: str = "dimension",
    column_pieces: list[str] | None = None,
    rows: Span | None = None,
    columns: Span | None = None,
) -> go.Figure:
    """A 2-D tensor as a heatmap, rows (and columns, for attention keys) labelled with pieces when
    given, inside a window of rows and columns (default: all; the colour scale is the whole tensor's);
    -inf shows as blank."""
    whole_z = np.where(np.isfinite(matrix), matrix, np.nan)
    rows, columns = rows or whole(matrix.shape[0]), columns or whole(matrix.shape[1])
    title += (
        window_note(rows, columns, matrix.shape[0], matrix.shape[1])
        .replace("queries", "rows")
        .replace("keys", "columns")
    )
    z = whole_z[rows[0] : rows[1], columns[0] : columns[1]].astype(np.float32)
    bound = float(np.nanmax(np.abs(whole_z))) if np.isfinite(whole_z).any() else 1.0
    signed = bool(np.isfinite(whole_z).any() and np.nanmin(whole_z) < 0)
    scale = (
        dict(colorscale=style.diverging, zmin=-bound, zmax=bound)
        if signed
        else dict(colorscale=style.weights, zmin=0.0, zmax=bound)
    )
    labels = (
        axis_labels(row_pieces)
        if row_pieces is not None and len(row_pieces) == matrix.shape[0]
        else list(range(matrix.shape[0]))
    )
    labels = labels[rows[0] : rows[1]]
    height = int(min(700, max(280, z.shape[0] * (style.tick + 4) + 120)))
    _, shown = thin_ticks([str(r) for r in labels], height - 120, style.tick)
    keys = None
    xaxis = dict(title=column_name, showgrid=False)
    if column_pieces is not None and len(column_pieces) == matrix.shape[1]:
        keys = axis_labels(column_pieces)[columns[0] : columns[1]]
        xaxis = token_axis(keys, CONTAINER_PX - 200, style.tick, title=column_name, tickangle=-90)
    fig = style.figure(
        xaxis=xaxis,
        yaxis=dict(
            type="category", tickmode="array", tickvals=shown, ticktext=shown, autorange="reversed", showgrid=False
        ),
    )
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=keys if keys is not None else np.arange(columns[0], columns[1]),
            y=[str(r) for r in labels],
            **scale,
            colorbar=dict(title="value", thickness=14),
            hoverongaps=False,
            hovertemplate="row %{y}<br>" + column_name + " %{x}<br>value %{z:.4f}<extra></extra>",
        )
    )
    return style.apply(fig, title, height=height)


@dataclass(frozen=True)
class Blueprint:
    """The choices of a model family that the flow diagram writes in its boxes (a ModelConfig's
    fields of the same names); the defaults are the paper's."""

    norm: str = "layer"  # "layer" (LayerNorm) or "rms" (RMS norm: no centring, no bias)
    norm_first: bool = False  # Pre-LN: a norm before each sublayer, and a final one after the last layer
    gated_ffn: bool = False
    positional: str = "sinusoidal"  # "sinusoidal", "sinusoidal_halves", "learned", "relative" or "rotary"
    scale_embeddings: bool = True
    embed_norm: bool = False
    n_heads: int = 0
    d_k: int = 0
    d_model: int = 0
    kv_heads: int = 0  # key/value heads (fewer than n_heads: shared by groups of query heads); 0: one per query head
    sandwich_norm: bool = False  # a norm on each sublayer's output too, before it is added back (Gemma's four)

    @classmethod
    def of(cls, config: object) -> Blueprint:
        """The blueprint of a model config (any object with these attributes)."""
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})

    @property
    def norm_name(self) -> str:
        """The norm as the boxes name it."""
        return {"rms": "RMS norm", "rms_plus_one": "RMS norm (1 + w)"}.get(self.norm, "LayerNorm")


Box = tuple[str, str, str | None]  # (key, label, the hook whose shape the arrow into it carries)


def _embedding_box(blueprint: Blueprint, side: str, shapes: dict[str, tuple[int, ...]]) -> str:
    if blueprint.embed_norm or stages.embedding("norm", side) in shapes:
        return "embed + positions + type<br>then LayerNorm"
    scaled = " ×√d_model" if blueprint.scale_embeddings else ""
    if blueprint.positional == "relative":
        return f"token embedding{scaled}<br>(no positions added)"
    if blueprint.positional == "rotary":
        return f"token embedding{scaled}<br>(no positions added: q, k turn)"
    return f"embed{scaled}<br>+ {'learned positions' if blueprint.positional == 'learned' else 'positional enc.'}"


def _attention_box(name: str, stack: str, shapes: dict[str, tuple[int, ...]], blueprint: Blueprint) -> str:
    lines = ([f"{blueprint.norm_name}, then"] if blueprint.norm_first else []) + [name]
    bias = stages.position_bias(stack)
    if bias in shapes:
        lines.append(f"+ position bias {symbolic_shape(bias, 4)}")
    if blueprint.positional == "rotary" and "self" in name:
        lines.append("q, k turned by position (RoPE)")
    if 0 < blueprint.kv_heads < blueprint.n_heads:
        lines.append(f"keys, values: {blueprint.kv_heads} head{'s' if blueprint.kv_heads > 1 else ''}, shared")
    width = blueprint.n_heads * blueprint.d_k
    if width and blueprint.d_model and width != blueprint.d_model:
        lines.append(f"h × d_k = {blueprint.n_heads} × {blueprint.d_k} = {width} wide")
    if blueprint.sandwich_norm:
        lines.append(f"then {blueprint.norm_name} of its output")
    return "<br>".join(lines)


def _ffn_box(blueprint: Blueprint) -> str:
    lines = [f"{blueprint.norm_name}, then"] if blueprint.norm_first else []
    lines += ["gated feed-forward", "act(x W₁) ⊙ x W₃, then W₂"] if blueprint.gated_ffn else ["feed-forward"]
    if blueprint.sandwich_norm:
        lines.append(f"then {blueprint.norm_name} of its output")
    return "<br>".join(lines)


def _encoder_boxes(shapes: dict[str, tuple[int, ...]], blueprint: Blueprint) -> list[Box]:
    layer = ("encoder", 0)
    attention = _attention_box("multi-head self-attention", "encoder", shapes, blueprint)
    if blueprint.norm_first:
        return [
            ("src_ids", "source ids", None),
            ("src_emb", _embedding_box(blueprint, "source", shapes), stages.embedding("ids")),
            ("enc_attn", attention, stages.embedding("sum")),
            ("enc_add1", "add (residual)", stages.attention("encoder", "self", 0, "out")),
            ("enc_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "resid_self")),
            ("enc_add2", "add (residual)", stages.ffn(*layer, "out")),
            (
                "memory",
                f"final {blueprint.norm_name}<br>→ memory (encoder output)",
                stages.sublayer(*layer, "resid_ffn"),
            ),
        ]
    return [
        ("src_ids", "source ids", None),
        ("src_emb", _embedding_box(blueprint, "source", shapes), stages.embedding("ids")),
        ("enc_attn", attention, stages.embedding("sum")),
        ("enc_norm1", "add & norm", stages.attention("encoder", "self", 0, "out")),
        ("enc_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "norm_self")),
        ("enc_norm2", "add & norm", stages.ffn(*layer, "out")),
        ("memory", "memory (encoder output)", stages.MEMORY),
    ]


def _decoder_boxes(shapes: dict[str, tuple[int, ...]], blueprint: Blueprint, cross: bool) -> list[Box]:
    layer = ("decoder", 0)
    ids = ("tgt_ids", "target ids (shifted)" if cross else "ids: your text, then<br>each new piece but the last", None)
    embed = ("tgt_emb", _embedding_box(blueprint, "target", shapes), stages.embedding("ids", "target"))
    attention = (
        "dec_attn",
        _attention_box("masked multi-head self-attention", "decoder", shapes, blueprint),
        stages.embedding("sum", "target"),
    )
    reads = (
        "cross-attention<br>(queries: decoder, keys: memory)"
        if not blueprint.norm_first
        else f"{blueprint.norm_name}, then cross-attention<br>(queries: decoder, keys: memory)"
    )
    if blueprint.norm_first:
        boxes = [ids, embed, attention, ("dec_add1", "add (residual)", stages.attention("decoder", "self", 0, "out"))]
        if cross:
            boxes += [
                ("dec_cross", reads, stages.sublayer(*layer, "resid_self")),
                ("dec_add2", "add (residual)", stages.attention("decoder", "cross", 0, "out")),
            ]
        boxes += [
            ("dec_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "resid_cross" if cross else "resid_self")),
            ("dec_add3", "add (residual)", stages.ffn(*layer, "out")),
            ("logits", f"final {blueprint.norm_name} → linear → logits", stages.sublayer(*layer, "resid_ffn")),
        ]
        return boxes
    boxes = [ids, embed, attention, ("dec_norm1", "add & norm", stages.attention("decoder", "self", 0, "out"))]
    if cross:
        boxes += [
            ("dec_cross", reads, stages.sublayer(*layer, "norm_self")),
            ("dec_norm2", "add & norm", stages.attention("decoder", "cross", 0, "out")),
        ]
    return boxes + [
        ("dec_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "norm_cross" if cross else "norm_self")),
        ("dec_norm3", "add & norm", stages.ffn(*layer, "out")),
        ("logits", "linear → logits", stages.DECODER_OUTPUT),
    ]


ATTENTION_BOXES = {"enc_attn": ("encoder", "self"), "dec_attn": ("decoder", "self"), "dec_cross": ("decoder", "cross")}
MOST_HEADS = 6  # head boxes drawn in a row; past this, the first ones, an ellipsis and the last
WIDTH = 1100.0  # the diagram's x range, about a wide page's chart width in pixels


@dataclass(frozen=True)
class _Metrics:
    """Sizes of the flow diagram in pixels (one unit of either axis is about one pixel at a wide page)."""

    font: int  # box labels
    shape_font: int  # the shapes on the arrows
    box_width: float

    @property
    def line(self) -> float:
        """Height of one line of box text."""
        return self.font * 1.3

    @property
    def gap(self) -> float:
        """Between two boxes: room for an arrow and its two-line shape label."""
        return 2 * self.shape_font * 1.3 + 18

    @property
    def head_row(self) -> float:
        """Height of the row of head boxes inside an attention box."""
        return self.font * 1.3 + 10


def _is_add(key: str) -> bool:
    return "_add" in key or "_norm" in key  # "add & norm" (post-LN) or "add (residual)" (pre-LN)


def _heads(shapes: dict[str, tuple[int, ...]], stack: str, kind: str, blueprint: Blueprint) -> tuple[int, int]:
    """(h, d_k) of a block: from its recorded queries (B, h, T, d_k), else from the blueprint."""
    query = shapes.get(stages.attention(stack, kind, 0, "q"))
    if query is not None and len(query) == 4:
        return int(query[1]), int(query[3])
    return blueprint.n_heads, blueprint.d_k


def _box_height(key: str, label: str, metrics: _Metrics, heads: int) -> float:
    lines = label.count("<br>") + 1
    if key in ATTENTION_BOXES and heads:  # its label, "split ...", the head row, "concat ..."
        return (lines + 2) * metrics.line + metrics.head_row + 40
    return lines * metrics.line + 18


def flow_diagram(
    shapes: dict[str, tuple[int, ...]], style: Style, title: str | None = None, blueprint: Blueprint = Blueprint()
) -> go.Figure:
    """Boxes for the stages of layer 0 of each stack the model has (an encoder, a decoder or both),
    labelled with its family's choices: each arrow carries the tensor's shape, a residual (skip)
    arrow goes around every sublayer to its add, and each attention box splits into its h heads and
    concatenates them back. Text is 14 px or more (more in presentation mode)."""
    has_encoder, has_decoder = stages.MEMORY in shapes, stages.DECODER_OUTPUT in shapes
    cross = stages.attention("decoder", "cross", 0, "out") in shapes
    if title is None:
        title = (
            "One encoder layer and one decoder layer"
            if has_encoder and has_decoder
            else "One encoder layer"
            if has_encoder
            else "One decoder layer (no encoder, no cross-attention)"
        ) + ", with shapes on the edges"

    def shape(name: str | None) -> str:
        if name not in shapes:
            return "?"
        return f"{symbolic_shape(name, len(shapes[name]))}<br>{'×'.join(str(d) for d in shapes[name])}"

    columns = ([("Encoder layer", _encoder_boxes(shapes, blueprint))] if has_encoder else []) + (
        [("Decoder layer", _decoder_boxes(shapes, blueprint, cross))] if has_decoder else []
    )
    metrics = _Metrics(
        font=max(14, style.font + 1),
        shape_font=max(14, style.tick + 3),
        box_width=420.0 if style.presentation else 330.0,
    )
    half = metrics.box_width / 2
    two = len(columns) > 1
    centres = [half + 60.0, WIDTH - half - 60.0] if two else [WIDTH / 2]
    heads = {key: _heads(shapes, *block, blueprint) for key, block in ATTENTION_BOXES.items()}
    # where each box sits: (x centre, y top, y bottom); y runs down from 0
    place: dict[str, tuple[float, float, float]] = {}
    heading_y = -metrics.font
    for column, (_, boxes) in enumerate(columns):
        y = heading_y - metrics.font * 1.6
        for row, (key, label, _) in enumerate(boxes):
            if row:
                y -= metrics.gap
            height = _box_height(key, label, metrics, heads.get(key, (0, 0))[0])
            place[key] = (centres[column], y, y - height)
            y -= height
    bottom = min(b for _, _, b in place.values()) - (metrics.gap if stages.LOGITS in shapes else 20.0)
    rects, notes = [], []
    lines_x: list[float | None] = []  # residual paths, one trace of segments
    lines_y: list[float | None] = []
    fan_x: list[float | None] = []  # the lines into and out of the heads
    fan_y: list[float | None] = []
    head_x: list[float | None] = []  # head boxes as filled outlines
    head_y: list[float | None] = []
    shape_font = dict(size=metrics.shape_font, color="#0b5394")
    box_font = dict(size=metrics.font, color="#111111")
    arrow = dict(
        xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=2, arrowwidth=1.6, arrowcolor="#333333"
    )
    residual_colour = "#2e7d32"

    def segment(x0: float, y0: float, x1: float, y1: float) -> None:
        lines_x.extend([x0, x1, None])
        lines_y.extend([y0, y1, None])

    def fan(x0: float, y0: float, x1: float, y1: float) -> None:
        fan_x.extend([x0, x1, None])
        fan_y.extend([y0, y1, None])

    for column, (heading, boxes) in enumerate(columns):
        x = centres[column]
        # residual paths on the outer side; shape labels beside each arrow on the other side
        side = -1.0 if two and column == 0 else 1.0
        colour = "#dbeafe" if heading.startswith("Encoder") else "#fde2c8"
        notes.append(dict(x=x, y=heading_y, text=f"<b>{heading}</b>", showarrow=False, font=dict(size=style.font + 2)))
        for row, (key, label, hook) in enumerate(boxes):
            _, top, low = place[key]
            rects.append(
                dict(
                    type="rect",
                    x0=x - half,
                    x1=x + half,
                    y0=low,
                    y1=top,
                    line=dict(color="#333333", width=1.5),
                    fillcolor=colour,
                    layer="below",
                )
            )
            if key in ATTENTION_BOXES and heads[key][0]:
                _attention_inside(label, x, top, heads[key], metrics, notes, fan, head_x, head_y)
            else:
                notes.append(dict(x=x, y=(top + low) / 2, text=label, showarrow=False, font=box_font))
            if row:
                above = place[boxes[row - 1][0]][2]
                notes.append(dict(x=x, y=top, ax=x, ay=above, **arrow))
                notes.append(
                    dict(
                        x=x - side * 10,
                        y=(top + above) / 2,
                        text=shape(hook),
                        showarrow=False,
                        xanchor="right" if side > 0 else "left",
                        font=shape_font,
                    )
                )
            if _is_add(key) and row >= 2:  # around the sublayer above: from the arrow into it to this add
                sub_top = place[boxes[row - 1][0]][1]
                fork = (place[boxes[row - 2][0]][2] + sub_top) / 2
                out = x + side * (half + 40)
                segment(x, fork, out, fork)
                segment(out, fork, out, (top + low) / 2)
                notes.append(
                    dict(x=x + side * half, y=(top + low) / 2, ax=out, ay=(top + low) / 2, **arrow)
                    | dict(arrowcolor=residual_colour, arrowwidth=2)
                )
                notes.append(
                    dict(  # between the path and the boxes, where it cannot leave the figure
                        x=out - side * 5,
                        y=(fork + (top + low) / 2) / 2,
                        text="residual",
                        textangle=-90,
                        showarrow=False,
                        xanchor="right" if side > 0 else "left",
                        font=dict(size=metrics.shape_font, color=residual_colour),
                    )
                )
    if cross and has_encoder:
        x0, _, low0 = place["memory"]
        x1, top1, low1 = place["dec_cross"]
        start, end = (x0 + half, low0 + 24), (x1 - half, (top1 + low1) / 2)
        notes.append(dict(x=end[0], y=end[1], ax=start[0], ay=start[1], **arrow))
        notes.append(
            dict(
                x=(start[0] + end[0]) / 2 + 8,
                y=(start[1] + end[1]) / 2 - 8,
                text=shape(stages.MEMORY),
                showarrow=False,
                xanchor="left",
                yanchor="top",
                font=shape_font,
            )
        )  # below and right of the rising arrow
    if stages.LOGITS in shapes and "logits" in place:
        x, _, low = place["logits"]
        notes.append(dict(x=x, y=low - metrics.gap + 6, ax=x, ay=low, **arrow))
        notes.append(
            dict(
                x=x - 10,
                y=low - metrics.gap / 2,
                text=shape(stages.LOGITS),
                showarrow=False,
                xanchor="right",
                font=shape_font,
            )
        )
    fig = style.figure(
        shapes=rects,
        annotations=notes,
        showlegend=False,
        xaxis=dict(visible=False, range=[0, WIDTH], fixedrange=True),
        yaxis=dict(visible=False, range=[bottom, 0], fixedrange=True),
    )
    fig.add_trace(
        go.Scatter(
            x=lines_x,
            y=lines_y,
            mode="lines",
            line=dict(color=residual_colour, width=2),
            hoverinfo="skip",
            name="residual paths",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=fan_x, y=fan_y, mode="lines", line=dict(color="#777777", width=1.2), hoverinfo="skip", name="head fans"
        )
    )
    fig.add_trace(
        go.Scatter(
            x=head_x,
            y=head_y,
            mode="lines",
            fill="toself",
            fillcolor="#ffffff",
            line=dict(color="#555555", width=1.2),
            hoverinfo="skip",
            name="heads",
        )
    )
    return style.apply(fig, title, height=int(-bottom + 80))


def _attention_inside(
    label: str,
    x: float,
    top: float,
    heads: tuple[int, int],
    metrics: _Metrics,
    notes: list[dict],
    fan: Callable[[float, float, float, float], None],
    head_x: list[float | None],
    head_y: list[float | None],
) -> None:
    """An attention box's inside, top down: its label, the split into h heads of d_k, a row of head
    boxes with fans into and out of it, and the concatenation back through W_O."""
    h, d_k = heads
    lines = label.count("<br>") + 1
    font = dict(size=metrics.font, color="#111111")
    y = top - 9 - lines * metrics.line / 2
    notes.append(dict(x=x, y=y, text=label, showarrow=False, font=font))
    y -= lines * metrics.line / 2 + metrics.line / 2
    notes.append(dict(x=x, y=y, text=f"split into h = {h} heads of d_k = {d_k}", showarrow=False, font=font))
    fork = y - metrics.line / 2 - 2
    row_top = fork - 14
    row_low = row_top - metrics.head_row + 4
    names = [f"H{i + 1}" for i in range(h)] if h <= MOST_HEADS else ["H1", "H2", "H3", "…", f"H{h}"]
    width = metrics.box_width - 40
    slot = width / len(names)
    join = row_low - 12
    for i, name in enumerate(names):
        cx = x - width / 2 + slot * (i + 0.5)
        notes.append(dict(x=cx, y=(row_top + row_low) / 2, text=name, showarrow=False, font=font))
        if name == "…":
            continue
        w = min(slot - 8, metrics.font * 3.2) / 2
        head_x.extend([cx - w, cx + w, cx + w, cx - w, cx - w, None])
        head_y.extend([row_top, row_top, row_low, row_low, row_top, None])
        fan(x, fork, cx, row_top)
        fan(cx, row_low, x, join)
    notes.append(
        dict(
            x=x,
            y=join - metrics.line / 2,
            text=f"concat {h} × {d_k} = {h * d_k} → W_O",
            showarrow=False,
            font=font,
        )
    )


def _weight_role(name: str, blueprint: Blueprint) -> str:
    """What a parameter does, from its name (empty when the name says nothing known)."""
    module, _, kind = name.rpartition(".")
    leaf = module.rpartition(".")[2]
    bias = kind == "bias"
    shared = 0 < blueprint.kv_heads < blueprint.n_heads
    kv = f"{blueprint.kv_heads}·d_k ({blueprint.kv_heads} key/value head{'s' if blueprint.kv_heads > 1 else ''})"
    projections = {
        "w_q": "query projection: d_model → h·d_k",
        "w_k": f"key projection: d_model → {kv if shared else 'h·d_k'}",
        "w_v": f"value projection: d_model → {kv if shared else 'h·d_k'}",
        "w_o": "output projection: h·d_k → d_model",
    }
    if leaf in projections and ("self_attn" in module or "cross_attn" in module):
        return projections[leaf] + (" (its bias)" if bias else "")
    feed_forward = {
        "w_1": "feed-forward in: d_model → d_ff" + (", through the activation" if blueprint.gated_ffn else ""),
        "w_3": "gate: d_model → d_ff, multiplied with act(x W₁) (a gated feed-forward's extra matrix)",
        "w_2": "feed-forward out: d_ff → d_model",
    }
    if leaf in feed_forward and module.endswith("ffn." + leaf):
        return feed_forward[leaf] + (" (its bias)" if bias else "")
    if leaf.startswith("norm") or leaf == "final_norm":
        where = {
            "norm_self": "around self-attention",
            "norm_cross": "around cross-attention",
            "norm_ffn": "around the feed-forward",
            "final_norm": "after the last layer",
            "norm": "over the embedding sum",
        }.get(leaf, "")
        return f"{'LayerNorm' if leaf == 'norm' else blueprint.norm_name} {where}: " + ("bias" if bias else "gain")
    named = {
        "token.weight": "token embedding: one row of d_model per vocabulary piece",
        "positions.table": "learned positions: one row of d_model per position",
        "token_type.weight": "token-type (segment) embedding",
        "relative_bias.weight": "relative-position bias: one number per bucket and head, for every layer",
        "generator.weight": "output projection of its own: d_model → vocab (not tied to the embedding)",
    }
    return named.get(f"{leaf}.{kind}", "")


LAYER = re.compile(r"\.layers\.(\d+)\.")  # a parameter inside a numbered layer


def weights_frame(shapes: dict[str, tuple[int, ...]], blueprint: Blueprint) -> pd.DataFrame:
    """The parameters outside the layers and those of each stack's first layer (the others repeat
    it): name, stored shape ((out, in) for a projection), size and role."""
    rows = [
        {
            "parameter": name,
            "shape": "×".join(str(d) for d in shape),
            "numbers": int(np.prod(shape)),
            "role": _weight_role(name, blueprint),
        }
        for name, shape in shapes.items()
        if (layer := LAYER.search(name)) is None or layer[1] == "0"
    ]
    return pd.DataFrame(rows, columns=["parameter", "shape", "numbers", "role"])

"""Every stage from token ids to logits: numeric and symbolic shapes, statistics, a flow diagram."""

from __future__ import annotations

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
    if stage.keys is not None:
        return f"(B, h, {seq}, {'S' if stage.keys == 'source' else 'T'})"
    if stage.per_head:  # q, k, v, context
        return f"(B, h, {seq}, d_k)"
    if stage.in_ffn and stage.stage == "hidden":
        return f"(B, {seq}, d_ff)"
    return f"(B, {seq}, d_model)" if ndim == 3 else "(" + ", ".join("?" * ndim) + ")"


def stage_stats(array: np.ndarray) -> dict[str, float]:
    """Mean, std, min and max over the finite entries, and how many entries are masked (-inf)."""
    values = np.asarray(array, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {"mean": np.nan, "std": np.nan, "min": np.nan, "max": np.nan, "masked": int(values.size)}
    return {"mean": float(finite.mean()), "std": float(finite.std()), "min": float(finite.min()),
            "max": float(finite.max()), "masked": int(values.size - finite.size)}


def stages_frame(tensors: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per hook point in execution order: shape, symbolic shape and statistics."""
    rows = []
    for index, (name, array) in enumerate(tensors.items()):
        row = {"#": index + 1, "stage": name, "shape": str(tuple(array.shape)),
               "symbolic": symbolic_shape(name, array.ndim)}
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


def tensor_heatmap(matrix: np.ndarray, row_pieces: list[str] | None, style: Style, title: str,
                   column_name: str = "dimension", column_pieces: list[str] | None = None,
                   rows: Span | None = None, columns: Span | None = None) -> go.Figure:
    """A 2-D tensor as a heatmap, rows (and columns, for attention keys) labelled with pieces when
    given, inside a window of rows and columns (default: all; the colour scale is the whole tensor's);
    -inf shows as blank."""
    whole_z = np.where(np.isfinite(matrix), matrix, np.nan)
    rows, columns = rows or whole(matrix.shape[0]), columns or whole(matrix.shape[1])
    title += window_note(rows, columns, matrix.shape[0], matrix.shape[1]).replace("queries", "rows").replace(
        "keys", "columns")
    z = whole_z[rows[0]:rows[1], columns[0]:columns[1]].astype(np.float32)
    bound = float(np.nanmax(np.abs(whole_z))) if np.isfinite(whole_z).any() else 1.0
    signed = bool(np.isfinite(whole_z).any() and np.nanmin(whole_z) < 0)
    scale = dict(colorscale=style.diverging, zmin=-bound, zmax=bound) if signed else \
        dict(colorscale=style.weights, zmin=0.0, zmax=bound)
    labels = axis_labels(row_pieces) if row_pieces is not None and len(row_pieces) == matrix.shape[0] \
        else list(range(matrix.shape[0]))
    labels = labels[rows[0]:rows[1]]
    height = int(min(700, max(280, z.shape[0] * (style.tick + 4) + 120)))
    _, shown = thin_ticks([str(r) for r in labels], height - 120, style.tick)
    keys = None
    xaxis = dict(title=column_name, showgrid=False)
    if column_pieces is not None and len(column_pieces) == matrix.shape[1]:
        keys = axis_labels(column_pieces)[columns[0]:columns[1]]
        xaxis = token_axis(keys, CONTAINER_PX - 200, style.tick, title=column_name, tickangle=-90)
    fig = style.figure(xaxis=xaxis, yaxis=dict(type="category", tickmode="array", tickvals=shown, ticktext=shown,
                                               autorange="reversed", showgrid=False))
    fig.add_trace(go.Heatmap(z=z, x=keys if keys is not None else np.arange(columns[0], columns[1]),
                             y=[str(r) for r in labels], **scale,
                             colorbar=dict(title="value", thickness=14), hoverongaps=False,
                             hovertemplate="row %{y}<br>" + column_name + " %{x}<br>value %{z:.4f}<extra></extra>"))
    return style.apply(fig, title, height=height)


def flow_diagram(shapes: dict[str, tuple[int, ...]], style: Style, title: str | None = None) -> go.Figure:
    """Boxes for the stages of layer 0 of each stack (the encoder's alone for an encoder-only
    model); each arrow carries the tensor's shape."""
    has_decoder = stages.DECODER_OUTPUT in shapes
    if title is None:
        title = ("One encoder layer and one decoder layer" if has_decoder else "One encoder layer") + \
            ", with shapes on the edges"
    embed = ("embed + positions + type<br>then LayerNorm" if stages.embedding("norm") in shapes
             else "embed ×√d_model<br>+ positional enc.")

    def shape(name: str) -> str:
        if name not in shapes:
            return "?"
        return f"{symbolic_shape(name, len(shapes[name]))}<br>{'×'.join(str(d) for d in shapes[name])}"

    enc_attn, dec_attn, cross = (stages.attention(stack, kind, 0, "out") for stack, kind in stages.BLOCKS)
    boxes = {  # name: (x, y, label)
        "src_ids": (0, 9, "source ids"), "src_emb": (0, 8, embed),
        "enc_attn": (0, 6.6, "multi-head<br>self-attention"), "enc_norm1": (0, 5.3, "add & norm"),
        "enc_ffn": (0, 4.0, "feed-forward"), "enc_norm2": (0, 2.7, "add & norm"),
        "memory": (0, 1.4, "memory (encoder output)"),
        "tgt_ids": (2, 9, "target ids (shifted)"), "tgt_emb": (2, 8, "embed ×√d_model<br>+ positional enc."),
        "dec_attn": (2, 6.6, "masked multi-head<br>self-attention"), "dec_norm1": (2, 5.3, "add & norm"),
        "dec_cross": (2, 4.0, "cross-attention<br>(queries: decoder, keys: memory)"),
        "dec_norm2": (2, 2.7, "add & norm"), "dec_ffn": (2, 1.4, "feed-forward + add & norm"),
        "logits": (2, 0.0, "linear → logits"),
    }
    edges = [  # (from, to, hook whose shape the edge carries)
        ("src_ids", "src_emb", stages.embedding("ids")), ("src_emb", "enc_attn", stages.embedding("sum")),
        ("enc_attn", "enc_norm1", enc_attn), ("enc_norm1", "enc_ffn", stages.sublayer("encoder", 0, "norm_self")),
        ("enc_ffn", "enc_norm2", stages.ffn("encoder", 0, "out")), ("enc_norm2", "memory", stages.MEMORY),
        ("tgt_ids", "tgt_emb", stages.embedding("ids", "target")), ("tgt_emb", "dec_attn", stages.embedding("sum", "target")),
        ("dec_attn", "dec_norm1", dec_attn), ("dec_norm1", "dec_cross", stages.sublayer("decoder", 0, "norm_self")),
        ("memory", "dec_cross", stages.MEMORY), ("dec_cross", "dec_norm2", cross),
        ("dec_norm2", "dec_ffn", stages.sublayer("decoder", 0, "norm_cross")), ("dec_ffn", "logits", stages.DECODER_OUTPUT),
    ]
    if not has_decoder:
        boxes = {key: box for key, box in boxes.items() if box[0] == 0}
        edges = [edge for edge in edges if edge[0] in boxes and edge[1] in boxes]
    box_w, box_h = 0.42, 0.42
    rects, notes = [], []
    for key, (x, y, label) in boxes.items():
        colour = "#dbeafe" if x == 0 else "#fde2c8"
        rects.append(dict(type="rect", x0=x - box_w, x1=x + box_w, y0=y - box_h, y1=y + box_h,
                          line=dict(color="#333333", width=1.5), fillcolor=colour, layer="below"))
        notes.append(dict(x=x, y=y, text=label, showarrow=False, font=dict(size=style.tick)))
    shape_font = dict(size=max(9, style.tick - 1), color="#0b5394")
    for start, end, hook in edges:
        x0, y0, _ = boxes[start]
        x1, y1, _ = boxes[end]
        arrow = dict(xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=2, arrowwidth=1.5, text="")
        if x0 == x1:
            notes.append(dict(x=x1, y=y1 + box_h, ax=x0, ay=y0 - box_h, **arrow))
            # encoder shapes on the outer (left) side, so the arrow into cross-attention crosses none
            side = -1 if x0 == 0 else 1
            notes.append(dict(x=x0 + side * (box_w + 0.04), y=(y0 + y1) / 2, text=shape(hook), showarrow=False,
                              xanchor="right" if side < 0 else "left", font=shape_font))
        else:
            notes.append(dict(x=x1 - box_w, y=y1, ax=x0 + box_w, ay=y0, **arrow))
            notes.append(dict(x=(x0 + x1) / 2, y=(y0 + y1) / 2 + 0.35, text=shape(hook), showarrow=False,
                              font=shape_font))
    if stages.LOGITS in shapes:
        notes.append(dict(x=2 + box_w + 0.04, y=-0.55, text=shape(stages.LOGITS), showarrow=False,
                          xanchor="left", font=shape_font))
    notes.append(dict(x=0, y=9.75, text="<b>Encoder layer</b>", showarrow=False, font=dict(size=style.font)))
    if has_decoder:
        notes.append(dict(x=2, y=9.75, text="<b>Decoder layer</b>", showarrow=False, font=dict(size=style.font)))
    fig = style.figure(shapes=rects, annotations=notes, xaxis=dict(visible=False, range=[-1.0, 3.0]),
                       yaxis=dict(visible=False, range=[-0.9, 10.1]))
    return style.apply(fig, title, height=720 if not style.presentation else 900)

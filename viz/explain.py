"""Why this word: the logit lens and activation patching, drawn (attribution uses the tensor heatmap)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .labels import CONTAINER_PX, axis_labels, display_piece, escape_plotly, token_axis
from .lengths import Span, whole, window_note
from .style import Style


def lens_heatmap(final_prob: np.ndarray, top_pieces: list[list[str]], out_pieces: list[str], style: Style,
                 title: str = "Logit lens: each decoder layer's guess", columns: Span | None = None) -> go.Figure:
    """(decoder layers, output pieces): the probability each layer's lens gives the piece the model
    finally wrote (colour), with that layer's own first choice written in the cell."""
    columns = columns or whole(final_prob.shape[1])
    title += window_note(whole(final_prob.shape[0]), columns, final_prob.shape[0], final_prob.shape[1]).replace(
        "keys", "output pieces")
    z = final_prob[:, columns[0]:columns[1]]
    text = [[escape_plotly(display_piece(p)) for p in row[columns[0]:columns[1]]] for row in top_pieces]
    labels = axis_labels(out_pieces)[columns[0]:columns[1]]
    rows = [f"layer {layer + 1}" for layer in range(final_prob.shape[0])]
    fig = style.figure(xaxis=token_axis(labels, CONTAINER_PX - 200, style.tick, title="output piece (what the model wrote)",
                                        tickangle=-90),
                       yaxis=dict(type="category", autorange="reversed", showgrid=False))
    fig.add_trace(go.Heatmap(z=z, x=labels, y=rows, colorscale=style.weights, zmin=0.0, zmax=1.0, text=text,
                             texttemplate="%{text}" if z.size <= 400 else None,
                             colorbar=dict(title="p(final)", thickness=14),
                             hovertemplate="%{y}, output %{x}<br>p(final piece) %{z:.3f}<br>its first choice: %{text}"
                                           "<extra></extra>"))
    return style.apply(fig, title, height=int(max(260, 90 * final_prob.shape[0] + 160)))


def patch_effect(own: np.ndarray, patched: np.ndarray, out_pieces: list[str], style: Style, title: str) -> go.Figure:
    """The receiver's log-probability of each output piece, as it is and with the patch."""
    labels = axis_labels(out_pieces)
    fig = style.figure(xaxis=token_axis(labels, CONTAINER_PX - 200, style.tick, title="output piece", tickangle=-90),
                       yaxis=dict(title="log-probability"))
    fig.add_trace(go.Bar(x=labels, y=own, name="as it is", marker_color=style.palette[0]))
    fig.add_trace(go.Bar(x=labels, y=patched, name="patched", marker_color=style.palette[1]))
    fig.update_layout(barmode="group")
    return style.apply(fig, title, height=360)


def roles_frame(roles: pd.DataFrame) -> pd.DataFrame:
    """Head roles for a table: 1-based layers and heads, a block name, scores rounded."""
    frame = roles.copy()
    frame.insert(0, "block", frame["stack"] + " " + frame["kind"])
    frame["layer"] += 1
    frame["head"] += 1
    frame["role"] = frame["role"].fillna("—")
    return frame.drop(columns=["stack", "kind"]).dropna(axis=1, how="all").round(3)


def methods_side_by_side(rows: dict[str, np.ndarray], src_pieces: list[str], style: Style, title: str,
                         columns: Span | None = None) -> go.Figure:
    """One output piece's attribution over the source by every method, a row each, on one colour
    scale: each row divided by its largest |value| (the methods' units differ); hover gives the
    real value."""
    columns = columns or whole(len(src_pieces))
    names = list(rows)
    raw = np.stack([rows[name] for name in names])[:, columns[0]:columns[1]]
    peak = np.abs(np.stack([rows[name] for name in names])).max(axis=1, keepdims=True)
    z = raw / np.where(peak > 0, peak, 1.0)
    labels = axis_labels(src_pieces)[columns[0]:columns[1]]
    fig = style.figure(xaxis=token_axis(labels, CONTAINER_PX - 200, style.tick, title="source piece", tickangle=-90),
                       yaxis=dict(type="category", autorange="reversed", showgrid=False))
    fig.add_trace(go.Heatmap(z=z, x=labels, y=names, customdata=raw, colorscale=style.diverging, zmin=-1.0, zmax=1.0,
                             colorbar=dict(title="share of<br>row's max", thickness=14),
                             hovertemplate="%{y}: %{x}<br>value %{customdata:.4f}<br>%{z:.2f} of the row's largest"
                                           "<extra></extra>"))
    return style.apply(fig, title + window_note(whole(len(names)), columns, len(names), len(src_pieces)).replace(
        "keys", "source pieces"), height=int(90 + 48 * len(names) + 80))

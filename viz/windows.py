"""Sliding windows drawn: a sliding-window layer's mask beside a full-attention layer's, over the text."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .labels import axis_labels
from .style import Style


def window_masks(masks: list[np.ndarray], names: list[str], pieces: list[str], style: Style, title: str) -> go.Figure:
    """Boolean (queries, keys) masks side by side: a key a query may read is coloured, a hidden one blank."""
    labels = axis_labels(pieces)
    fig = make_subplots(rows=1, cols=len(masks), subplot_titles=names, horizontal_spacing=0.08)
    for column, mask in enumerate(masks, start=1):
        fig.add_trace(
            go.Heatmap(
                z=np.where(mask, 1.0, np.nan).astype(np.float32),
                x=labels,
                y=labels,
                zmin=0,
                zmax=1,
                colorscale=[[0, style.palette[0]], [1, style.palette[0]]],
                showscale=False,
                hoverongaps=False,
                hovertemplate="query %{y}<br>key %{x}<br>visible<extra></extra>",
            ),
            row=1,
            col=column,
        )
        fig.update_xaxes(type="category", title_text="key", showticklabels=len(pieces) <= 40, row=1, col=column)
        fig.update_yaxes(
            type="category", autorange="reversed", showticklabels=column == 1 and len(pieces) <= 40, row=1, col=column
        )
    fig.update_yaxes(title_text="query", row=1, col=1)
    fig.update_layout(template=style.template, plot_bgcolor="#eeeeee")
    size = min(640, max(320, len(pieces) * (style.tick + 3) + 120))
    return style.apply(fig, title, height=int(size * (1.2 if style.presentation else 1.0)))

"""Sliding windows drawn: a sliding-window layer's mask beside a full-attention layer's, over the text."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from i18n import _

from .labels import axis_labels
from .style import Style

LABELLED = 40  # up to this many pieces the axes name them; past it they count positions
MOST_CELLS = 200  # past this many positions per axis the masks are drawn at every k-th position


def window_masks(
    masks: list[np.ndarray], names: list[str], pieces: list[str], style: Style, title: str, window: int = 0
) -> go.Figure:
    """Boolean (queries, keys) masks side by side: a key a query may read is coloured, a hidden one blank.
    A long text's axes count positions (every k-th drawn past MOST_CELLS, so the figure's size stays the same
    at any length); with `window` (the first mask's sliding window) shorter than the text, a line marks the
    first query that can no longer see the first piece. `names` and `title` are said already; the axes' words
    are said in the language of this run."""
    n = len(pieces)
    step = max(1, math.ceil(n / MOST_CELLS))
    shown = np.arange(0, n, step)
    named = n <= LABELLED
    axis = axis_labels(pieces) if named else shown
    fig = make_subplots(rows=1, cols=len(masks), subplot_titles=names, horizontal_spacing=0.08, figure=style.figure())
    for column, mask in enumerate(masks, start=1):
        fig.add_trace(
            go.Heatmap(
                z=np.where(mask[np.ix_(shown, shown)], 1.0, np.nan).astype(np.float32),
                x=axis,
                y=axis,
                zmin=0,
                zmax=1,
                colorscale=[[0, style.palette[0]], [1, style.palette[0]]],
                showscale=False,
                hoverongaps=False,
                hovertemplate=_("query %{y}<br>key %{x}<br>visible<extra></extra>"),
            ),
            row=1,
            col=column,
        )
        fig.update_xaxes(
            type="category" if named else "linear",
            title_text=_("key") if named else _("key position"),
            showticklabels=True,
            row=1,
            col=column,
        )
        fig.update_yaxes(
            type="category" if named else "linear",
            autorange="reversed",
            showticklabels=column == 1 or not named,
            row=1,
            col=column,
        )
    if window and n > window and not named:
        fig.add_hline(
            y=window - 0.5,
            line=dict(color=style.highlight, width=style.line_width, dash="dash"),
            annotation_text=_("query {window}: the first piece out of reach", window=window),
            annotation_position="bottom left",
            annotation_bgcolor="rgba(255,255,255,0.85)",
            row=1,
            col=1,
        )
    fig.update_yaxes(title_text=_("query") if named else _("query position"), row=1, col=1)
    fig.update_layout(plot_bgcolor="#eeeeee")
    size = min(640, max(320, n * (style.tick + 3) + 120)) if named else 640
    if step > 1:
        title = _("{title} · one position in {step} drawn", title=title, step=step)
    return style.apply(fig, title, height=int(size * (1.2 if style.presentation else 1.0)))

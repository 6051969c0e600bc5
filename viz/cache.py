"""The KV cache drawn: per layer, the keys and values kept so far (positions × key/value heads) with the
rows the step added outlined; its bytes by step; the memory of shared key/value heads; and decoding
without a cache."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from i18n import _

from .labels import axis_labels
from .shapes import key_value_heads_named
from .style import Style


def _columns(layers: int, kv_heads: int) -> tuple[list[int], list[str]]:
    """Column index of each (layer, kv head) with a blank column between layers, and the layer labels."""
    index = [layer * (kv_heads + 1) + head for layer in range(layers) for head in range(kv_heads)]
    return index, [f"L{layer + 1}" for layer in range(layers)]


def cache_growth(
    key_norms: np.ndarray,
    value_norms: np.ndarray,
    pieces: list[str],
    held: int,
    added: int,
    style: Style,
    title: str,
) -> go.Figure:
    """Keys and values of the cache (positions, layers, kv heads) as the length of each cached vector: one
    column per key/value head, grouped by layer; rows the positions kept after the step (`held`; later
    rows are blank, not computed yet), the `added` last of them outlined (the step's new row)."""
    positions, layers, kv_heads = key_norms.shape
    index, layer_names = _columns(layers, kv_heads)
    width = layers * (kv_heads + 1) - 1
    labels = axis_labels(pieces[:positions])
    columns = _column_names(kv_heads, width)
    hovers = (
        _("%{y}<br>%{x}<br>keys length %{z:.2f}<extra></extra>"),
        _("%{y}<br>%{x}<br>values length %{z:.2f}<extra></extra>"),
    )
    traces, layout = [], _two_sides((_("keys kept"), _("values kept")))
    for side, (hover, norms) in enumerate(zip(hovers, (key_norms, value_norms), strict=True)):
        suffix = "" if side == 0 else "2"
        image = np.full((positions, width), np.nan, dtype=np.float32)
        image[:held, index] = norms[:held].reshape(held, layers * kv_heads)
        traces.append(
            dict(
                type="heatmap",
                z=image,
                x=columns,
                y=labels,
                colorscale=style.weights,
                showscale=side == 1,
                hoverongaps=False,
                colorbar=dict(title=dict(text="‖vector‖"), thickness=14),
                hovertemplate=hover,
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
            )
        )
        layout["shapes"].append(
            dict(
                type="rect",
                x0=-0.5,
                x1=width - 0.5,
                y0=held - added - 0.5,
                y1=held - 0.5,
                line=dict(color=style.highlight, width=style.line_width + 1),
                xref=f"x{suffix}",
                yref=f"y{suffix}",
            )
        )
        layout[f"xaxis{suffix}"].update(_layer_axis(layer_names, kv_heads, width))
        layout[f"yaxis{suffix}"].update(
            autorange="reversed", type="category", showticklabels=side == 0 and positions <= 60
        )
    rows = min(1400, max(320, positions * (style.tick + 3) + 120))
    return style.drawing(traces, title, int(rows * (1.2 if style.presentation else 1.0)), **layout)


def _two_sides(titles: tuple[str, str]) -> dict:
    """The layout of two plots side by side, 0.07 of the width apart, each named above its middle (the axes,
    shapes and annotations plotly's make_subplots would write, written here at once)."""
    spacing = 0.07
    share = (1 - spacing) / 2
    domains = [[0.0, share], [share + spacing, share + spacing + share]]
    layout: dict = dict(shapes=[], annotations=[])
    for side, (domain, title) in enumerate(zip(domains, titles, strict=True)):
        suffix = "" if side == 0 else "2"
        layout[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=domain)
        layout[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[0.0, 1.0])
        layout["annotations"].append(
            dict(
                font=dict(size=16),
                showarrow=False,
                text=title,
                x=(domain[0] + domain[1]) / 2,
                xanchor="center",
                xref="paper",
                y=1.0,
                yanchor="bottom",
                yref="paper",
            )
        )
    return layout


def _column_names(kv_heads: int, width: int) -> list[str]:
    """The names of the cache's `width` columns: each key/value head's by its layer and head (the hover reads
    it), a blank column between layers named by zero-width spaces (one more each, so that every name is its
    own): no per-cell hover text to send."""
    return [
        _("L{layer} kv head {head}", layer=c // (kv_heads + 1) + 1, head=c % (kv_heads + 1) + 1)
        if c % (kv_heads + 1) < kv_heads
        else "\u200b" * (c // (kv_heads + 1) + 1)
        for c in range(width)
    ]


def _layer_axis(layer_names: list[str], kv_heads: int, width: int) -> dict:
    """One side's x axis: the layers named under the middle of their heads, every layer or, past 19 layers, every
    (layers // 10)-th."""
    layers = len(layer_names)
    step = max(1, layers // 10)
    centres = [layer * (kv_heads + 1) + (kv_heads - 1) / 2 for layer in range(0, layers, step)]
    return dict(
        title=dict(text=_("layers, {heads} each", heads=key_value_heads_named(kv_heads))),
        type="category",  # the ticks below sit at column numbers, between a layer's heads
        tickmode="array",
        tickvals=centres,
        ticktext=layer_names[::step],
        range=[-0.5, width - 0.5],
    )


def bytes_by_step(self_bytes: np.ndarray, cross_bytes: np.ndarray, step: int, style: Style, title: str) -> go.Figure:
    """Cache bytes after each step: self-attention grows by one position per step; an encoder-decoder's
    cross-attention (the source's keys and values, computed once) stays flat."""
    steps = np.arange(1, len(self_bytes) + 1)
    most = float(max(self_bytes.max(initial=0), cross_bytes.max(initial=0)))
    unit, scale = ("MiB", 1024**2) if most >= 1024**2 else ("KiB", 1024)  # SmolLM2's 2 MiB, not 2×10³ KiB
    traces = [
        dict(
            type="scatter",
            x=steps,
            y=self_bytes / scale,
            mode="lines+markers",
            name=_("self-attention cache (grows)"),
            line=dict(color=style.palette[0], width=style.line_width),
        )
    ]
    if cross_bytes.any():
        traces.append(
            dict(
                type="scatter",
                x=steps,
                y=cross_bytes / scale,
                mode="lines",
                name=_("cross-attention cache (computed once)"),
                line=dict(color=style.palette[1], width=style.line_width, dash="dash"),
            )
        )
    now = dict(type="line", x0=step + 1, x1=step + 1, xref="x", y0=0, y1=1, yref="y domain")
    return style.drawing(
        traces,
        title,
        320 if not style.presentation else 420,
        shapes=[dict(now, line=dict(color=style.highlight, width=style.line_width))],
        xaxis=dict(title=dict(text=_("decoding step t"))),
        yaxis=dict(title=dict(text=_("{unit} held", unit=unit)), rangemode="tozero"),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, xanchor="left"),
        margin=dict(t=90),
    )


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"


def shared_heads_table(
    lengths: dict[str, int],
    shared: dict[str, int],
    one_per_query: dict[str, int],
    windowed: dict[str, int] | None = None,
    window_column: str = "",
) -> pd.DataFrame:
    """Cache bytes at each length (name -> pieces) with the model's shared key/value heads and with one
    per query head, and how many times less the shared heads keep; with `windowed`, a column (named
    `window_column`, said already) of what the cache holds when its sliding-window layers keep only their
    window; the other columns named in the language of this run."""
    rows = []
    for name, pieces in lengths.items():
        row = {
            _("text"): name,
            _("pieces"): f"{pieces:,}",
            _("cache with shared key/value heads"): _size(shared[name]),
            _("one key/value head per query head"): _size(one_per_query[name]),
            _("saved"): _saved(one_per_query[name], shared[name]),
        }
        if windowed is not None:
            row[window_column or _("windowed")] = _size(windowed[name])
        rows.append(row)
    return pd.DataFrame(rows).set_index(_("text"))


def without_cache_chart(pieces_with: np.ndarray, pieces_without: np.ndarray, style: Style, title: str) -> go.Figure:
    """Positions each step feeds the decoder: with the cache (the prompt, then one a step) and without it
    (every step reads the whole text so far again)."""
    steps = np.arange(1, len(pieces_with) + 1)
    fig = style.figure()
    for values, name, colour in (
        (pieces_without, _("without the cache: the whole prefix again"), style.palette[3]),
        (pieces_with, _("with the cache: the new piece alone"), style.palette[0]),
    ):
        fig.add_trace(go.Bar(x=steps, y=values, name=name, marker_color=colour))
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text=_("decoding step t"))
    fig.update_yaxes(title_text=_("positions computed"))
    fig = style.apply(fig, title, height=320 if not style.presentation else 420)
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, xanchor="left"), margin=dict(t=90))
    return fig


def _saved(one_per_query: int, shared: int) -> str:
    """What sharing key/value heads saves, in words: "4× less", or "nothing" where every query head has its own."""
    if not shared:
        return ""
    ratio = one_per_query / shared
    return _("nothing") if round(ratio) <= 1 else _("{ratio}× less", ratio=f"{ratio:.0f}")

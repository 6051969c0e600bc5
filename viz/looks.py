"""A figure read as plain data, and its template's looks written into the figure itself before it is drawn."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import plotly.graph_objects as go
from plotly.basedatatypes import BasePlotlyType

# Streamlit draws each chart twice: Plotly.react of the figure, then of a copy of it (its theme's pass, even with
# theme=None). Plotly redraws a copy from scratch when the copy's data arrays are new objects without a
# `datarevision` to say they are the same, and when its template is a new object: with the template written into
# the figure itself and a data revision, the second Plotly.react changes nothing and costs a millisecond. Every
# new figure is a new chart element (Streamlit names an element by its spec), so one revision serves them all.
DATA_REVISION = 1

# Traces whose position axis plotly.js draws without grid or zero lines unless the axis says otherwise
ORIENTED_TRACES = ("bar", "box", "histogram", "violin", "funnel", "waterfall")
# plotly sends a numpy array as a typed array (base64 "bdata"), and plotly.js takes one in a copy of a bar chart or
# a line for new data, and redraws it (9-11 -> 3-4 ms a bar chart; a heatmap's copy it does not redraw): their
# arrays up to LISTED_MOST long are sent as lists (fewer bytes for a few numbers, under twice as many at that length)
LISTED_TRACES = ("scatter", *ORIENTED_TRACES)
LISTED_MOST = 2000


def own_data(fig: go.Figure) -> tuple[list[dict], dict]:
    """`fig`'s traces and layout as plain dicts of what was set on them (arrays as they were given): plotly's own
    store, not a copy, so read it and never write it. `to_plotly_json` copies every array and list, and reading
    property by property goes through plotly's objects: together most of the time it took to fit a page's figures.
    plotly keeps these in private attributes (pinned at 7.1.0; tests/views/test_margins.py holds them to
    the JSON plotly sends)."""
    return fig._data, fig._layout


def self_contained(fig: go.Figure) -> go.Figure:
    """`fig` with its template's looks written into its own layout and traces, where it sets none of its own (as
    plotly.js applies a template), the template taken away, and a data revision: a copy of it then redraws
    nothing in Plotly.react (DATA_REVISION). Returns `fig`; a figure without a template is left as it is."""
    traces, layout = own_data(fig)
    template = layout.get("template")
    if not template or not template.get("layout"):
        return fig
    looks = copy.deepcopy(template)  # the figure keeps what it is given unchecked, and the template goes away
    shown = looks["layout"]
    written = {
        name: _merged(value, layout.get(name)) for name, value in shown.items() if name not in ("xaxis", "yaxis")
    }
    gridless = _position_axes(traces)
    for kind in ("xaxis", "yaxis"):  # every axis of the figure: those its layout names, those its traces use
        named = {name for name in layout if re.fullmatch(f"{kind}\\d*", name)} | {kind}
        named |= {kind + trace[kind][1:] for trace in traces if trace.get(kind)}
        for name in named:
            own = layout.get(name)
            own = own if isinstance(own, dict) else {}
            axis = _merged_axis(shown.get(kind, {}), own)
            if name in gridless:  # see _position_axes
                for line, colour in (("showgrid", "gridcolor"), ("zeroline", "zerolinecolor")):
                    if line not in own and colour not in own:
                        axis[line] = False
            written[name] = axis
    written["datarevision"] = DATA_REVISION
    # the template's values are plotly's own form already, and the figure's own were checked or written so: each
    # property is set as it is, not through update_layout's checks (7 ms a figure, more than the figure's drawing)
    set_unchecked(fig, **written)
    with _checked(fig.layout, True):  # checked, plotly removes the template altogether (see _checked)
        fig.layout.template = None
    for trace_object, trace in zip(fig.data, traces, strict=True):
        on_trace = {name: _merged(value, trace.get(name)) for name, value in _trace_looks(looks, trace).items()}
        if trace["type"] in LISTED_TRACES:
            on_trace |= {name: value.tolist() for name, value in trace.items() if _short_array(value)}
        with _checked(trace_object, False):
            for name, value in on_trace.items():
                trace_object[name] = value
    return fig


def _trace_looks(template: dict, trace: dict) -> dict:
    """What a template sets on traces of `trace`'s type (plotly.js applies the first of them)."""
    for kind_looks in template.get("data", {}).get(trace["type"], [])[:1]:
        return {name: value for name, value in kind_looks.items() if name != "type"}
    return {}


def _short_array(value: object) -> bool:
    return isinstance(value, np.ndarray) and value.ndim == 1 and value.size <= LISTED_MOST


@contextmanager
def _checked(holder: BasePlotlyType, checking: bool) -> Iterator[None]:
    """Within: `holder`'s properties set with plotly's checks or without them. Unchecked, a value is kept as it is
    given; checked, plotly writes it in its own form, and a template set to None is taken away altogether (not an
    empty one, which plotly.js takes in a copy for a new one, and redraws; not None, on which plotly's own to_html
    fails: a notebook's display, the page's download). plotly keeps this switch in a private attribute, the one
    its `_validate=False` sets."""
    was = holder._validate
    holder._validate = checking
    try:
        yield
    finally:
        holder._validate = was


def set_unchecked(fig: go.Figure, **layout: object) -> None:
    """Set `layout`'s properties on `fig` as they are, without plotly's checks: values already in plotly's own
    form (numbers, words), where update_layout would check each against its schema."""
    with _checked(fig.layout, False):
        for name, value in layout.items():
            fig.layout[name] = value


def _merged_axis(looks: dict, own: dict) -> dict:
    """An axis's own settings over its template's."""
    merged = _merged(looks, own)
    assert isinstance(merged, dict)
    return merged


def _merged(looks: object, own: object) -> object:
    """A template's `looks` under a figure's `own` value: its own where set, the dicts' keys merged, the looks where
    nothing is set."""
    if own is None or own == {}:
        return looks
    if isinstance(looks, dict) and isinstance(own, dict):
        return {
            **{k: _merged(v, own.get(k)) for k, v in looks.items()},
            **{k: v for k, v in own.items() if k not in looks},
        }
    return own


def _position_axes(traces: list[dict]) -> set[str]:
    """The axes along which the bars (boxes, histograms ...) of `traces` stand. plotly.js draws grid and zero lines
    on them only when the axis sets a grid or zero line colour itself, not when its template does: with the
    template's colours written into the figure, those lines must be turned off there in so many words."""
    axes = set()
    for trace in traces:
        if trace["type"] not in ORIENTED_TRACES:
            continue
        given_x, given_y = trace.get("x") is not None, trace.get("y") is not None
        lying = (given_y and not given_x) if trace["type"] == "histogram" else (given_x and not given_y)
        orientation = trace.get("orientation")
        horizontal = orientation == "h" if orientation is not None else lying
        kind, ref = ("yaxis", trace.get("yaxis")) if horizontal else ("xaxis", trace.get("xaxis"))
        axes.add(kind + (ref or "x")[1:])
    return axes

"""Whether a figure put together without plotly's property checks (viz.style.Style.drawing) is what those checks
would have made of it."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio


def assert_in_plotly_s_own_form(figure: go.Figure) -> None:
    """What the browser is sent of `figure` is what plotly's checks of each property would have made of it: a
    figure put together without them (viz.style.Style.drawing) wrote every property out in full."""
    sent = json.loads(pio.to_json(figure, validate=False))
    rebuilt = go.Figure(figure.to_dict())
    if not sent["layout"].get("template"):  # a figure without one (viz.looks.self_contained) gets no default
        rebuilt.layout.template = None
    checked = json.loads(pio.to_json(rebuilt, validate=False))
    assert _pruned(sent) == _pruned(checked), figure.layout.title.text


def _pruned(value: object) -> object:
    """`value` without its empty objects and lists and its unset (null) properties: an empty legend, a template of
    null, are nothing to plotly.js either."""
    if isinstance(value, dict):
        kept = {name: _pruned(item) for name, item in value.items()}
        return {name: item for name, item in kept.items() if item not in ({}, [], None)}
    if isinstance(value, list):
        return [_pruned(item) for item in value]
    return value

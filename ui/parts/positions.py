"""The Positional encoding page's parts with controls: T5's bias over the text (the source window's slider),
the table of absolute positions (the slider of dimensions to plot), and the table's picture while a
translation or a continuation is written, which needs no run of the model. What they show: views.positional."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from i18n import _
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.start import Page
from ui.parts import lengths, rotary
from views import positional
from viz.lengths import Span


def table_figure(page: Page) -> go.Figure:
    """The table as a heatmap, shared by every session."""
    return positional.table_figure(page.scene)


def prompt_view(page: Page, prompt: Trace) -> None:
    """While the translation or continuation is written (ui/page/stream.py): the table the model adds to its
    embeddings, or for a rotary model how it turns the prompt's queries and keys (ui.parts.rotary); nothing for
    T5's bias, which the finished result's trace holds."""
    kind = positional.kind_of(page.bundle.config)
    if kind == "rotary":
        rotary.prompt_view(page, prompt)
        return
    if kind == "relative":
        return
    table = positional.prompt_table(page.scene, table_figure(page))
    st.subheader(table.heading)
    page.draw(table.figure, key=table.key)  # not kept for the page's download: the finished page draws its own
    st.caption(table.caption)


def relative(page: Page, trace: Trace) -> Span:
    """T5's bias over the text and against distance, from `trace` (a run with the bias on); returns the source
    window its slider chose."""
    scene = page.scene
    profile = positional.profiles(page.bundle)
    page.panels([*positional.relative_intro(scene), positional.bias_heading(scene)])
    source = lengths.source_window(len(trace.src_pieces))  # the one window slider of the page
    page.panels(positional.bias_panels(scene, trace, profile, source))
    page.panels(positional.distance_panels(scene, trace, profile))
    return source


def absolute(page: Page) -> None:
    """The table of absolute positions, its similarities, the dimensions picked against position, and the sizes
    of what is added."""
    scene, d_model = page.scene, page.bundle.config.d_model
    stored = page_value(positional.dims_field(d_model))
    if positional.shown_dims(stored, d_model) != stored:  # kept from a wider model
        set_value("dims", positional.shown_dims(stored, d_model))
    page.panels([*positional.absolute_intro(scene), *positional.table_panels(scene, table_figure(page))])
    span = bind(
        "dims",
        st.slider,
        label=_("Dimensions to plot"),
        min_value=0,
        max_value=d_model - 1,
        to_widget=tuple,
        from_widget=tuple,
    )
    page.panels([positional.curves_panel(scene, span), positional.sizes_panel(scene)])

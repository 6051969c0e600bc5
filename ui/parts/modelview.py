"""The Attention page's model view (pages/2_attention.py), drawn from views/modelview.py: every layer × every head
of one attention kind as tiles (a click opens that head), the head opened large, and one query piece's attention
over the whole sentence as text; with the attention kind's and the query piece's pickers."""

from __future__ import annotations

import streamlit as st

from i18n import _
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.notices import hidden_until_the_reveal
from ui.page.panels import draw_one
from ui.page.start import Page
from views import modelview
from views.controls import FOCUS
from views.modelview import ROLE_NAMES as ROLE_NAMES
from views.modelview import block_name
from views.modelview import key_pieces as key_pieces
from views.modelview import live_heads as live_heads
from views.modelview import query_pieces as query_pieces
from views.modelview import role_name as role_name
from viz.attention import model_view_cell
from viz.lengths import Span


def _open_clicked() -> None:
    """A click on a tile of the model view picks that layer and head."""
    state = st.session_state.get("model-view")
    points = state.selection.points if state is not None else []
    if points:
        cell = model_view_cell(points[0].get("x"), points[0].get("y"))
        if cell is not None:
            set_value("layer", cell[0] + 1)
            set_value("head", cell[1] + 1)


def section(
    page: Page,
    trace: Trace,
    step: int,
    source: Span,
    output: Span,
    colour: str,
    outlined: bool = True,
    hidden: tuple[str, ...] = (),
) -> None:
    """The model view of the attention kind picked, the selected head large under it, and that head's
    attention from one query piece as text; `step` is the decoder row of the step, `outlined` in the large head.
    A kind in `hidden` (one the room's open question asks about) waits for the reveal."""
    scene = page.scene
    page.panels([modelview.heading(scene)])
    view = bind(
        "view",
        st.radio,
        label=_("Attention kind"),
        options=list(page.limits.blocks),
        horizontal=True,
        format_func=block_name,
    )
    if view in hidden:
        hidden_until_the_reveal(scene.key("model-view"))
        return
    for panel in modelview.view_panels(scene, view, step, source, output, colour, outlined):
        if panel.key == scene.key("model-view"):
            draw_one(page, panel, on_select=_open_clicked, selection_mode="points")
        elif panel.key == scene.key("model-view-legend"):
            with st.container(key=panel.key):
                draw_one(page, panel)
        else:
            draw_one(page, panel)
    page.panels([modelview.text_heading(scene)])
    page.panels(modelview.text_panels(scene, view, _query(view, query_pieces(trace, view), step)))


def _query(view: str, queries: list[str], step: int) -> int:
    """The query row the text view reads: an encoder's piece, picked under the heading; a decoder's step."""
    if view != "enc-self":
        return step  # the decoding step's row, as in the heatmaps
    set_value("focus", min(page_value(FOCUS), len(queries) - 1))
    names = modelview.query_names(queries)
    return bind(
        "focus",
        st.select_slider,
        label=_("Query piece"),
        options=list(range(len(queries))),
        format_func=lambda i: names[i],
    )

"""The Why this word? page's "Which heads wrote it" (pages/8_why.py): every head's share of the piece's logit, the
largest shares, what the chosen head writes and the routes to the piece, drawn from views/shares.py; here, the
cache, the routes' threshold slider and the clicks that choose a head (the sidebar's layer and head, and the
attention kind every page opens)."""

from __future__ import annotations

import streamlit as st

from i18n import _
from ui.page.binding import bind, page_value, set_value
from ui.page.panels import draw_one
from ui.page.start import Page
from ui.session import explanations, shares
from views import shares as view
from views.attention import VIEW
from views.explained import Explained
from viz.routes import routes_cell
from viz.shares import shares_cell

HEATMAP, ROUTES = "why-shares", "why-routes"


def _choose(kind: str, layer: int, head: int) -> None:
    """Open a decoder head on every page: the sidebar's layer and head, and the attention kind."""
    set_value("layer", layer + 1)
    set_value("head", head + 1)
    set_value("view", view.BLOCK_CODES[kind])


def _clicked(key: str) -> list[dict]:
    state = st.session_state.get(key)
    return list(state.selection.points) if state is not None else []


def _heatmap_clicked(key: str, kinds: list[str]) -> None:
    points = _clicked(key)
    cell = shares_cell(points[0]) if points else None
    if cell is not None:
        _choose(kinds[cell[0]], cell[1], cell[2])


def _edge_clicked(key: str) -> None:
    points = _clicked(key)
    edge = routes_cell(points[0]) if points else None
    if edge is not None:
        _choose(*edge)


def register() -> None:
    """The section's own controls, restored from the URL before the page's scene reads them: the routes'
    threshold and the attention kind of the chosen head (the Attention page's `view=`)."""
    page_value(view.THRESHOLD)
    page_value(VIEW)


def section(page: Page, why: Explained, step: int) -> None:
    """The shares of the piece on show, the largest, the chosen head's writes and the routes."""
    bundle, ctl, iv = why.bundle, why.ctl, why.iv
    trace = why.own_trace
    if trace is None and iv.causal_mask:  # one recorded pass for the three parts (views.shares.trace_of), cached
        trace = explanations.teacher_forced(bundle, ctl.sentence, why.out_ids, iv, ctl.chat)
    found = shares.logit_shares(bundle, ctl.sentence, why.out_ids, iv, step, trace, ctl.chat)
    split = view.SharesView.of(found)
    heatmap = view.heatmap(why, step, split)
    kinds = view.kinds(why)
    draw_one(
        page,
        heatmap,
        on_select=lambda: _heatmap_clicked(heatmap.key, kinds),
        selection_mode="points",
    )
    head = view.chosen_head(why)
    frame = found.writes(bundle, head)
    page.panels([view.largest(why, split), view.writes(why, head, frame), view.routes_heading(why)])
    threshold = bind(
        view.THRESHOLD.key,
        st.slider,
        label=_("Routes: the smallest share an edge carries"),
        min_value=0.01,
        max_value=0.5,
        step=0.01,
        format="%.2f",
    )
    found_routes = shares.routes(bundle, ctl.sentence, why.out_ids, iv, step, threshold, trace, ctl.chat)
    graph = view.route_panel(why, step, found_routes)
    draw_one(page, graph, on_select=lambda: _edge_clicked(graph.key), selection_mode="points")

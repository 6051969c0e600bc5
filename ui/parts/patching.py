"""The Why this word? page's activation patching (pages/8_why.py): a donor text's activations put in place of
yours, one hook point and one source position at a time (the grid), the change that moves the piece on show
most and the text it gives, and a patch of your own (any hook point, a span of positions). What is drawn is
views.patching's; here, the donor's field, the cache, the buttons and your own patch's pickers."""

from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import _
from model import AnatomyError
from model.analysis.patching import Mismatch, mismatch
from ui.page.binding import bind, page_value, set_value
from ui.page.ondemand import asked, filling
from ui.page.start import Page
from ui.session import explanations
from views import patching as view
from views.explained import Explained
from views.markdown import md
from viz.lengths import Span


def section(page: Page, why: Explained, step: int, source: Span) -> None:
    """Patching for the output piece at `step`: the donor, the grid, its biggest change, your own patch."""
    page.panels([view.heading(why)])
    donor = _donor(why)
    points = view.hook_points(why)
    grid = _grid(page, why, donor, step, points, source)
    if grid is None:
        return
    row, position, biggest = view.biggest(grid)
    differ = mismatch(why.bundle, donor, why.ctl.sentence, why.out_ids, why.ctl.chat)
    if abs(biggest) < view.SHOWN:
        _no_single_position(page, why, biggest, differ, donor, view.hooks(points)[0], step)
        return
    label, hook = points[list(points)[row]]
    moved = explanations.translation_patched(
        why.bundle, donor, why.ctl.sentence, hook, (position,), why.iv, why.ctl.chat
    )
    page.panels(view.biggest_change(why, label, position, biggest, differ, moved))
    _own_patch(page, why, donor, points, row, grid.shape[1])


def _donor(why: Explained) -> str:
    """The donor text's field (`donor=` in the URL)."""
    page_value(view.DONOR)
    return bind(
        "donor",
        st.text_input,
        label=_("Donor chat message (wrapped as yours is; its activations replace your prompt's)")
        if why.ctl.chat
        else _("Donor prompt (its activations replace your prompt's)")
        if why.decoder_only
        else _("Donor sentence (its activations replace your sentence's)"),
    )


def _grid(page: Page, why: Explained, donor: str, step: int, points: view.Points, source: Span) -> np.ndarray | None:
    """The change of the piece's log-probability with the donor's activation at each hook point and source
    position, drawn (on a button when costly); None when not computed."""
    bundle, ctl, iv, out_ids = why.bundle, why.ctl, why.iv, why.out_ids
    hooks = view.hooks(points)
    ask = view.grid_ask(why, step, points)
    wanted = asked(
        ask.cost,
        explanations.patch_cells_cached(bundle, donor, ctl.sentence, out_ids, step, hooks, iv, ctl.chat),
        ask.label,
        ask.key,
        ask.note,
        why.spare,
    )
    if wanted is False:
        return None
    try:
        with filling(wanted) as progress:
            grid = explanations.patch_cells(
                bundle, donor, ctl.sentence, out_ids, step, hooks, iv, progress=progress, chat=ctl.chat
            )
    except AnatomyError as exc:
        st.warning(md(str(exc)))
        return None
    page.panels([view.grid_map(why, step, grid, points, source)])
    return grid


def _own_patch(page: Page, why: Explained, donor: str, points: view.Points, row: int, both: int) -> None:
    """In an expander: the hook point (the grid's biggest at first) and the span of positions you pick from
    the donor, and every piece of your output teacher-forced under that patch; `both`: the positions both
    texts have."""
    bundle, ctl, iv, out_ids = why.bundle, why.ctl, why.iv, why.out_ids
    own = explanations.score(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    with st.expander(_("Your own patch: any hook point, a span of positions")):
        where = st.selectbox(
            _("Hook point"),
            list(points),
            index=row,
            format_func=lambda name: points[name][0],
            key="w_patch_point",
        )
        span = (
            st.slider(
                _("Prompt positions to patch (from 1)")
                if why.decoder_only
                else _("Source positions to patch (from 1)"),
                1,
                both,
                view.whole_span(both),
                key="w_patch_positions",
                disabled=both < 2,
            )
            if both > 1
            else view.whole_span(both)
        )
        label, hook = points[where]
        try:
            moved = explanations.patched(
                bundle, donor, ctl.sentence, out_ids, hook, view.span_positions(span), iv, ctl.chat
            )
        except AnatomyError as exc:
            st.warning(md(str(exc)))
            return
        page.panels([view.own_patch(why, own, moved, label, span)])


def _no_single_position(
    page: Page, why: Explained, biggest: float, differ: Mismatch, donor: str, embeddings: str, step: int
) -> None:
    """The grid's biggest change rounds to 0.00: say so, name where the donor differs, and offer the
    pieces that those differing words do move."""
    page.panels([view.no_single_position(why, biggest, differ, step)])
    if not differ.positions:
        return
    bundle, ctl, iv, out_ids = why.bundle, why.ctl, why.iv, why.out_ids
    own = explanations.score(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    swapped = explanations.patched(bundle, donor, ctl.sentence, out_ids, embeddings, differ.positions, iv, ctl.chat)
    moved = view.moved(own, swapped, step)
    if not moved:
        return
    page.panels([view.moved_lead(why)])
    with st.container(horizontal=True):
        for t, change in moved:
            label, said = view.moved_button(why, t, change)
            st.button(label, key=f"why-moved-{t}", on_click=set_value, args=("step", t + 1), help=said)

"""The Why this word? page's attribution (pages/8_why.py): which source pieces made the output piece on
show, by every method as lines of shaded text, with what the methods say and where the model's card doubts
one of them; and the whole table of every output piece by one method. What is drawn is views.attribution's;
here, the cache, the buttons and the method picker."""

from __future__ import annotations

import streamlit as st

from i18n import _
from model.analysis import METHODS
from ui.page.binding import bind, page_value
from ui.page.ondemand import asked, filling
from ui.page.start import Page
from ui.session import explanations
from views import attribution as view
from views.explained import Explained, method_label
from viz.lengths import Span


def _methods_for(why: Explained, step: int) -> list[str]:
    """The methods shown for the piece: attention, rollout and those cheap or already computed at once, the
    others when asked (a real-size model's integrated gradients and occlusion take seconds per piece)."""
    bundle, ctl = why.bundle, why.ctl
    costly = view.costly_methods(
        why,
        lambda name: explanations.attribution_cached(
            bundle, ctl.sentence, why.out_ids, name, why.iv, pieces=(step,), chat=ctl.chat
        ),
    )
    if not costly or st.button(view.costly_label(costly), key="why-costly-methods"):
        return list(METHODS)
    st.caption(view.costly_note(why, costly))
    return [name for name in METHODS if name not in costly]


def every_method(page: Page, why: Explained, step: int, notes_below) -> None:
    """Every method's line over the source for the piece on show; what they say, in `notes_below` (under
    the table, so that the picture comes first)."""
    bundle, ctl = why.bundle, why.ctl
    above, below = st.container(), st.container()
    with below if ctl.presentation else above:  # on a projector the lines come first, the button for more below
        methods = _methods_for(why, step)
    rows = {
        name: explanations.attribution(
            bundle, ctl.sentence, why.out_ids, name, why.iv, pieces=(step,), trace=why.own_trace, chat=ctl.chat
        )[0]
        for name in methods
    }
    with above:
        page.panels(view.lines(why, step, rows))
    with notes_below:
        page.panels(view.notes(why, rows, step))


def whole_table(page: Page, why: Explained, output: Span, source: Span) -> None:
    """Every output piece by the method picked under it (`method=` in the URL), on a button when costly."""
    page_value(view.METHOD)
    table = st.container()  # the picture first, its method picker under it
    method = bind(
        "method",
        st.radio,
        label=_("Every {label} by one method", label=why.words.a_piece),
        options=list(METHODS),
        format_func=method_label,
        horizontal=True,
    )
    with table:
        _draw_table(page, why, method, output, source)


def _draw_table(page: Page, why: Explained, method: str, output: Span, source: Span) -> None:
    bundle, ctl, out_ids = why.bundle, why.ctl, why.out_ids
    ask = view.table_ask(why, method)
    wanted = asked(
        ask.cost,
        explanations.attribution_cached(bundle, ctl.sentence, out_ids, method, why.iv, chat=ctl.chat),
        ask.label,
        ask.key,
        ask.note,
        why.spare,
    )
    if wanted is False:
        return
    with filling(wanted) as progress:
        scores = explanations.attribution(
            bundle, ctl.sentence, out_ids, method, why.iv, progress=progress, trace=why.own_trace, chat=ctl.chat
        )
    page.panels([view.table(why, method, scores, output, source)])

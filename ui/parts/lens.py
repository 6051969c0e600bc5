"""The Why this word? page's logit lens (pages/8_why.py): what each decoder layer would already write for
the output piece on show, as a table of first candidates, and for every output piece as a heatmap (on a
button when costly). What is drawn is views.lens's; here, the cache and the button."""

from __future__ import annotations

from ui.page.ondemand import asked, filling
from ui.page.start import Page
from ui.session import explanations
from views import lens as view
from views.explained import Explained
from viz.lengths import Span


def section(page: Page, why: Explained, step: int, output: Span) -> None:
    """The lens of the piece on show, then of every output piece."""
    bundle, ctl, iv, out_ids = why.bundle, why.ctl, why.iv, why.out_ids
    cached = explanations.lens_cached(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    ask = view.every_piece_ask(why)
    if cached or ask.eager(why.spare):
        whole = explanations.lens(bundle, ctl.sentence, out_ids, iv, trace=why.own_trace, chat=ctl.chat)
        candidates = whole.candidates(step)
    else:
        one = explanations.lens(bundle, ctl.sentence, out_ids, iv, trace=why.own_trace, pieces=(step,), chat=ctl.chat)
        candidates = one.candidates(0)
    page.panels([view.table(why, step, *candidates)])
    wanted = asked(ask.cost, cached, ask.label, ask.key, ask.note, why.spare)
    if wanted is False:
        return
    with filling(wanted):
        whole = explanations.lens(bundle, ctl.sentence, out_ids, iv, trace=why.own_trace, chat=ctl.chat)
    page.panels([view.heatmap(why, whole, output)])

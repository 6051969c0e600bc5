"""The Training page's time-lapse: the current sentence through the weights kept at each training
snapshot, with a step slider and a play button (the player shared with decoding); views/timelapse.py says
what each frame shows."""

from __future__ import annotations

import streamlit as st

from i18n import _, number
from model import Bundle, TranslationResult
from ui.page.binding import bind, page_value, set_value, stored
from ui.page.player import TIME_LAPSE
from ui.page.start import Page
from ui.session import engine, explanations
from views import timelapse
from views.timelapse import SNAPSHOT


def show(page: Page) -> None:
    """The time-lapse section, or why this model has none."""
    missing = timelapse.missing(page.scene)
    if missing is not None:
        page.panels([missing])
        return
    final = page.translate()
    steps = page.bundle.snapshots
    page_value(SNAPSHOT)
    # another checkpoint may keep fewer (0: play from the start)
    set_value(SNAPSHOT.key, min(stored(SNAPSHOT.key), len(steps)))
    TIME_LAPSE.controls(len(steps), "training", finish_label=None)  # paused, the slider is the way on
    TIME_LAPSE.run(lambda index: _frame(page, steps, index, final), len(steps), page)
    # the pictures come first: a projector's or a phone's first screen is theirs
    page.panels([timelapse.about(page.scene)])


def _frame(page: Page, steps: list[int], index: int, final: TranslationResult) -> None:
    """One frame of the time-lapse: the step slider, then the sentence through that snapshot."""
    bind(
        SNAPSHOT.key,
        st.select_slider,
        label=_("Training step"),
        options=list(range(1, len(steps) + 1)),
        format_func=lambda k: number(steps[k - 1]),
        moving=TIME_LAPSE.playing(),
    )
    _draw(page, engine.get_snapshot(str(page.bundle.path), steps[index]), steps[index], final)


def _draw(page: Page, snapshot: Bundle, step: int, final: TranslationResult) -> None:
    """A snapshot's cross-attention, its translation beside the final one, its scores and every snapshot's."""
    ctl, scene = page.controls, page.scene
    text = engine.translation_text(snapshot, ctl.sentence, ctl.interventions(), ctl.options())
    trace = explanations.teacher_forced(snapshot, ctl.sentence, final.output_ids, ctl.interventions())
    # the pictures first: a projector's or a phone's first screen is theirs
    shown = timelapse.pictures(scene, trace, step) + timelapse.outputs(scene, step, text, final.translation)
    page.panels(shown + timelapse.scores(scene, step))

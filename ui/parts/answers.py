"""Several sampled answers at once (pages/1_translate.py): the same prompt drawn with the address's seed and the
ones after it, each with its log-probability and where it first left the greedy answer, and a button that opens
one on every page (its seed goes into the address)."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from i18n import _, n_
from model import DecodeOptions, TranslationResult
from ui.page.binding import set_value
from ui.page.ondemand import asked
from ui.page.start import Page
from ui.session import engine
from views.budget import continuation_work
from views.sampling import Answer, first_difference, seeds_from


def _decoded(page: Page, options: DecodeOptions) -> tuple[str, float, tuple[int, ...]]:
    """The text, log-probability and pieces of the answer `options` decode, without a trace (cached)."""
    controls = page.controls
    result = engine.translate(
        page.bundle, controls.sentence, controls.interventions(), options, trace=False, chat=controls.chat
    )
    return result.translation, result.log_prob, result.output_ids


def _held(page: Page, options: list[DecodeOptions]) -> bool:
    controls = page.controls
    iv = controls.interventions()
    return all(
        engine.in_cache(page.bundle, controls.sentence, iv, each, trace=False, chat=controls.chat) for each in options
    )


def several_answers(page: Page) -> None:
    """ "Five answers": drawn when asked (or at once when cheap or cached), then shown one under another."""
    drawn = page.controls.sampling
    if drawn is None:
        return
    seeds = seeds_from(drawn.seed)
    options = [replace(page.controls.options(), sampling=replace(drawn, seed=seed)) for seed in seeds]
    greedy = replace(page.controls.options(), sampling=None)
    st.subheader(_("Several answers"))
    steps = len(page.result.steps) if isinstance(page.result, TranslationResult) else 1
    go = asked(
        continuation_work(page.bundle, steps) * (len(seeds) + 1),
        _held(page, [*options, greedy]),
        n_("Draw {n} answer", "Draw {n} answers", len(seeds)),
        page.scene.key("several-answers"),
        _(
            "Each answer is a whole decoding: the button draws them, with seeds {first} to {last}.",
            first=seeds[0],
            last=seeds[-1],
        ),
    )
    if go is False:
        return
    greedy_ids = _decoded(page, greedy)[2]
    answers = []
    for seed, each in zip(seeds, options, strict=True):
        text, log_prob, ids = _decoded(page, each)
        answers.append(Answer(seed, text, log_prob, first_difference(ids, greedy_ids)))
    if not isinstance(go, bool):
        go.empty()
    _show(answers, drawn.seed)


def _show(answers: list[Answer], current: int) -> None:
    """One answer a row: its seed, its text, its log-probability, where it left greedy, and a button to open it."""
    st.caption(
        _(
            "The same prompt sampled with {n} seeds. The log-probability is the model's own (before temperature and "
            "the cuts) of the whole answer: the higher, the more likely the model found it.",
            n=len(answers),
        )
    )
    for answer in answers:
        text_column, button_column = st.columns([5, 1], vertical_alignment="center")
        with text_column:
            left = (
                _("the greedy answer")
                if answer.leaves_greedy_at is None
                else _("leaves the greedy answer at step {t}", t=answer.leaves_greedy_at + 1)
            )
            st.markdown(
                _("**seed {seed}** · log p = {lp} · {left}", seed=answer.seed, lp=f"{answer.log_prob:.2f}", left=left)
            )
            st.text(answer.text or _("(empty output)"))
        with button_column:
            st.button(
                _("Shown") if answer.seed == current else _("Open"),
                key=f"open-seed-{answer.seed}",
                disabled=answer.seed == current,
                on_click=set_value,
                args=("seed", answer.seed),
                help=_("Show this answer on every page (its seed goes into the address)."),
            )

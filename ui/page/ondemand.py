"""Parts of a page computed only when asked: a button instead of work that would keep the page
waiting (a real-size model's whole attribution table, a decoding that re-reads every prefix)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import streamlit as st

from i18n import _
from model import AnatomyError, Bundle
from model.analysis.forced import work
from ui.session import engine
from views import budget
from views.budget import EAGER_WORK as EAGER_WORK
from views.budget import STEP_WORK as STEP_WORK
from views.budget import continuation_work as continuation_work

if TYPE_CHECKING:
    from views.controls import Controls

# EAGER_WORK (the work a part may cost unasked), STEP_WORK and continuation_work live in views.budget, where a
# notebook's panels decide with them too; EAGER_WORK is read here at each call (tests set it to 0)


def asked(
    cost: float, cached: bool, label: str, key: str, note: str, budget: float | None = None
) -> st.delta_generator.DeltaGenerator | bool:
    """Whether a costly part of the page is to be computed: True when it costs at most `budget` (default
    EAGER_WORK) or is cached; a progress bar to fill when the person has just asked for it with the button;
    False otherwise. `label` and `note` are said already, in the run's language."""
    if cost <= (EAGER_WORK if budget is None else budget) or cached:
        return True
    if st.button(label, key=key):
        return st.progress(0.0, text=_("Computing ..."))
    st.caption(note)
    return False


def spare_work(bundle: Bundle, steps: int) -> float:
    """What a page that shows a continuation of `steps` pieces (or a translation) may compute unasked beside
    it: EAGER_WORK less what decoding it costs. A real-size model's decoding takes the whole of it
    (SmolLM2-135M's 20 pieces, gpt2's: about a second), so there everything else waits for a button and a
    new sentence costs its decoding alone; on a small model nearly all of it is left."""
    return budget.spare_work(bundle, steps, EAGER_WORK)


def prompt_and_steps(bundle: Bundle, controls: Controls) -> tuple[int, int] | None:
    """The pieces of the text as the model reads it (a decoder-only model's prompt, a chat message wrapped; an
    encoder-decoder's source) and the pieces its continuation or translation may have at most under the
    controls; None when the text is refused (the page's own run says why)."""
    try:
        prompt = len(bundle.read_input(controls.sentence, chat=controls.chat))
    except AnatomyError:
        return None
    options = controls.options()
    if bundle.capabilities.encoder:
        return prompt, bundle.max_output(prompt, options)
    return prompt, bundle.max_new(prompt, options)


def without_the_mask(bundle: Bundle, controls: Controls) -> st.delta_generator.DeltaGenerator | bool:
    """Whether to continue the text under the sidebar's switches when they take the causal mask off a
    decoder-only model: then no cache can hold the text and every step re-reads all of it, which at a real
    size takes seconds (SmolLM2-135M's 20 pieces after 80: about ten), so the page's continuation waits for a
    button unless it is cheap or cached (`asked`'s answer)."""
    if controls.causal or not bundle.capabilities.decoder_only:
        return True
    read = prompt_and_steps(bundle, controls)
    if read is None:
        return True
    prompt, steps = read
    return asked(
        work(bundle, 1, steps * prompt + steps * (steps + 1) // 2),  # step t re-reads the prompt and t pieces
        engine.in_cache(bundle, controls.sentence, controls.interventions(), controls.options(), chat=controls.chat),
        _("Continue without the causal mask"),
        "continue-without-causal-mask",
        _(
            "The causal mask is off in the sidebar: no cache can hold the text then (each step changes every piece "
            "before it), so every step re-reads the prompt and the pieces made so far, which takes seconds at this "
            "model's size. The button runs it; every page then shows it."
        ),
    )


def second_continuation(bundle: Bundle, controls: Controls, steps: int, label: str, key: str, **changes: Any) -> bool:
    """Whether to continue the page's text (translate its sentence) a second time, with the switches
    changed (`changes`): at once when cached or cheap; a model whose decoding of `steps` pieces costs
    more than EAGER_WORK waits for a button (`label`, said already), so that a new sentence stays quick."""
    cached = engine.in_cache(
        bundle,
        controls.sentence,
        controls.interventions(**changes),
        controls.options(),
        trace=False,
        chat=controls.chat,
    )
    note = (
        _(
            "Continuing the text once more under this switch reads every weight once per new piece, which takes "
            "most of a second at this model's size: the button runs it."
        )
        if bundle.capabilities.decoder_only
        else _(
            "Translating the sentence once more under this switch reads every weight once per new piece, which "
            "takes most of a second at this model's size: the button runs it."
        )
    )
    return asked(continuation_work(bundle, steps), cached, label, key, note) is not False


@contextmanager
def filling(asked: st.delta_generator.DeltaGenerator | bool) -> Iterator[Callable[[float], object] | None]:
    """What to tell a computation's progress to: the progress bar `asked` gave (gone afterwards), if any."""
    if isinstance(asked, bool):
        yield None
        return
    try:
        yield asked.progress
    finally:
        asked.empty()

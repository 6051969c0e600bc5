"""Parts of a page computed only when asked: a button instead of work that would keep the page
waiting (a real-size model's whole attribution table, a decoding that re-reads every prefix)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import streamlit as st

from i18n import _
from model import AnatomyError, Bundle, DecodeOptions
from model.analysis.forced import work
from ui.session import engine

if TYPE_CHECKING:
    from views.controls import Controls

# Work (parameter x position products, model.analysis.forced.work) a part of a page may cost without
# being asked: under half a second on one core. On the shipped model, only integrated gradients' whole table
# for sentences of ten words or more is asked for; at opus-mt's size, every whole table but attention's and
# rollout's, and the patching grid.
EAGER_WORK = 3e10
# A decoding step feeds one row yet reads every weight of the decoder and the output projection, which on
# one core costs as much work as this many products per weight (measured at gpt2's size: 29 ms a step, where
# EAGER_WORK is half a second)
STEP_WORK = 14


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


def continuation_work(bundle: Bundle, steps: int) -> float:
    """What decoding `steps` pieces one at a time costs, in the units of EAGER_WORK."""
    model = bundle.model
    head = model.tgt_embed.token.weight if model.generator is None else model.generator.weight
    read = sum(p.numel() for p in model.decoder.parameters()) + head.numel()  # what every step reads
    return float(steps) * read * STEP_WORK


def spare_work(bundle: Bundle, steps: int) -> float:
    """What a page that shows a continuation of `steps` pieces (or a translation) may compute unasked beside
    it: EAGER_WORK less what decoding it costs. A real-size model's decoding takes the whole of it
    (SmolLM2-135M's 20 pieces, gpt2's: about a second), so there everything else waits for a button and a
    new sentence costs its decoding alone; on a small model nearly all of it is left."""
    return max(0.0, EAGER_WORK - continuation_work(bundle, steps))


def prompt_and_steps(bundle: Bundle, controls: Controls) -> tuple[int, int] | None:
    """The pieces of the text as the model reads it (a decoder-only model's prompt, a chat message wrapped; an
    encoder-decoder's source) and the pieces its continuation or translation may have at most under the
    controls; None when the text is refused (the page's own run says why)."""
    try:
        prompt = len(bundle.read_input(controls.sentence, chat=controls.chat))
    except AnatomyError:
        return None
    options = DecodeOptions(beam_size=controls.beam_size)
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
        engine.in_cache(bundle, controls.sentence, controls.interventions(), controls.beam_size, chat=controls.chat),
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
        controls.beam_size,
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

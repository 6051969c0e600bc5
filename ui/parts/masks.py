"""The Masks and heads lab's mask experiments in the app (pages/5_masks_and_heads.py): the box of the second text,
the cached runs and the button that generates without the causal mask; what they show is
views/mask_experiments.py's."""

from __future__ import annotations

import streamlit as st

from i18n import _
from model import AnatomyError
from model.engine import stages
from ui.page.binding import bind
from ui.page.ondemand import asked
from ui.page.start import Page
from ui.session import engine, explanations
from views import mask_experiments as shown
from views.scene import Scene
from viz.lengths import Span


def padding_encoder(page: Page, scene: Scene, source: Span) -> bool:
    """A model without a decoder: the sentence batched with a shorter one, judged by the shorter one's
    sentence embedding; False when the batch could not be encoded (the error is shown)."""
    ctl = page.controls
    page.panels([shown.padding_heading(scene)])
    short = bind("short", st.text_input, label=_("A second sentence, batched with yours"))
    try:
        alone = engine.encode(page.bundle, short, ctl.interventions())
        with_pad = engine.encode_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=True))
        without_pad = engine.encode_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=False))
    except AnatomyError as exc:
        page.panels([shown.failed(scene, "padding-error", exc)])
        return False
    page.panels(shown.padding_encoder(scene, alone, with_pad, without_pad, source))
    return True


def causal(page: Page, scene: Scene, output: Span) -> None:
    """The output with the causal mask on and off, and one pass over the one made with it on, read with the mask
    on and off (a decoder-only model's continuation without the mask on a button when costly)."""
    page.panels([shown.causal_heading(scene)])
    if page.decoder_only:
        _causal_decoder(page, scene, output)
        return
    ctl = page.controls
    causal_on = page.translate(causal_mask=True)
    causal_off = page.translate(causal_mask=False, trace=False)  # its text and steps: the trace below is one pass
    seen_off = explanations.teacher_forced(
        page.bundle, ctl.sentence, causal_on.output_ids, ctl.interventions(causal_mask=False)
    )
    page.panels(shown.causal(scene, causal_on, causal_off, seen_off, output))


def _causal_decoder(page: Page, scene: Scene, output: Span) -> None:
    """A decoder-only model: prompt and continuation read in one pass with the causal mask on and off, and
    the continuation generated with it off (on a button when costly)."""
    ctl = page.controls
    causal_on = page.translate(causal_mask=True)  # the page's own continuation when the sidebar's mask is on
    # the same prompt and continuation in one pass, mask on and off: with the mask on, the continuation's own
    # trace is that pass (Bundle.generate builds it so); with it off, the pass stops at this layer
    off_pattern = explanations.teacher_forced_at(
        page.bundle,
        ctl.sentence,
        causal_on.output_ids,
        stages.attention("decoder", "self", shown.decoder_layer(scene), "pattern"),
        ctl.interventions(causal_mask=False),
        ctl.chat,
    )[0]
    page.panels(shown.causal_decoder(scene, causal_on, off_pattern, output))
    if not asked(
        shown.rereads_work(page.bundle, causal_on),
        engine.in_cache(
            page.bundle, ctl.sentence, ctl.interventions(causal_mask=False), ctl.options(), trace=False, chat=ctl.chat
        ),
        _("Generate without the mask"),
        "causal-off-continuation",
        shown.rereads_note(),
    ):
        return
    causal_off = page.translate(causal_mask=False, trace=False)
    page.panels(shown.generated_without_mask(scene, causal_on, causal_off))


def padding(page: Page, scene: Scene, source: Span) -> None:
    """The text batched with a shorter one in one pass, the padding mask on and off: an encoder-decoder's
    translations, a decoder-only model's prompts."""
    ctl = page.controls
    page.panels([shown.padding_heading(scene)])
    if page.decoder_only:
        texts = [ctl.sentence, bind("short", st.text_input, label=_("A second prompt, batched with yours"))]
    else:
        texts = [ctl.sentence, bind("short", st.text_input, label=_("A second sentence, batched with yours"))]
    try:
        if page.decoder_only:  # with a chat message, both are wrapped by the chat template
            rows = [
                engine.prompt_batch(page.bundle, texts, ctl.interventions(padding_mask=mask), ctl.chat)
                for mask in (True, False)
            ]
        else:
            batches = [
                engine.translate_batch(page.bundle, texts, ctl.interventions(padding_mask=mask))
                for mask in (True, False)
            ]
    except AnatomyError as exc:
        page.panels([shown.failed(scene, "padding-error", exc)])
        return
    if page.decoder_only:
        page.panels(shown.padding_decoder(scene, rows[0], rows[1]))
    else:
        page.panels(shown.padding(scene, batches[0], batches[1], source))

"""The Masks and heads lab's mask experiments (pages/5_masks_and_heads.py): one head with the causal mask on
and off, and the output generated without it; a text batched with a shorter one, with the padding mask on and
off (an encoder-only model's sentence embedding, a translation, a decoder-only model's prompt)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import _, n_
from model import AnatomyError, Trace, cosine
from model.analysis.forced import work
from model.engine import stages
from model.results import TranslationResult
from ui.page.binding import bind
from ui.page.markup import two_translations
from ui.page.ondemand import asked
from ui.page.start import Page
from ui.session import engine, explanations
from ui.session.figures import shared
from views.markdown import md
from viz.lengths import Span, whole
from viz.masks import future_weight, largest_change, mask_comparison, probability_comparison


def _pad_piece(page: Page) -> str:
    """The model's padding piece, as its tokenizer writes it."""
    return page.bundle.tokenizer.pieces([page.bundle.specials.pad])[0]


def _traced(result: TranslationResult) -> Trace:
    """The trace of a result made with one (Page.translate and the batches trace by default)."""
    if result.trace is None:
        raise ValueError("the lab reads the result's trace, and this one was made without")
    return result.trace


def _mask_effect(
    page: Page,
    on: np.ndarray,
    off: np.ndarray,
    layer: int,
    pieces: list[str],
    title: str,
    names: tuple[str, str],
    caption: str,
    key: str,
    window: Span,
) -> None:
    """One self-attention head with a mask on and off (`on`, `off`: the layer's patterns, heads first; `names`:
    the two panels'), side by side with their difference."""
    ctl = page.controls
    page.show(
        shared(
            mask_comparison,
            on[ctl.head],
            off[ctl.head],
            pieces,
            pieces,
            page.style,
            f"{title} L{layer + 1} H{ctl.head + 1}",
            names,
            rows=window,
            columns=window,
        ),
        caption,
        key=key,
    )


def _padding_demo(page: Page, on: list[Trace], off: list[Trace], source: Span) -> int:
    """The shorter sentence of a padded batch of two, with the padding mask on and off; its row."""
    pad_piece = _pad_piece(page)
    row = 1 if on[1].src_pieces.count(pad_piece) >= on[0].src_pieces.count(pad_piece) else 0
    n_pad = on[row].src_pieces.count(pad_piece)
    st.markdown(
        n_(
            "In one batch every row has the same length, so the shorter sentence gets **{n}** `{pad}` piece at "
            "the end.",
            "In one batch every row has the same length, so the shorter sentence gets **{n}** `{pad}` pieces at "
            "the end.",
            n_pad,
            pad=pad_piece,
        )
        if n_pad
        else _("Both sentences have the same length: make the second one shorter to see padding.")
    )
    layer = min(page.controls.layer, page.limits.n_encoder_layers - 1)
    _mask_effect(
        page,
        on[row].pattern("encoder", "self", layer),
        off[row].pattern("encoder", "self", layer),
        layer,
        on[row].src_pieces,
        _("The shorter sentence, encoder self-attention"),
        (_("padding mask on"), _("padding mask off")),
        _(
            "With the mask on, no query gives any weight to the {pad} columns; with it off, real words leak "
            "attention into padding.",
            pad=pad_piece,
        ),
        "padding",
        source,
    )
    return row


def padding_encoder(page: Page, source: Span) -> bool:
    """A model without a decoder: the sentence batched with a shorter one, judged by the shorter one's
    sentence embedding; False when the batch could not be encoded (the error is shown)."""
    ctl = page.controls
    st.subheader(_("The padding mask: batching a shorter sentence"))
    short = bind("short", st.text_input, label=_("A second sentence, batched with yours"))
    try:
        alone = engine.encode(page.bundle, short, ctl.interventions())
        with_pad = engine.encode_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=True))
        without_pad = engine.encode_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=False))
    except AnatomyError as exc:
        st.error(md(str(exc)))
        return False
    row = _padding_demo(page, [r.trace for r in with_pad], [r.trace for r in without_pad], source)
    left, right = st.columns(2)
    left.metric(
        _("Its embedding in the batch vs alone, padding mask on"),
        f"{cosine(with_pad[row].embedding, alone.embedding):.4f}",
    )
    right.metric(_("the same with the padding mask off"), f"{cosine(without_pad[row].embedding, alone.embedding):.4f}")
    st.caption(
        _(
            "Cosine similarity to the sentence encoded on its own (1 = the same embedding): with the mask, "
            "padding changes nothing; without it, the padding leaks into every vector."
        )
    )
    return True


def causal_decoder(page: Page, output: Span) -> None:
    """A decoder-only model: prompt and continuation read in one pass with the causal mask on and off, and
    the continuation generated with it off."""
    ctl = page.controls
    st.subheader(_("The causal mask: no peeking at later pieces"))
    causal_on = page.translate(causal_mask=True)  # the page's own continuation when the sidebar's mask is on
    layer = min(ctl.layer, page.limits.n_decoder_layers - 1)
    # the same prompt and continuation in one pass, mask on and off: with the mask on, the continuation's own
    # trace is that pass (Bundle.generate builds it so); with it off, the pass stops at this layer
    seen_on = _traced(causal_on)
    on_pattern = seen_on.pattern("decoder", "self", layer)
    off_pattern = explanations.teacher_forced_at(
        page.bundle,
        ctl.sentence,
        causal_on.output_ids,
        stages.attention("decoder", "self", layer, "pattern"),
        ctl.interventions(causal_mask=False),
        ctl.chat,
    )[0]
    _mask_effect(
        page,
        on_pattern,
        off_pattern,
        layer,
        seen_on.tgt_pieces,
        _("Self-attention over prompt and continuation"),
        (_("causal mask on"), _("causal mask off")),
        _(
            "The prompt and the continuation made with the mask on, read in one pass with the mask on and off. "
            "With it off, every position also looks at the positions after it (right of the diagonal lights up): "
            "each position is there to predict the next piece, which it can now see. In training the model would "
            "copy the answer instead of learning to predict it. The pass without the mask runs only up to the "
            "layer on show (the layers after it would change nothing here), so a later layer takes a little longer "
            "the first time it is picked."
        ),
        "causal",
        output,
    )
    left, right = st.columns(2)
    left.metric(
        _("Weight on later pieces, layer L{layer}, mask on", layer=layer + 1),
        f"{future_weight(on_pattern):.1%}",
    )
    right.metric(_("the same with the mask off"), f"{future_weight(off_pattern):.1%}")
    st.caption(
        _("The share of each position's attention that goes to pieces after it, averaged over heads and positions.")
    )
    _generated_without_mask(page, causal_on)


def _generated_without_mask(page: Page, causal_on: TranslationResult) -> None:
    """A decoder-only model's continuation generated with the causal mask on, then off (on a button when
    costly), and the probabilities each step chose from."""
    ctl = page.controls
    st.caption(
        _(
            "The continuation generated with the mask on, then off. While generating, a step can only read the "
            "pieces made before it, mask or no mask; without the mask, though, the prompt's pieces and those made "
            "so far read each other both ways, unlike anything the model saw in training. The probabilities below "
            "are the ones each step chose from:"
        )
    )
    # a decoder-only model's continuation is a GenerationResult, which has the prompt's pieces
    prompt, made = len(getattr(causal_on, "prompt_ids", ())), len(causal_on.output_ids)
    rereads = work(page.bundle, 1, made * prompt + made * (made + 1) // 2)  # every step re-reads all before it
    if not asked(
        rereads,
        engine.in_cache(
            page.bundle, ctl.sentence, ctl.interventions(causal_mask=False), ctl.beam_size, trace=False, chat=ctl.chat
        ),
        _("Generate without the mask"),
        "causal-off-continuation",
        _(
            "Without the mask, every step re-reads the prompt and the pieces made so far (no cache can hold "
            "them: each step changes them all), which takes seconds at this model's size: the button runs it."
        ),
    ):
        return
    causal_off = page.translate(causal_mask=False, trace=False)
    two_translations(("", causal_on.translation), ("", causal_off.translation))
    page.show(
        shared(
            probability_comparison,
            causal_on.steps,
            causal_off.steps,
            page.style,
            _("Probability of each new piece: causal mask on (before) and off (after)"),
        ),
        key="causal-probs",
    )


def padding_decoder(page: Page) -> None:
    """A decoder-only model: the prompt batched with a shorter one in one pass, the padding mask on and off."""
    ctl = page.controls
    pad_piece = _pad_piece(page)
    st.subheader(_("The padding mask: batching a shorter prompt"))
    short = bind("short", st.text_input, label=_("A second prompt, batched with yours"))
    try:
        texts = [ctl.sentence, short]  # with a chat message, both are wrapped by the chat template
        with_pad = engine.prompt_batch(page.bundle, texts, ctl.interventions(padding_mask=True), ctl.chat)
        without_pad = engine.prompt_batch(page.bundle, texts, ctl.interventions(padding_mask=False), ctl.chat)
    except AnatomyError as exc:
        st.error(md(str(exc)))
        return
    row = 1 if with_pad[1].tgt_pieces.count(pad_piece) >= with_pad[0].tgt_pieces.count(pad_piece) else 0
    pieces = with_pad[row].tgt_pieces
    n_pad = pieces.count(pad_piece)
    st.markdown(
        n_(
            "A decoder-only model has no source sentence to pad, and one prompt alone has no padding. In one "
            "batch, though, every row has the same length, so the shorter prompt gets **{n}** `{pad}` piece at "
            "the end.",
            "A decoder-only model has no source sentence to pad, and one prompt alone has no padding. In one "
            "batch, though, every row has the same length, so the shorter prompt gets **{n}** `{pad}` pieces at "
            "the end.",
            n_pad,
            pad=pad_piece,
        )
        if n_pad
        else _("Both prompts have the same length: make the second one shorter to see padding.")
    )
    layer = min(ctl.layer, page.limits.n_decoder_layers - 1)
    _mask_effect(
        page,
        with_pad[row].pattern("decoder", "self", layer),
        without_pad[row].pattern("decoder", "self", layer),
        layer,
        pieces,
        _("The shorter prompt, self-attention"),
        (_("padding mask on"), _("padding mask off")),
        _(
            "The shorter prompt's row of the batch, read in one pass with the padding mask on and off (the {pad} "
            "pieces at the end are its padding).",
            pad=pad_piece,
        ),
        "padding",
        whole(len(pieces)),
    )
    real = len(pieces) - n_pad
    change = largest_change(
        with_pad[row].pattern("decoder", "self", layer), without_pad[row].pattern("decoder", "self", layer), real
    )
    st.metric(_("Largest change of a real piece's attention weight, layer L{layer}", layer=layer + 1), f"{change:.4f}")
    if ctl.causal:
        st.caption(
            _(
                "The real pieces' rows do not change: the padding comes after the text, and the causal mask "
                "already stops every piece from looking at later positions, so no real piece can see the padding, "
                "mask or no mask. Only the padding's own rows change. Turn the causal mask off in the sidebar to "
                "see the padding mask at work."
            )
        )
    else:
        st.caption(
            _(
                "The causal mask is off, so real pieces can look ahead into the padding: with the padding mask on "
                "they give it no weight; with it off, they leak attention into it."
            )
        )


def causal(page: Page, output: Span) -> None:
    """The translation with the causal mask on and off, and one pass over it with the mask on and off."""
    ctl = page.controls
    st.subheader(_("The causal mask: no peeking at later words"))
    causal_on = page.translate(causal_mask=True)
    causal_off = page.translate(causal_mask=False, trace=False)  # its text and steps: the trace below is one pass
    dec_layer = min(ctl.layer, page.limits.n_decoder_layers - 1)
    seen_on = _traced(causal_on)
    seen_off = explanations.teacher_forced(
        page.bundle, ctl.sentence, causal_on.output_ids, ctl.interventions(causal_mask=False)
    )
    _mask_effect(
        page,
        seen_on.pattern("decoder", "self", dec_layer),
        seen_off.pattern("decoder", "self", dec_layer),
        dec_layer,
        seen_on.tgt_pieces,
        _("Decoder self-attention"),
        (_("causal mask on"), _("causal mask off")),
        _(
            "The translation made with the mask on, read in one pass with the mask on and off. With it off, "
            "every position also looks at the positions after it (right of the diagonal lights up): in training "
            "the model would copy the answer instead of learning to predict it."
        ),
        "causal",
        output,
    )
    st.caption(
        _(
            "Output with the mask on, then off. While decoding, a step can only read the pieces made before it, "
            "mask or no mask; without the mask, though, those pieces also read each other both ways, unlike "
            "anything the model saw in training. The probabilities below are the ones each step chose from:"
        )
    )
    two_translations(("", causal_on.translation), ("", causal_off.translation))
    page.show(
        shared(
            probability_comparison,
            causal_on.steps,
            causal_off.steps,
            page.style,
            _("Probability of each output piece: causal mask on (before) and off (after)"),
        ),
        key="causal-probs",
    )


def padding(page: Page, source: Span) -> None:
    """The sentence batched with a shorter one, translated with the padding mask on and off."""
    ctl = page.controls
    st.subheader(_("The padding mask: batching a shorter sentence"))
    short = bind("short", st.text_input, label=_("A second sentence, batched with yours"))
    try:
        with_pad = engine.translate_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=True))
        without_pad = engine.translate_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=False))
    except AnatomyError as exc:
        st.error(md(str(exc)))
    else:
        row = _padding_demo(page, [_traced(r) for r in with_pad], [_traced(r) for r in without_pad], source)
        two_translations(
            (_("Its translation with the padding mask on"), with_pad[row].translation),
            (_("and off"), without_pad[row].translation),
        )

"""The Masks and heads lab's mask experiments as panels (views/masks.py draws the page): the causal mask on and
off and the output made without it, and a text batched with a shorter one with the padding mask on and off (a
translation, a decoder-only model's prompt, an encoder-only model's sentence embedding)."""

from __future__ import annotations

import numpy as np

from i18n import _, n_
from model import AnatomyError, Bundle, Trace, TranslationResult, cosine
from model.analysis.forced import work
from model.results import EncodeResult
from views.markdown import md
from views.panels import Panel, side_by_side, words
from views.scene import Scene
from viz.lengths import Span, whole
from viz.masks import future_weight, largest_change, mask_comparison, probability_comparison


def mask_effect(
    scene: Scene,
    on: np.ndarray,
    off: np.ndarray,
    layer: int,
    pieces: list[str],
    title: str,
    names: tuple[str, str],
    caption: str,
    key: str,
    window: Span,
) -> Panel:
    """One self-attention head with a mask on and off (`on`, `off`: the layer's patterns, heads first; `names`:
    the two panels'), side by side with their difference."""
    head = scene.controls.head
    figure = scene.figure(
        mask_comparison,
        on[head],
        off[head],
        pieces,
        pieces,
        scene.style,
        f"{title} L{layer + 1} H{head + 1}",
        names,
        rows=window,
        columns=window,
    )
    return Panel(scene.key(key), figure=figure, caption=caption)


def decoder_layer(scene: Scene) -> int:
    """The decoder layer the experiments show: the sidebar's, or the decoder's last when it has fewer."""
    return min(scene.controls.layer, scene.limits.n_decoder_layers - 1)


def pad_piece(bundle: Bundle) -> str:
    """The model's padding piece, as its tokenizer writes it."""
    return bundle.tokenizer.pieces([bundle.specials.pad])[0]


def padded_row(pieces: list[list[str]], pad: str) -> int:
    """The row of a batch of two that the padding lengthens (the second when both have as much)."""
    return 1 if pieces[1].count(pad) >= pieces[0].count(pad) else 0


def traced(result: TranslationResult) -> Trace:
    """The trace of a result made with one (the page's runs and the batches trace by default)."""
    if result.trace is None:
        raise ValueError("the lab reads the result's trace, and this one was made without")
    return result.trace


def no_causal_mask(scene: Scene) -> list[Panel]:
    """A model without a decoder: why it has no causal mask."""
    said = _(
        "{model} is encoder-only: it has no decoder, so there is no causal mask. Its self-attention lets every "
        "piece look at every other, before and after it.",
        model=scene.bundle.name,
    )
    return [Panel(scene.key("no-causal-mask"), heading=_("The causal mask"), text=said, tone="info")]


def padding_heading(scene: Scene) -> Panel:
    """The padding experiment's heading, over the second text's box."""
    if scene.decoder_only:
        return Panel(scene.key("padding-heading"), heading=_("The padding mask: batching a shorter prompt"))
    return Panel(scene.key("padding-heading"), heading=_("The padding mask: batching a shorter sentence"))


def failed(scene: Scene, key: str, exc: AnatomyError) -> Panel:
    """An experiment the person's text broke: what to do, in words."""
    return words(scene.key(key), md(str(exc)), "error")


def _padding_demo(scene: Scene, on: list[Trace], off: list[Trace], row: int, source: Span) -> list[Panel]:
    """The shorter sentence (row `row`) of a padded batch of two, with the padding mask on and off."""
    pad = pad_piece(scene.bundle)
    n_pad = on[row].src_pieces.count(pad)
    if n_pad:
        said = n_(
            "In one batch every row has the same length, so the shorter sentence gets **{n}** `{pad}` piece at "
            "the end.",
            "In one batch every row has the same length, so the shorter sentence gets **{n}** `{pad}` pieces at "
            "the end.",
            n_pad,
            pad=pad,
        )
    else:
        said = _("Both sentences have the same length: make the second one shorter to see padding.")
    layer = min(scene.controls.layer, scene.limits.n_encoder_layers - 1)
    effect = mask_effect(
        scene,
        on[row].pattern("encoder", "self", layer),
        off[row].pattern("encoder", "self", layer),
        layer,
        on[row].src_pieces,
        _("The shorter sentence, encoder self-attention"),
        (_("padding mask on"), _("padding mask off")),
        _(
            "With the mask on, no query gives any weight to the {pad} columns; with it off, real words leak "
            "attention into padding.",
            pad=pad,
        ),
        "padding",
        source,
    )
    return [words(scene.key("padding-pad"), said), effect]


def padding_encoder(
    scene: Scene, alone: EncodeResult, with_pad: list[EncodeResult], without_pad: list[EncodeResult], source: Span
) -> list[Panel]:
    """A model without a decoder: the sentence batched with a shorter one (encoded `alone` too), judged by the
    shorter one's sentence embedding."""
    row = padded_row([r.trace.src_pieces for r in with_pad], pad_piece(scene.bundle))
    demo = _padding_demo(scene, [r.trace for r in with_pad], [r.trace for r in without_pad], row, source)
    metrics = [
        Panel(
            scene.key("padding-on"),
            text=_("Its embedding in the batch vs alone, padding mask on"),
            metric=f"{cosine(with_pad[row].embedding, alone.embedding):.4f}",
            row=scene.key("padding-metrics"),
        ),
        Panel(
            scene.key("padding-off"),
            text=_("the same with the padding mask off"),
            metric=f"{cosine(without_pad[row].embedding, alone.embedding):.4f}",
            row=scene.key("padding-metrics"),
        ),
    ]
    said = _(
        "Cosine similarity to the sentence encoded on its own (1 = the same embedding): with the mask, "
        "padding changes nothing; without it, the padding leaks into every vector."
    )
    return [*demo, *metrics, Panel(scene.key("padding-note"), caption=said)]


def padding(
    scene: Scene, with_pad: list[TranslationResult], without_pad: list[TranslationResult], source: Span
) -> list[Panel]:
    """The sentence batched with a shorter one, translated with the padding mask on and off."""
    row = padded_row([traced(r).src_pieces for r in with_pad], pad_piece(scene.bundle))
    demo = _padding_demo(scene, [traced(r) for r in with_pad], [traced(r) for r in without_pad], row, source)
    outputs = side_by_side(
        scene.key("padding-outputs"),
        [with_pad[row].translation, without_pad[row].translation],
        [_("Its translation with the padding mask on"), _("and off")],
    )
    return demo + outputs


def padding_decoder(scene: Scene, with_pad: list[Trace], without_pad: list[Trace]) -> list[Panel]:
    """A decoder-only model: the prompt batched with a shorter one in one pass, the padding mask on and off."""
    pad = pad_piece(scene.bundle)
    row = padded_row([trace.tgt_pieces for trace in with_pad], pad)
    pieces = with_pad[row].tgt_pieces
    n_pad = pieces.count(pad)
    if n_pad:
        said = n_(
            "A decoder-only model has no source sentence to pad, and one prompt alone has no padding. In one "
            "batch, though, every row has the same length, so the shorter prompt gets **{n}** `{pad}` piece at "
            "the end.",
            "A decoder-only model has no source sentence to pad, and one prompt alone has no padding. In one "
            "batch, though, every row has the same length, so the shorter prompt gets **{n}** `{pad}` pieces at "
            "the end.",
            n_pad,
            pad=pad,
        )
    else:
        said = _("Both prompts have the same length: make the second one shorter to see padding.")
    layer = decoder_layer(scene)
    on = with_pad[row].pattern("decoder", "self", layer)
    off = without_pad[row].pattern("decoder", "self", layer)
    effect = mask_effect(
        scene,
        on,
        off,
        layer,
        pieces,
        _("The shorter prompt, self-attention"),
        (_("padding mask on"), _("padding mask off")),
        _(
            "The shorter prompt's row of the batch, read in one pass with the padding mask on and off (the {pad} "
            "pieces at the end are its padding).",
            pad=pad,
        ),
        "padding",
        whole(len(pieces)),
    )
    change = Panel(
        scene.key("padding-change"),
        text=_("Largest change of a real piece's attention weight, layer L{layer}", layer=layer + 1),
        metric=f"{largest_change(on, off, len(pieces) - n_pad):.4f}",
        caption=_right_padding_note(scene),
    )
    return [words(scene.key("padding-pad"), said), effect, change]


def _right_padding_note(scene: Scene) -> str:
    """Why a decoder-only model's real pieces do or do not see the padding after them."""
    if scene.controls.causal:
        return _(
            "The real pieces' rows do not change: the padding comes after the text, and the causal mask "
            "already stops every piece from looking at later positions, so no real piece can see the padding, "
            "mask or no mask. Only the padding's own rows change. Turn the causal mask off in the sidebar to "
            "see the padding mask at work."
        )
    return _(
        "The causal mask is off, so real pieces can look ahead into the padding: with the padding mask on "
        "they give it no weight; with it off, they leak attention into it."
    )


def causal_heading(scene: Scene) -> Panel:
    """The causal experiment's heading."""
    if scene.decoder_only:
        return Panel(scene.key("causal-heading"), heading=_("The causal mask: no peeking at later pieces"))
    return Panel(scene.key("causal-heading"), heading=_("The causal mask: no peeking at later words"))


def causal(
    scene: Scene, causal_on: TranslationResult, causal_off: TranslationResult, seen_off: Trace, output: Span
) -> list[Panel]:
    """The translation with the causal mask on and off (`causal_off`: its text and steps), and one pass over the
    one made with it on, read with the mask on and off (`seen_off`)."""
    seen_on = traced(causal_on)
    layer = decoder_layer(scene)
    effect = mask_effect(
        scene,
        seen_on.pattern("decoder", "self", layer),
        seen_off.pattern("decoder", "self", layer),
        layer,
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
    said = _(
        "Output with the mask on, then off. While decoding, a step can only read the pieces made before it, "
        "mask or no mask; without the mask, though, those pieces also read each other both ways, unlike "
        "anything the model saw in training. The probabilities below are the ones each step chose from:"
    )
    outputs = side_by_side(scene.key("causal-outputs"), [causal_on.translation, causal_off.translation])
    title = _("Probability of each output piece: causal mask on (before) and off (after)")
    probabilities = scene.figure(probability_comparison, causal_on.steps, causal_off.steps, scene.style, title)
    note = Panel(scene.key("causal-note"), caption=said)
    return [effect, note, *outputs, Panel(scene.key("causal-probs"), figure=probabilities)]


def causal_decoder(scene: Scene, causal_on: TranslationResult, off_pattern: np.ndarray, output: Span) -> list[Panel]:
    """A decoder-only model: the prompt and the continuation made with the causal mask on (`causal_on`), read in
    one pass with the mask on and off (`off_pattern`: that pass's pattern at the layer, stopped there)."""
    seen_on = traced(causal_on)
    layer = decoder_layer(scene)
    on_pattern = seen_on.pattern("decoder", "self", layer)
    effect = mask_effect(
        scene,
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
    later_weight = [
        Panel(
            scene.key("causal-on"),
            text=_("Weight on later pieces, layer L{layer}, mask on", layer=layer + 1),
            metric=f"{future_weight(on_pattern):.1%}",
            row=scene.key("causal-metrics"),
        ),
        Panel(
            scene.key("causal-off"),
            text=_("the same with the mask off"),
            metric=f"{future_weight(off_pattern):.1%}",
            row=scene.key("causal-metrics"),
        ),
    ]
    said = _("The share of each position's attention that goes to pieces after it, averaged over heads and positions.")
    generated = _(
        "The continuation generated with the mask on, then off. While generating, a step can only read the "
        "pieces made before it, mask or no mask; without the mask, though, the prompt's pieces and those made "
        "so far read each other both ways, unlike anything the model saw in training. The probabilities below "
        "are the ones each step chose from:"
    )
    notes = [Panel(scene.key("causal-note"), caption=said), Panel(scene.key("causal-generated"), caption=generated)]
    return [effect, *later_weight, *notes]


def rereads_work(bundle: Bundle, causal_on: TranslationResult) -> float:
    """What generating a decoder-only model's continuation again without the causal mask costs: every step
    re-reads the prompt and every piece made before it."""
    # a decoder-only model's continuation is a GenerationResult, which has the prompt's pieces
    prompt = len(getattr(causal_on, "prompt_ids", ()))
    made = len(causal_on.output_ids)
    return work(bundle, 1, made * prompt + made * (made + 1) // 2)


def rereads_note() -> str:
    """What the button that generates without the causal mask is for, at a costly size."""
    return _(
        "Without the mask, every step re-reads the prompt and the pieces made so far (no cache can hold "
        "them: each step changes them all), which takes seconds at this model's size: the button runs it."
    )


def generated_without_mask(scene: Scene, causal_on: TranslationResult, causal_off: TranslationResult) -> list[Panel]:
    """A decoder-only model's continuation generated with the causal mask on, then off, and the probabilities
    each step chose from."""
    outputs = side_by_side(scene.key("causal-outputs"), [causal_on.translation, causal_off.translation])
    title = _("Probability of each new piece: causal mask on (before) and off (after)")
    probabilities = scene.figure(probability_comparison, causal_on.steps, causal_off.steps, scene.style, title)
    return [*outputs, Panel(scene.key("causal-probs"), figure=probabilities)]

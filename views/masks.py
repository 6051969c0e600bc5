"""The Masks and heads lab as panels (pages/5_masks_and_heads.py): one head's scores through the mask to its
weights, then the experiment on show: the causal mask on and off and the output made without it, a text batched
with a shorter one with the padding mask on and off (a translation, a decoder-only model's prompt, an encoder-only
model's sentence embedding), or the heads knocked out (views/knockout.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import i18n
from i18n import N_, _, later
from model import AnatomyError, Bundle, EncodeResult, Interventions, Trace, TranslationResult
from model.analysis.experiments import translate_batch
from model.engine import stages
from views import knockout
from views.budget import EAGER_WORK
from views.controls import BLOCK_NAMES, BLOCKS, WINDOW, Limits
from views.fields import Field
from views.lengths import block_windows, source_span
from views.mask_experiments import (
    causal,
    causal_decoder,
    causal_heading,
    decoder_layer,
    failed,
    generated_without_mask,
    no_causal_mask,
    padding,
    padding_decoder,
    padding_encoder,
    padding_heading,
    rereads_note,
    rereads_work,
)
from views.panels import Panel
from views.runs import main_result
from views.scene import Scene
from viz.lengths import Span, rows_shown
from viz.masks import masked_cells, score_pipeline


def _block(text: str) -> str:
    if text not in BLOCKS:
        raise ValueError(later("expected one of {options}", options=", ".join(BLOCKS)))
    return text


def _short(text: str) -> str:
    if not text.strip() or len(text) > 500:
        raise ValueError(later("expected a short sentence"))
    return text


# The experiments: codes of the URL (`lab=`), each with its name, said with i18n._ where shown
EXPERIMENTS = {"causal": N_("The causal mask"), "padding": N_("The padding mask"), "knockout": N_("Knock out heads")}


def _experiment(text: str) -> str:
    if text not in EXPERIMENTS:
        raise ValueError(later("expected one of {options}", options=", ".join(EXPERIMENTS)))
    return text


BLOCK = Field("block", "dec-self", _block)  # the attention block of the step-by-step head
SHORT = Field("short", "I see a bird.", _short)  # the text batched with the page's in the padding experiment
LAB = Field("lab", "causal", _experiment)  # the experiment on show (a model without a decoder shows all of its own)
FIELDS = [BLOCK, SHORT, WINDOW, LAB]
NEEDS_RESULT = True


def intro(scene: Scene) -> list[Panel]:
    """What the lab looks at, for the kind of model."""
    if scene.encoder_only:
        said = _("This lab looks at the encoder's one pass over the sentence: the padding mask and knocked-out heads.")
    elif scene.decoder_only:
        said = _(
            "This lab looks at one pass over the prompt and its continuation with every piece fed at once, as in "
            "training, which is where the masks do their work."
        )
    else:
        said = _(
            "This lab looks at one pass over the whole translation with every piece fed at once, as in training, "
            "which is where the masks do their work."
        )
    return [Panel(scene.key("lab-intro"), caption=said)]


def needs_pass(scene: Scene) -> bool:
    """Whether the lab reads a teacher-forced pass over the output (the translation, all of it read in one pass
    under the sidebar's switches) instead of the result's own trace: an encoder's one pass is the result's, and
    with the causal mask on a continuation's own trace is that pass (Bundle.generate builds it so)."""
    return not scene.encoder_only and not (scene.decoder_only and scene.controls.causal)


def block_shown(limits: Limits, block: str) -> str:
    """The attention block the step-by-step head is taken from: the one asked for, or the model's first when it
    has no such block."""
    return block if block in limits.blocks else next(iter(limits.blocks))


def step_window(scene: Scene, trace: Trace) -> Span:
    """The window of decoder positions around the step (a decoder-only model's step t is the row after its
    prompt's)."""
    n = len(trace.tgt_pieces)
    result = scene.result
    first = n - len(result.output_ids) if scene.decoder_only and isinstance(result, TranslationResult) else 0
    return rows_shown(min(first + scene.controls.step, max(n - 1, 0)), n, scene.style.presentation)


def pipeline_heading(scene: Scene) -> Panel:
    """The heading over the block's radio and the step-by-step head."""
    return Panel(scene.key("pipeline-heading"), heading=_("One head, step by step: scores → mask → softmax"))


def pipeline(scene: Scene, trace: Trace, block: str, source: Span) -> list[Panel]:
    """One head of `block` (the sidebar's layer and head) as raw scores, masked scores and softmax weights,
    inside the windows of source pieces and of decoder positions around the step."""
    ctl = scene.controls
    stack, kind = BLOCKS[block]
    layer = min(ctl.layer, scene.limits.layers_of(stack) - 1)
    queries = trace.src_pieces if block == "enc-self" else trace.tgt_pieces
    keys = trace.tgt_pieces if block == "dec-self" else trace.src_pieces
    raw_scores = trace.tensor(stages.attention(stack, kind, layer, "scores"))[0, ctl.head]
    masked_scores = trace.tensor(stages.attention(stack, kind, layer, "masked_scores"))[0, ctl.head]
    figure = scene.figure(
        score_pipeline,
        raw_scores,
        masked_scores,
        trace.tensor(stages.attention(stack, kind, layer, "pattern"))[0, ctl.head],
        queries,
        keys,
        scene.style,
        f"{i18n._(BLOCK_NAMES[block]).capitalize()} L{layer + 1} H{ctl.head + 1}",
        most_px=scene.style.picture_px,
        **block_windows(block, source, step_window(scene, trace)),
    )
    if masked_cells(raw_scores, masked_scores).any():
        said = _(
            "Left: how well each query matches each key (QKᵀ/√d_k). Middle: the mask sets forbidden pairs to −∞ "
            "(the grey “masked” cells). Right: softmax turns each row into weights that sum to 1; −∞ becomes "
            "exactly 0."
        )
    else:
        said = _(
            "Left: how well each query matches each key (QKᵀ/√d_k). Middle: the mask sets forbidden pairs to −∞ "
            "(the grey “masked” cells, none here: no mask forbids a pair in this block). Right: softmax turns each "
            "row into weights that sum to 1; −∞ becomes exactly 0."
        )
    return [Panel(scene.key("pipeline"), figure=figure, caption=said)]


def panels(scene: Scene) -> list[Panel]:
    """The lab as the page draws it on a first run: the step-by-step head, then the experiment on show (a model
    without a decoder: its padding experiment and its knock-outs) and the sweep's heading (the sweep itself waits
    for its button)."""
    trace = _lab_trace(scene)
    source = source_span(scene.value(WINDOW.key, WINDOW.default), len(trace.src_pieces))
    block = block_shown(scene.limits, scene.value(BLOCK.key, BLOCK.default))
    shown = [*intro(scene), pipeline_heading(scene), *pipeline(scene, trace, block, source)]
    if scene.encoder_only:
        return shown + _encoder_lab(scene, source)
    experiment = scene.value(LAB.key, LAB.default)
    if experiment == "causal":
        shown += _causal_lab(scene, step_window(scene, trace))
    elif experiment == "padding":
        shown += _padding_lab(scene, source)
    else:
        shown += _knockout_lab(scene, trace)
    return [*shown, knockout.sweep_heading(scene)]


# What a notebook computes for the panels, directly (the app's pages read the same calls cached, ui/session/)


def _run(scene: Scene, trace: bool = True, **changes: Any) -> TranslationResult:
    """The page's translation (continuation) with some controls changed."""
    result = main_result(scene.bundle, replace(scene.controls, **changes), trace)
    if not isinstance(result, TranslationResult):
        raise TypeError(f"{scene.bundle.name} makes no output from the text")
    return result


def _lab_trace(scene: Scene) -> Trace:
    """The lab's one pass over the text and the output (views.masks.needs_pass)."""
    ctl = scene.controls
    result = scene.result
    if result is None or result.trace is None:
        raise ValueError("the lab reads the page's result and its trace")
    if not needs_pass(scene) or not isinstance(result, TranslationResult):
        return result.trace
    return scene.bundle.teacher_forced(ctl.sentence, list(result.output_ids), ctl.interventions(), ctl.chat)


def _scores(scene: Scene, output_ids: tuple[int, ...]) -> knockout.Scores:
    """The log-probabilities of `output_ids`' pieces under some switches."""
    ctl = scene.controls
    return lambda iv: list(scene.bundle.score(ctl.sentence, list(output_ids), iv, ctl.chat))


def _causal_lab(scene: Scene, output: Span) -> list[Panel]:
    """The causal experiment: the output made with the mask on and off, and one pass read both ways."""
    ctl = scene.controls
    bundle = scene.bundle
    causal_on = _run(scene, causal=True)
    off = ctl.interventions(causal_mask=False)
    if not scene.decoder_only:
        seen_off = bundle.teacher_forced(ctl.sentence, list(causal_on.output_ids), off)
        return [causal_heading(scene), *causal(scene, causal_on, _run(scene, False, causal=False), seen_off, output)]
    name = stages.attention("decoder", "self", decoder_layer(scene), "pattern")
    off_pattern = bundle.teacher_forced_at(ctl.sentence, list(causal_on.output_ids), name, off, ctl.chat)[0]
    shown = [causal_heading(scene), *causal_decoder(scene, causal_on, off_pattern, output)]
    if rereads_work(bundle, causal_on) > EAGER_WORK:  # the app's button: "Generate without the mask"
        return [*shown, Panel(scene.key("causal-off-continuation"), caption=rereads_note())]
    return shown + generated_without_mask(scene, causal_on, _run(scene, False, causal=False))


def _prompt_rows(bundle: Bundle, texts: list[str], iv: Interventions, chat: bool) -> list[Trace]:
    """A decoder-only model reading texts (with `chat`, each as a chat message) as one right-padded batch in one
    pass (ui.session.engine.prompt_batch's call)."""
    prompts = [bundle.read_input(text, chat=True) if chat else bundle.encode_source(text)[1] for text in texts]
    return bundle.teacher_forced_rows(prompts, None, iv)


def _padding_lab(scene: Scene, source: Span) -> list[Panel]:
    """The padding experiment: the text batched with the short one, the padding mask on and off."""
    ctl = scene.controls
    texts = [ctl.sentence, scene.value(SHORT.key, SHORT.default)]
    try:
        if scene.decoder_only:  # with a chat message, both are wrapped by the chat template
            rows = [
                _prompt_rows(scene.bundle, texts, ctl.interventions(padding_mask=mask), ctl.chat)
                for mask in (True, False)
            ]
        else:
            batches = [
                translate_batch(scene.bundle, texts, ctl.interventions(padding_mask=mask)) for mask in (True, False)
            ]
    except AnatomyError as exc:
        return [padding_heading(scene), failed(scene, "padding-error", exc)]
    if scene.decoder_only:
        return [padding_heading(scene), *padding_decoder(scene, rows[0], rows[1])]
    return [padding_heading(scene), *padding(scene, batches[0], batches[1], source)]


def _encoder_lab(scene: Scene, source: Span) -> list[Panel]:
    """A model without a decoder: no causal mask, its padding experiment judged by the sentence embedding, and
    its knock-outs (the sweep's heading)."""
    ctl = scene.controls
    bundle = scene.bundle
    texts = [ctl.sentence, scene.value(SHORT.key, SHORT.default)]
    shown = [*no_causal_mask(scene), padding_heading(scene)]
    try:
        alone = bundle.encode_batch(texts[1:], ctl.interventions())[0]
        with_pad = bundle.encode_batch(texts, ctl.interventions(padding_mask=True))
        without_pad = bundle.encode_batch(texts, ctl.interventions(padding_mask=False))
    except AnatomyError as exc:
        return [*shown, failed(scene, "padding-error", exc)]
    shown += [*padding_encoder(scene, alone, with_pad, without_pad, source), knockout.heading(scene)]
    if ctl.ablate:
        before = main_result(bundle, replace(ctl, ablate=()))
        assert isinstance(before, EncodeResult)
        shown.append(knockout.embedding_change(scene, before))
    return [*shown, knockout.sweep_heading(scene)]


def _knockout_lab(scene: Scene, trace: Trace) -> list[Panel]:
    """The knock-out experiment: the sidebar's heads, the output before and after, or, with none knocked out, the
    layer whose knock-out changes the most."""
    shown = [knockout.heading(scene)]
    if not scene.controls.ablate:
        return shown + _layer_suggestion(scene, trace)
    before = _run(scene, ablate=())
    return shown + knockout.before_and_after(scene, before, _scores(scene, before.output_ids))


def _layer_suggestion(scene: Scene, trace: Trace) -> list[Panel]:
    """The layer whose heads matter most together (what the app's button knocks out), when cheap enough to find
    unasked; the note under the button that finds it otherwise."""
    result = scene.result
    if not knockout.suggests(scene) or not isinstance(result, TranslationResult):
        return []
    if knockout.layer_drops_work(scene, trace) > EAGER_WORK:  # the app's button: "Find the layer ..."
        return [Panel(scene.key("knockout-layers"), caption=knockout.layer_drops_note(scene))]
    drops = knockout.layer_drops(scene, _scores(scene, tuple(result.output_ids)))
    return [knockout.layer_suggestion(scene, drops)] if drops else []

"""The Design choices page's experiments on a loaded model, beside what the model itself does."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from i18n import later

from ..bundle import Bundle
from ..engine.decoding import decoded_logits, greedy
from ..engine.hooks import not_recording, recording
from ..engine.interventions import DecodeOptions, Interventions
from ..engine.tokens import pad_rows
from ..errors import InputError
from ..results import Beam, Trace, TranslationResult
from ..traces import chosen_log_probs, decoder_input, decoding_steps, make_trace


def empty_source(
    bundle: Bundle,
    sentence: str,
    interventions: Interventions = Interventions(),
    output_ids: Sequence[int] | None = None,
) -> tuple[Trace, Trace]:
    """The sentence batched with a source that is all padding (length 0), its translation fed to
    the decoder for both (when the model translates; `output_ids` when given, else translated here):
    (the sentence's row, the empty row). With the padding mask on, every query of the empty row
    finds every key masked: with mask_value "-inf" its softmax rows are NaN (0/0) and the NaN
    spreads through every later stage; with "-1e9" they are uniform."""
    bundle.check_interventions(interventions)
    produced: list[int] = []
    if bundle.capabilities.translates:  # the translation to feed the decoder, unless the caller has it
        produced = list(output_ids or bundle.translate(sentence, interventions, trace=False).output_ids)
    _, src_ids, _ = bundle.encode_source(sentence)
    sentence_row, empty_row = bundle.teacher_forced_rows(
        [src_ids, [bundle.specials.pad] * len(src_ids)],
        [produced, produced],
        interventions,
        src_lengths=[len(src_ids), 0],
    )
    return sentence_row, empty_row


def translate_batch(
    bundle: Bundle, sentences: list[str], interventions: Interventions = Interventions(), max_len: int | None = None
) -> list[TranslationResult]:
    """Greedy-translate sentences together in one padded batch (the padding demo).

    Each result's trace is its row of the batch, padding included, so a short sentence
    shows `<pad>` keys: zero weight with the padding mask, some weight without it.
    """
    if not sentences:
        raise InputError(later("Give at least one sentence to translate."))
    bundle.require_decoder()
    bundle.check_interventions(interventions)
    specials = bundle.specials
    encoded = [bundle.encode_source(s) for s in sentences]
    src = pad_rows([ids for _, ids, _ in encoded], pad_id=specials.pad)
    limit = bundle.max_output(src.size(1), DecodeOptions(max_len=max_len))
    with torch.inference_mode(), recording() as recorder:
        memory, src_mask = bundle.model.encode(src, interventions)
        with not_recording():
            outputs = greedy(bundle.model, memory, src_mask, interventions, limit, specials)
        produced = [ids + ([] if end is None else [end]) or [specials.eos] for ids, end in outputs]
        tgt = pad_rows([decoder_input(specials.bos, p) for p in produced], pad_id=specials.pad)
        logits = decoded_logits(bundle.model, tgt, memory, src_mask, interventions, recorded=recorder.tensors)
    log_probs = logits.float().log_softmax(dim=-1)  # (B, T, vocab)
    results = []
    for row, ((source, _, warnings), (ids, end)) in enumerate(zip(encoded, outputs, strict=True)):
        chosen = produced[row] + [specials.pad] * (tgt.size(1) - len(produced[row]))
        trace = make_trace(
            bundle.tokenizer, src[row].tolist(), tgt[row].tolist(), chosen, recorder.tensors, interventions, row
        )
        steps = decoding_steps(bundle.tokenizer, log_probs[row].exp(), produced[row], top_k=5)
        log_prob = float(chosen_log_probs(log_probs[row], produced[row]).sum())
        translation = bundle.tokenizer.decode(ids)
        beam = Beam(translation, bundle.tokenizer.pieces(ids), log_prob, log_prob, end is not None)
        results.append(
            TranslationResult(source, translation, trace, steps, [beam], log_prob, tuple(produced[row]), warnings)
        )
    return results

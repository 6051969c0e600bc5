"""A loaded checkpoint ready to translate: sentence in, translation and Trace out."""

from __future__ import annotations

import unicodedata
from contextlib import nullcontext
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from .checkpoints.capabilities import capabilities
from .checkpoints.checkpoint import Checkpoint, load_checkpoint
from .checkpoints.snapshots import steps as snapshot_steps
from .engine import stages
from .engine.decoding import Hypothesis, as_decoded, beam_search, greedy
from .engine.hooks import not_recording, recording
from .engine.interventions import DecodeOptions, Interventions
from .engine.tokenizer import normalize_source
from .engine.tokens import pad_rows
from .errors import REBUILD_HINT, CheckpointError, InputError
from .results import Beam, EncodeResult, Step, Trace, TranslationResult

DEFAULT_CHECKPOINT = Path(__file__).resolve().parent.parent / "checkpoints" / "default"


class Bundle:
    """The model, its tokenizer and its card; one instance can serve many threads at once."""

    def __init__(self, checkpoint: Checkpoint) -> None:
        self.checkpoint = checkpoint
        self.model = checkpoint.model
        self.tokenizer = checkpoint.tokenizer
        self.specials = checkpoint.tokenizer.specials
        self.config = checkpoint.config
        self.card = checkpoint.card
        self.checkpoint_id = checkpoint.checkpoint_id
        self.family = checkpoint.family
        self.generation = checkpoint.generation
        self.pooling = checkpoint.pooling
        self.known_words = frozenset(checkpoint.card.get("known_words", ()))
        self.capabilities = capabilities(checkpoint)

    @property
    def kind(self) -> str:
        """"encoder-decoder" (it translates), "encoder" (it reads a sentence, as BERT does) or
        "decoder": for display; code asks `capabilities`."""
        return self.capabilities.kind

    @property
    def name(self) -> str:
        """The model's display name."""
        return str(self.card.get("name") or self.path.name)

    @property
    def path(self) -> Path:
        """The checkpoint directory."""
        return self.checkpoint.path

    @property
    def snapshot(self) -> int | None:
        """The training step of the weights loaded, or None for the final weights."""
        return self.checkpoint.snapshot

    @property
    def snapshots(self) -> list[int]:
        """The training steps whose snapshots were kept with this checkpoint (empty when none)."""
        return snapshot_steps(self.path) if self.capabilities.trained_here else []

    def position_table(self) -> np.ndarray:
        """(max_len, d_model) what the encoder adds at each position: the sinusoid (either layout)
        or the learned table."""
        return self.model.src_embed.positions.table.detach().float().numpy().copy()

    def check_interventions(self, iv: Interventions) -> None:
        """Refuse ablated heads or layers this model does not have."""
        cfg = self.config
        layers = {"encoder": cfg.n_encoder_layers, "decoder": cfg.n_decoder_layers}
        for stack, kind, layer, head in sorted(iv.ablate):
            if layer >= layers[stack] or head >= cfg.n_heads:
                raise InputError(f"This model has {layers[stack]} {stack} layers of {cfg.n_heads} heads: "
                                 f"there is no {stack} {kind}-attention layer {layer} head {head}")

    def encode_source(self, sentence: str) -> tuple[str, list[int], list[str]]:
        """The text the model reads, its source ids (the family's specials included, cut to the
        model's length) and warnings."""
        normalized = normalize_source(sentence, canonical=self.tokenizer.canonical_input)
        warnings = list(normalized.warnings)
        ids = self.tokenizer.encode_source(normalized.text)
        limit = self.config.max_len
        if len(ids) > limit:  # keep the closing special (EOS or [SEP])
            warnings.append(f"The sentence was cut to its first {limit - 1} of {len(ids) - 1} pieces "
                            f"(the model reads at most {limit} positions).")
            ids = ids[:limit - 1] + ids[-1:]
        if self.specials.unk in ids:
            count = ids.count(self.specials.unk)
            warnings.append(f"The model's vocabulary has no piece for {count} part{'s' * (count > 1)} of the text: "
                            f"it reads {'them' if count > 1 else 'it'} as {self.tokenizer.pieces([self.specials.unk])[0]}.")
        return normalized.text, ids, warnings

    def _unknown_words(self, source: str, warnings: list[str]) -> list[str]:
        words = _words(source)  # "cat," is the known word "cat"; "don't" and "🐱" are unknown words
        unknown = [w for w in dict.fromkeys(words) if self.known_words and w not in self.known_words]
        if unknown:
            warnings.append("Never seen in training: " + ", ".join(unknown)
                            + ". The model can only guess at these words.")
        return unknown

    def _require_decoder(self) -> None:
        if not self.capabilities.translates:
            raise InputError(f"{self.name} is an encoder-only model ({self.family}): it reads a sentence "
                             "but has no decoder, so it cannot translate. Use encode() instead.")

    def max_output(self, src_len: int, options: DecodeOptions) -> int:
        """How many pieces decoding may produce: the option, else 2 x source + 10, within the model."""
        cap = self.config.max_len - 1
        if self.generation.get("max_length"):
            cap = min(cap, int(self.generation["max_length"]) - 1)
        return min(options.max_len or 2 * src_len + 10, cap)

    def _search(self, memory: torch.Tensor, src_mask: torch.Tensor, interventions: Interventions,
                options: DecodeOptions, max_len: int, steps_seen: list | None = None) -> list[Hypothesis]:
        """Greedy or beam search from the encoded source, best first (nothing recorded)."""
        with not_recording():
            if options.beam_size == 1:
                [(ids, finished)] = greedy(self.model, memory, src_mask, interventions, max_len, self.specials,
                                           steps_seen)
                return [Hypothesis(tuple(ids), 0.0, 0.0, finished)]
            return beam_search(self.model, memory, src_mask, interventions, options.beam_size, max_len,
                               options.length_penalty, self.specials)

    def translation(self, sentence: str, interventions: Interventions = Interventions(),
                    options: DecodeOptions = DecodeOptions()) -> str:
        """The translation alone, decoded as `translate` decodes it, without what `translate` adds
        afterwards: the candidates of every step and, with the causal mask off, a second pass over
        every prefix (which more than doubles the time of an output that runs to its length limit)."""
        self._require_decoder()
        self.check_interventions(interventions)
        _, src_ids, _ = self.encode_source(sentence)
        with torch.inference_mode():
            memory, src_mask = self.model.encode(torch.tensor([src_ids]), interventions)
            best = self._search(memory, src_mask, interventions, options, self.max_output(len(src_ids), options))[0]
        return self.tokenizer.decode(best.ids)

    def translate(self, sentence: str, interventions: Interventions = Interventions(),
                  options: DecodeOptions = DecodeOptions(), trace: bool = True) -> TranslationResult:
        """Translate one sentence under the given switches; record a Trace unless trace=False."""
        self._require_decoder()
        self.check_interventions(interventions)
        source, src_ids, warnings = self.encode_source(sentence)
        unknown = self._unknown_words(source, warnings)
        max_len = self.max_output(len(src_ids), options)
        specials = self.specials
        src = torch.tensor([src_ids])
        # greedy with the causal mask on: the logits each step chose from are the ones the pass over
        # the whole output would give (no position sees a later one), so they are kept, not recomputed
        reuse = options.beam_size == 1 and interventions.causal_mask
        steps_seen: list[torch.Tensor] = []
        with torch.inference_mode(), (recording() if trace else nullcontext()) as recorder:
            memory, src_mask = self.model.encode(src, interventions)
            hypotheses = self._search(memory, src_mask, interventions, options, max_len, steps_seen if reuse else None)
            best = hypotheses[0]
            produced = list(best.ids) + ([specials.eos] if best.finished else [])
            if not produced:  # a maximum length of 0 pieces cannot happen; keep one row anyway
                produced = [specials.eos]
            tgt_ids = [specials.bos] + produced[:-1]
            tgt = torch.tensor([tgt_ids])
            if reuse and len(steps_seen) == len(produced):
                logits = torch.stack(steps_seen, dim=1)  # (1, T, vocab)
                if recorder is not None:  # the recorded pass stops before the output projection
                    self.model.decode(tgt, memory, src_mask, interventions, project=False)
                    recorder.tensors[stages.LOGITS] = logits
            else:
                logits = self.model.decode(tgt, memory, src_mask, interventions)
                with not_recording():
                    logits = as_decoded(self.model, tgt, memory, src_mask, interventions, logits,
                                        recorder.tensors if recorder is not None else None)
        log_probs = logits[0].float().log_softmax(dim=-1)  # (T, vocab)
        steps = self._steps(log_probs.exp(), produced, options.top_k)
        log_prob = float(_chosen(log_probs, produced).sum())
        if not best.finished:
            warnings.append(f"The output was cut at {max_len} pieces before the model ended it.")
        elif specials.force_eos_at_end and len(produced) == max_len:
            warnings.append(f"The output reached its limit of {max_len} pieces, where this checkpoint's generation "
                            "config makes the last piece end it.")
        beams = [Beam(self.tokenizer.decode(h.ids), self.tokenizer.pieces(h.ids),
                      log_prob if options.beam_size == 1 else h.log_prob,
                      log_prob if options.beam_size == 1 else h.score, h.finished)
                 for h in hypotheses]
        recorded = None if recorder is None else self._trace(src_ids, produced, recorder.tensors, interventions)
        return TranslationResult(source, self.tokenizer.decode(best.ids), recorded, steps, beams,
                                 log_prob, tuple(produced), warnings, unknown)

    def _trace(self, src_ids: list[int], produced: list[int], tensors: dict[str, torch.Tensor],
               interventions: Interventions) -> Trace:
        tgt_ids = [self.specials.bos] + produced[:-1]
        return Trace(src_ids=tuple(src_ids), src_pieces=self.tokenizer.pieces(src_ids),
                     tgt_ids=tuple(tgt_ids), tgt_pieces=self.tokenizer.pieces(tgt_ids),
                     out_pieces=self.tokenizer.pieces(produced),
                     tensors=_arrays(tensors), interventions=interventions)

    def _fixed_output(self, sentence: str, output_ids: Sequence[int],
                      interventions: Interventions) -> tuple[list[int], list[int]]:
        self._require_decoder()
        self.check_interventions(interventions)
        _, src_ids, _ = self.encode_source(sentence)
        produced = list(output_ids)[: self.config.max_len]
        if not produced:
            raise InputError("There is no output to score.")
        return src_ids, produced

    def teacher_forced(self, sentence: str, output_ids: Sequence[int],
                       interventions: Interventions = Interventions()) -> Trace:
        """One recorded pass over a fixed output with every piece fed at once, as in training: with
        the causal mask off, each position also sees the pieces after it, which is what the mask
        is there to stop."""
        src_ids, produced = self._fixed_output(sentence, output_ids, interventions)
        with torch.inference_mode(), recording() as recorder:
            self.model(torch.tensor([src_ids]), torch.tensor([[self.specials.bos] + produced[:-1]]), interventions)
        return self._trace(src_ids, produced, recorder.tensors, interventions)

    def score(self, sentence: str, output_ids: Sequence[int],
              interventions: Interventions = Interventions()) -> list[float]:
        """Log-probability of each piece of a fixed output under the switches, as a decoding step
        fed the same earlier pieces would give it: how a knocked-out head changes the model's
        belief in the same translation."""
        src_ids, produced = self._fixed_output(sentence, output_ids, interventions)
        tgt = torch.tensor([[self.specials.bos] + produced[:-1]])
        with torch.inference_mode():
            memory, src_mask = self.model.encode(torch.tensor([src_ids]), interventions)
            logits = self.model.decode(tgt, memory, src_mask, interventions)
            logits = as_decoded(self.model, tgt, memory, src_mask, interventions, logits)
        return _chosen(logits[0].float().log_softmax(dim=-1), produced).tolist()

    def translate_batch(self, sentences: list[str], interventions: Interventions = Interventions(),
                        max_len: int | None = None) -> list[TranslationResult]:
        """Greedy-translate sentences together in one padded batch (the padding demo).

        Each result's trace is its row of the batch, padding included, so a short sentence
        shows `<pad>` keys: zero weight with the padding mask, some weight without it.
        """
        if not sentences:
            raise InputError("Give at least one sentence to translate.")
        self._require_decoder()
        self.check_interventions(interventions)
        specials = self.specials
        encoded = [self.encode_source(s) for s in sentences]
        src = pad_rows([ids for _, ids, _ in encoded], pad_id=specials.pad)
        limit = self.max_output(src.size(1), DecodeOptions(max_len=max_len))
        with torch.inference_mode(), recording() as recorder:
            memory, src_mask = self.model.encode(src, interventions)
            with not_recording():
                outputs = greedy(self.model, memory, src_mask, interventions, limit, specials)
            produced = [ids + ([specials.eos] if finished else []) or [specials.eos] for ids, finished in outputs]
            tgt = pad_rows([[specials.bos] + p[:-1] for p in produced], pad_id=specials.pad)
            logits = self.model.decode(tgt, memory, src_mask, interventions)
            with not_recording():
                logits = as_decoded(self.model, tgt, memory, src_mask, interventions, logits, recorder.tensors)
        log_probs = logits.float().log_softmax(dim=-1)  # (B, T, vocab)
        results = []
        for row, ((source, src_ids, warnings), (ids, finished)) in enumerate(zip(encoded, outputs)):
            full_src, full_tgt = src[row].tolist(), tgt[row].tolist()
            chosen = produced[row] + [specials.pad] * (tgt.size(1) - len(produced[row]))
            trace = Trace(tuple(full_src), self.tokenizer.pieces(full_src), tuple(full_tgt),
                          self.tokenizer.pieces(full_tgt), self.tokenizer.pieces(chosen),
                          _row(recorder.tensors, row),
                          interventions)
            steps = self._steps(log_probs[row].exp(), produced[row], top_k=5)
            log_prob = float(_chosen(log_probs[row], produced[row]).sum())
            translation = self.tokenizer.decode(ids)
            beam = Beam(translation, self.tokenizer.pieces(ids), log_prob, log_prob, finished)
            results.append(TranslationResult(source, translation, trace, steps, [beam], log_prob,
                                             tuple(produced[row]), warnings))
        return results

    def encode(self, sentence: str, interventions: Interventions = Interventions()) -> EncodeResult:
        """Run the encoder alone on one sentence (any kind of model): its Trace and the sentence
        embedding."""
        [result] = self.encode_batch([sentence], interventions)
        return result

    def encode_batch(self, sentences: list[str], interventions: Interventions = Interventions()) -> list[EncodeResult]:
        """Encode sentences together in one padded batch (the padding demo of an encoder-only
        model); each trace is its row of the batch, padding included."""
        if not sentences:
            raise InputError("Give at least one sentence to encode.")
        self.check_interventions(interventions)
        encoded = [self.encode_source(s) for s in sentences]
        src = pad_rows([ids for _, ids, _ in encoded], pad_id=self.specials.pad)
        with torch.inference_mode(), recording() as recorder:
            memory, _ = self.model.encode(src, interventions)
        results = []
        for row, (source, src_ids, warnings) in enumerate(encoded):
            full_src = src[row].tolist()
            trace = Trace(tuple(full_src), self.tokenizer.pieces(full_src), (), [], [],
                          _row(recorder.tensors, row), interventions)
            unknown = self._unknown_words(source, warnings)
            results.append(EncodeResult(source, trace, self._pool(memory[row], len(src_ids)), warnings, unknown))
        return results

    def empty_source(self, sentence: str, interventions: Interventions = Interventions(),
                     output_ids: Sequence[int] | None = None) -> tuple[Trace, Trace]:
        """The sentence batched with a source that is all padding (length 0), its translation fed to
        the decoder for both (when there is a decoder; `output_ids` when given, else translated here):
        (the sentence's row, the empty row). With the padding mask on, every
        query of the empty row finds every key masked: with mask_value "-inf" its softmax rows are
        NaN (0/0) and the NaN spreads through every later stage; with "-1e9" they are uniform."""
        self.check_interventions(interventions)
        decoder = self.capabilities.translates
        if decoder and not output_ids:  # the translation to feed the decoder, unless the caller has it
            output_ids = self.translate(sentence, interventions, trace=False).output_ids
        produced = list(output_ids or []) if decoder else []
        _, src_ids, _ = self.encode_source(sentence)
        specials = self.specials
        src = torch.tensor([src_ids, [specials.pad] * len(src_ids)])
        tgt = torch.tensor([[specials.bos] + produced[:-1]] * 2) if decoder else torch.zeros(2, 0, dtype=torch.long)
        with torch.inference_mode(), recording() as recorder:
            memory, src_mask = self.model.encode(src, interventions, torch.tensor([len(src_ids), 0]))
            if decoder:
                self.model.decode(tgt, memory, src_mask, interventions)
        rows = []
        for row in range(2):
            ids, tgt_ids = src[row].tolist(), tgt[row].tolist()
            rows.append(Trace(tuple(ids), self.tokenizer.pieces(ids), tuple(tgt_ids), self.tokenizer.pieces(tgt_ids),
                              self.tokenizer.pieces(produced),
                              _row(recorder.tensors, row), interventions))
        return rows[0], rows[1]

    def _pool(self, states: torch.Tensor, length: int) -> np.ndarray:
        """Sentence embedding from final states (S, d_model): the mean over the real positions
        (sentence-transformers' pooling) or the first position ([CLS]), scaled to unit length."""
        vector = states[0] if self.pooling == "cls" else states[:length].mean(dim=0)
        return torch.nn.functional.normalize(vector.float(), dim=0).numpy()

    def _steps(self, probs: torch.Tensor, produced: list[int], top_k: int) -> list[Step]:
        top_p, top_i = probs.topk(min(top_k, probs.size(-1)), dim=-1)
        steps = []
        for t, chosen in enumerate(produced):
            top = list(zip(self.tokenizer.pieces(top_i[t].tolist()), top_p[t].tolist()))
            steps.append(Step(t, self.tokenizer.pieces([chosen])[0], float(probs[t, chosen]), top))
        return steps


def _words(text: str) -> list[str]:
    """The space-separated words of `text` with punctuation stripped from their ends."""
    words = []
    for token in text.split():
        start, end = 0, len(token)
        while start < end and unicodedata.category(token[start]).startswith("P"):
            start += 1
        while end > start and unicodedata.category(token[end - 1]).startswith("P"):
            end -= 1
        if start < end:
            words.append(token[start:end])
    return words


def _row(tensors: dict[str, torch.Tensor], row: int) -> dict[str, np.ndarray]:
    """One row of a recorded batch, batch dimension kept: what a Trace of that row holds."""
    return _arrays({name: t[row:row + 1] for name, t in tensors.items()})


def _arrays(tensors: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """Recorded tensors as numpy arrays (views, no copy), in execution order. A tensor identical
    to the one recorded just before it in the same block gets that one's array: the masked scores
    where the mask hides nothing (an unpadded encoder) are the scores, and need not cost their
    memory twice in a long sentence's trace."""
    arrays: dict[str, np.ndarray] = {}
    block, previous, last = None, None, ""
    for name, tensor in tensors.items():
        here = name.rpartition(".")[0]
        if here == block and previous is not None and _identical(previous, tensor):
            arrays[name] = arrays[last]
        else:
            arrays[name] = tensor.numpy()
        block, previous, last = here, tensor, name
    return arrays


def _identical(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal bit for bit: torch.equal for integers; floats compared as their bits, so NaN (keys a
    decoding step never saw) matches NaN and -0.0 stays apart from 0.0."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.data_ptr() == b.data_ptr() and a.stride() == b.stride():
        return True
    if a.is_floating_point():
        bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        return torch.equal(a.view(bits), b.view(bits))
    return torch.equal(a, b)


def _chosen(log_probs: torch.Tensor, produced: Sequence[int]) -> torch.Tensor:
    """Row t's log-probability of piece produced[t]: log_probs (T, vocab) -> (T,)."""
    return log_probs[torch.arange(len(produced)), torch.tensor(list(produced))]


def load_bundle(path: Path | str | None = None, snapshot: int | None = None) -> Bundle:
    """Load a checkpoint directory (default: the shipped model) as a Bundle; `snapshot`: with the
    weights it had at that training step (one of `bundle.snapshots`)."""
    target = Path(path) if path is not None else DEFAULT_CHECKPOINT
    if path is None and not target.is_dir():
        raise CheckpointError(f"The default model is not at {target}. {REBUILD_HINT}")
    return Bundle(load_checkpoint(target, snapshot))

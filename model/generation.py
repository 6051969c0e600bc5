"""Decoding with a loaded checkpoint: translating a sentence (an encoder-decoder) and continuing a text
(a decoder alone), greedy or by beam search, with the Trace of what each step computed and the keys
and values each layer cached. `Bundle` (bundle.py) is a `Generator` with the rest: loading,
teacher-forced passes, scores and encoding."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any, TypeVar

import torch

from .checkpoints.capabilities import Capabilities
from .engine import stages
from .engine.attention import KVCache
from .engine.beam import Hypothesis, beam_search
from .engine.config import ModelConfig
from .engine.continuation import continue_prompt, continued_logits, with_the_prompts_rows
from .engine.decoding import decoded_logits, greedy, stepped_trace
from .engine.hooks import Recorder, not_recording, recording
from .engine.interventions import DecodeOptions, Interventions
from .engine.sampling import Sampler
from .engine.tokenizer import normalize_source
from .engine.tokens import SpecialIds
from .engine.transformer import Transformer
from .engine.vocabulary import Vocabulary
from .inputs import (
    cannot_continue,
    cannot_translate,
    continuation_cut,
    output_cut,
    output_ended,
    read_source,
    unknown_words,
)
from .prompts import DEFAULT_NEW_PIECES, PromptReader
from .results import GenerationResult, Listener, Trace, TranslationResult
from .traces import beams_of, cache_data, chosen_log_probs, decoder_input, decoding_steps, listening, make_trace

Decoded = TypeVar("Decoded", bound=TranslationResult)  # a translation's result, or a continuation's


class Generator(PromptReader):
    """Translating and continuing, for a Bundle: what it needs of one is declared here."""

    model: Transformer
    tokenizer: Vocabulary
    specials: SpecialIds
    config: ModelConfig
    generation: dict
    capabilities: Capabilities
    family: str
    known_words: frozenset[str]
    task_prefix: str

    def check_interventions(self, iv: Interventions) -> None:
        """Refuse ablated heads or layers this model does not have."""
        iv.check_against(self.config)

    def encode_source(self, sentence: str) -> tuple[str, list[int], list[str]]:
        """The text the model reads (the checkpoint's task prefix, then the sentence), its source
        ids (cut to the model's length) and warnings."""
        if self.task_prefix:
            normalize_source(sentence, canonical=self.tokenizer.canonical_input)  # an empty sentence is refused
        return read_source(self.tokenizer, self.config, self.task_prefix + sentence if self.task_prefix else sentence)

    def require_decoder(self) -> None:
        """Refuse to translate with a model that cannot (InputError naming it)."""
        if self.capabilities.translates:
            return
        raise cannot_translate(self.name, self.family, decoder=self.capabilities.decoder)

    def require_decoder_only(self) -> None:
        """Refuse to continue a text with a model that is not decoder-only (InputError naming it)."""
        if self.capabilities.decoder_only:
            return
        raise cannot_continue(self.name, self.capabilities.kind, translates=self.capabilities.translates)

    def decoder_input_ids(self, src_ids: Sequence[int], produced: Sequence[int]) -> list[int]:
        """What the decoder is fed to produce `produced`: the start piece (or, decoder-only, the
        prompt), then every piece produced but the last."""
        if self.capabilities.encoder:
            return decoder_input(self.specials.bos, produced)
        return [*src_ids, *produced[:-1]]

    def max_output(self, src_len: int, options: DecodeOptions) -> int:
        """How many pieces decoding may produce: the option, else 2 x source + 10, within the model."""
        cap = self.config.max_len - 1
        if self.generation.get("max_length"):
            cap = min(cap, int(self.generation["max_length"]) - 1)
        return min(options.max_len or 2 * src_len + 10, cap)

    def _search(
        self,
        memory: torch.Tensor,
        src_mask: torch.Tensor | None,
        interventions: Interventions,
        options: DecodeOptions,
        max_len: int,
        steps_seen: list | None = None,
        cache: KVCache | None = None,
        on_step: Callable[[int, torch.Tensor, int], None] | None = None,
        on_beam_step: Callable[[int, list[int]], None] | None = None,
        sampler: Sampler | None = None,
    ) -> list[Hypothesis]:
        """Greedy (or sampled, by `sampler`) or beam search from the encoded source, best first (nothing
        recorded); greedy fills `cache` when given and tells `on_step` of each step (`decoding.greedy`'s), beam
        search tells `on_beam_step` (`beam_search`'s `on_step`)."""
        searched = (self.model, memory, src_mask, interventions)
        with not_recording():
            if options.beam_size == 1:
                [(ids, end)] = greedy(
                    *searched, max_len, self.specials, steps_seen, cache=cache, on_step=on_step, pick=sampler
                )
                return [Hypothesis(tuple(ids), 0.0, 0.0, end)]
            beams, penalty = options.beam_size, options.length_penalty
            return beam_search(*searched, beams, max_len, penalty, self.specials, on_step=on_beam_step)

    def translation(
        self, sentence: str, interventions: Interventions = Interventions(), options: DecodeOptions = DecodeOptions()
    ) -> str:
        """The translation alone, decoded as `translate` decodes it, without what `translate` adds
        afterwards: the candidates of every step and, with the causal mask off, a second pass over
        every prefix (which more than doubles the time of an output that runs to its length limit)."""
        self.require_decoder()
        self.check_interventions(interventions)
        _, src_ids, _ = self.encode_source(sentence)
        with torch.inference_mode():
            memory, src_mask = self.model.encode(torch.tensor([src_ids]), interventions)
            max_len = self.max_output(len(src_ids), options)
            best = self._search(
                memory, src_mask, interventions, options, max_len, sampler=Sampler.of(options.sampling)
            )[0]
        return self.tokenizer.decode(best.ids)

    def translate(
        self,
        sentence: str,
        interventions: Interventions = Interventions(),
        options: DecodeOptions = DecodeOptions(),
        trace: bool = True,
        *,
        listener: Listener | None = None,
    ) -> TranslationResult:
        """Translate one sentence under the given switches; record a Trace unless trace=False. `listener` hears
        the encoder's trace as soon as the sentence is encoded (with a trace) and, for greedy decoding, each
        piece as it is written."""
        self.require_decoder()
        self.check_interventions(interventions)
        source, src_ids, warnings = self.encode_source(sentence)
        unknown = unknown_words(self.known_words, source, warnings)
        max_len = self.max_output(len(src_ids), options)
        sampler = Sampler.of(options.sampling)
        hypotheses, produced, logits, tensors, cache = self._decode_source(
            src_ids, interventions, options, max_len, trace, listener, sampler
        )
        if not hypotheses[0].finished:
            warnings.append(output_cut(max_len))
        elif self.specials.force_eos_at_end and len(produced) == max_len:
            warnings.append(output_ended(max_len))
        return self._result(
            TranslationResult,
            (source, src_ids, warnings),
            hypotheses,
            produced,
            logits,
            tensors,
            interventions,
            options,
            unknown_words=unknown,
            cache=cache_data(self.model, cache, 1),
            draws=() if sampler is None else tuple(sampler.draws),
        )

    def _decode_source(
        self,
        src_ids: list[int],
        interventions: Interventions,
        options: DecodeOptions,
        max_len: int,
        trace: bool,
        listener: Listener | None,
        sampler: Sampler | None = None,
    ) -> tuple[list[Hypothesis], list[int], torch.Tensor, dict[str, torch.Tensor] | None, KVCache | None]:
        """Encode the source and decode it: the hypotheses (best first), the pieces the best one produced,
        the logits each of its steps chose from, what was recorded on the way (None with trace=False) and
        greedy's KV cache (None for beams and with the causal mask off). `listener` hears the encoder's
        trace as soon as the source is encoded and, for greedy decoding, each piece as it is written."""
        specials = self.specials
        src = torch.tensor([src_ids])
        # greedy keeps the logits each step chose from. With the causal mask on they are the ones the pass
        # over the whole output gives (no position sees a later one); with it off and no trace to record,
        # they are all that is wanted: either way they are kept, not recomputed
        reuse = options.beam_size == 1 and (interventions.causal_mask or not trace)
        steps_seen: list[torch.Tensor] = []
        cache = KVCache() if options.beam_size == 1 and interventions.causal_mask else None
        with torch.inference_mode(), recording() if trace else nullcontext() as recorder:
            memory, src_mask = self.model.encode(src, interventions)
            if listener is not None and listener.prompt is not None and recorder is not None:
                listener.prompt(make_trace(self.tokenizer, src_ids, [], [], dict(recorder.tensors), interventions))
            hypotheses = self._search(
                memory,
                src_mask,
                interventions,
                options,
                max_len,
                steps_seen if reuse else None,
                cache,
                *listening(listener, self.tokenizer, specials.ends, max_len, options),
                sampler,
            )
            produced = hypotheses[0].produced
            if not produced:  # a maximum length of 0 pieces cannot happen; keep one row anyway
                produced = [specials.eos]
            # one pass over the output after decoding: the trace equals teacher_forced's bit for bit, as
            # tests/engine/test_translate.py holds it (decoding.stepped_trace makes it from the steps too, to 1e-5:
            # tests/engine/test_decoding_trace.py)
            logits = decoded_logits(
                self.model,
                torch.tensor([self.decoder_input_ids(src_ids, produced)]),
                memory,
                src_mask,
                interventions,
                steps_seen if reuse else None,
                recorder.tensors if recorder is not None else None,
            )
        return hypotheses, produced, logits, None if recorder is None else recorder.tensors, cache

    def _trace(
        self, src_ids: list[int], produced: list[int], tensors: dict[str, torch.Tensor], interventions: Interventions
    ) -> Trace:
        """A decoder-only model's source is its prompt, fed to the decoder: its rows produce the
        prompt's next pieces, then the output."""
        fed = self.decoder_input_ids(src_ids, produced)
        if self.capabilities.encoder:
            return make_trace(self.tokenizer, src_ids, fed, produced, tensors, interventions)
        return make_trace(self.tokenizer, [], fed, [*src_ids[1:], *produced], tensors, interventions)

    @property
    def default_new(self) -> int:
        """How many pieces a continuation adds unless told: the checkpoint's max_new_tokens, else 20."""
        return int(self.generation.get("max_new_tokens") or DEFAULT_NEW_PIECES)

    def max_new(self, prompt_len: int, options: DecodeOptions) -> int:
        """How many pieces a continuation may add: the option (else `default_new`), within the positions the
        model has left after the prompt."""
        wanted = options.max_len or self.default_new
        return max(1, min(wanted, self.config.max_len - prompt_len))

    def generate(
        self,
        text: str,
        interventions: Interventions = Interventions(),
        options: DecodeOptions = DecodeOptions(),
        trace: bool = True,
        chat: bool = False,
        *,
        second_pass: bool = False,
        listener: Listener | None = None,
    ) -> GenerationResult:
        """Continue `text` with a decoder-only model (greedy or beam search, `options.max_len` new
        pieces at most); record a Trace of the prompt and every new piece but the last unless
        trace=False. With `chat`, `text` is a user's message wrapped by the checkpoint's chat template
        (`chat_prompt`): the result's prompt is the wrapped text, what the model really reads.
        `listener` hears the prompt's trace and each new piece while greedy decoding writes them.
        `second_pass`: greedy's trace as it was made before its steps' own passes made it (a pass over
        the new pieces after decoding, `decoding.continued_trace`, and a cache grown by concatenation),
        the same Trace: kept for bench/bench_trace.py to time against."""
        self.require_decoder_only()
        self.check_interventions(interventions)
        read = self._read_prompt(text, options, chat)
        prompt_ids, warnings = read[1], read[2]
        max_new = self.max_new(len(prompt_ids), options)
        sampler = Sampler.of(options.sampling)
        hypotheses, logits, tensors, cache = self._decode_prompt(
            prompt_ids, interventions, options, max_new, trace, second_pass, listener, sampler
        )
        if not hypotheses[0].finished:
            warnings.append(continuation_cut(max_new))
        return self._result(
            GenerationResult,
            read,
            hypotheses,
            hypotheses[0].produced,
            logits,
            tensors,
            interventions,
            options,
            cache=cache_data(self.model, cache if options.beam_size == 1 else None, len(prompt_ids)),
            prompt_ids=tuple(prompt_ids),
            draws=() if sampler is None else tuple(sampler.draws),
        )

    def _decode_prompt(
        self,
        prompt_ids: list[int],
        interventions: Interventions,
        options: DecodeOptions,
        max_new: int,
        trace: bool,
        second_pass: bool,
        listener: Listener | None,
        sampler: Sampler | None = None,
    ) -> tuple[list[Hypothesis], torch.Tensor, dict[str, torch.Tensor] | None, KVCache | None]:
        """Continue the prompt: the hypotheses (best first), the logits each of the best one's steps chose
        from, what was recorded over the prompt and the new pieces (None with trace=False) and the KV cache
        (None with the causal mask off). `listener` and `second_pass` as `generate` takes them."""
        # greedy keeps the logits each step chose from; with the causal mask on, what it computed also
        # makes the trace: each step's recorded pass and the cache's keys and values
        # (decoding.stepped_trace), so nothing is read again. Beams (the cache follows the surviving
        # beams) and the mask off (each step re-reads its prefix, whose rows change) keep a pass after decoding
        greedy_trace = trace and options.beam_size == 1 and interventions.causal_mask
        recorded_steps: list[Recorder] | None = [] if greedy_trace and not second_pass else None
        steps_seen: list[torch.Tensor] = []
        prompt_pass = Recorder()
        cache = KVCache(in_place=not second_pass) if interventions.causal_mask else None
        first_step = recording(recorder=prompt_pass) if greedy_trace and second_pass else None
        made = self._prompt_trace(prompt_ids, interventions, recorded_steps, cache) if listener is not None else None
        heard, beam_heard = listening(listener, self.tokenizer, self.specials.ends, max_new, options, made)
        with torch.inference_mode():
            hypotheses = continue_prompt(
                self.model,
                prompt_ids,
                interventions,
                options,
                max_new,
                self.specials,
                steps_seen,
                cache,
                first_step,
                recorded_steps,
                heard,
                beam_heard,
                sampler,
            )
            produced = hypotheses[0].produced  # the piece that ended it included: EOS, or an end of turn
            fed = torch.tensor([self.decoder_input_ids(prompt_ids, produced)])
            logits, tensors = continued_logits(
                self.model,
                fed,
                prompt_ids,
                interventions,
                options,
                trace,
                greedy_trace,
                steps_seen,
                cache,
                recorded_steps,
                prompt_pass,
            )
        return hypotheses, logits, tensors, cache

    def _result(
        self,
        kind: type[Decoded],
        read: tuple[str, list[int], list[str]],
        hypotheses: list[Hypothesis],
        produced: list[int],
        logits: torch.Tensor,
        tensors: dict[str, torch.Tensor] | None,
        interventions: Interventions,
        options: DecodeOptions,
        **more: Any,
    ) -> Decoded:
        """The `kind` of result of decoding from `read` (the text the model read, its ids and warnings): the best
        hypothesis with the candidates of its steps (`produced`, the pieces scored), its log-probability, every
        beam, the trace (when recorded) and the fields in `more` (greedy's KV cache as data, ...)."""
        text, ids, warnings = read
        log_probs = logits[0].float().log_softmax(dim=-1)  # (pieces produced, vocab)
        steps = decoding_steps(self.tokenizer, log_probs.exp(), produced, options.top_k)
        log_prob = float(chosen_log_probs(log_probs, produced).sum())
        beams = beams_of(self.tokenizer, hypotheses, log_prob, options.beam_size == 1)
        recorded = None if tensors is None else self._trace(ids, produced, tensors, interventions)
        decoded = self.tokenizer.decode(hypotheses[0].ids)
        return kind(text, decoded, recorded, steps, beams, log_prob, tuple(produced), warnings, **more)

    def _prompt_trace(
        self,
        prompt_ids: list[int],
        interventions: Interventions,
        recorded_steps: list[Recorder] | None,
        cache: KVCache | None,
    ) -> Callable[[torch.Tensor, int], Trace] | None:
        """What makes the prompt's Trace once greedy's first step has read the prompt (from its logits and the
        piece it chose): that step's recording and the cache, when they are kept (None when not)."""
        if recorded_steps is None or cache is None:
            return None

        def made(logits: torch.Tensor, piece: int) -> Trace:
            tensors = stepped_trace(self.model, recorded_steps[:1], cache, interventions)
            tensors[stages.LOGITS] = with_the_prompts_rows(logits[None, None], len(prompt_ids))
            return self._trace(prompt_ids, [piece], tensors, interventions)

        return made

"""A loaded checkpoint ready to translate or continue (generation.py), to trace a fixed output, to score
it, and to encode a sentence: text in, results and Traces out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from i18n import later

from .checkpoints.capabilities import capabilities
from .checkpoints.checkpoint import Checkpoint, load_checkpoint
from .checkpoints.gguf import Progress
from .checkpoints.snapshots import steps as snapshot_steps
from .engine.decoding import decoded_logits
from .engine.hooks import recorded_at, recording
from .engine.interventions import DecodeOptions, Interventions
from .engine.tokens import pad_rows
from .errors import REBUILD_HINT, CheckpointError, InputError
from .generation import Generator
from .inputs import unknown_words
from .results import EncodeResult, Trace
from .traces import chosen_log_probs, make_trace, sentence_embedding

DEFAULT_CHECKPOINT = Path(__file__).resolve().parent.parent / "checkpoints" / "default"


class Bundle(Generator):
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
        self.task_prefix = checkpoint.task_prefix
        self.chat = checkpoint.chat

    @property
    def kind(self) -> str:
        """ "encoder-decoder" (it translates), "encoder" (it reads a sentence, as BERT does) or
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

    def position_table(self) -> np.ndarray | None:
        """(max_len, d_model) what the first stack adds at each position: the sinusoid (either
        layout) or the learned table; None for relative positions (T5), which add nothing there."""
        embed = self.model.src_embed if self.capabilities.encoder else self.model.tgt_embed
        positions = getattr(embed, "positions", None)
        return None if positions is None else positions.table.detach().float().numpy().copy()

    def relative_bias(self, stack: str, queries: int, keys: int) -> tuple[np.ndarray, np.ndarray]:
        """A relative-position model's (T5) bias for `queries` x `keys` positions of `stack`'s
        self-attention: the bucket of every (query, key) pair (queries, keys) and the bias each
        head adds there (heads, queries, keys). ValueError for a model without one."""
        module = getattr(getattr(self.model, stack, None), "relative_bias", None)
        if module is None:
            raise ValueError(f"{self.name} has no relative-position bias in a {stack} stack")
        with torch.inference_mode():
            return module.buckets(queries, keys).numpy(), module(queries, keys)[0].float().numpy()

    def _memory(
        self, src: torch.Tensor, interventions: Interventions, lengths: torch.Tensor | None = None
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The encoder's output and the source mask; (None, None) for a decoder-only model, whose
        `src` is its prompt and is fed to the decoder instead."""
        if not self.capabilities.encoder:
            return None, None
        return self.model.encode(src, interventions, lengths)

    def read_input(self, sentence: str, new_pieces: int | None = None, chat: bool = False) -> list[int]:
        """The ids the model reads before it writes: the source (the task prefix included), or a
        decoder-only model's prompt, cut to leave room for `new_pieces` (None: a continuation's). With
        `chat`, the prompt is a user's message wrapped by the chat template, as `generate(chat=True)`
        reads it (InputError for a model with an encoder, or without a template)."""
        if self.capabilities.encoder:
            if chat:
                raise InputError(later("{name} reads a source sentence, not a chat message.", name=self.name))
            return self.encode_source(sentence)[1]
        return self._read_prompt(sentence, DecodeOptions(max_len=new_pieces), chat)[1]

    def _fixed_output(
        self, sentence: str, output_ids: Sequence[int], interventions: Interventions, chat: bool = False
    ) -> tuple[list[int], list[int]]:
        """The source ids (a decoder-only model's prompt; with `chat`, wrapped as a chat message) and the
        output to score or trace."""
        if not self.capabilities.decoder:
            self.require_decoder()
        self.check_interventions(interventions)
        src_ids = self.read_input(sentence, max(1, len(output_ids)), chat)
        produced = list(output_ids)[: self.config.max_len]
        if not produced:
            raise InputError(later("There is no output to score."))
        return src_ids, produced

    def teacher_forced(
        self,
        sentence: str,
        output_ids: Sequence[int],
        interventions: Interventions = Interventions(),
        chat: bool = False,
    ) -> Trace:
        """One recorded pass over a fixed output with every piece fed at once, as in training: with
        the causal mask off, each position also sees the pieces after it, which is what the mask
        is there to stop. With `chat`, a decoder-only model's prompt is the sentence as a chat message."""
        src_ids, produced = self._fixed_output(sentence, output_ids, interventions, chat)
        return self.teacher_forced_rows([src_ids], [produced], interventions)[0]

    def teacher_forced_at(
        self,
        sentence: str,
        output_ids: Sequence[int],
        name: str,
        interventions: Interventions = Interventions(),
        chat: bool = False,
    ) -> np.ndarray:
        """`teacher_forced(...).tensor(name)` (batch axis included) without the rest of the pass: it stops
        at hook point `name`, so one early layer's attention costs a fraction of the whole trace."""
        src_ids, produced = self._fixed_output(sentence, output_ids, interventions, chat)
        fed = torch.tensor([self.decoder_input_ids(src_ids, produced)])

        def run() -> None:
            if not self.capabilities.encoder:
                self.model.decode(fed, None, None, interventions)
                return
            memory, src_mask = self.model.encode(torch.tensor([src_ids]), interventions)
            self.model.decode(fed, memory, src_mask, interventions)

        with torch.inference_mode():
            return recorded_at(name, run).numpy()

    def teacher_forced_rows(
        self,
        sources: list[list[int]],
        outputs: list[list[int]] | None,
        interventions: Interventions,
        src_lengths: list[int] | None = None,
    ) -> list[Trace]:
        """One recorded pass over a padded batch of source ids and (for a model that translates) the
        outputs fed to the decoder: a Trace per row, padding included. `src_lengths` says where
        each source's padding starts (default: at its first padding piece)."""
        self.check_interventions(interventions)
        pad = self.specials.pad
        if not self.capabilities.encoder:  # decoder-only: each prompt with its output, fed to the decoder
            outputs = outputs or [[] for _ in sources]
            fed = [self.decoder_input_ids(source, out) for source, out in zip(sources, outputs, strict=True)]
            prompts = pad_rows(fed, pad_id=pad)
            with torch.inference_mode(), recording() as recorder:
                self.model.decode(prompts, None, None, interventions)
            return [
                make_trace(
                    self.tokenizer,
                    [],
                    prompts[row].tolist(),
                    [*sources[row][1:], *outputs[row]],
                    recorder.tensors,
                    interventions,
                    row,
                )
                for row in range(len(sources))
            ]
        src = pad_rows(sources, pad_id=pad)
        outputs = outputs if outputs is not None and self.capabilities.translates else [[] for _ in sources]
        tgt = pad_rows([self.decoder_input_ids([], out) for out in outputs], pad_id=pad) if any(outputs) else None
        lengths = torch.tensor(src_lengths) if src_lengths is not None else None
        with torch.inference_mode(), recording() as recorder:
            memory, src_mask = self.model.encode(src, interventions, lengths)
            if tgt is not None:
                self.model.decode(tgt, memory, src_mask, interventions)
        return [
            make_trace(
                self.tokenizer,
                src[row].tolist(),
                [] if tgt is None else tgt[row].tolist(),
                outputs[row],
                recorder.tensors,
                interventions,
                row,
            )
            for row in range(len(sources))
        ]

    def score(
        self,
        sentence: str,
        output_ids: Sequence[int],
        interventions: Interventions = Interventions(),
        chat: bool = False,
    ) -> list[float]:
        """Log-probability of each piece of a fixed output under the switches, as a decoding step
        fed the same earlier pieces would give it: how a knocked-out head changes the model's
        belief in the same translation (with `chat`, in the answer to the sentence as a chat message)."""
        src_ids, produced = self._fixed_output(sentence, output_ids, interventions, chat)
        tgt = torch.tensor([self.decoder_input_ids(src_ids, produced)])
        first = 1 if self.capabilities.encoder else len(src_ids)
        with torch.inference_mode():
            memory, src_mask = self._memory(torch.tensor([src_ids]), interventions)
            logits = decoded_logits(self.model, tgt, memory, src_mask, interventions, first=first)[:, first - 1 :]
        return chosen_log_probs(logits[0].float().log_softmax(dim=-1), produced).tolist()

    def encode(self, sentence: str, interventions: Interventions = Interventions()) -> EncodeResult:
        """Run the encoder alone on one sentence (any kind of model): its Trace and the sentence
        embedding."""
        [result] = self.encode_batch([sentence], interventions)
        return result

    def encode_batch(self, sentences: list[str], interventions: Interventions = Interventions()) -> list[EncodeResult]:
        """Encode sentences together in one padded batch (the padding demo of an encoder-only
        model); each trace is its row of the batch, padding included."""
        if not sentences:
            raise InputError(later("Give at least one sentence to encode."))
        self.check_interventions(interventions)
        encoded = [self.encode_source(s) for s in sentences]
        src = pad_rows([ids for _, ids, _ in encoded], pad_id=self.specials.pad)
        with torch.inference_mode(), recording() as recorder:
            memory, _ = self.model.encode(src, interventions)
        results = []
        for row, (source, src_ids, warnings) in enumerate(encoded):
            trace = make_trace(self.tokenizer, src[row].tolist(), [], [], recorder.tensors, interventions, row)
            unknown = unknown_words(self.known_words, source, warnings)
            results.append(
                EncodeResult(
                    source, trace, sentence_embedding(memory[row], len(src_ids), self.pooling), warnings, unknown
                )
            )
        return results


def load_bundle(
    path: Path | str | None = None, snapshot: int | None = None, progress: Progress | None = None
) -> Bundle:
    """Load a checkpoint directory or a GGUF file (default: the shipped model) as a Bundle; `snapshot`:
    with the weights it had at that training step (one of `bundle.snapshots`); `progress(share, text)`
    hears how a GGUF file's first open goes."""
    target = Path(path) if path is not None else DEFAULT_CHECKPOINT
    if path is None and not target.is_dir():
        raise CheckpointError(later("The default model is not at {path}. {hint}", path=str(target), hint=REBUILD_HINT))
    return Bundle(load_checkpoint(target, snapshot, progress))

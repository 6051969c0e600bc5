"""Recorded tensors -> Trace: the one place a Trace is built, the decoder input whose rows a Trace's
decoder stages are, the decoding steps' candidates, and a KV cache as plain data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import torch

from .engine.attention import KVCache
from .engine.beam import Hypothesis
from .engine.interventions import DecodeOptions, Interventions
from .engine.transformer import Transformer, layers_of
from .engine.vocabulary import Vocabulary
from .results import Beam, CachedLayer, KVCacheData, Listener, Step, Trace, Written


def decoder_input(bos: int, produced: Sequence[int]) -> list[int]:
    """What the decoder is fed to produce `produced` under teacher forcing: BOS, then every piece
    but the last (row t is decoding step t)."""
    return [bos, *produced[:-1]]


def make_trace(
    tokenizer: Vocabulary,
    src_ids: Sequence[int],
    tgt_ids: Sequence[int],
    out_ids: Sequence[int],
    tensors: dict[str, torch.Tensor],
    interventions: Interventions,
    row: int | None = None,
) -> Trace:
    """A Trace of recorded tensors: of the whole pass, or of batch row `row` (batch axis kept)."""
    if row is not None:  # a tensor of batch 1 in a batch (T5's position bias) is every row's
        tensors = {name: t[row : row + 1] if t.size(0) > 1 else t for name, t in tensors.items()}
    return Trace(
        tuple(src_ids),
        tokenizer.pieces(list(src_ids)),
        tuple(tgt_ids),
        tokenizer.pieces(list(tgt_ids)),
        tokenizer.pieces(list(out_ids)),
        _arrays(tensors),
        interventions,
    )


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


def decoding_steps(tokenizer: Vocabulary, probs: torch.Tensor, produced: Sequence[int], top_k: int) -> list[Step]:
    """Step t of decoding from its probabilities (T, vocab): the piece chosen and the top candidates."""
    top_p, top_i = probs.topk(min(top_k, probs.size(-1)), dim=-1)
    return [
        Step(
            t,
            tokenizer.pieces([chosen])[0],
            float(probs[t, chosen]),
            list(zip(tokenizer.pieces(top_i[t].tolist()), top_p[t].tolist(), strict=True)),
        )
        for t, chosen in enumerate(produced)
    ]


def chosen_log_probs(log_probs: torch.Tensor, produced: Sequence[int]) -> torch.Tensor:
    """Row t's log-probability of piece produced[t]: log_probs (T, vocab) -> (T,)."""
    return log_probs[torch.arange(len(produced)), torch.tensor(list(produced))]


def sentence_embedding(states: torch.Tensor, length: int, pooling: str) -> np.ndarray:
    """Sentence embedding from final states (S, d_model): the mean over the real positions
    (sentence-transformers' pooling) or the first position ([CLS], pooling "cls"), scaled to unit length."""
    vector = states[0] if pooling == "cls" else states[:length].mean(dim=0)
    return torch.nn.functional.normalize(vector.float(), dim=0).numpy()


def cache_data(model: Transformer, cache: KVCache | None, first: int) -> KVCacheData | None:
    """What `cache` holds after decoding, as plain data: each decoder layer's self-attention keys and
    values (n_kv_heads, positions, d_head), and an encoder-decoder's cross-attention ones (the memory's);
    None without a cache (beam search, or the causal mask off: every step re-reads its prefix)."""
    if cache is None or not cache.store:
        return None

    def entry(block: torch.nn.Module) -> CachedLayer:
        keys, values = cache.store[block]
        return CachedLayer(keys[0].numpy(), values[0].numpy())

    layers = layers_of(model.decoder)
    cross = tuple(entry(layer.cross_attn) for layer in layers if hasattr(layer, "cross_attn"))
    return KVCacheData(tuple(entry(layer.self_attn) for layer in layers), cross, first)


def beams_heard(
    told: Callable[[int, int, str], None], tokenizer: Vocabulary, ends: Sequence[int], limit: int
) -> Callable[[int, list[int]], None]:
    """What beam search tells of each step (`beam_search`'s on_step) for a listener's `beam`: the step, the
    limit, and the best live beam's text (the pieces that end a continuation left out of it)."""

    def heard(step: int, ids: list[int]) -> None:
        told(step, limit, tokenizer.decode([piece for piece in ids if piece not in ends]))

    return heard


def hearing(
    listener: Listener,
    tokenizer: Vocabulary,
    ends: Sequence[int],
    limit: int,
    top_k: int,
    prompt_trace: Callable[[torch.Tensor, int], Trace] | None,
) -> Callable[[int, torch.Tensor, int], None]:
    """What greedy decoding tells of each step (`decoding.greedy`'s on_step) for `listener`: after the first
    step, the prompt's trace (`prompt_trace` makes it, when it can); after every step, the piece written with
    its candidates and the new text so far (the pieces that end a continuation left out of it)."""
    written: list[int] = []

    def heard(step: int, logits: torch.Tensor, piece: int) -> None:
        if step == 0 and listener.prompt is not None and prompt_trace is not None:
            listener.prompt(prompt_trace(logits, piece))
        if piece not in ends:
            written.append(piece)
        if listener.piece is not None:
            [chosen] = decoding_steps(tokenizer, logits.float().softmax(dim=-1)[None], [piece], top_k)
            listener.piece(Written(replace(chosen, position=step), limit, tokenizer.decode(written)))

    return heard


def listening(
    listener: Listener | None,
    tokenizer: Vocabulary,
    ends: Sequence[int],
    limit: int,
    options: DecodeOptions,
    prompt_trace: Callable[[torch.Tensor, int], Trace] | None = None,
) -> tuple[Callable[[int, torch.Tensor, int], None] | None, Callable[[int, list[int]], None] | None]:
    """What greedy decoding (its `on_step`, `hearing`) and beam search (its `on_step`, `beams_heard`) tell
    `listener`, the other one None (both None without a listener)."""
    if listener is None:
        return None, None
    if options.beam_size == 1:
        return hearing(listener, tokenizer, ends, limit, options.top_k, prompt_trace), None
    if listener.beam is None:
        return None, None
    return None, beams_heard(listener.beam, tokenizer, ends, limit)


def beams_of(tokenizer: Vocabulary, hypotheses: list[Hypothesis], log_prob: float, greedy: bool) -> list[Beam]:
    """The hypotheses as Beams; greedy's one carries the output's log-probability as its score."""
    return [
        Beam(
            tokenizer.decode(h.ids),
            tokenizer.pieces(h.ids),
            log_prob if greedy else h.log_prob,
            log_prob if greedy else h.score,
            h.finished,
        )
        for h in hypotheses
    ]

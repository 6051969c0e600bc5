"""The KV cache as figures: what greedy decoding keeps per layer at each step (its shapes are those of
transformers' past_key_values), what it costs in bytes against one key/value head per query head, and
what decoding without it costs (every step re-reads its whole prefix)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from ..bundle import Bundle
from ..engine.attention import KVCache
from ..engine.config import ModelConfig
from ..engine.decoding import _step_logits
from ..engine.interventions import Interventions
from ..results import KVCacheData


def kv_bytes(
    cfg: ModelConfig, positions: int, bytes_per_number: int, kv_heads: int | None = None, windowed: bool = False
) -> int:
    """Bytes a decoder's self-attention cache holds at `positions` pieces:
    2 (keys and values) × layers × key/value heads × d_head × bytes per number × positions; `windowed`: a
    sliding-window layer keeps only its last window − 1 positions, as transformers' cache does (Gemma 3)."""
    heads = cfg.kv_heads if kv_heads is None else kv_heads
    kept = sum(
        min(positions, cfg.window(layer) - 1) if windowed and cfg.window(layer) else positions
        for layer in range(cfg.n_decoder_layers)
    )
    return 2 * heads * cfg.d_k * bytes_per_number * kept


@dataclass(frozen=True)
class CacheStep:
    """The cache as one decoding step found it and left it."""

    step: int  # from 0
    positions: int  # positions held after the step (the step's own piece included)
    added: int  # positions this step added (the whole prompt at step 0)
    layer_shape: tuple[int, int, int, int]  # each layer's keys (and values): (batch, kv heads, positions, d_head)
    self_bytes: int  # every layer's keys and values
    cross_bytes: int  # an encoder-decoder's cross-attention keys and values (the same at every step)


def cache_step(cache: KVCacheData, step: int) -> CacheStep:
    """Shapes and bytes of `cache` as step `step` (from 0) left it."""
    layers = cache.at(step)
    held = layers[0].keys.shape[1] if layers else 0
    added = held if step == 0 else held - cache.at(step - 1)[0].keys.shape[1]
    kv_heads, _, d_head = cache.self_attention[0].keys.shape
    return CacheStep(
        step,
        held,
        added,
        (1, kv_heads, held, d_head),
        sum(layer.keys.nbytes + layer.values.nbytes for layer in layers),
        sum(layer.keys.nbytes + layer.values.nbytes for layer in cache.cross_attention),
    )


def cache_norms(cache: KVCacheData, kind: str = "keys") -> np.ndarray:
    """(positions, layers, kv heads): the length of each cached key (or value) vector."""
    arrays = [getattr(layer, kind) for layer in cache.self_attention]  # (kv heads, positions, d_head) each
    return np.stack([np.linalg.norm(a.astype(np.float32), axis=-1).T for a in arrays], axis=1)


def bytes_by_step(cache: KVCacheData, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(steps,) bytes of the self-attention cache and of the cross-attention one after each step."""
    rows = [cache_step(cache, step) for step in range(steps)]
    return np.array([r.self_bytes for r in rows]), np.array([r.cross_bytes for r in rows])


@dataclass(frozen=True)
class WithoutCache:
    """One continuation decoded twice: with the cache and re-reading every prefix."""

    pieces_with: np.ndarray  # (steps,) positions each step fed the decoder
    pieces_without: np.ndarray  # (steps,)
    seconds_with: float
    seconds_without: float
    same_ids: bool  # both gave the same pieces


def _decode(bundle: Bundle, prompt: list[int], steps: int, iv: Interventions, cached: bool) -> tuple[list[int], float]:
    """Greedy pieces after `prompt` (a decoder alone), with or without a cache; and the seconds it took."""
    tokens = torch.tensor([prompt])
    cache = KVCache() if cached else None
    begun = time.perf_counter()
    with torch.inference_mode():
        for _ in range(steps):
            logits = _step_logits(bundle.model, tokens, None, None, iv, cache)
            tokens = torch.cat([tokens, logits.argmax(dim=-1)[:, None]], dim=1)
    return tokens[0, len(prompt) :].tolist(), time.perf_counter() - begun


def without_cache(bundle: Bundle, prompt: list[int], steps: int, iv: Interventions = Interventions()) -> WithoutCache:
    """Continue `prompt` by `steps` pieces greedily with the KV cache and without it (each step then reads
    its whole prefix again), measuring both; a decoder alone, causal mask on."""
    with_ids, with_s = _decode(bundle, prompt, steps, iv, cached=True)
    without_ids, without_s = _decode(bundle, prompt, steps, iv, cached=False)
    fed_with = np.array([len(prompt)] + [1] * (steps - 1))
    fed_without = np.array([len(prompt) + step for step in range(steps)])
    return WithoutCache(fed_with, fed_without, with_s, without_s, with_ids == without_ids)


def window_masks(cfg: ModelConfig, length: int) -> list[tuple[int, int, np.ndarray]]:
    """(layer, window, (length, length) mask) for the first sliding-window layer and the first full one
    of a decoder with windows (Gemma 3), as the engine's own masks build them (causal and window combined);
    empty without windows."""
    from ..engine.masks import combine, subsequent_mask, window_mask

    out = []
    for wanted in (True, False):
        layer = next((i for i in range(cfg.n_decoder_layers) if bool(cfg.window(i)) == wanted), None)
        if layer is None or not cfg.windows:
            continue
        window = cfg.window(layer)
        causal = subsequent_mask(length)
        mask = combine(causal, window_mask(length, length, window)) if window else causal
        out.append((layer, window, (causal if mask is None else mask).numpy()))
    return out

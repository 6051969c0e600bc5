"""The decoder's residual stream as a sum: what each part of the model wrote into it, layer by layer, with every
norm's scale frozen at the value one pass found.

A norm divides its input by a statistic of that input (its standard deviation, or its root mean square): with
that divisor frozen, a norm is linear (LayerNorm's centring is linear too), so it maps a sum of parts to the sum
of the parts' images, and its shift is a part of its own. What a decoder layer does to the stream is then a
sequence of `Event`s, read here from a recorded pass:

- a sublayer's write: every attention head's output (its context through its slice of the output projection),
  the output projection's bias, the feed-forward block's output; Gemma 3's norms on a sublayer's output (the
  sandwich) are frozen at the value they had on that output;
- a norm of the stream itself (a post-LN layer's three, LN(x + f(x))), through which every part written before
  passes; a pre-LN layer has none (its norms are inside the sublayers, whose outputs are recorded);
- GPT-NeoX's parallel feed-forward writes into the same sum as its attention.

After the last layer comes the final norm (Identity in a post-LN decoder) and the output projection.
`model.analysis.shares` walks the events at one position; `model.analysis.routes` reads each layer's on its own."""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from ..bundle import Bundle
from ..engine import stages
from ..engine.attention import MultiHeadAttention
from ..engine.layers import TransformerLayer
from ..engine.modules import OffsetRMSNorm
from ..engine.transformer import layers_of

DTYPE = torch.float64  # the parts are summed in double precision: their sum then equals the model's own to its float32
_FACTORS: weakref.WeakKeyDictionary[MultiHeadAttention, dict] = weakref.WeakKeyDictionary()  # see _write_factor


@dataclass(frozen=True)
class FrozenNorm:
    """A norm with its divisor frozen: v -> centre(v) * gain * inverse[position], plus `shift` (a part of its own).
    `inverse` holds 1 / the divisor the pass found at each position."""

    gain: torch.Tensor  # (d,)
    shift: torch.Tensor | None  # (d,)
    centred: bool
    inverse: torch.Tensor  # (positions,)

    def linear(self, v: torch.Tensor) -> torch.Tensor:
        """What the norm does to v (..., d) but the division: the same at every position."""
        if self.centred:
            v = v - v.mean(dim=-1, keepdim=True)
        return v * self.gain

    def at(self, v: torch.Tensor, position: int) -> torch.Tensor:
        """v (..., d) through the norm as the pass found it at `position`, without the shift."""
        return self.linear(v) * self.inverse[position]


def freeze(norm: nn.Module, inputs: torch.Tensor) -> FrozenNorm | None:
    """`norm` with its divisor frozen at what it found in `inputs` (positions, d); None for no norm (Identity)."""
    if isinstance(norm, nn.Identity):
        return None
    x = inputs.to(DTYPE)
    weight = getattr(norm, "weight", None)
    width = x.size(-1)
    gain = torch.ones(width, dtype=DTYPE) if weight is None else weight.detach().to(DTYPE)
    if isinstance(norm, nn.LayerNorm):
        inverse = torch.rsqrt(x.var(dim=-1, unbiased=False) + norm.eps)
        bias = norm.bias
        return FrozenNorm(gain, None if bias is None else bias.detach().to(DTYPE), True, inverse)
    if isinstance(norm, OffsetRMSNorm):
        gain = 1.0 + gain
    eps = getattr(norm, "eps", None)
    eps = torch.finfo(inputs.dtype).eps if eps is None else eps
    return FrozenNorm(gain, None, False, torch.rsqrt(x.pow(2).mean(dim=-1) + eps))


@dataclass(frozen=True)
class Write:
    """One sublayer's write into the stream: `kind` "self", "cross" or "ffn", and the norm on its output (Gemma's
    sandwich), if any."""

    kind: str
    post: FrozenNorm | None = None


@dataclass(frozen=True)
class Event:
    """One thing a decoder layer does to the stream, in order: a write, or a norm of the whole stream."""

    write: Write | None = None
    norm: FrozenNorm | None = None


def attention_block(layer: TransformerLayer, kind: str) -> MultiHeadAttention:
    """A layer's self- or cross-attention block."""
    return layer.self_attn if kind == "self" else layer.cross_attn


def head_writes(context: torch.Tensor, block: MultiHeadAttention) -> torch.Tensor:
    """(heads, positions, d) in double precision: what each head writes from its context or value vectors `context`
    (heads, positions, d_head), through its slice of the block's output projection (in the model's precision)."""
    weight = block.w_o.weight.detach()  # (d_model, heads * d_head)
    projections = weight.T.reshape(block.n_heads, -1, weight.size(0))  # (heads, d_head, d_model)
    return torch.bmm(context.to(weight.dtype), projections).to(DTYPE)


def head_write_norms(context: torch.Tensor, block: MultiHeadAttention, norms: Sequence[FrozenNorm]) -> torch.Tensor:
    """(heads, positions) in double precision: how long what each head writes from its context or value vectors
    `context` (heads, positions, d_head) is through the norms' linear parts (the same at every position): |L W v|,
    W the head's slice of the output projection. Through the triangular factor R of L W = QR, |L W v| = |R v|: a
    product d_head wide for each position instead of d_model wide (a quarter of the time for SmolLM2's layers),
    and in double precision throughout (head_writes' product is the model's float32, 2e-7 off)."""
    return torch.bmm(context.to(DTYPE), _write_factor(block, norms).transpose(1, 2)).norm(dim=-1)


def _write_factor(block: MultiHeadAttention, norms: Sequence[FrozenNorm]) -> torch.Tensor:
    """(heads, d_head, d_head): each head's R, once per block and norms (a model's few MB, kept while its block
    lives; many sessions may ask at once, and the same factor is then found twice at worst), found again when the
    weights change: told apart by their storage and its version, which any change in place moves on."""
    weight = block.w_o.weight.detach()
    stamp = (weight.data_ptr(), weight._version)
    norms_key = tuple((norm.centred, norm.gain.numpy().tobytes()) for norm in norms)
    kept = _FACTORS.setdefault(block, {}).get(norms_key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    rows = weight.to(DTYPE).T.reshape(block.n_heads, -1, weight.size(0))  # (heads, d_head, d_model): W's columns
    for norm in norms:
        rows = norm.linear(rows)
    found = torch.linalg.qr(rows.transpose(1, 2), mode="r").R
    _FACTORS[block][norms_key] = (stamp, found)
    return found


def output_bias(block: MultiHeadAttention, width: int) -> torch.Tensor:
    """The output projection's bias: what the block writes that is no head's (zeros without one)."""
    bias = block.w_o.bias
    return torch.zeros(width, dtype=DTYPE) if bias is None else bias.detach().to(DTYPE)


def layer_events(bundle: Bundle, tensors: Mapping[str, torch.Tensor], layer: int) -> Iterator[Event]:
    """Decoder layer `layer`'s events, read from a recorded pass's `tensors` (batch row 0)."""
    cfg = bundle.config
    module = layers_of(bundle.model.decoder)[layer]
    kinds = ("self", "cross") if cfg.cross_attention else ("self",)
    for kind in kinds:
        post = None
        if cfg.sandwich_norm and kind == "self":
            post = freeze(module.post_norm_self, tensors[stages.attention("decoder", "self", layer, "out")][0])
        yield Event(write=Write(kind, post))
        if not cfg.norm_first:
            norm = getattr(module, f"norm_{kind}")
            yield Event(norm=freeze(norm, tensors[stages.sublayer("decoder", layer, f"resid_{kind}")][0]))
    post = None
    if cfg.sandwich_norm:
        post = freeze(module.post_norm_ffn, tensors[stages.ffn("decoder", layer, "out")][0])
    yield Event(write=Write("ffn", post))
    if not cfg.norm_first and not cfg.parallel_residual:
        yield Event(norm=freeze(module.norm_ffn, tensors[stages.sublayer("decoder", layer, "resid_ffn")][0]))


def embeddings(bundle: Bundle, tensors: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """(positions, d): what the decoder's first layer reads, the embeddings as the model adds them (and normalizes
    them, with an embedding norm)."""
    stage = "norm" if bundle.config.embed_norm else "sum"
    return tensors[stages.embedding(stage, "target")][0].to(DTYPE)


def layer_input(bundle: Bundle, tensors: Mapping[str, torch.Tensor], layer: int) -> torch.Tensor:
    """(positions, d): the stream decoder layer `layer` reads."""
    if layer == 0:
        return embeddings(bundle, tensors)
    return tensors[stages.layer_output("decoder", layer - 1, bundle.config.norm_first)][0].to(DTYPE)


def final_norm(bundle: Bundle, tensors: Mapping[str, torch.Tensor]) -> FrozenNorm | None:
    """The decoder's final norm, frozen at what it read (None in a post-LN decoder, which has none)."""
    last = layer_input(bundle, tensors, bundle.config.n_decoder_layers)
    return freeze(bundle.model.decoder.final_norm, last)


def unembedding(bundle: Bundle, vectors: torch.Tensor) -> torch.Tensor:
    """Final norm outputs (..., d) through the output projection without its bias: (..., vocab) logits (T5's
    1/√d_model rescale included), in the model's precision (the vocabulary may be large)."""
    matrix = bundle.model.output_matrix.detach()
    return vectors.to(matrix.dtype) @ matrix.T * _rescale(bundle)


def unembedding_row(bundle: Bundle, piece_id: int) -> tuple[torch.Tensor, float]:
    """One piece's row of the output projection (d,) in double precision (the rescale folded in), and its bias."""
    row = bundle.model.output_matrix.detach()[piece_id].to(DTYPE) * _rescale(bundle)
    bias = getattr(bundle.model, "logits_bias", None)
    return row, 0.0 if bias is None else float(bias[piece_id])


def _rescale(bundle: Bundle) -> float:
    return bundle.config.d_model**-0.5 if bundle.config.rescale_output else 1.0

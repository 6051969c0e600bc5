"""The encoder-decoder Transformer of "Attention Is All You Need", top to bottom.

Top level: logits = decode(target, encode(source)). Every stage passes a HookPoint, so one
recorded pass yields the whole story; `Interventions` arrive as arguments, never as state.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .attention import KVCache
from .config import ModelConfig
from .dropout import Dropout
from .hooks import HookPoint, name_hook_points
from .interventions import Interventions
from .layers import TransformerLayer
from .masks import combine, first_hidden_mask, padding_mask, subsequent_mask, window_mask
from .modules import Linear, make_norm
from .positional import LearnedPositions, RelativePositionBias, RotaryPositions, SinusoidalPositions
from .storage import store_for_one_row


def _positions(cfg: ModelConfig) -> nn.Module | None:
    if cfg.positional in ("relative", "rotary"):
        return None  # nothing added here: a bias on the attention scores, or queries and keys turned, instead
    if cfg.positional == "learned":
        return LearnedPositions(cfg.max_len, cfg.d_model)
    return SinusoidalPositions(cfg.max_len, cfg.d_model, halves=cfg.positional == "sinusoidal_halves")


class Embeddings(nn.Module):
    """ "We multiply those weights by sqrt(d_model)" and add the positional encoding (3.4, 3.5).

    BERT instead adds a token-type vector and normalizes the sum, without the scaling.
    """

    def __init__(self, cfg: ModelConfig, token: nn.Embedding) -> None:
        super().__init__()
        self.token = token
        self.scale = math.sqrt(cfg.d_model) if cfg.scale_embeddings else 1.0
        self.max_len = cfg.max_len
        positions = _positions(cfg)
        if positions is not None:
            self.positions = positions
        self.dropout = Dropout(cfg.dropout)
        self.hook_ids = HookPoint()  # (B, L) token ids
        self.hook_token = HookPoint()  # (B, L, d_model) embedding rows
        self.hook_scaled = HookPoint()  # (B, L, d_model) times sqrt(d_model) (equal to token without scaling)
        if positions is not None:
            self.hook_position = HookPoint()  # (B, L, d_model) zeros when switched off
        if cfg.token_types:
            self.token_type = nn.Embedding(cfg.token_types, cfg.d_model)
            self.hook_token_type = HookPoint()  # (B, L, d_model) every piece is of type 0
        self.hook_sum = HookPoint()  # (B, L, d_model)
        if cfg.embed_norm:
            self.norm = make_norm(cfg)
            self.hook_norm = HookPoint()  # (B, L, d_model) the normalized sum

    def forward(
        self, ids: torch.Tensor, use_positions: bool = True, start: int = 0, use_scale: bool = True
    ) -> torch.Tensor:
        ids = self.hook_ids(ids)  # a patched hook point changes what the model reads, ids too
        batch, length = ids.shape
        if start + length > self.max_len:
            raise ValueError(f"sequence of {start + length} pieces exceeds max_len {self.max_len}")
        token = self.hook_token(self.token(ids))  # (B, L, d_model)
        total = self.hook_scaled(token * self.scale if use_scale and self.scale != 1.0 else token)
        if hasattr(self, "positions"):
            position = self.positions(start, length).expand(batch, length, -1)  # (B, L, d_model)
            if not use_positions:
                position = torch.zeros_like(position)
            total = total + self.hook_position(position)
        if hasattr(self, "token_type"):
            total = total + self.hook_token_type(self.token_type.weight[0].expand(batch, length, -1))
        total = self.hook_sum(total)
        if hasattr(self, "norm"):
            total = self.hook_norm(self.norm(total))
        return self.dropout(total)


def _relative_bias(stack: Encoder | Decoder, cfg: ModelConfig, bidirectional: bool) -> None:
    """Give a stack of a model with relative positions its one bias table, and the hook point of
    the bias it adds: (1, h, queries, keys), shared by every layer's self-attention."""
    if cfg.positional == "relative":
        stack.relative_bias = RelativePositionBias(
            cfg.relative_buckets, cfg.relative_max_distance, cfg.n_heads, bidirectional
        )
        stack.hook_position_bias = HookPoint()


def _position_bias(
    stack: Encoder | Decoder, queries: int, keys: int, start: int, iv: Interventions
) -> torch.Tensor | None:
    """The stack's relative-position bias for these positions; None without one, or with the
    positions switched off."""
    if not hasattr(stack, "relative_bias") or not iv.positional_encoding:
        return None
    return stack.hook_position_bias(stack.relative_bias(queries, keys, start))


def _rotary(stack: Encoder | Decoder, cfg: ModelConfig) -> None:
    """Give a stack of a model with rotary positions its angles: one table per base θ (Gemma 3's
    windowed layers turn by a base of their own)."""
    if cfg.positional == "rotary":
        stack.rotary = RotaryPositions(cfg.rotary_dims, cfg.rotary_base)
        if cfg.rotary_base_local and cfg.rotary_base_local != cfg.rotary_base:
            stack.rotary_local = RotaryPositions(cfg.rotary_dims, cfg.rotary_base_local)


def _angles(
    stack: Encoder | Decoder, start: int, length: int, iv: Interventions
) -> dict[float, tuple[torch.Tensor, torch.Tensor]]:
    """cos and sin of the rotary angles of positions start.., by base; empty without rotary positions,
    or with the positions switched off (then nothing turns)."""
    if not hasattr(stack, "rotary") or not iv.positional_encoding:
        return {}
    tables = [stack.rotary] + ([stack.rotary_local] if hasattr(stack, "rotary_local") else [])
    return {table.base: table(start, length, iv.rotary_base_factor) for table in tables}


def layers_of(stack: Encoder | Decoder) -> list[TransformerLayer]:
    """A stack's layers as what they are (an nn.ModuleList only says it holds modules)."""
    layers = []
    for layer in stack.layers:
        if not isinstance(layer, TransformerLayer):
            raise TypeError(f"a stack holds TransformerLayers only, not {type(layer).__name__}")
        layers.append(layer)
    return layers


class Encoder(nn.Module):
    """ "The encoder is composed of a stack of N identical layers." (3.1)"""

    relative_bias: RelativePositionBias  # positional "relative" only (T5): one bias shared by every layer
    hook_position_bias: HookPoint
    rotary: RotaryPositions  # positional "rotary" only
    rotary_local: RotaryPositions  # and a second base for windowed layers (Gemma 3)

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.layers = nn.ModuleList(TransformerLayer(cfg, cross=False) for _ in range(cfg.n_encoder_layers))
        self.final_norm = make_norm(cfg) if cfg.norm_first else nn.Identity()
        _relative_bias(self, cfg, bidirectional=True)
        _rotary(self, cfg)
        self.hook_memory = HookPoint()  # (B, S, d_model) what the decoder's cross-attention reads

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, iv: Interventions) -> torch.Tensor:
        bias = _position_bias(self, x.size(1), x.size(1), 0, iv)
        angles = _angles(self, 0, x.size(1), iv).get(self.cfg.rotary_base)
        if iv.hide_first:
            mask = combine(mask, first_hidden_mask(x.size(1), x.size(1), 0, x.device))
        for i, layer in enumerate(self.layers):
            x = layer(
                x,
                mask,
                ablate_self=iv.heads_off("encoder", "self", i),
                scale=iv.scale_scores,
                fill=iv.fill,
                position_bias=bias,
                rotary=angles,
            )
        return self.hook_memory(self.final_norm(x))


class Decoder(nn.Module):
    """ "The decoder is also composed of a stack of N identical layers" with a third sub-layer
    attending over the encoder output (3.1)."""

    relative_bias: RelativePositionBias  # positional "relative" only (T5): one bias shared by every layer
    hook_position_bias: HookPoint
    rotary: RotaryPositions  # positional "rotary" only
    rotary_local: RotaryPositions  # and a second base for windowed layers (Gemma 3)

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.layers = nn.ModuleList(
            TransformerLayer(cfg, cross=cfg.cross_attention) for _ in range(cfg.n_decoder_layers)
        )
        self.final_norm = make_norm(cfg) if cfg.norm_first else nn.Identity()
        _relative_bias(self, cfg, bidirectional=False)
        _rotary(self, cfg)
        self.hook_output = HookPoint()  # (B, T, d_model)

    def layer_masks(
        self, self_mask: torch.Tensor | None, queries: int, start: int, causal: bool, device: torch.device
    ) -> list[torch.Tensor | None]:
        """Each layer's self-attention mask: `self_mask`, narrowed to its sliding window when it has one."""
        windows = {
            w: window_mask(queries, start + queries, w, start, causal, device) for w in set(self.cfg.windows) if w
        }
        return [
            combine(self_mask, windows[self.cfg.window(i)]) if self.cfg.window(i) else self_mask
            for i in range(len(self.layers))
        ]

    def forward(
        self,
        x: torch.Tensor,
        self_mask: torch.Tensor | None,
        memory: torch.Tensor | None,
        memory_mask: torch.Tensor | None,
        iv: Interventions,
        cache: KVCache | None = None,
        start: int = 0,
    ) -> torch.Tensor:
        """`start`: the position of x's first row (a cached decoding step's)."""
        bias = _position_bias(self, x.size(1), start + x.size(1), start, iv)
        angles = _angles(self, start, x.size(1), iv)
        if iv.hide_first:
            self_mask = combine(self_mask, first_hidden_mask(x.size(1), start + x.size(1), start, x.device))
        masks = self.layer_masks(self_mask, x.size(1), start, iv.causal_mask, x.device)
        for i, layer in enumerate(self.layers):
            x = layer(
                x,
                masks[i],
                memory,
                memory_mask,
                ablate_self=iv.heads_off("decoder", "self", i),
                ablate_cross=iv.heads_off("decoder", "cross", i),
                cache=cache,
                scale=iv.scale_scores,
                fill=iv.fill,
                position_bias=bias,
                rotary=angles.get(self.cfg.rotary_base_of(i)),
            )
        return self.hook_output(self.final_norm(x))


class Transformer(nn.Module):
    """Encoder, decoder and the output projection to the shared vocabulary; with no decoder
    layers (an encoder-only model such as BERT), the encoder alone; with no encoder layers (a
    decoder-only model such as GPT-2), the decoder alone, its layers without cross-attention."""

    def __init__(self, cfg: ModelConfig, init_weights: bool = True) -> None:
        """`init_weights=False` leaves the initial values alone, for a model whose weights are loaded next."""
        super().__init__()
        self.cfg = cfg
        src_token = None
        if cfg.n_encoder_layers:
            src_token = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
            self.src_embed = Embeddings(cfg, src_token)
            self.encoder = Encoder(cfg)
        if cfg.n_decoder_layers:
            tgt_token = (
                src_token
                if cfg.tie_embeddings and src_token is not None
                else nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
            )
            self.tgt_embed = Embeddings(cfg, tgt_token)
            self.decoder = Decoder(cfg)
            self.generator = None if cfg.output_tied else Linear(cfg.d_model, cfg.vocab_size, bias=False)
            if cfg.logits_bias:
                self.logits_bias = nn.Parameter(torch.zeros(cfg.vocab_size), requires_grad=False)
            self.hook_logits = HookPoint()  # (B, T, vocab)
        if init_weights:
            self._init_weights()
        self.hook_names = name_hook_points(self)

    def _init_weights(self) -> None:
        for name, param in self.named_parameters():
            if name.endswith("token.weight"):
                # N(0, d^-1/2): after the sqrt(d_model) scaling, embeddings have unit scale.
                nn.init.normal_(param, std=self.cfg.d_model**-0.5)
                with torch.no_grad():
                    param[self.cfg.pad_id].zero_()
            elif param.dim() > 1 and "positions" not in name:
                nn.init.xavier_uniform_(param)

    def encode(
        self, src: torch.Tensor, iv: Interventions, src_lengths: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """src (B, S) ids -> memory (B, S, d_model) and the source padding mask it was built with
        (from `src_lengths` when given, else from where each row's padding starts)."""
        src_mask = padding_mask(src, self.cfg.pad_id, src_lengths) if iv.padding_mask else None  # (B, 1, 1, S)
        memory = self.encoder(self.src_embed(src, iv.positional_encoding, use_scale=iv.scale_embeddings), src_mask, iv)
        return memory, src_mask

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor | None,
        src_mask: torch.Tensor | None,
        iv: Interventions,
        cache: KVCache | None = None,
        start: int = 0,
        project: bool = True,
    ) -> torch.Tensor:
        """tgt (B, T) ids -> logits (B, T, vocab); memory None for a decoder-only model. With a
        cache, tgt holds only the new steps (after `start` cached positions).
        With project=False, the decoder's output states (B, T, d_model) instead of logits."""
        length = tgt.size(1)
        if cache is None:
            causal = subsequent_mask(length, tgt.device) if iv.causal_mask else None  # (T, T)
            pad = padding_mask(tgt, self.cfg.pad_id) if iv.padding_mask else None  # (B, 1, 1, T)
            self_mask = combine(causal, pad)
        else:  # a cache holds only earlier positions: a lone new one may see them all, several (a prompt) a triangle
            self_mask = subsequent_mask(length, tgt.device, start) if length > 1 else None  # (T, start + T)
        x = self.tgt_embed(tgt, iv.positional_encoding, start, use_scale=iv.scale_embeddings)
        x = self.decoder(x, self_mask, memory, src_mask, iv, cache, start)  # (B, T, d_model)
        if not project:
            return x
        return self.hook_logits(self.project(x))

    def project(self, x: torch.Tensor) -> torch.Tensor:
        """Decoder output states (..., d_model) -> logits (..., vocab), without the hook."""
        if self.cfg.rescale_output:
            x = x * self.cfg.d_model**-0.5
        return F.linear(x, self.output_matrix, getattr(self, "logits_bias", None))

    @property
    def output_matrix(self) -> torch.Tensor:
        """(vocab, d_model): the output projection's weight (the token embeddings, when tied)."""
        return self.tgt_embed.token.weight if self.generator is None else self.generator.weight

    def store_for_decoding(self) -> None:
        """Lay out every matrix a decoding step reads for products with one row (`storage`), the
        queries, keys and values of the decoder's self-attention as one block: the same
        parameters and values, read in about half the time on the CPU."""
        if not self.cfg.n_decoder_layers:
            return
        for layer in layers_of(self.decoder):
            layer.self_attn.fuse_projections()
            for weight in layer.step_matrices():
                store_for_one_row(weight)
        store_for_one_row(self.output_matrix)

    def forward(self, src: torch.Tensor | None, tgt: torch.Tensor, iv: Interventions = Interventions()) -> torch.Tensor:
        """Teacher-forced pass: logits (B, T, vocab) for target inputs `tgt` given source `src` (None,
        and not read, for a decoder-only model)."""
        if not self.cfg.n_encoder_layers:
            return self.decode(tgt, None, None, iv)
        if src is None:
            raise ValueError("an encoder-decoder model needs a source")
        memory, src_mask = self.encode(src, iv)
        return self.decode(tgt, memory, src_mask, iv)

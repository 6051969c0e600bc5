"""Each attention head's direct share of a piece's logit, computed from transformers' own modules: what the
shares tests (tests/families/test_shares_families.py, tests/families/test_gguf_real.py) compare
model.analysis.shares with, written without any of this project's code.

A forward pre-hook on every attention block's output projection catches its input at the predicting position:
each head's slice of it (d_head values) times that head's slice of the projection's weight is the head's write
into the residual stream. Pre-hooks on the norms catch what each norm read, so that each can be applied with its
divisor frozen at that value (a linear map then): Gemma 3's norm on the attention output, a post-LN model's
every later LayerNorm (Marian), the final norm. Through them and the output head's row of the piece (T5's
d_model**-0.5 rescale included when transformers applies it), the write becomes the head's share of the logit."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

DTYPE = torch.float64


@dataclass(frozen=True)
class Block:
    """One attention block of transformers' decoder: its output projection, the norm on that projection's output
    (Gemma 3's) and the norms the stream then passes through before the final norm (a post-LN model's)."""

    kind: str  # "self" or "cross", as our shares name it
    layer: int
    projection: nn.Module
    post: nn.Module | None = None
    after: tuple[nn.Module, ...] = ()


@dataclass(frozen=True)
class Layout:
    """What carries a head's write to the logit in one transformers model."""

    blocks: tuple[Block, ...]
    heads: int
    final: nn.Module | None  # the decoder's final norm (None: Marian has none)
    scale: float  # applied to the final norm's output before the output head (T5's tied head)

    def norms(self) -> list[nn.Module]:
        """Every norm a write passes through, once each."""
        every = [norm for block in self.blocks for norm in (block.post, *block.after, self.final) if norm is not None]
        return list(dict.fromkeys(every))


def _pre_ln(layers: Sequence[nn.Module], projection: str, final: nn.Module, heads: int, post: str = "") -> Layout:
    """A pre-LN decoder alone: its attention's output projection at dotted path `projection` in each layer."""
    blocks = []
    for index, layer in enumerate(layers):
        module = layer.get_submodule(projection)
        blocks.append(Block("self", index, module, layer.get_submodule(post) if post else None))
    return Layout(tuple(blocks), heads, final, 1.0)


def _t5(model: nn.Module) -> Layout:
    blocks = []
    for index, block in enumerate(model.decoder.block):
        blocks.append(Block("self", index, block.layer[0].SelfAttention.o))
        blocks.append(Block("cross", index, block.layer[1].EncDecAttention.o))
    scale = model.config.d_model**-0.5 if model.config.scale_decoder_outputs else 1.0
    return Layout(tuple(blocks), model.config.num_heads, model.decoder.final_layer_norm, scale)


def _marian(model: nn.Module) -> Layout:
    """Post-LN: LN(x + f(x)) around each sublayer, so a write passes through its own sublayer's norm and every
    later one; the decoder has no final norm."""
    layers = model.model.decoder.layers
    norms = [
        norm
        for layer in layers
        for norm in (layer.self_attn_layer_norm, layer.encoder_attn_layer_norm, layer.final_layer_norm)
    ]
    blocks = []
    for index, layer in enumerate(layers):
        blocks.append(Block("self", index, layer.self_attn.out_proj, after=tuple(norms[3 * index :])))
        blocks.append(Block("cross", index, layer.encoder_attn.out_proj, after=tuple(norms[3 * index + 1 :])))
    return Layout(tuple(blocks), model.config.decoder_attention_heads, None, 1.0)


def layout(model: nn.Module) -> Layout:
    """The layout of a transformers model of one of the families (by its config's model_type)."""
    cfg = model.config
    kind = cfg.model_type
    if kind == "gpt2":
        return _pre_ln(model.transformer.h, "attn.c_proj", model.transformer.ln_f, cfg.n_head)
    if kind == "gpt_neox":
        return _pre_ln(
            model.gpt_neox.layers, "attention.dense", model.gpt_neox.final_layer_norm, cfg.num_attention_heads
        )
    if kind in ("llama", "qwen2", "qwen3"):
        return _pre_ln(model.model.layers, "self_attn.o_proj", model.model.norm, cfg.num_attention_heads)
    if kind == "gemma3_text":
        heads = cfg.num_attention_heads
        return _pre_ln(model.model.layers, "self_attn.o_proj", model.model.norm, heads, "post_attention_layernorm")
    if kind == "t5":
        return _t5(model)
    if kind == "marian":
        return _marian(model)
    raise ValueError(f"no layout for {kind!r}")


def frozen(norm: nn.Module, read: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """v (d,) through `norm` with its divisor frozen at what it found in `read` (d,), its shift left out."""
    read = read.to(DTYPE)
    weight = norm.weight.detach().to(DTYPE)
    if isinstance(norm, nn.LayerNorm):
        return (v - v.mean()) * weight / torch.sqrt(read.var(unbiased=False) + norm.eps)
    eps = getattr(norm, "variance_epsilon", None)
    eps = norm.eps if eps is None else eps
    gain = 1.0 + weight if type(norm).__name__ == "Gemma3RMSNorm" else weight  # Gemma's (1 + w)
    return v * gain / torch.sqrt(read.pow(2).mean() + eps)


def head_writes(block: Block, context: torch.Tensor, heads: int) -> torch.Tensor:
    """(heads, d_model): each head's write, from the projection's input at one position (heads * d_head,)."""
    weight = block.projection.weight.detach().to(DTYPE)
    if type(block.projection).__name__ == "Conv1D":  # GPT-2's: y = x W + b, W (in, out)
        weight = weight.T
    width = context.numel() // heads
    slices = context.to(DTYPE).reshape(heads, width)
    return torch.stack([weight[:, h * width : (h + 1) * width] @ slices[h] for h in range(heads)])


@contextmanager
def _catching(modules: Sequence[nn.Module]) -> Iterator[dict[int, torch.Tensor]]:
    """Each module's input in the next forward pass, batch row 0, by the module's id."""
    caught: dict[int, torch.Tensor] = {}

    def catch(module: nn.Module, args: tuple) -> None:
        caught[id(module)] = args[0][0].detach().clone()

    handles = [module.register_forward_pre_hook(catch) for module in modules]
    try:
        yield caught
    finally:
        for handle in handles:
            handle.remove()


def head_shares(
    model: nn.Module, inputs: dict[str, torch.Tensor], row: int, piece: int, layers: Sequence[int] | None = None
) -> tuple[dict[Hashable, float], float]:
    """Every head's share of piece `piece`'s logit at decoder position `row` of transformers' pass over `inputs`
    (keyword arguments of its forward), keyed as our shares name heads; and transformers' logit. `layers`: only
    those decoder layers' heads."""
    plan = layout(model)
    blocks = [block for block in plan.blocks if layers is None or block.layer in layers]
    with _catching([block.projection for block in blocks] + plan.norms()) as caught, torch.no_grad():
        logits = model(**inputs).logits
    direction = model.get_output_embeddings().weight.detach()[piece].to(DTYPE) * plan.scale
    shares: dict[Hashable, float] = {}
    for block in blocks:
        for head, write in enumerate(head_writes(block, caught[id(block.projection)][row], plan.heads)):
            for norm in ([block.post] if block.post is not None else []) + list(block.after):
                write = frozen(norm, caught[id(norm)][row], write)
            if plan.final is not None:
                write = frozen(plan.final, caught[id(plan.final)][row], write)
            shares[("decoder", block.kind, block.layer, head)] = float(write @ direction)
    return shares, float(logits[0, row, piece])

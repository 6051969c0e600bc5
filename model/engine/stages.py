"""Every hook point's name, in one place, and what a name says about its tensor.

A hook point is named by its module path in the Transformer (`hooks.name_hook_points`); the
functions here build those names, so that pages, viz and the analyses ask for a stage instead of
spelling a path. `tests/engine/test_stages.py` checks that every name a traced run records parses and is
built back the same, and that no other module spells one. No torch here: viz/ imports it.

    src_embed.hook_token                          embedding stages   embedding("token")
    encoder.layers.1.self_attn.hook_pattern      attention stages   attention("encoder", "self", 1, "pattern")
    encoder.layers.1.ffn.hook_hidden             feed-forward       ffn("encoder", 1, "hidden")
    encoder.layers.1.hook_resid_self             around sublayers   sublayer("encoder", 1, "resid_self")
    encoder.hook_memory, decoder.hook_output     a stack's output   MEMORY, DECODER_OUTPUT
    encoder.hook_position_bias                   relative positions position_bias("encoder") (T5)
    hook_logits                                  the output layer   LOGITS
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# The attention blocks a stack has, by stack: the layout every part of the app shares.
ATTENTION: dict[str, tuple[str, ...]] = {"encoder": ("self",), "decoder": ("self", "cross")}
BLOCKS: tuple[tuple[str, str], ...] = tuple((stack, kind) for stack, kinds in ATTENTION.items() for kind in kinds)

ATTENTION_STAGES = ("q", "k", "v", "scores", "masked_scores", "pattern", "context", "concat", "out")
EMBEDDING_STAGES = ("ids", "token", "scaled", "position", "token_type", "sum", "norm")
SIDES = {"source": "src_embed", "target": "tgt_embed"}

MEMORY = "encoder.hook_memory"  # the encoder's last output (after its final norm, if any)
DECODER_OUTPUT = "decoder.hook_output"  # the decoder's last output, before the output projection
LOGITS = "hook_logits"  # the output projection: one row of logits per decoder position
POSITION_BIAS = "position_bias"  # a stack's relative-position bias (1, h, queries, keys), T5's only


def position_bias(stack: str) -> str:
    """The relative-position bias that every self-attention block of `stack` adds to its scores."""
    return f"{stack}.hook_{POSITION_BIAS}"


def embedding(stage: str, side: str = "source") -> str:
    """An embedding stage of the source ('source') or the decoder input ('target')."""
    return f"{SIDES[side]}.hook_{stage}"


def attention(stack: str, kind: str, layer: int, stage: str) -> str:
    """A stage of one attention block: q, k, v, scores, masked_scores, pattern, context, concat, out."""
    if kind not in ATTENTION.get(stack, ()):
        raise KeyError(f"no {kind!r} attention in the {stack!r} stack")
    return f"{stack}.layers.{layer}.{kind}_attn.hook_{stage}"


def ffn(stack: str, layer: int, stage: str) -> str:
    """A stage of one feed-forward sublayer: hidden or out."""
    return f"{stack}.layers.{layer}.ffn.hook_{stage}"


def sublayer(stack: str, layer: int, stage: str) -> str:
    """A stage around a layer's sublayers: resid_self, norm_self, resid_cross, norm_cross, resid_ffn,
    norm_ffn (a post-LN layer's norms follow the residual sums; a pre-LN layer's come before)."""
    return f"{stack}.layers.{layer}.hook_{stage}"


def layer_output(stack: str, layer: int, norm_first: bool) -> str:
    """What a layer hands the next one: the last norm's output in a post-LN layer, the last
    residual sum in a pre-LN one."""
    return sublayer(stack, layer, "resid_ffn" if norm_first else "norm_ffn")


_NAME = re.compile(
    r"^(?:(?P<embed>src_embed|tgt_embed)\.|(?P<stack>encoder|decoder)\."
    r"(?:layers\.(?P<layer>\d+)\.(?:(?P<kind>self|cross)_attn\.|(?P<ffn>ffn)\.)?)?)?hook_(?P<stage>\w+)$"
)


@dataclass(frozen=True)
class Stage:
    """What a hook point's name says: where it sits and which stage it is."""

    name: str
    stage: str  # "pattern", "token", "hidden", "resid_self", "memory", "logits", ...
    stack: str | None = None  # "encoder" or "decoder"; None for the embeddings and the logits
    layer: int | None = None
    kind: str | None = None  # "self" or "cross" inside an attention block
    side: str | None = None  # "source" or "target" for an embedding stage
    in_ffn: bool = False

    @property
    def per_head(self) -> bool:
        """True for (batch, heads, positions, ...) tensors: everything in attention before the concat,
        and a relative-position bias."""
        return (self.kind is not None and self.stage in ATTENTION_STAGES[:7]) or self.stage == POSITION_BIAS

    @property
    def source_rows(self) -> bool:
        """True when its positions are the source's: the source embeddings, the encoder, and the
        cross-attention keys and values (projections of the encoder's memory)."""
        return self.side == "source" or self.stack == "encoder" or (self.kind == "cross" and self.stage in ("k", "v"))

    @property
    def keys(self) -> str | None:
        """Whose positions its last axis holds in the scores and patterns: 'source' or 'target'."""
        if self.stage == POSITION_BIAS:
            return "source" if self.stack == "encoder" else "target"
        if self.kind is None or self.stage not in ("scores", "masked_scores", "pattern"):
            return None
        return "source" if self.stack == "encoder" or self.kind == "cross" else "target"


@lru_cache(maxsize=8192)  # a model's few hundred names, parsed again at every step of a recorded decoding
def parse(name: str) -> Stage:
    """The Stage a hook point's name stands for; ValueError for a name no hook point has."""
    match = _NAME.match(name)
    if match is None:
        raise ValueError(f"{name!r} is not the name of a hook point")
    embed, layer = match["embed"], match["layer"]
    return Stage(
        name,
        match["stage"],
        match["stack"],
        int(layer) if layer is not None else None,
        match["kind"],
        next((side for side, prefix in SIDES.items() if prefix == embed), None),
        match["ffn"] is not None,
    )


def build(stage: Stage) -> str:
    """The name of a parsed Stage again (parse's inverse)."""
    if stage.side is not None:
        return embedding(stage.stage, stage.side)
    stack, layer = stage.stack, stage.layer
    if stack is not None and layer is not None:  # inside a numbered layer
        if stage.kind is not None:
            return attention(stack, stage.kind, layer, stage.stage)
        if stage.in_ffn:
            return ffn(stack, layer, stage.stage)
        return sublayer(stack, layer, stage.stage)
    return f"{stage.stack}.hook_{stage.stage}" if stage.stack else f"hook_{stage.stage}"


def layers(names: list[str] | tuple[str, ...], stack: str) -> int:
    """How many layers of `stack` the names cover."""
    return len({s.layer for s in map(parse, names) if s.stack == stack and s.layer is not None})

"""What a person may switch for an experiment, and how to decode: frozen, hashable values."""

from __future__ import annotations

from dataclasses import dataclass, field

from i18n import later, later_n

from ..errors import InputError
from .config import ModelConfig
from .draws import Sampling
from .stages import ATTENTION

MASK_VALUES = {"-inf": float("-inf"), "-1e9": -1e9}  # the fill for masked scores, by its name

Head = tuple[str, str, int, int]  # (stack, kind, layer, head)


@dataclass(frozen=True)
class Interventions:
    """Switches applied during one call; the default is the model as trained."""

    causal_mask: bool = True  # decoder self-attention may not look at later positions
    padding_mask: bool = True  # no query looks at padded source/target positions
    positional_encoding: bool = True  # add position information to the embeddings
    ablate: frozenset[Head] = field(default_factory=frozenset)  # heads whose context output is zeroed
    scale_scores: bool = True  # divide QK^T by sqrt(d_k); off: the raw dot products
    scale_embeddings: bool = True  # multiply token embeddings by sqrt(d_model) (models that scale at all)
    mask_value: str = "-inf"  # what masked scores are set to: "-inf" or "-1e9"
    # rotary positions turn by base θ x this (every base, Gemma 3's two alike): a what-if of the Positional
    # encoding page; 1.0: as trained
    rotary_base_factor: float = 1.0
    # self-attention's first piece hidden from every later query (each still sees itself): the attention-sink
    # what-if of the Attention page
    hide_first: bool = False

    def __post_init__(self) -> None:
        for name in (
            "causal_mask",
            "padding_mask",
            "positional_encoding",
            "scale_scores",
            "scale_embeddings",
            "hide_first",
        ):
            if not isinstance(getattr(self, name), bool):
                raise InputError(
                    later("{name} must be true or false, got {value}", name=name, value=repr(getattr(self, name)))
                )
        if self.mask_value not in MASK_VALUES:
            raise InputError(
                later(
                    "mask_value must be one of {values}, got {value}",
                    values=", ".join(MASK_VALUES),
                    value=repr(self.mask_value),
                )
            )
        factor = self.rotary_base_factor
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 1e-3 <= factor <= 1e3:
            raise InputError(
                later("rotary_base_factor must be a number from 0.001 to 1000, got {value}", value=repr(factor))
            )
        heads = frozenset(tuple(h) for h in self.ablate)
        for head in heads:
            if len(head) != 4:
                raise InputError(later("An ablated head is (stack, kind, layer, head), got {head}", head=repr(head)))
            stack, kind, layer, index = head
            if not isinstance(stack, str) or kind not in ATTENTION.get(stack, ()):
                raise InputError(
                    later(
                        "No {kind} attention in the {stack} stack: use encoder/self, decoder/self or decoder/cross",
                        kind=repr(kind),
                        stack=repr(stack),
                    )
                )
            if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (layer, index)):
                raise InputError(later("Layer and head must be non-negative integers, got {head}", head=repr(head)))
        object.__setattr__(self, "ablate", heads)

    @property
    def fill(self) -> float:
        """The number masked scores are set to."""
        return MASK_VALUES[self.mask_value]

    def check_against(self, cfg: ModelConfig) -> None:
        """Refuse ablated heads or layers a model of this config does not have."""
        layers = {"encoder": cfg.n_encoder_layers, "decoder": cfg.n_decoder_layers}
        for stack, kind, layer, head in sorted(self.ablate):
            if layer >= layers[stack] or head >= cfg.n_heads:
                raise InputError(
                    later_n(
                        "This model has {n} {stack} layer of {heads} heads: there is no {stack} {kind}-attention "
                        "layer {layer} head {head}",
                        "This model has {n} {stack} layers of {heads} heads: there is no {stack} {kind}-attention "
                        "layer {layer} head {head}",
                        layers[stack],
                        stack=stack,
                        heads=cfg.n_heads,
                        kind=kind,
                        layer=layer,
                        head=head,
                    )
                )

    def heads_off(self, stack: str, kind: str, layer: int) -> tuple[int, ...]:
        """Sorted heads ablated in one attention block."""
        return tuple(sorted(head for *block, head in self.ablate if tuple(block) == (stack, kind, layer)))


@dataclass(frozen=True)
class DecodeOptions:
    """How to turn the model's distributions into a translation."""

    beam_size: int = 1  # 1 is greedy decoding
    length_penalty: float = 1.0  # beam score = log-prob / length**length_penalty (0 = raw sum)
    max_len: int | None = None  # output pieces; None = 2 * source length + 10, capped by the model
    top_k: int = 5  # candidates reported per decoding step
    sampling: Sampling | None = None  # draw each piece (one path, as greedy) instead of taking the most likely

    def __post_init__(self) -> None:
        if not isinstance(self.beam_size, int) or not 1 <= self.beam_size <= 16:
            raise InputError(
                later("Beam size must be an integer from 1 to 16, got {value}", value=repr(self.beam_size))
            )
        if not isinstance(self.length_penalty, (int, float)) or not 0.0 <= self.length_penalty <= 3.0:
            raise InputError(
                later("Length penalty must be between 0 and 3, got {value}", value=repr(self.length_penalty))
            )
        if self.max_len is not None and (not isinstance(self.max_len, int) or self.max_len < 1):
            raise InputError(later("Maximum length must be a positive integer, got {value}", value=repr(self.max_len)))
        if not isinstance(self.top_k, int) or not 1 <= self.top_k <= 50:
            raise InputError(later("top_k must be an integer from 1 to 50, got {value}", value=repr(self.top_k)))
        if self.sampling is not None and (not isinstance(self.sampling, Sampling) or self.beam_size != 1):
            raise InputError(later("Sampling draws one answer: it takes a Sampling and a beam size of 1"))

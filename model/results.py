"""What a call to the model found out, as plain data (numpy arrays, strings, numbers): the Trace of
every stage, the steps and beams of decoding, and the results of translating and of encoding.
No torch here: viz/ reads these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .engine import stages
from .engine.draws import Draw
from .engine.interventions import Interventions


@dataclass(frozen=True)
class Trace:
    """Every hook point's tensor, in execution order, for one encoder pass and one
    teacher-forced decoder pass over the chosen output, so that row t is what decoding step t
    computed. With the causal mask off, that pass would let row t see later pieces, so each
    decoder row comes from its own step's pass instead (decoding.as_decoded);
    Bundle.teacher_forced gives the one-pass view. After greedy decoding with the mask on,
    `hook_logits` holds the logits each cached step computed (the one pass's up to float rounding); a
    decoder-only model's continuation then has NaN logits at its prompt's rows but the last, which
    generating never projects (as transformers' generate does not)."""

    src_ids: tuple[int, ...]  # source ids, EOS included
    src_pieces: list[str]  # one per source position (the keys of cross-attention)
    tgt_ids: tuple[int, ...]  # decoder input ids: BOS then the output but its last piece
    tgt_pieces: list[str]  # one per decoder position (the queries)
    out_pieces: list[str]  # the piece each decoder position produced
    tensors: dict[str, np.ndarray] = field(repr=False)
    interventions: Interventions = Interventions()

    @property
    def stages(self) -> list[tuple[str, tuple[int, ...]]]:
        """Every hook point in execution order with the shape of its tensor."""
        return [(name, tuple(array.shape)) for name, array in self.tensors.items()]

    def tensor(self, name: str) -> np.ndarray:
        """The tensor recorded at hook point `name` (batch dimension included)."""
        try:
            return self.tensors[name]
        except KeyError:
            raise KeyError(f"no hook point {name!r} in this trace") from None

    def pattern(self, stack: str, kind: str, layer: int) -> np.ndarray:
        """Attention weights [heads, queries, keys] of one block; rows sum to 1."""
        return self.tensor(stages.attention(stack, kind, layer, "pattern"))[0]

    def n_layers(self, stack: str) -> int:
        """Number of layers of `stack` ('encoder' or 'decoder') in this trace."""
        return stages.layers(tuple(self.tensors), stack)


@dataclass(frozen=True)
class Step:
    """One decoding step: the piece chosen and the top candidates the model weighed."""

    position: int
    chosen: str
    probability: float  # probability of the chosen piece
    top: list[tuple[str, float]]  # (piece, probability), most likely first


@dataclass(frozen=True)
class Beam:
    """A finished hypothesis of beam search (greedy decoding has exactly one)."""

    translation: str
    pieces: list[str]
    log_prob: float
    score: float  # what beams are ranked by: log_prob / length**length_penalty
    finished: bool  # False when cut at the maximum length


@dataclass(frozen=True)
class CachedLayer:
    """One attention block's keys and values as decoding cached them: (n_kv_heads, positions, d_head)
    each, the keys after any norm and rotation (what transformers' past_key_values holds)."""

    keys: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class KVCacheData:
    """The KV cache after greedy decoding, layer by layer: what each step read instead of recomputing.
    Position p's keys and values never change once cached (the causal mask), so the cache as step t
    found it is the first `first + t` positions (`at(t)`)."""

    self_attention: tuple[CachedLayer, ...]  # one per decoder layer: the decoder input's positions
    cross_attention: tuple[CachedLayer, ...] = ()  # an encoder-decoder's: the source's, the same at every step
    first: int = 1  # positions the first step read at once (a prompt; 1: the start piece)

    @property
    def positions(self) -> int:
        """Positions held at the end (the decoder input's)."""
        return self.self_attention[0].keys.shape[1] if self.self_attention else 0

    def at(self, step: int) -> tuple[CachedLayer, ...]:
        """Each layer's self-attention keys and values as step `step` left them (step 0: the first)."""
        end = min(self.first + step, self.positions)
        return tuple(CachedLayer(layer.keys[:, :end], layer.values[:, :end]) for layer in self.self_attention)

    @property
    def nbytes(self) -> int:
        """Bytes the arrays hold."""
        layers = self.self_attention + self.cross_attention
        return sum(layer.keys.nbytes + layer.values.nbytes for layer in layers)


@dataclass(frozen=True)
class TranslationResult:
    """Everything one call to `Bundle.translate` found out."""

    source: str  # the canonical text the model read
    translation: str
    trace: Trace | None
    steps: list[Step]
    beams: list[Beam]
    log_prob: float  # of the whole output (EOS included when finished)
    output_ids: tuple[int, ...] = ()  # the pieces scored by log_prob, EOS included when finished
    warnings: list[str] = field(default_factory=list)
    unknown_words: list[str] = field(default_factory=list)
    cache: KVCacheData | None = field(default=None, repr=False)  # greedy decoding's KV cache, layer by layer
    draws: tuple[Draw, ...] = ()  # a sampled answer's draws, one per piece (nothing for greedy and beams)


@dataclass(frozen=True)
class GenerationResult(TranslationResult):
    """Everything one call to `Bundle.generate` found out: a decoder-only model's continuation of a
    prompt. `translation` holds the continuation, `output_ids` its new pieces, `steps` one per new
    piece; the trace's decoder rows are the prompt's and then each new piece's but the last."""

    prompt_ids: tuple[int, ...] = ()

    @property
    def prompt(self) -> str:
        """The text the model continued."""
        return self.source

    @property
    def continuation(self) -> str:
        """The new text alone."""
        return self.translation


@dataclass(frozen=True)
class Written:
    """One new piece of a continuation as decoding writes it: its step (the piece, its probability and the
    candidates; `position` counts the new pieces from 0), the new pieces allowed at most, and the new text
    so far."""

    step: Step
    limit: int
    text: str


@dataclass(frozen=True)
class Listener:
    """What hears a continuation or a translation while it is written (`Generator.generate`, `translate`):
    `prompt` gets the prompt's Trace (its rows, the last one's output the first new piece) as soon as the first
    step has read it, for a greedy continuation with the causal mask and a trace (the other ways have no trace
    before the end), and for a translation with a trace the encoder's Trace (no decoder rows) as soon as the
    sentence is encoded; `piece` gets every new piece of greedy decoding; `beam`, for beam search, each step
    (from 0), the most new pieces there may be, and the best live beam's text after the step. Each runs in the
    decoding's own thread, and an exception from any ends the decoding."""

    prompt: Callable[[Trace], None] | None = None
    piece: Callable[[Written], None] | None = None
    beam: Callable[[int, int, str], None] | None = None


@dataclass(frozen=True)
class EncodeResult:
    """What one call to `Bundle.encode` found out: the encoder's stages and a sentence embedding."""

    source: str  # the text the model read
    trace: Trace  # encoder stages only (no decoder rows)
    embedding: np.ndarray  # (d_model,) pooled final encoder states, unit length
    warnings: list[str] = field(default_factory=list)
    unknown_words: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RouteEdge:
    """One edge of the routes graph (`model.analysis.routes`): what went from the residual stream at row `layer`
    and position `source` into the stream at row `layer + 1` and position `target` (row 0 is the embeddings,
    row l + 1 decoder layer l's output). Its weight is its share of everything written into (layer + 1,
    target): the norm of what it carries there, over the sum of the norms of every part of that sum."""

    kind: str  # "self" (attention over the decoder's positions), "cross" (over the source's), "residual", "ffn"
    layer: int  # the decoder layer it crosses
    source: int  # the position read: a decoder position, a source position for "cross"; `target` for the others
    target: int  # the decoder position written
    weight: float  # from 0 to 1
    heads: tuple[tuple[int, float], ...] = ()  # an attention edge's heads (0-based), largest share first


@dataclass(frozen=True)
class Routes:
    """The routes information took to the decoder position that predicts a piece, built backwards from it:
    every edge above `threshold` into a position the routes reach. At most a bounded number of positions are
    drawn (`positions`, the first one, the attention sink, always among them); `hidden` counts those the
    routes reached past that bound, whose edges are left out."""

    layers: int  # decoder layers: rows 0 (the embeddings) to `layers` (the last layer's output)
    positions: tuple[int, ...]  # the decoder positions drawn, in order
    sources: tuple[int, ...]  # the source positions drawn (the encoder's output, which cross-attention reads)
    target: int  # the decoder position that predicts the piece
    threshold: float
    edges: tuple[RouteEdge, ...]
    hidden: int = 0


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (0 when either is zero)."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm else 0.0

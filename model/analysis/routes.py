"""The routes information took to the piece a decoder predicts, after Ferrando & Voita's information-flow routes
(2024), each part's share measured by its norm (Kobayashi et al., 2020).

Decoder layer l's output at position i is a sum (`model.analysis.stream`, every norm's divisor frozen): the
stream it read at i, each head's weighted value vector from every key position j (the attention weight times
the value through the head's slice of the output projection), the feed-forward block's output, and biases. An
edge's weight is the norm of what it carries into that sum, over the sum of the norms of all the parts: an
attention edge j -> i sums its heads' shares (and names them, largest first), the residual edge i -> i is the
stream's own, the feed-forward edge the block's. The graph is built backwards from the position that predicts
the piece: an edge into a position the routes reach is kept when its weight is at least the threshold, and the
position it reads is reached in turn.

Where this differs from Ferrando & Voita (and the LLM Transparency Tool): they weigh a part by its L1 proximity to
the sum, max(|y|₁ - |y - part|₁, 0), which gives nothing to a part that points against the sum, and they
normalise attention and the feed-forward block as two steps; here a layer is one sum of parts, each weighed by its
length, so a part that cancels another still counts, and the threshold is not theirs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from i18n import later

from ..bundle import Bundle
from ..engine import stages
from ..engine.interventions import Interventions
from ..engine.transformer import layers_of
from ..errors import InputError
from ..results import RouteEdge, Routes, Trace
from . import forced
from .stream import DTYPE, FrozenNorm, attention_block, head_write_norms, layer_events, layer_input, output_bias

THRESHOLD = 0.05  # the routes' default threshold: on SmolLM2's 30 layers a lower one draws more edges than one reads
MOST_POSITIONS = 14  # decoder positions drawn at most (the first, the sink, and the predicting one always)
MOST_SOURCES = 14  # an encoder-decoder's source positions drawn at most
EDGE_HEADS = 5  # heads an attention edge names at most


@dataclass(frozen=True)
class LayerFlow:
    """One decoder layer's shares of each position's output sum: the residual's and the feed-forward block's
    (positions,), each attention kind's (heads, positions, keys)."""

    residual: np.ndarray
    ffn: np.ndarray
    attention: dict[str, np.ndarray]


def _through(vectors: torch.Tensor, norms: Sequence[FrozenNorm]) -> torch.Tensor:
    """Per-position vectors (positions, d), or one vector (d) written at every position, through frozen norms."""
    for norm in norms:
        vectors = norm.linear(vectors) * norm.inverse[:, None]
    return vectors


def _scale(norms: Sequence[FrozenNorm]) -> torch.Tensor:
    """Each position's factor (positions,) through frozen norms: their divisors (their linear parts are the same at
    every position, head_write_norms)."""
    scale = torch.ones_like(norms[0].inverse) if norms else torch.ones(1, dtype=DTYPE)
    for norm in norms:
        scale = scale * norm.inverse
    return scale


def layer_flow(bundle: Bundle, tensors: Mapping[str, torch.Tensor], layer: int, iv: Interventions) -> LayerFlow:
    """Decoder layer `layer`'s shares, from a recorded pass's `tensors`."""
    module = layers_of(bundle.model.decoder)[layer]
    events = list(layer_events(bundle, tensors, layer))

    def norms_after(index: int) -> list[FrozenNorm]:
        return [event.norm for event in events[index + 1 :] if event.norm is not None]

    residual = _through(layer_input(bundle, tensors, layer), norms_after(-1)).norm(dim=-1)
    total, ffn, attention = residual.clone(), torch.zeros_like(residual), {}
    rest = torch.zeros(len(residual), bundle.config.d_model, dtype=DTYPE)  # no part's: biases, norms' shifts
    for index, event in enumerate(events):
        if event.write is None:
            assert event.norm is not None
            rest = _through(rest, [event.norm])
            rest = rest if event.norm.shift is None else rest + event.norm.shift
            continue
        kind, post = event.write.kind, event.write.post
        norms = ([post] if post is not None else []) + norms_after(index)
        if kind == "ffn":
            ffn = _through(tensors[stages.ffn("decoder", layer, "out")][0].to(DTYPE), norms).norm(dim=-1)
            total += ffn
            continue
        block = attention_block(module, kind)
        values = tensors[stages.attention("decoder", kind, layer, "v")][0]  # (h, keys, d_head)
        written, scale = head_write_norms(values, block, norms), _scale(norms)
        pattern = tensors[stages.attention("decoder", kind, layer, "pattern")][0].to(DTYPE)  # (h, T, keys)
        keep = torch.ones(pattern.size(0), dtype=DTYPE)
        keep[list(iv.heads_off("decoder", kind, layer))] = 0.0  # a knocked-out head writes nothing
        shares = pattern * keep[:, None, None] * written[:, None, :] * scale[None, :, None]
        attention[kind] = shares
        total += shares.sum(dim=(0, 2))
        rest = rest + _through(output_bias(block, rest.size(-1)), [post] if post is not None else [])
    total = total + rest.norm(dim=-1)
    total = total.clamp_min(torch.finfo(DTYPE).tiny)
    return LayerFlow(
        (residual / total).numpy(),
        (ffn / total).numpy(),
        {kind: (shares / total[None, :, None]).numpy() for kind, shares in attention.items()},
    )


@dataclass
class _Graph:
    """The routes as they are found, layer by layer from the top."""

    edges: list[RouteEdge]
    positions: dict[int, float]  # reached decoder position -> the weight of its edges
    sources: dict[int, float]

    def add(self, edge: RouteEdge) -> None:
        self.edges.append(edge)
        self.positions[edge.target] = self.positions.get(edge.target, 0.0) + edge.weight
        reached = self.sources if edge.kind == "cross" else self.positions
        reached[edge.source] = reached.get(edge.source, 0.0) + edge.weight


def _heads(shares: np.ndarray) -> list[tuple[tuple[int, float], ...]]:
    """(heads, edges) shares -> each edge's heads with a share, largest first (at most EDGE_HEADS)."""
    order = np.argsort(-shares, axis=0, kind="stable")[:EDGE_HEADS]  # (EDGE_HEADS, edges)
    taken = np.take_along_axis(shares, order, axis=0)
    named = (taken > 0).sum(axis=0).tolist()  # the heads with a share come first, largest first
    return [
        tuple(zip(heads[:count], values[:count], strict=True))
        for heads, values, count in zip(order.T.tolist(), taken.T.tolist(), named, strict=True)
    ]


def _walk(
    flows: Sequence[LayerFlow], target: int, threshold: float, allowed: tuple[set[int], set[int]] | None = None
) -> _Graph:
    """Every edge at least `threshold` into a position the routes reach from `target` at the top, down to the
    embeddings; `allowed` (decoder positions, source positions) leaves the others out. The routes go on below a
    position through its residual and its feed-forward block (which reads the stream there) and through every
    self-attention edge into it."""
    graph = _Graph([], {target: 0.0}, {})
    frontier = [target]
    for layer in reversed(range(len(flows))):
        flow, below = flows[layer], set()
        for kind, weights in (("residual", flow.residual), ("ffn", flow.ffn)):
            for i in frontier:
                if weights[i] >= threshold:
                    graph.add(RouteEdge(kind, layer, i, i, float(weights[i])))
                    below.add(i)
        for kind, shares in flow.attention.items():
            into = shares[:, frontier]  # (heads, frontier, keys)
            keys = into.sum(axis=0)
            if allowed is not None:
                keys[:, [j for j in range(keys.shape[1]) if j not in allowed[kind == "cross"]]] = 0.0
            rows, columns = np.nonzero(keys >= threshold)
            heads = _heads(into[:, rows, columns]) if len(rows) else []
            for row, j, named in zip(rows.tolist(), columns.tolist(), heads, strict=True):
                graph.add(RouteEdge(kind, layer, j, frontier[row], float(keys[row, j]), named))
            below.update(columns.tolist() if kind == "self" else [])
        frontier = sorted(below)
    return graph


def _bounded(reached: dict[int, float], most: int, kept: Sequence[int]) -> set[int]:
    """The `most` reached positions with the heaviest edges, `kept` always among them."""
    heaviest = sorted(reached, key=lambda p: (-reached[p], p))
    return set(list(dict.fromkeys([*kept, *heaviest]))[:most])


def build(flows: Sequence[LayerFlow], target: int, threshold: float, sink: bool = True) -> Routes:
    """The routes to decoder position `target` from every layer's shares. When the positions up to `target` (and
    the source's) are few, all of them are drawn, so that the text reads whole; else at most MOST_POSITIONS
    decoder positions, those with the heaviest edges (`target`, and the first position when `sink`, always), and
    at most MOST_SOURCES source positions."""
    graph = _walk(flows, target, threshold)
    hidden = max(0, len(graph.positions) - MOST_POSITIONS) + max(0, len(graph.sources) - MOST_SOURCES)
    if hidden:
        positions = _bounded(graph.positions, MOST_POSITIONS, [target, 0] if sink else [target])
        graph = _walk(flows, target, threshold, (positions, _bounded(graph.sources, MOST_SOURCES, [])))
    shown = set(graph.positions) | ({0} if sink else set())
    if target < MOST_POSITIONS:
        shown |= set(range(target + 1))
    sources = set(graph.sources)
    source_length = flows[0].attention["cross"].shape[-1] if flows and "cross" in flows[0].attention else 0
    if source_length <= MOST_SOURCES:
        sources |= set(range(source_length))
    return Routes(
        len(flows), tuple(sorted(shown)), tuple(sorted(sources)), target, threshold, tuple(graph.edges), hidden
    )


def routes(
    bundle: Bundle,
    text: str,
    output_ids: Sequence[int],
    piece: int,
    interventions: Interventions = Interventions(),
    chat: bool = False,
    threshold: float = THRESHOLD,
    trace: Trace | None = None,
) -> Routes:
    """The routes to output piece `piece` (its index in `output_ids`, from 0, under teacher forcing on
    `output_ids`): edges at least `threshold` (0 to 1), built backwards from the position that predicts it.
    `trace`: the output's own trace, read instead of a pass when it is this input's (`forced.recorded`)."""
    if not 0.0 < threshold <= 1.0:
        raise InputError(later("The routes' threshold is a share above 0 and at most 1, not {value}.", value=threshold))
    tensors, row, _ = forced.recorded_piece(bundle, text, output_ids, piece, interventions, chat, trace)
    flows = [layer_flow(bundle, tensors, layer, interventions) for layer in range(bundle.config.n_decoder_layers)]
    return build(flows, row, threshold)

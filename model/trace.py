"""What one translation did inside the model, as plain data (numpy arrays, strings, ints)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .interventions import KINDS, Interventions


@dataclass(frozen=True)
class Trace:
    """Every hook point's tensor, in execution order, for one encoder pass and one
    teacher-forced decoder pass over the chosen output, so that row t is what decoding step t
    computed. With the causal mask off, that pass would let row t see later pieces, so each
    decoder row comes from its own step's pass instead (decoding.as_decoded);
    Bundle.teacher_forced gives the one-pass view. After greedy decoding with the mask on,
    `hook_logits` holds the logits each cached step computed (the one pass's up to float rounding)."""

    src_ids: tuple[int, ...]       # source ids, EOS included
    src_pieces: list[str]          # one per source position (the keys of cross-attention)
    tgt_ids: tuple[int, ...]       # decoder input ids: BOS then the output but its last piece
    tgt_pieces: list[str]          # one per decoder position (the queries)
    out_pieces: list[str]          # the piece each decoder position produced
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
        if stack not in KINDS or kind not in KINDS[stack]:
            raise KeyError(f"no {kind!r} attention in the {stack!r} stack")
        return self.tensor(f"{stack}.layers.{layer}.{kind}_attn.hook_pattern")[0]

    def n_layers(self, stack: str) -> int:
        """Number of layers of `stack` ('encoder' or 'decoder') in this trace."""
        prefix = f"{stack}.layers."
        return len({name[len(prefix):].split(".")[0] for name in self.tensors if name.startswith(prefix)})

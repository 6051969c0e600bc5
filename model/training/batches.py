"""The training pairs as the model reads them: a pair's source and target ids, the length-bucketed
batches of an epoch, and each rank's micro-batches of every step."""

from __future__ import annotations

import random
from collections.abc import Iterator

from ..engine.tokenizer import Tokenizer, normalize_source
from ..engine.tokens import BOS_ID, EOS_ID
from .distributed import World


def source_ids(tokenizer: Tokenizer, english: str, max_len: int) -> list[int]:
    """The encoder's input for an English sentence of the corpus, as in training: canonical text, cut, EOS."""
    return tokenizer.encode(normalize_source(english).text)[: max_len - 1] + [EOS_ID]


def target_ids(tokenizer: Tokenizer, french: str, max_len: int) -> list[int]:
    """BOS, the French pieces (cut) and EOS: the decoder reads all but the last, and predicts all but the first."""
    return [BOS_ID] + tokenizer.encode(french)[: max_len - 1] + [EOS_ID]


def make_batches(lengths: list[int], max_tokens: int, rng: random.Random) -> list[list[int]]:
    """Group examples of similar length so that padded batches hold about max_tokens tokens."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], rng.random()))
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i in order:
        wider = max(width, lengths[i])
        if current and wider * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, wider = [], lengths[i]
        current.append(i)
        width = wider
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def step_batches(batches: list[list[int]], world: World, accumulate: int) -> Iterator[list[list[int]]]:
    """This rank's micro-batches, step by step: a step takes the next world.size * accumulate buckets
    (the global batch) and rank r trains on its own `accumulate` of them. The last buckets of an
    epoch that do not fill a whole step are left out, so that every rank takes the same steps."""
    per_step = world.size * accumulate
    if len(batches) < per_step:
        raise ValueError(
            f"an epoch has {len(batches)} batches, fewer than one step takes ({world.size} ranks x "
            f"{accumulate} accumulated): use fewer processes or a smaller --accumulate"
        )
    for start in range(0, len(batches) - per_step + 1, per_step):
        first = start + world.rank * accumulate
        yield batches[first : first + accumulate]

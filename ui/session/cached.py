"""Results computed once and shared: a computation called through `cached` is stored in the byte-bounded
results cache of ui/session/cache.py, keyed on its name and its inputs (the checkpoint id standing for the
model), and the switches become a plain hashable key that holds every field of `Interventions`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from dataclasses import fields
from typing import Any, Generic, TypeVar

from model import (
    Bundle,
    Interventions,
)
from ui.session.cache import RESULTS

V = TypeVar("V")


# Interventions as a plain hashable key, built from its fields, so a new switch can never be
# left out of the key (a stale result) or dropped on the way back (a switch that never arrives).
IvKey = tuple[tuple[str, Any], ...]  # (field, value): a value of whichever type its field has


class Cached(Generic[V]):
    """compute(bundle, checkpoint_id, ...) through the shared results cache, keyed on its name and
    every positional argument but the bundle itself (the checkpoint id names it); keyword arguments
    (a progress callback) reach a computation that runs but are not part of the key.
    `holds(checkpoint_id, ...)` says whether a result is stored."""

    def __init__(self, compute: Callable[..., V]) -> None:
        self.compute = compute
        functools.update_wrapper(self, compute)

    def __call__(self, bundle: Bundle, *key: Hashable, **passed: object) -> V:
        return RESULTS.get((self.compute.__name__, *key), lambda: self.compute(bundle, *key, **passed))

    def holds(self, *key: Hashable) -> bool:
        """True when the result for this key is stored."""
        return (self.compute.__name__, *key) in RESULTS


def cached(compute: Callable[..., V]) -> Cached[V]:
    """`compute` through the shared results cache (see Cached)."""
    return Cached(compute)


def iv_key(iv: Interventions) -> IvKey:
    """A plain, hashable cache key for interventions: every field, sets sorted."""
    return tuple(
        (f.name, tuple(sorted(value)) if isinstance(value := getattr(iv, f.name), frozenset) else value)
        for f in fields(iv)
    )


def interventions_of(key: IvKey) -> Interventions:
    values: dict[str, Any] = {name: frozenset(value) if isinstance(value, tuple) else value for name, value in key}
    return Interventions(**values)

"""Shared by the benchmarks: the model to measure and a median timer."""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TWELVE_WORDS = "My sister will give the red apple to the old teacher tomorrow."


def median_seconds(fn: Callable[[], object], repeats: int, warmup: int = 2) -> float:
    """Median wall-clock seconds of `fn()` over `repeats` runs after `warmup` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 3) -> dict[str, float]:
    """Median seconds of each function, timed in alternation and in a shuffled order each round,
    so that a machine that slows down during the run, or a cache another contender left
    cold, affects every contender alike."""
    return {name: wall for name, (wall, _) in interleaved_times(fns, repeats, warmup).items()}


def interleaved_times(
    fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 3
) -> dict[str, tuple[float, float]]:
    """As interleaved_medians, the median wall-clock seconds of each function, and beside it the
    median CPU seconds of this process during the same calls (time.process_time, every thread):
    on a machine other processes share, a call that waited for a core shows it in the first and
    not in the second, so that the two together tell contention from a real difference."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    walls: dict[str, list[float]] = {name: [] for name in fns}
    cpus: dict[str, list[float]] = {name: [] for name in fns}
    order = list(fns)
    shuffle = random.Random(0).shuffle
    for _ in range(repeats):
        shuffle(order)  # no contender always runs right after the same other one
        for name in order:
            fn = fns[name]
            cpu, start = time.process_time(), time.perf_counter()
            fn()
            walls[name].append(time.perf_counter() - start)
            cpus[name].append(time.process_time() - cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in fns}


def default_bundle():
    """The shipped model, or say how to build it."""
    from model import CheckpointError, load_bundle

    try:
        return load_bundle()
    except CheckpointError as exc:
        sys.exit(f"bench needs the default model: {exc}")

"""The shared caches' byte budgets, set here and overridable by environment variables, and the
cache that keeps to them: least recently used out, by bytes held, not by a count of entries.

    ANATOMY_RESULTS_MB  model results (translations, traces, sweeps)   default 128, or unset: at least
                        the bytes of the models loaded (see RESULTS)
    ANATOMY_FIGURES_MB  drawn plotly figures                           default 64
    ANATOMY_MODELS_MB   loaded checkpoints (parameters and buffers)    default 2048
    ANATOMY_DECODINGS_MB  decodings started and not yet ended, by what  default 3072
                        each will hold (ui/session/fair.py, footprint.py)

Memory freed must also leave the process: see `return_large_blocks`.

A hit returns the very object that was stored (no pickled copy per hit), shared by every session;
the numpy arrays inside a stored value are made read-only, so a page that tries to change one fails
at once instead of changing what another session sees.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, TypeVar

import numpy as np
import pandas as pd

V = TypeVar("V")
MIB = 2**20

RESULTS_ENV = "ANATOMY_RESULTS_MB"
FIGURES_ENV = "ANATOMY_FIGURES_MB"
MODELS_ENV = "ANATOMY_MODELS_MB"
DECODINGS_ENV = "ANATOMY_DECODINGS_MB"
# models: two real ones at once, the Compare page's SmolLM2-135M (538 MB in float32) and Gemma 3 270M (1,072 MB)
# decodings: thirty of the real SmolLM2's chat answers at once (about 95 MiB each, measured in tests/app/test_fair.py)
DEFAULT_MB = {RESULTS_ENV: 128, FIGURES_ENV: 64, MODELS_ENV: 2048, DECODINGS_ENV: 3072}


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_BLOCK = 1 << 20  # bytes: blocks this size or larger are mapped on their own and unmapped when freed


def return_large_blocks() -> bool:
    """Make glibc map every block of LARGE_BLOCK or more on its own, so freeing one returns it to the
    system. False where that cannot be set (not glibc) or $MALLOC_MMAP_THRESHOLD_ already sets it.

    glibc's default threshold rises to the size of the largest mapped block freed so far (up to
    32 MiB): after one long sentence's 9 MiB attention arrays were freed, later ones came from the
    heap and stayed there when freed. Measured on a pasted paragraph (bench/bench_paragraphs.py,
    all-MiniLM-L6-v2, six pages): the server grew 890 MiB with the default, 100 MiB with this.
    """
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK))


def budget_bytes(env: str) -> int:
    """The budget named by `env` in bytes: its environment variable in MiB, else the default here."""
    text = os.environ.get(env, "").strip()
    try:
        mib = float(text) if text else DEFAULT_MB[env]
    except ValueError:
        raise ValueError(f"${env} must be a number of MiB, not {text!r}") from None
    if mib < 0:
        raise ValueError(f"${env} must be 0 or more MiB, not {text!r}")
    return int(mib * MIB)


def _plotly_parts(value: Any) -> list[Any] | None:
    """What a plotly object holds, None for anything else. A figure: its traces' and layout's
    property dicts and the validated objects over them; a validated object (a trace, the layout,
    an annotation): its own small dicts and sets and its child objects, not its parent and not the
    validators, which every figure shares."""
    if not type(value).__module__.startswith("plotly."):
        return None
    if hasattr(value, "_data") and hasattr(value, "_layout_obj"):
        return [value._data, value._layout, value._data_objs, value._layout_obj, value._frame_objs]
    if hasattr(value, "_compound_props"):
        return [part for name, part in vars(value).items() if name != "_parent" and "validator" not in name]
    return None


def _buffer(array: np.ndarray) -> tuple[Hashable, int]:
    """(identity, bytes) of the memory an array's data lives in: views of one buffer (followed
    through `.base`, a torch tensor's storage included) share an identity and count once."""
    owner: Any = array
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    if isinstance(owner, np.ndarray):
        return ("array", id(owner)), owner.nbytes
    if hasattr(owner, "untyped_storage"):  # torch.Tensor.numpy() views the tensor's storage
        storage = owner.untyped_storage()
        return ("storage", storage.data_ptr()), storage.nbytes()
    try:
        return ("buffer", id(owner)), memoryview(owner).nbytes
    except TypeError:
        return ("buffer", id(owner)), sys.getsizeof(owner)


_NOT_DATA = (type, ModuleType, FunctionType, BuiltinFunctionType, MethodType)


def _not_data(obj: Any) -> bool:
    """Code, and Streamlit's own objects (a column a page drew into): nothing a value holds."""
    return isinstance(obj, _NOT_DATA) or type(obj).__module__.startswith("streamlit")


def _walk(value: Any, freeze: bool, stop_above: float = float("inf")) -> int:
    """Bytes held by `value` and everything it reaches (each object and each buffer once); with
    `freeze`, every numpy array met is made read-only on the way. The walk stops as soon as the
    count passes `stop_above` (and returns the count so far)."""
    seen: set[int] = set()
    buffers: set[Hashable] = set()
    total = 0
    stack = [value]
    while stack and total <= stop_above:
        obj = stack.pop()
        if id(obj) in seen or _not_data(obj):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            if freeze:
                obj.setflags(write=False)
            total += sys.getsizeof(obj) - (obj.nbytes if obj.flags.owndata else 0)  # the header
            identity, size = _buffer(obj)
            if identity not in buffers:
                buffers.add(identity)
                total += size
            if obj.dtype == object:
                stack.extend(obj.ravel().tolist())
            continue
        total += sys.getsizeof(obj)
        if hasattr(obj, "untyped_storage"):  # a torch tensor: its storage, once however many views share it
            identity, size = _buffer(obj)
            if identity not in buffers:
                buffers.add(identity)
                total += size
            continue
        if isinstance(obj, (str, bytes, bytearray, int, float, complex, bool, type(None), np.generic)):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif (parts := _plotly_parts(obj)) is not None:
            stack.extend(parts)
        elif isinstance(obj, pd.DataFrame):
            total += int(obj.memory_usage(deep=True).sum())
        elif dataclasses.is_dataclass(obj):
            stack.extend(getattr(obj, f.name) for f in dataclasses.fields(obj))
        elif hasattr(obj, "__dict__"):
            stack.append(vars(obj))
    return total


def held_bytes(value: Any) -> int:
    """Bytes a value holds: numpy arrays and torch tensors by the buffers under them (a buffer shared by
    several arrays once), strings, containers, dataclasses and plain objects recursively.

    A plotly figure counts its traces' and layout's property dicts and the validated objects over
    them. Checked with tracemalloc on the app's kinds of figures (tests/app/test_cache.py): within 2x
    of what drawing one keeps allocated (0.96-1.12x measured, from small figures to a 300x300
    heatmap with a label in every cell).
    """
    return _walk(value, freeze=False)


def holds_more_than(value: Any, limit: int) -> bool:
    """True when `value` holds more than `limit` bytes (as held_bytes counts them), found without
    walking all of a large value."""
    return _walk(value, freeze=False, stop_above=limit) > limit


def model_bytes(bundle: Any) -> int:
    """Bytes of a loaded checkpoint's parameters and buffers (a tied matrix once): what a
    Bundle's torch module holds; its tokenizer and card are small beside them."""
    storages = {}
    for tensor in [*bundle.model.parameters(), *bundle.model.buffers()]:
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


def freeze(value: V) -> V:
    """Make every numpy array inside `value` read-only (in place) and return `value`."""
    _walk(value, freeze=True)
    return value


@dataclass
class _Flight:
    """One computation of a missing key that other threads asking for it wait on."""

    owner: int
    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    value: Any = None
    ok: bool = False


@dataclass(frozen=True)
class Stats:
    """What a cache holds and how it has been used."""

    entries: int
    bytes: int
    budget: int
    hits: int
    misses: int
    evictions: int
    not_kept: int


class ByteCache:
    """A thread-safe least-recently-used cache bounded by bytes.

    A hit returns the stored object itself. A value larger than the whole budget is returned but
    not kept, unless the cache keeps its last value whatever its size (`keep_last`, the models
    cache: a model larger than the budget, gpt2-medium or t5-base at 512 MiB, is then kept alone
    rather than loaded again at every page run). Threads asking at once for the same missing key
    compute it once (the others wait for that result); different keys compute in parallel. Evicting
    only drops the cache's reference: whoever holds a value keeps a valid one.
    """

    def __init__(
        self,
        name: str,
        budget: int,
        size: Callable[[Any], int] | None = None,
        read_only: bool = True,
        keep_last: bool = False,
        at_least: Callable[[], int] | None = None,
    ) -> None:
        self.name = name
        self._budget = budget
        self._at_least = at_least
        self._keep_last = keep_last
        self._size = size
        self._read_only = read_only
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._flights: dict[Hashable, _Flight] = {}
        self._bytes = 0
        self._hits = self._misses = self._evictions = self._not_kept = 0

    def get(
        self, key: Hashable, compute: Callable[[], V], waiting: Callable[[], AbstractContextManager] | None = None
    ) -> V:
        """The value stored under `key`, else compute() (once, however many threads ask), kept
        if it fits; `waiting()` is entered around computing or waiting for it (a spinner)."""
        while True:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None:
                    self._entries.move_to_end(key)
                    self._hits += 1
                    return entry[0]
                flight = self._flights.get(key)
                leader = flight is None
                if flight is None:
                    flight = self._flights[key] = _Flight(threading.get_ident())
                    self._misses += 1
            if leader:
                break
            if flight.owner == threading.get_ident():  # compute() asked for its own key: no deadlock
                return compute()
            with waiting() if waiting else nullcontext():
                flight.done.wait()
            if flight.ok:
                return flight.value
            # the computation failed (an error, or the thread was stopped): ask again, which makes
            # this thread or another the new leader
        try:
            with waiting() if waiting else nullcontext():
                value = compute()
            self._store(key, value, self._measure(value))
            flight.value, flight.ok = value, True
            return value
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()

    @property
    def budget(self) -> int:
        """Bytes the cache may hold: its budget, or what `at_least` says when that is more."""
        return max(self._budget, self._at_least()) if self._at_least is not None else self._budget

    @property
    def held(self) -> int:
        """Bytes the cache holds now."""
        with self._lock:
            return self._bytes

    def _measure(self, value: Any) -> int:
        """The value's size (held_bytes unless the cache was given its own measure), its arrays made
        read-only on the same walk."""
        if self._size is None:
            return _walk(value, freeze=self._read_only)
        if self._read_only:
            freeze(value)
        return self._size(value)

    def _store(self, key: Hashable, value: Any, size: int) -> None:
        budget = self.budget  # read before the lock: `at_least` may ask another cache
        with self._lock:
            if size > budget and not self._keep_last:
                self._not_kept += 1
                return
            self._entries[key] = (value, size)
            self._bytes += size
            while self._bytes > budget and len(self._entries) > 1:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped
                self._evictions += 1

    def clear(self) -> None:
        """Drop every entry (values already handed out stay valid)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def stats(self) -> Stats:
        """Entries, bytes held against the budget, and the counts of hits, misses and evictions."""
        budget = self.budget
        with self._lock:
            return Stats(
                len(self._entries), self._bytes, budget, self._hits, self._misses, self._evictions, self._not_kept
            )


def _models_held() -> int:
    return MODELS.held


MODELS = ByteCache("models", budget_bytes(MODELS_ENV), size=model_bytes, read_only=False, keep_last=True)
# Unset, the results budget grows to the bytes of the models loaded: a result's size follows its model's
# (a trace of 100 positions is 0.2 MiB on the shipped model, 140 MB at SmolLM2-135M's shapes, whose weights
# are 538 MB), and a budget smaller than one trace would compute it again at every page run, for a control
# that needs no model run as much as for a new sentence. Set, it is what it says.
RESULTS = ByteCache(
    "results", budget_bytes(RESULTS_ENV), at_least=None if os.environ.get(RESULTS_ENV, "").strip() else _models_held
)
FIGURES = ByteCache("figures", budget_bytes(FIGURES_ENV))


return_large_blocks()  # on import: before the first model or result is allocated in this process

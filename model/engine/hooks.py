"""Hook points, the Recorder that collects what passes through them during one call, and the
Patching that replaces what passes through them.

A HookPoint is an identity module; its name is its path in the model
(`decoder.layers.1.cross_attn.hook_pattern`). Nothing is ever stored on a module: the
active Recorder and Patching live in context variables, so each thread (each Streamlit session)
sees only its own, and the one cached model serves all of them at once. A patched value is what
the model goes on with and what a Recorder active at the same time records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import torch
from torch import nn

V = TypeVar("V")

_ACTIVE: ContextVar[Recorder | None] = ContextVar("anatomy_recorder", default=None)
_PATCHING: ContextVar[Patching | None] = ContextVar("anatomy_patching", default=None)


class Recorder:
    """Collects named tensors in execution order while it is active; with `skip`, the names it leaves
    out (they are in `fired` still, with the names kept, in execution order)."""

    def __init__(self, keep_grad: bool = False, skip: frozenset[str] | None = None) -> None:
        self.tensors: dict[str, torch.Tensor] = {}
        self.keep_grad = keep_grad
        self.skip = skip
        self.fired: list[str] = []  # every name that fired, kept or not (kept up with `skip` only)

    def wants(self, name: str) -> bool:
        """True when this recorder keeps what hook point `name` sees."""
        return self.skip is None or name not in self.skip

    def record(self, name: str, x: torch.Tensor) -> None:
        """Keep `x` under `name` (detached and on the CPU, unless the recorder keeps gradients);
        a name may fire once per pass.

        No copy is made: the model never changes a tensor in place after it passed a hook.
        """
        if self.skip is not None:
            self.fired.append(name)
            if name in self.skip:
                return
        if name in self.tensors:
            raise RuntimeError(f"hook point {name!r} fired twice in one recorded pass")
        self.tensors[name] = x if self.keep_grad else x.detach().cpu()


def sequence_axis(x: torch.Tensor) -> int:
    """The axis of positions in a recorded tensor: 1 for (batch, positions, ...) and 2 for the
    per-head (batch, heads, positions, ...) tensors of attention (queries for scores and patterns)."""
    return 2 if x.dim() == 4 else 1


@dataclass(frozen=True)
class Patch:
    """What replaces the activation at one hook point: `value` is a whole activation of that hook
    point (another sentence's, say); at `positions` (along `sequence_axis`), or everywhere when
    None, the activation takes value's entries. Every other axis must match."""

    value: torch.Tensor
    positions: Sequence[int] | None = None


class Patching:
    """Replaces activations at named hook points while it is active; `applied` names the hook
    points that fired and were replaced (a name that never fired is not there)."""

    def __init__(self, patches: Mapping[str, Patch]) -> None:
        self.patches = dict(patches)
        self.applied: set[str] = set()

    def apply(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """The activation the model goes on with at hook point `name`."""
        patch = self.patches.get(name)
        if patch is None:
            return x
        value = patch.value.to(device=x.device, dtype=x.dtype)
        if patch.positions is None:
            if value.shape != x.shape:
                raise ValueError(
                    f"patch for {name}: shape {tuple(value.shape)} is not the activation's {tuple(x.shape)}"
                )
            patched = value
        else:
            axis = sequence_axis(x)
            if value.dim() != x.dim() or any(value.size(d) != x.size(d) for d in range(x.dim()) if d != axis):
                raise ValueError(
                    f"patch for {name}: shape {tuple(value.shape)} does not fit the activation's "
                    f"{tuple(x.shape)} outside axis {axis}"
                )
            limit = min(value.size(axis), x.size(axis))
            if any(not 0 <= p < limit for p in patch.positions):
                raise ValueError(f"patch for {name}: positions must exist in both ({limit} do)")
            index = torch.tensor(list(patch.positions), dtype=torch.long, device=x.device)
            patched = x.index_copy(axis, index, value.index_select(axis, index))
        self.applied.add(name)
        return patched


@contextmanager
def _set(variable: ContextVar[V | None], value: V | None) -> Iterator[V | None]:
    """`variable` holds `value` for the duration of the `with` block in this thread only."""
    token = variable.set(value)
    try:
        yield value
    finally:
        variable.reset(token)


@contextmanager
def patching(patches: Mapping[str, Patch]) -> Iterator[Patching]:
    """Activate these patches for the duration of the `with` block in this thread only."""
    patcher = Patching(patches)
    with _set(_PATCHING, patcher):
        yield patcher


@contextmanager
def recording(keep_grad: bool = False, recorder: Recorder | None = None) -> Iterator[Recorder]:
    """Activate a fresh Recorder (or `recorder`, to read after the block) for the duration of the
    `with` block in this thread only; with `keep_grad`, recorded tensors stay in the autograd graph
    (for gradients with respect to them)."""
    active = recorder if recorder is not None else Recorder(keep_grad)
    with _set(_ACTIVE, active):
        yield active


class _Reached(Exception):
    """The hook point a `recorded_at` pass waits for has fired: the pass ends there."""


class _Until(Recorder):
    """Keeps one hook point's tensor and ends the pass as soon as it has it."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def record(self, name: str, x: torch.Tensor) -> None:
        """Keep `x` if it is the wanted hook point's, and stop the pass there."""
        if name == self.name:
            super().record(name, x)
            raise _Reached


def recorded_at(name: str, run: Callable[[], object]) -> torch.Tensor:
    """What hook point `name` sees when `run()` makes a pass, the pass stopped right after it: the
    layers after it never run (one layer's attention at a fraction of a whole pass). The tensor is the
    one a recording of the whole pass holds, since nothing after a hook point changes what reached it.
    ValueError when `run()` ends without the hook point firing."""
    until = _Until(name)
    try:
        with recording(recorder=until):
            run()
    except _Reached:
        return until.tensors[name]
    raise ValueError(f"hook point {name!r} never fired in this pass")


def not_recording() -> AbstractContextManager[Recorder | None]:
    """Suspend any active Recorder (decoding steps are not part of the trace)."""
    return _set(_ACTIVE, None)


def active_recorder() -> Recorder | None:
    """The Recorder active in this thread, if any."""
    return _ACTIVE.get()


class HookPoint(nn.Module):
    """Identity module marking one stage: hands its input to the active Patching, then what it
    returns to the active Recorder."""

    def __init__(self) -> None:
        super().__init__()
        self.name = ""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        patches = _PATCHING.get()
        if patches is not None:
            x = patches.apply(self.name, x)
        recorder = _ACTIVE.get()
        if recorder is not None:
            recorder.record(self.name, x)
        return x

    # nn.Module.__call__ machinery costs more than this forward, and hook points run
    # hundreds of times per translation; they never carry torch hooks of their own.
    __call__ = forward


def watched(*names: str) -> bool:
    """True while a Patching is active in this context, or a Recorder that keeps any of `names` (any
    Recorder, without names): hook points then see their tensors."""
    if _PATCHING.get() is not None:
        return True
    recorder = _ACTIVE.get()
    return recorder is not None and (not names or any(recorder.wants(name) for name in names))


def name_hook_points(model: nn.Module) -> list[str]:
    """Give every HookPoint its module path as name; return the names in definition order."""
    names = []
    for name, module in model.named_modules():
        if isinstance(module, HookPoint):
            module.name = name
            names.append(name)
    return names

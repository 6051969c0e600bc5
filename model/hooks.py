"""Hook points and the Recorder that collects what passes through them during one call.

A HookPoint is an identity module; its name is its path in the model
(`decoder.layers.1.cross_attn.hook_pattern`). Nothing is ever stored on a module: the
active Recorder lives in a context variable, so each thread (each Streamlit session) sees
only its own recorder, and the one cached model serves all of them at once.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

import torch
from torch import nn

_ACTIVE: ContextVar["Recorder | None"] = ContextVar("anatomy_recorder", default=None)


class Recorder:
    """Collects named tensors in execution order while it is active."""

    def __init__(self) -> None:
        self.tensors: dict[str, torch.Tensor] = {}

    def record(self, name: str, x: torch.Tensor) -> None:
        """Keep `x` (detached, on the CPU) under `name`; a name may fire once per pass.

        No copy is made: the model never changes a tensor in place after it passed a hook.
        """
        if name in self.tensors:
            raise RuntimeError(f"hook point {name!r} fired twice in one recorded pass")
        self.tensors[name] = x.detach().cpu()


@contextmanager
def recording() -> Iterator[Recorder]:
    """Activate a fresh Recorder for the duration of the `with` block in this thread only."""
    recorder = Recorder()
    token = _ACTIVE.set(recorder)
    try:
        yield recorder
    finally:
        _ACTIVE.reset(token)


@contextmanager
def not_recording() -> Iterator[None]:
    """Suspend any active Recorder (decoding steps are not part of the trace)."""
    token = _ACTIVE.set(None)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_recorder() -> Recorder | None:
    """The Recorder active in this thread, if any."""
    return _ACTIVE.get()


class HookPoint(nn.Module):
    """Identity module marking one stage; hands its input to the active Recorder."""

    def __init__(self) -> None:
        super().__init__()
        self.name = ""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        recorder = _ACTIVE.get()
        if recorder is not None:
            recorder.record(self.name, x)
        return x

    # nn.Module.__call__ machinery costs more than this forward, and hook points run
    # hundreds of times per translation; they never carry torch hooks of their own.
    __call__ = forward


def name_hook_points(model: nn.Module) -> list[str]:
    """Give every HookPoint its module path as name; return the names in definition order."""
    names = []
    for name, module in model.named_modules():
        if isinstance(module, HookPoint):
            module.name = name
            names.append(name)
    return names

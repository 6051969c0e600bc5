"""Figures drawn once and shared by every session: a cache bounded in bytes ($ANATOMY_FIGURES_MB, see
ui/session/cache.py) keyed on the drawing function, the language of its words and a hash of every input it
is given (a page's own controls included), so one session's picture can never be another's. Figures are only
read when shown, never changed after drawing: their margins are fitted to their words before they are shared
(viz/margins.py)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from i18n import language
from ui.session.cache import FIGURES
from viz.margins import fitted


class _Hasher(Protocol):
    """What a key is fed to: any hashlib object (blake2b here)."""

    def update(self, data: bytes, /) -> None:
        """Add bytes to what is hashed."""


def _feed(hasher: _Hasher, value: Any) -> None:
    """Everything a figure is drawn from, into the hash, each value behind a tag of its kind and its
    size (so no two different inputs make the same stream): arrays by their bytes, containers item by
    item, plain values by repr."""

    def tag(kind: str, size: int) -> None:
        hasher.update(f"<{kind}:{size}>".encode())

    if isinstance(value, np.ndarray) and value.dtype != object:  # an object array's bytes are pointers
        data = np.ascontiguousarray(value).tobytes()
        tag(f"array{value.dtype}{value.shape}", len(data))
        hasher.update(data)
    elif isinstance(value, (list, tuple)):
        tag(type(value).__name__, len(value))
        for item in value:
            _feed(hasher, item)
    elif isinstance(value, (set, frozenset)):
        tag("set", len(value))
        _feed(hasher, sorted(value, key=repr))
    elif isinstance(value, dict):
        tag("dict", len(value))
        _feed(hasher, sorted(value.items(), key=lambda item: repr(item[0])))
    elif isinstance(value, pd.DataFrame):
        tag("frame", len(value))
        _feed(hasher, [list(map(str, value.columns)), pd.util.hash_pandas_object(value).to_numpy()])
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        tag(type(value).__qualname__, len(dataclasses.fields(value)))
        _feed(hasher, [getattr(value, f.name) for f in dataclasses.fields(value)])
    elif isinstance(value, (str, int, float, bool, np.generic, type(None))):
        text = repr(value)
        tag(type(value).__name__, len(text))
        hasher.update(text.encode())
    else:
        raise TypeError(f"cannot key a shared figure on a {type(value).__name__}")


def shared(draw: Callable[..., go.Figure], *args: Any, **kwargs: Any) -> go.Figure:
    """draw(*args, **kwargs), drawn once per function and inputs and shared by every session: a
    switch that changes only the decoder redraws none of the encoder's figures, and twenty people
    on the same sentence get one set of figures."""
    hasher = hashlib.blake2b(f"{draw.__module__}.{draw.__qualname__}@{language()}".encode(), digest_size=20)
    _feed(hasher, (args, kwargs))
    return FIGURES.get(hasher.hexdigest(), lambda: fitted(draw(*args, **kwargs)))

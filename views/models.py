"""The models of the app's Model menu, opened once per process: what a notebook and the app's pages share."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from model import Bundle, load_bundle
from model.checkpoints.catalog import DEFAULT, available_models

CHECKPOINT_ENV = "ANATOMY_CHECKPOINT"


def checkpoint_path() -> str:
    """The checkpoint directory from $ANATOMY_CHECKPOINT ('' means the shipped default model)."""
    return os.environ.get(CHECKPOINT_ENV, "").strip()


def menu_models() -> dict[str, str]:
    """Model name -> checkpoint directory or GGUF file, in the Model menu's order ('default' is
    $ANATOMY_CHECKPOINT or the shipped model). Read afresh on every call: a folder added to models/ shows at once."""
    found = available_models()
    found[DEFAULT] = checkpoint_path()
    return found


def model_path(name: str | None) -> str:
    """The checkpoint of a model named in the menu (None or 'default': the shipped model, '' for it); a name the
    menu does not hold is refused with the names it does."""
    if name is None or name == DEFAULT:
        return checkpoint_path()
    known = menu_models()
    if name not in known:
        raise ValueError(f"no model named {name!r} in the Model menu; known: {', '.join(known)}")
    return known[name]


_OPEN: dict[str, Bundle] = {}
_LOCK = threading.Lock()


def open_model(name: str | None = None, progress: Callable[[float, str], None] | None = None) -> Bundle:
    """A model of the menu, loaded once per process and shared (a Bundle is safe to use from many threads)."""
    path = model_path(name)
    with _LOCK:
        if path not in _OPEN:
            _OPEN[path] = load_bundle(path or None, progress=progress)
        return _OPEN[path]

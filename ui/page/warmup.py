"""Load torch, the model and the default translation while the server starts.

`streamlit run serve.py` (./app.sh) runs `lifespan` once, at server start. It begins the
warm-up in a background thread, so the server answers at once, and the first visitor does not
wait for torch to import (about 1.5 s here). `app.py` calls `wait()` before importing anything
heavy, so an early visitor never imports the same modules as the warm-up thread at the same
time. Without the launcher (`streamlit run app.py`, AppTest) `wait()` returns at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

THREAD_NAME = "anatomy-warm-up"
_LOG = logging.getLogger(__name__)
_thread: threading.Thread | None = None


class _NoContextWarning(logging.Filter):
    """Drop Streamlit's 'missing ScriptRunContext' warning for the warm-up thread only: it runs
    cached functions outside any session on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName == THREAD_NAME and "ScriptRunContext" in record.getMessage())


def _warm_up() -> None:
    started = time.monotonic()
    try:
        from model import AnatomyError, InputError, Interventions
        from ui.page import start  # noqa: F401 (what every page imports, imported here first)
        from ui.session import engine
        from views.controls import chat_offered, examples_for

        try:
            bundle = engine.get_bundle(engine.checkpoint_path())
            chat = chat_offered(bundle)
            first = examples_for(chat)[0]
            try:  # what the first page shows: an instruct model's answer to its first question
                engine.translate(bundle, first, Interventions(), chat=chat)
            except InputError:  # a chat template that cannot wrap it: the pages read the plain prompt
                engine.translate(bundle, first, Interventions())
        except AnatomyError as exc:  # the page shows the same message to the visitor
            print(f"Warm-up could not load the model: {exc}", flush=True)
            return
    except Exception:  # a bug, not bad input: keep the traceback in the server log
        _LOG.exception("warm-up failed")
        return
    print(f"Model loaded and the first page prepared in {time.monotonic() - started:.1f} s.", flush=True)


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """st.App lifespan hook: start the warm-up and let the server answer meanwhile."""
    global _thread
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_NoContextWarning())
    _thread = threading.Thread(target=_warm_up, name=THREAD_NAME, daemon=True)
    _thread.start()
    yield


def wait(timeout: float = 120.0) -> None:
    """Block until the warm-up (if one was started) has finished."""
    if _thread is not None:
        _thread.join(timeout)


def running() -> bool:
    """True while the warm-up started at server start is still running (it computes a model result)."""
    return _thread is not None and _thread.is_alive()

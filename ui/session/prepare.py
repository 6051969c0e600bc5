"""What the next view of a talk needs, made ready while the current one is shown (ui/page/talk.py): its model loaded
and its main result (the translation, continuation or encoding with its trace) computed into the shared caches
under the key its page will ask for, so that a press shows the next view without waiting for either.

One worker thread for the process does it, in the background and outside any page run (like ui/page/warmup.py);
only the newest request waits, so a lecturer who presses on quickly never queues work for views already passed.
An error is left for the page to say when it runs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from model import AnatomyError
from model.checkpoints.catalog import DEFAULT
from ui.session import engine
from views.pages import controls_for, page_fields, page_module

THREAD_NAME = "anatomy-prepare"
_LOG = logging.getLogger(__name__)
_wanted: list[tuple[str, dict[str, str]]] = []  # the newest request only
_changed = threading.Condition()
_worker: threading.Thread | None = None


def soon(page: str, query: Mapping[str, str]) -> None:
    """Prepare the view of `page` at the address `query` (its URL controls) in the background."""
    global _worker
    with _changed:
        _wanted[:] = [(page, dict(query))]
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name=THREAD_NAME, daemon=True)
            _worker.start()
        _changed.notify()


def _work() -> None:
    while True:
        with _changed:
            if not _changed.wait_for(lambda: bool(_wanted), timeout=60.0):
                return  # idle for a minute: the next request starts a new worker
            page, query = _wanted.pop()
        try:
            prepare(page, query)
        except (AnatomyError, ValueError) as error:  # the page says it when it runs
            _LOG.info("could not prepare %s: %s", page, error)


def prepare(page: str, query: Mapping[str, str]) -> None:
    """Load the view's model and compute its main result into the caches, as its page will ask for them."""
    bundle = engine.get_bundle(engine.model_path(query.get("model", DEFAULT)))
    module = page_module(page)
    known = {field.key for field in page_fields(module, bundle)}
    _values, controls, _why = controls_for(module, bundle, {k: v for k, v in query.items() if k in known}, strict=False)
    if not getattr(module, "NEEDS_RESULT", True) or not controls.sentence.strip():
        return
    iv = controls.interventions()
    if bundle.capabilities.encoder_only:
        engine.encode(bundle, controls.sentence, iv)
    else:
        engine.translate(bundle, controls.sentence, iv, controls.options(), True, chat=controls.chat)

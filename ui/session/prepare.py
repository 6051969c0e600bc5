"""What the next view of a talk needs, made ready while the current one is shown (ui/page/talk.py): its model loaded,
its main result (the translation, continuation or encoding with its trace) computed and its page's figures drawn,
into the shared caches under the keys its page will ask for, so that a press shows the next view without waiting
for any of them.

One worker thread for the process does it, in the background and outside any page run (like ui/page/warmup.py);
only the newest request waits, so a lecturer who presses on quickly never queues work for views already passed.
An error is left for the page to say when it runs.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping

from i18n import speaking
from model import AnatomyError, EncodeResult, TranslationResult
from model.checkpoints.catalog import DEFAULT
from ui.session import engine, figures
from views.controls import LANGUAGE
from views.pages import controls_for, page_fields, page_module
from views.scene import Scene

THREAD_NAME = "anatomy-prepare"
ENV = "ANATOMY_PREPARE"
_LOG = logging.getLogger(__name__)
_wanted: list[tuple[str, dict[str, str]]] = []  # the newest request only
_changed = threading.Condition()
_worker: threading.Thread | None = None


def soon(page: str, query: Mapping[str, str]) -> None:
    """Prepare the view of `page` at the address `query` (its URL controls) in the background ($ANATOMY_PREPARE=off:
    never, for bench/talk_presses.py to measure what it saves)."""
    global _worker
    if os.environ.get(ENV, "").strip().lower() == "off":
        return
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
        except Exception:  # a warm-up only: the page computes whatever is missing, and says what fails
            _LOG.exception("preparing %s failed", page)


def prepare(page: str, query: Mapping[str, str]) -> None:
    """Load the view's model and compute its main result into the caches, as its page will ask for them."""
    bundle = engine.get_bundle(engine.model_path(query.get("model", DEFAULT)))
    module = page_module(page)
    known = {field.key for field in page_fields(module, bundle)}
    values, controls, _why = controls_for(module, bundle, {k: v for k, v in query.items() if k in known}, strict=False)
    result: TranslationResult | EncodeResult | None = None
    if getattr(module, "NEEDS_RESULT", True) and controls.sentence.strip():
        iv = controls.interventions()
        if bundle.capabilities.encoder_only:
            result = engine.encode(bundle, controls.sentence, iv)
        else:
            result = engine.translate(bundle, controls.sentence, iv, controls.options(), True, chat=controls.chat)
    with speaking(values[LANGUAGE.key]):  # its figures, into the shared figures cache, as its page draws them
        list(module.panels(Scene(bundle, controls, result, values, draw=figures.shared)))

"""The launcher ./app.sh runs (`streamlit run serve.py`): it loads the model before anyone asks."""

import asyncio
import time

import pytest
from live_server import running_app
from st_session import Session

pytestmark = pytest.mark.slow


def _wait_for_log(app, text: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = app.log.read_text()
        if text in log:
            return log
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared in the server log:\n{app.log.read_text()[-2000:]}")


def _first_run(url: str, page: str = "translate"):
    async def visit():
        async with Session(url) as session:
            return await session.run(page, "")

    return asyncio.run(visit())


def test_the_model_is_loaded_at_start_and_the_first_visitor_gets_the_page(tiny_checkpoint):
    with running_app(tiny_checkpoint) as app:
        log = _wait_for_log(app, "Model loaded and the first page prepared")
        run = _first_run(app.url)
    assert not run.errors, run.errors
    assert run.charts, "the Translate page drew no chart"
    assert "Traceback" not in log and "missing ScriptRunContext" not in log, log


def test_a_missing_checkpoint_is_reported_in_the_console_and_readably_in_the_page(tmp_path):
    with running_app(tmp_path / "nowhere") as app:
        log = _wait_for_log(app, "Warm-up could not load the model")
        run = _first_run(app.url)
    assert "Traceback" not in log, log
    assert not [content for kind, content in run.elements if kind == "exception"]
    assert any(kind == "alert" and "does not exist" in content for kind, content in run.elements), run.elements

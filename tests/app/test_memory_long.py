"""Open tabs with pasted paragraphs: each tab keeps its page on the screen, none keeps the page's data.

A tab's session outlives its page run (Streamlit keeps its widgets' labels and callbacks, and through
them the page script's names), so a page that left a trace in its names pinned one copy per open tab
of a result the shared cache could not keep. Here every result is larger than the results budget, so
nothing but the open tabs could hold one; what the server may grow by is the budgets and a fixed
allowance, however many tabs are open.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import AsyncExitStack
from urllib.parse import urlencode

import pytest
from live_server import ROOT, rss_mib, running_app
from st_session import Session

sys.path.insert(0, str(ROOT / "bench"))
from chart_bytes import paragraph

pytestmark = pytest.mark.slow

MODEL = "all-MiniLM-L6-v2"  # about 430 pieces in 2,000 characters: a trace of about 165 MiB
BUDGETS_MIB = {"ANATOMY_RESULTS_MB": 32, "ANATOMY_FIGURES_MB": 16}
PAGES = ("attention", "positional_encoding", "masks_and_heads", "tensor_shapes")
# Measured on 2 cores with four tabs: growth 51-81 MiB; when pages kept their names, 996 MiB.
ALLOWANCE_MIB = 200


async def _open_tabs(url: str, pid: int) -> tuple[float, float, list[str]]:
    async with Session(url) as warm:
        await warm.run("translate", urlencode({"model": MODEL, "sentence": "The cat sleeps."}))
    start = rss_mib(pid)
    errors: list[str] = []
    async with AsyncExitStack() as tabs:
        for n, page in enumerate(PAGES):
            tab = await tabs.enter_async_context(Session(url, timeout=600))
            run = await tab.run(page, urlencode({"model": MODEL, "sentence": paragraph(2000, variant=11 * n + 3)}))
            errors += [f"{page}: {e}" for e in run.errors]
            assert run.charts, f"{page} drew no chart"
        return start, rss_mib(pid), errors  # every tab still open


def test_open_tabs_with_pasted_paragraphs_keep_no_results():
    with running_app(None, env={name: str(mib) for name, mib in BUDGETS_MIB.items()}) as app:
        start, end, errors = asyncio.run(_open_tabs(app.url, app.pid))
    print(f"rss {start:.0f} -> {end:.0f} MiB with {len(PAGES)} tabs open")
    assert not errors, errors[:3]
    assert end - start <= sum(BUDGETS_MIB.values()) + ALLOWANCE_MIB, (start, end)

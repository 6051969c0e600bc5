"""Memory and bytes for pasted paragraphs: one real server, paragraphs opened one after another on every page.

    python bench/bench_paragraphs.py [--model all-MiniLM-L6-v2] [--paragraphs 3] [--chars 2000] [--pages attention,...]
    python bench/bench_paragraphs.py --tabs 6 [--pages masks_and_heads,...]

A browser-less session (Streamlit's own websocket protocol) opens each page with a different
paragraph of --chars characters, as a room pasting its own text would; the server's RSS is read
after the model is loaded and after each paragraph. Prints the growth per paragraph, the bytes
every page sent, and a last line `paragraphs: model=M n=N rss_start=A rss_end=B growth=G
largest_page_mb=X` (MiB, whole numbers).

With --tabs N, N tabs open a page at the same moment, each with its own paragraph, page after page;
the server's RSS is sampled every 50 ms. One line per page: `tabs: page=P n=N rss_start=A
rss_peak=B rss_end=C seconds=S` (MiB, whole numbers; seconds until the last tab had its page).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from urllib.parse import urlencode

from chart_bytes import paragraph
from common import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from live_server import rss_mib, running_app
from st_session import Session

PAGES = ("translate", "attention", "positional_encoding", "tensor_shapes", "masks_and_heads", "design_choices")


async def _measure(url: str, pid: int, model: str, count: int, chars: int, pages: tuple[str, ...]) -> None:
    async with Session(url) as session:
        await session.run("translate", urlencode({"model": model, "sentence": "The cat sleeps."}))
    start = rss_mib(pid)
    print(f"model {model} loaded: RSS {start:.0f} MiB")
    largest = 0.0
    for n in range(count):
        text = paragraph(chars, variant=7 * n + 1)
        sent = {}
        for page in pages:
            async with Session(url, timeout=600) as session:
                run = await session.run(page, urlencode({"model": model, "sentence": text}))
            if run.errors:
                raise RuntimeError(f"{page}: {run.errors[:2]}")
            sent[page] = sum(len(spec) for spec in run.charts) / 1e6
        largest = max(largest, *sent.values())
        print(
            f"paragraph {n + 1} ({len(text)} characters): RSS {rss_mib(pid):.0f} MiB; chart MB per page: "
            + ", ".join(f"{page} {mb:.2f}" for page, mb in sent.items())
        )
    end = rss_mib(pid)
    print(
        f"paragraphs: model={model} n={count} rss_start={start:.0f} rss_end={end:.0f} growth={end - start:.0f} "
        f"largest_page_mb={largest:.1f}"
    )


async def _tab(url: str, page: str, query: str) -> list[str]:
    async with Session(url, timeout=900) as session:
        return (await session.run(page, query)).errors


def _sample_peak(pid: int, peak: list[float], stop: threading.Event) -> None:
    """Keep the process's largest resident size in peak[0] until `stop` is set."""
    while not stop.is_set():
        peak[0] = max(peak[0], rss_mib(pid))
        time.sleep(0.05)


async def _burst(url: str, pid: int, model: str, tabs: int, chars: int, pages: tuple[str, ...]) -> None:
    async with Session(url) as session:
        await session.run("translate", urlencode({"model": model, "sentence": "The cat sleeps."}))
    for round_, page in enumerate(pages):
        start, peak, sampling = rss_mib(pid), [0.0], threading.Event()

        sampler = threading.Thread(target=_sample_peak, args=(pid, peak, sampling))
        sampler.start()
        began = time.perf_counter()
        queries = [
            urlencode({"model": model, "sentence": paragraph(chars, variant=13 * (round_ * tabs + n) + 5)})
            for n in range(tabs)
        ]
        errors = await asyncio.gather(*[_tab(url, page, query) for query in queries])
        seconds = time.perf_counter() - began
        sampling.set()
        sampler.join()
        if any(errors):
            raise RuntimeError(f"{page}: {[e for e in errors if e][:2]}")
        print(
            f"tabs: page={page} n={tabs} rss_start={start:.0f} rss_peak={peak[0]:.0f} "
            f"rss_end={rss_mib(pid):.0f} seconds={seconds:.1f}",
            flush=True,
        )


def main() -> None:
    """Start a server, open the paragraphs, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--paragraphs", type=int, default=3)
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated page paths")
    parser.add_argument("--tabs", type=int, default=0, help="open each page in this many tabs at once")
    args = parser.parse_args()
    pages = tuple(args.pages.split(","))
    with running_app(None) as app:
        if args.tabs:
            asyncio.run(_burst(app.url, app.pid, args.model, args.tabs, args.chars, pages))
        else:
            asyncio.run(_measure(app.url, app.pid, args.model, args.paragraphs, args.chars, pages))


if __name__ == "__main__":
    main()

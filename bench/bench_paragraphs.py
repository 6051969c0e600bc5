"""Memory and bytes for pasted paragraphs: one real server, paragraphs opened one after another on every page.

    python bench/bench_paragraphs.py [--model all-MiniLM-L6-v2] [--paragraphs 3] [--chars 2000] [--pages attention,...]

A browser-less session (Streamlit's own websocket protocol) opens each page with a different
paragraph of --chars characters, as a room pasting its own text would; the server's RSS is read
after the model is loaded and after each paragraph. Prints the growth per paragraph, the bytes
every page sent, and a last line `paragraphs: model=M n=N rss_start=A rss_end=B growth=G
largest_page_mb=X` (MiB, whole numbers).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from urllib.parse import urlencode

from chart_bytes import paragraph
from common import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from live_server import rss_mib, running_app  # noqa: E402
from st_session import Session  # noqa: E402

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
        print(f"paragraph {n + 1} ({len(text)} characters): RSS {rss_mib(pid):.0f} MiB; chart MB per page: "
              + ", ".join(f"{page} {mb:.2f}" for page, mb in sent.items()))
    end = rss_mib(pid)
    print(f"paragraphs: model={model} n={count} rss_start={start:.0f} rss_end={end:.0f} growth={end - start:.0f} "
          f"largest_page_mb={largest:.1f}")


def main() -> None:
    """Start a server, open the paragraphs, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--paragraphs", type=int, default=3)
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated page paths")
    args = parser.parse_args()
    with running_app(None) as app:
        asyncio.run(_measure(app.url, app.pid, args.model, args.paragraphs, args.chars,
                            tuple(args.pages.split(","))))


if __name__ == "__main__":
    main()

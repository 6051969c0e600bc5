"""What a new prompt costs the browser and the server, page by page, on a real model in chromium at 1440x900.

    python bench/browser_work.py [--model smollm2-135m-instruct] [--pieces 80] [--pages attention,translate]
                                 [--repeats 3] [--pin]

For each page it opens the page on a first prompt, waits until chromium has drawn it (nothing changed for 1 s),
then types a new prompt of about --pieces pieces (a chat message for an instruct decoder, as
bench/first_picture.py makes them) and presses Enter, and measures until the page has changed nothing for 1 s:

  browser cpu   CPU seconds of every chromium process (user + system, from /proc, children reaped included)
  renderer, gpu the same, of the pages' renderer processes and of the GPU process (which rasters without a GPU)
  server cpu    CPU seconds of the Streamlit server's process (all its threads)
  settled       Enter to the page's last change, seconds
  server run    the page run's start to its end, seconds (the server's events, ui/page/stream.py)
  charts        plotly charts on the finished page, and the SVG text elements inside them
  received      bytes the browser received over Streamlit's websocket for the run

Medians over --repeats new prompts. Idle, the same finished page is watched for --idle seconds as well: its
browser CPU then is what the page costs when nothing happens (an animation, a timer).

--pin runs chromium on the first core and the server on the second (a laptop's browser and a server apart);
without it both share both cores, as on a laptop.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))  # the browser tests' helpers
sys.path.insert(0, str(ROOT / "bench"))

from first_picture import SETTLED, chats, prompts, wait_finished  # noqa: E402
from live_server import running_app  # noqa: E402
from test_browser import CHROMIUM, FLAGS  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
CHARTS = """() => ({charts: document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot').length,
  texts: document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot svg text').length})"""


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # after the command's name, which may hold spaces


def parents() -> dict[int, int]:
    """Every live process's parent."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields:
                found[int(entry.name)] = int(fields[1])
    return found


def descendants(root: int) -> list[int]:
    tree = parents()
    return [pid for pid in tree if _descends(pid, root, tree)]


def _descends(pid: int, root: int, tree: dict[int, int]) -> bool:
    while pid in tree and pid > 1:
        pid = tree[pid]
        if pid == root:
            return True
    return False


def chromium_pids(kind: str | None = None) -> list[int]:
    """This process's chromium processes (playwright's driver starts them); with `kind`, those of one --type
    ("renderer", "gpu-process", "utility"; "browser" is the one without a type)."""
    found = []
    for pid in descendants(os.getpid()):
        try:
            # a child process rewrites its command line as one string, words apart by spaces
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
        except OSError:
            continue
        if b"chrom" not in Path(command[0].decode(errors="replace")).name.encode():
            continue
        types = [part.split(b"=", 1)[1].decode() for part in command if part.startswith(b"--type=")]
        if kind is None or (types[0] if types else "browser") == kind:
            found.append(pid)
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of `pids` and of their children they have reaped."""
    total = 0
    for pid in pids:
        fields = _stat(pid)
        if fields:
            total += sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    return total / TICKS


def pin(pids: list[int], core: int) -> None:
    """Run every thread of `pids` on `core` (threads and processes they start later inherit it)."""
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError):  # a thread that has ended meanwhile
                os.sched_setaffinity(int(task.name), {core})


class Received:
    """Bytes the page receives over its websockets."""

    def __init__(self, page) -> None:
        self.bytes = 0
        page.on("websocket", self._watch)

    def _watch(self, socket) -> None:
        socket.on("framereceived", lambda payload: self._add(payload))

    def _add(self, payload: str | bytes) -> None:
        self.bytes += len(payload)


def measure(
    page, received: Received, app, slug: str, model: str, texts: tuple[str, str], log: Path, box: str, idle: float
) -> dict:
    """One new prompt (`texts`: the first prompt, then the new one) on one page: the browser's and the server's CPU,
    the times, what the page holds."""
    first, prompt = texts
    since = time.time()
    page.goto(f"{app.url}/{slug}?model={model}&sentence={first.replace(' ', '+')}")
    wait_finished(log, since)
    page.evaluate(SETTLED, [1000, 60000])
    text_box = page.locator(f"[data-testid='stSidebar'] input[aria-label='{box}']")
    text_box.fill(prompt)
    browser_before, server_before, bytes_before = cpu_seconds(chromium_pids()), cpu_seconds([app.pid]), received.bytes
    renderer_before, gpu_before = cpu_seconds(chromium_pids("renderer")), cpu_seconds(chromium_pids("gpu-process"))
    enter = time.time()
    text_box.press("Enter")
    seen = wait_finished(log, enter)
    quiet = page.evaluate(SETTLED, [1000, 120000]) / 1000
    settled = time.time() - enter - min(quiet, 1.0)
    row = {
        "browser cpu": cpu_seconds(chromium_pids()) - browser_before,
        "renderer cpu": cpu_seconds(chromium_pids("renderer")) - renderer_before,
        "gpu cpu": cpu_seconds(chromium_pids("gpu-process")) - gpu_before,
        "server cpu": cpu_seconds([app.pid]) - server_before,
        "settled": settled,
        "server run": max(e["t"] for e in seen if e["event"] == "finished")
        - min(e["t"] for e in seen if e["event"] == "run"),
        "received": received.bytes - bytes_before,
        **page.evaluate(CHARTS),
    }
    idle_before = cpu_seconds(chromium_pids())
    time.sleep(idle)
    row["idle cpu"] = cpu_seconds(chromium_pids()) - idle_before
    return row


COLUMNS = [  # key, heading, width, format
    ("browser cpu", "browser cpu", 11, ".2f"),
    ("renderer cpu", "renderer", 8, ".2f"),
    ("gpu cpu", "gpu", 5, ".2f"),
    ("server cpu", "server cpu", 10, ".2f"),
    ("settled", "settled", 8, ".2f"),
    ("server run", "server run", 10, ".2f"),
    ("charts", "charts", 6, ".0f"),
    ("texts", "svg texts", 9, ".0f"),
    ("received", "received kB", 11, ".0f"),
    ("idle cpu", "idle cpu", 8, ".2f"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--pieces", type=int, default=80)
    parser.add_argument("--pages", default="attention,translate,tensor_shapes,why")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--idle", type=float, default=4.0, help="seconds the finished page is watched idle")
    parser.add_argument("--pin", action="store_true", help="chromium on one core, the server on the other")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from model import load_bundle
    from model.checkpoints.catalog import available_models

    bundle = load_bundle(available_models()[args.model])
    slugs = args.pages.split(",")
    texts = prompts(bundle, args.pieces, 1 + args.repeats * len(slugs))
    first, fresh = texts[0], iter(texts[1:])
    box = "Text to continue" if bundle.capabilities.decoder_only else "English sentence"
    print(f"{args.model}: prompts of {sorted({len(bundle.read_input(t, chat=chats(bundle))) for t in texts})} pieces")
    log = Path(tempfile.mkstemp(prefix="anatomy-stream-", suffix=".jsonl")[1])
    with running_app(None, env={"ANATOMY_STREAM_LOG": str(log)}) as app, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        received = Received(page)
        page.goto(app.url)
        if args.pin:
            pin(chromium_pids(), 0)
            pin([app.pid], 1)
        print(f"{'page':<14} " + " ".join(f"{heading:>{width}}" for _, heading, width, _ in COLUMNS))
        for slug in slugs:
            rows = [
                measure(page, received, app, slug, args.model, (first, next(fresh)), log, box, args.idle)
                for _ in range(args.repeats)
            ]
            cells = []
            for key, _, width, form in COLUMNS:
                value = statistics.median(r[key] for r in rows)
                cells.append(f"{value / 1000 if key == 'received' else value:>{width}{form}}")
            print(f"{slug:<14} " + " ".join(cells), flush=True)
        browser.close()


if __name__ == "__main__":
    main()

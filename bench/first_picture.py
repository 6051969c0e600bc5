"""How long a person waits for a new prompt's first picture on a real model, and how the continuation grows,
in chromium at 1440x900, beside the engine's own generate + trace of the same prompt in the same run.

    python bench/first_picture.py [--model smollm2-135m-instruct] [--pieces 80] [--pages translate,attention]
                                  [--repeats 3] [--at-once] [--pin]

An instruct decoder reads each prompt as a chat message; an encoder-decoder (--model opus-size-random, the folder
bench_real.py --keep writes, offered with $ANATOMY_MODELS) translates it as a sentence of about --pieces source
pieces, and its first picture is the encoder's.

Starts the app (tests/live_server.py) with $ANATOMY_STREAM_LOG set, so that the server writes each page
run's events with their times (ui/page/stream.py): the run's start, the prompt's trace heard and its picture
drawn, each piece heard from the decoding and drawn, the page finished. For each page it opens the page on a
first prompt, waits until chromium has drawn it (nothing changed for 1 s), then types a new one of about
--pieces pieces (as the model reads it, the chat template included) and presses Enter. It prints, medians over
--repeats new prompts:

  server first picture   the prompt's picture sent, after the run's start (the server's part)
  browser first picture  a chart or table of the prompt drawn in chromium, after Enter
  piece latency          the most a piece waited between the engine writing it and the page drawing it
  updates per 3 pieces   what the page drew of the pieces, per 3 written (the Continue page's text)
  whole page             Enter to the page's end (and the server's run alone), over the engine's generate + trace
  built                  the server's time from the continuation written to the page's end: its pictures built and sent
  prompt, its cpu        the prompt's pass in the server's decoding thread: wall time, and that thread's CPU time
                         (beside the same pass alone in this process, printed last)

The engine is timed in this process on one torch thread, as the server runs it, between the pages' runs.

--pin runs chromium on the first core and the server on the second, and times the engine on the second too (a
laptop's browser and a server apart); without it all share both cores, as on a laptop.

--no-browser runs each page in this process (Streamlit's AppTest) with no browser on the machine, and prints the
server's first picture, the prompt's pass, the server's whole run and the page's build alone: what the server needs
when nothing else runs beside it.
"""

from __future__ import annotations

import argparse
import json
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

from live_server import running_app  # noqa: E402
from test_browser import CHROMIUM, FLAGS  # noqa: E402
from test_browser_stream import WATCH  # noqa: E402

from ui.page.stream import LOG_ENV  # noqa: E402

WORDS = (
    "Explain in a few words why the sky looks blue on a clear day and red at sunset, what the air does to "
    "sunlight, and why clouds stay white while the sea looks deep blue from a plane on a sunny afternoon"
)

# The prompt's pictures (tests/browser/test_browser_stream.py watches them too): the Attention page's heads, the Tensor
# shapes page's stages; the Continue page's first is its growing text
PICTURES = [".st-key-prompt-heads .js-plotly-plot", ".st-key-prompt-stages [data-testid='stDataFrame']"]


def chats(bundle) -> bool:
    """Whether the model reads a prompt as a chat message (an instruct decoder) rather than a sentence."""
    return bundle.capabilities.decoder_only and bundle.chat is not None


def run_text(bundle, text: str, **kwargs):
    """The engine's run the page makes of `text`: a chat message's answer, a continuation or a translation."""
    if bundle.capabilities.decoder_only:
        return bundle.generate(text, chat=chats(bundle), **kwargs)
    return bundle.translate(text, **kwargs)


def prompts(bundle, pieces: int, count: int) -> list[str]:
    """`count` different texts of about `pieces` pieces each as the model reads them (a chat message wrapped)."""
    found = []
    for offset in range(count):
        split = WORDS.split(" ")
        words = split[offset:] + split[:offset]
        text = ""
        for word in words * 4:
            longer = f"{text} {word}".strip()
            if len(bundle.read_input(longer, chat=chats(bundle))) > pieces:
                break
            text = longer
        found.append(text + "?")
    return found


def events(log: Path, since: float) -> list[dict]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [e for e in map(json.loads, lines) if e["t"] >= since]


def wait_finished(log: Path, since: float, timeout: float = 180.0) -> list[dict]:
    """The server's events since `since`, once a page run has finished after it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        seen = events(log, since)
        if any(e["event"] == "finished" for e in seen):
            return seen
        time.sleep(0.05)
    raise TimeoutError("the page did not finish")


def engine_seconds(bundle, prompt: str, repeats: int) -> float:
    """The engine alone: generate + trace of the chat message (translate + trace of a sentence), one torch thread."""
    import torch

    torch.set_num_threads(1)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run_text(bundle, prompt)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class _Heard(Exception):
    """Raised by the listener once the prompt's trace is heard: the decoding ends there."""


def prompt_seconds(bundle, prompt: str) -> float:
    """The engine alone: the prompt's pass (until its trace is heard), median of 3, one torch thread. The
    continuation is not written: a listener that raises ends the decoding."""
    from model.results import Listener

    def heard(_) -> None:
        raise _Heard

    times = []
    for _ in range(3):
        start = time.perf_counter()
        try:
            run_text(bundle, prompt, listener=Listener(prompt=heard))
        except _Heard:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


# Resolves once the page has changed nothing for `quiet` ms (chromium done drawing what the server sent), or after
# `most` ms: a big finished page can take chromium seconds after the server's run ends, and a new prompt typed
# meanwhile would be timed against that drawing
SETTLED = """([quiet, most]) => new Promise(resolve => {
  const start = performance.now();
  let last = start;
  const seen = new MutationObserver(() => { last = performance.now(); });
  seen.observe(document.body, {childList: true, subtree: true, attributes: true, characterData: true});
  const check = () => {
    const now = performance.now();
    if (now - last >= quiet || now - start >= most) { seen.disconnect(); resolve(now - start); }
    else setTimeout(check, 50);
  };
  check();
})"""


def server_marks(seen: list[dict], slug: str) -> tuple[float, list[float], float]:
    """A page run's start, when it sent a picture of the prompt (the Continue page's first is its first pieces as
    well), and its end, from the server's events."""
    run = next(e["t"] for e in seen if e["event"] == "run")
    drawn = [e["t"] for e in seen if e["event"] == "prompt drawn"]
    shown = [e["t"] for e in seen if e["event"] == "pieces drawn"]
    finished = max(e["t"] for e in seen if e["event"] == "finished")
    return run, [*drawn, *shown[:1]] if slug == "translate" else drawn, finished


def measure(page, base: str, slug: str, model: str, first: str, prompt: str, log: Path, box_label: str) -> dict:
    """One new prompt on one page (typed into the sidebar's box of that label): its events and marks, as seconds
    after Enter or after the run's start."""
    since = time.time()
    page.goto(f"{base}/{slug}?model={model}&sentence={first.replace(' ', '+')}")
    wait_finished(log, since)
    page.evaluate(SETTLED, [1000, 60000])
    page.evaluate(WATCH, PICTURES)
    box = page.locator(f"[data-testid='stSidebar'] input[aria-label='{box_label}']")
    box.fill(prompt)
    enter = time.time()
    box.press("Enter")
    seen = wait_finished(log, enter)
    page.wait_for_timeout(300)
    marks = page.evaluate("() => window.anatomyMarks")
    run, served, finished = server_marks(seen, slug)
    heard = {e["index"]: e["t"] for e in seen if e["event"] == "piece heard"}
    shown = [(e["index"], e["t"]) for e in seen if e["event"] == "pieces drawn"]
    waits = []
    for index, at in heard.items():
        later = [t for i, t in shown if i >= index]
        if later:
            waits.append(min(later) - at)
    # the prompt's pass in the decoding's thread: its wall time, and the CPU time that thread spent on it
    started, read = (next((e for e in seen if e["event"] == kind), None) for kind in ("decoding", "prompt heard"))
    firsts = [*marks["seen"].values(), *[mark["t"] for mark in marks["texts"][:1]]]
    return {
        "server first picture": min(served) - run if served else None,
        "browser first picture": min(firsts) / 1000 - enter if firsts else None,
        "piece latency": max(waits) if waits else None,
        "pieces": len(heard),
        "updates": len(marks["texts"]) if slug == "translate" else len(shown),
        "prompt pass": read["t"] - started["t"] if started and read else None,
        "prompt pass cpu": read["cpu"] - started["cpu"] if started and read else None,
        "whole page": finished - enter,
        "server whole": finished - run,
        "server built": built(seen, finished),
    }


def built(seen: list[dict], finished: float) -> float | None:
    """The server's time to build the page once the continuation is written: its pictures, sent."""
    done = [e["t"] for e in seen if e["event"] == "continuation done"]
    return finished - max(done) if done else None


def server_alone(bundle, model: str, slugs: list[str], fresh, repeats: int, log: Path) -> None:
    """--no-browser: each page run by AppTest in this process, a new text each run; the server's part alone."""
    from streamlit.testing.v1 import AppTest

    os.environ[LOG_ENV] = str(log)
    print(f"{'page':<14} {'server 1st':>10} {'prompt':>7} {'its cpu':>7} {'server':>7} {'built':>7}")
    for slug in slugs:
        [path] = (ROOT / "pages").glob(f"*_{slug}.py")
        rows = []
        for _ in range(repeats):
            since = time.time()
            app = AppTest.from_file(str(path), default_timeout=300)
            app.query_params["model"], app.query_params["sentence"] = model, next(fresh)
            app.run()
            seen = events(log, since)
            run, served, finished = server_marks(seen, slug)
            started, read = (next(e for e in seen if e["event"] == kind) for kind in ("decoding", "prompt heard"))
            rows.append(
                (
                    min(served) - run if served else None,
                    read["t"] - started["t"],
                    read["cpu"] - started["cpu"],
                    finished - run,
                    built(seen, finished),
                )
            )
        medians = [_median([row[i] for row in rows]) for i in range(5)]
        cells = [
            f"{v:>{w}.2f}" if v is not None else f"{'-':>{w}}" for v, w in zip(medians, (10, 7, 7, 7, 7), strict=True)
        ]
        print(f"{slug:<14} " + " ".join(cells))


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--pieces", type=int, default=80)
    parser.add_argument("--pages", default="translate,attention,tensor_shapes,why")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--at-once", action="store_true", help="pages that wait for the whole continuation (no stream)")
    parser.add_argument("--no-browser", action="store_true", help="the server's part alone, no browser (AppTest)")
    parser.add_argument(
        "--pin", action="store_true", help="chromium on the first core; the server and the engine's timing on the other"
    )
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from model import load_bundle
    from model.checkpoints.catalog import available_models

    bundle = load_bundle(available_models()[args.model])
    slugs = args.pages.split(",")
    texts = prompts(bundle, args.pieces, 2 + args.repeats * len(slugs))  # a new prompt for every run
    first, warm, fresh = texts[0], texts[1], iter(texts[2:])
    read = sorted({len(bundle.read_input(t, chat=chats(bundle))) for t in texts})
    print(f"{args.model}: prompts of {read} pieces")
    box_label = "Text to continue" if bundle.capabilities.decoder_only else "English sentence"
    engine_seconds(bundle, warm, 1)  # the engine's first call in this process is not timed
    log = Path(tempfile.mkstemp(prefix="anatomy-stream-", suffix=".jsonl")[1])
    if args.no_browser:
        server_alone(bundle, args.model, slugs, fresh, args.repeats, log)
        print(f"the prompt's pass alone, in this process: {prompt_seconds(bundle, warm):.2f} s")
        return
    env = {"ANATOMY_STREAM_LOG": str(log), "ANATOMY_STREAM_WORK": "inf" if args.at_once else ""}
    with running_app(None, env=env) as app, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        if args.pin:  # a laptop's browser and a server apart (bench/browser_work.py's --pin)
            from browser_work import chromium_pids, pin

            page.goto(app.url)
            pin(chromium_pids(), 0)
            pin([app.pid, os.getpid()], 1)
        print(
            f"{'page':<14} {'server 1st':>10} {'browser 1st':>11} {'piece wait':>10} {'upd/3':>6} "
            f"{'whole':>7} {'server':>7} {'built':>7} {'engine':>7} {'ratio':>6} {'prompt':>7} {'its cpu':>7}"
        )
        for slug in slugs:
            rows, engines = [], []
            for _ in range(args.repeats):
                prompt = next(fresh)
                rows.append(measure(page, app.url, slug, args.model, first, prompt, log, box_label))
                engines.append(engine_seconds(bundle, prompt, 3))

            def med(key: str, rows: list[dict] = rows) -> float | None:
                values = [r[key] for r in rows if r[key] is not None]
                return statistics.median(values) if values else None

            def show(value: float | None, width: int) -> str:
                return f"{value:>{width}.2f}" if value is not None else f"{'-':>{width}}"

            per3 = med("updates") / med("pieces") * 3 if med("pieces") else None
            whole, engine = med("whole page"), statistics.median(engines)
            print(
                f"{slug:<14} {show(med('server first picture'), 10)} {show(med('browser first picture'), 11)} "
                f"{show(med('piece latency'), 10)} {show(per3, 6)} {show(whole, 7)} {show(med('server whole'), 7)} "
                f"{show(med('server built'), 7)} {show(engine, 7)} "
                f"{show(whole / engine if whole else None, 6)} {show(med('prompt pass'), 7)} "
                f"{show(med('prompt pass cpu'), 7)}"
            )
        print(f"the prompt's pass alone, in this process: {prompt_seconds(bundle, warm):.2f} s")
        browser.close()


if __name__ == "__main__":
    main()

"""A lab on one server: browser-less sessions on the real SmolLM2-135M-Instruct, each typing a new chat message
every `every` seconds, on the pages that stream the answer (Continue and Attention), as `bench/bench_load.py --lab`
runs it. Each page run is timed as its student sees it: the first picture (the first chart), the first piece
written, the time the page said it waited for its turn (ui/session/fair.py), and the whole page; its final page
is compared with the same page and prompt run alone on a server of its own.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from live_server import rss_mib, running_app
from st_session import PageRun, Session

LAB_MODEL = "smollm2-135m-instruct"
LAB_PAGES = ("translate", "attention")  # Continue and Attention: both stream the answer
TOPICS = ("rivers", "volcanoes", "bread", "bees", "lighthouses", "the moon", "glaciers", "trains", "owls", "tides")
ASKS = ("Explain {topic} to a child in two sentences.", "Give three facts about {topic}.", "Why do {topic} matter?")
FIRST_PIECE = "piece 1 of"  # the stream's line once the first piece is written (ui/page/stream.py, in English)
WAITING = "Waiting for the model"


def lab_prompts(sessions: int, rounds: int) -> list[list[str]]:
    """Per session, a chat message of its own for each round (no two alike in the lab)."""

    def message(student: int, round_: int) -> str:
        ask = ASKS[(student + round_) % len(ASKS)]
        topic = TOPICS[(student * rounds + round_) % len(TOPICS)]
        return ask.format(topic=topic) + f" (student {student + 1}, {round_ + 1})"

    return [[message(student, round_) for round_ in range(rounds)] for student in range(sessions)]


@dataclass
class LabRun:
    """One streamed page run as its student saw it (seconds after Enter), and its final page."""

    page: str
    prompt: str
    start: float  # when Enter was pressed, on the bench's clock
    first_picture: float | None = None
    first_piece: float | None = None
    waited: float = 0.0
    whole: float = 0.0
    final: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def timed_run(session: Session, page: str, prompt: str) -> LabRun:
    """Send `prompt` to `page` as a new chat message, then read the run's deltas as the student saw them come; its
    final page is the last element at every place it wrote (a place written again drops what was under it)."""
    run = LabRun(page, prompt, time.monotonic())
    shown = await session.run(page, urlencode({"model": LAB_MODEL, "sentence": prompt}))
    run.whole = shown.seconds
    placed: dict[tuple[int, ...], tuple[str, str]] = {}
    waiting_since: float | None = None
    for at, path, content in shown.deltas:
        for under in [p for p in placed if p[: len(path)] == path]:
            del placed[under]
        if content is None:
            continue
        placed[path] = content
        kind, text = content
        if kind == "plotly_chart" and run.first_picture is None:
            run.first_picture = at
        if WAITING in text and waiting_since is None:
            waiting_since = at
        elif waiting_since is not None and WAITING not in text and kind == "markdown":
            run.waited, waiting_since = run.waited + at - waiting_since, None
        if FIRST_PIECE in text and run.first_piece is None:
            run.first_piece = at
            if run.first_picture is None:  # the Continue page's first picture is its first piece, written
                run.first_picture = at
    run.final = [placed[path] for path in sorted(placed)]
    run.errors = PageRun(run.final).errors
    return run


@dataclass
class LabReport:
    """Figures of one lab."""

    sessions: int
    seconds: float
    slots: int
    runs: list[LabRun] = field(default_factory=list)
    alone: dict[tuple[str, str], LabRun] = field(default_factory=dict)
    # `slots` new messages at once on the quiet server, each over its page's median alone: what one slot gives when
    # every slot computes (1.0 if the cores did not share the memory, the interpreter and the page's own work)
    together: list[float] = field(default_factory=list)
    rss_start_mib: float = 0.0
    rss_end_mib: float = 0.0
    rss_most_mib: float = 0.0

    def _p(self, values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")

    def fair_ratios(self, slowdown: float = 1.0) -> list[float]:
        """Each run's whole page over its fair share: its page alone, times the runs in flight beside it (itself
        included, averaged over its time) per slot, at least once its page alone; with `slowdown`, the share of a
        machine whose slots each give 1/slowdown of a page alone when all compute (`together`)."""
        ratios = []
        for run in self.runs:
            alone = self.alone[(run.page, run.prompt)].whole
            begin, end = run.start, run.start + run.whole
            overlap = sum(max(0.0, min(end, o.start + o.whole) - max(begin, o.start)) for o in self.runs)
            beside = overlap / max(run.whole, 1e-9)
            ratios.append(run.whole / (alone * max(1.0, slowdown * beside / self.slots)))
        return ratios

    def slowdown(self) -> float:
        """The median of `together`: how much longer a page takes when every slot computes (1.0 when unmeasured)."""
        return statistics.median(self.together) if self.together else 1.0

    def mismatched(self) -> list[str]:
        return [f"{r.page}: {r.prompt}" for r in self.runs if r.final != self.alone[(r.page, r.prompt)].final]

    def _row(self, name: str, values: list[float]) -> str:
        most = max(values, default=float("nan"))
        return f"  {name:<26} p50 {self._p(values, 50):6.2f} s   p95 {self._p(values, 95):6.2f} s   most {most:6.2f} s"

    def summary(self) -> str:
        errors = [e for r in self.runs for e in r.errors]
        ratios, machine = self.fair_ratios(), self.fair_ratios(self.slowdown())
        firsts = [r.first_picture for r in self.runs if r.first_picture is not None]
        wholes = [r.whole for r in self.runs]
        most_ratio, most_machine = max(ratios, default=float("nan")), max(machine, default=float("nan"))
        lines = [
            f"lab: {self.sessions} sessions on {LAB_MODEL}, a new chat message each every so often for "
            f"{self.seconds:.0f} s, {self.slots} decodings at once; {len(self.runs)} page runs",
            self._row("first picture", firsts),
            self._row("first piece", [r.first_piece for r in self.runs if r.first_piece is not None]),
            self._row("waited for its turn", [r.waited for r in self.runs]),
            self._row("whole page", wholes),
            self._row("the page alone", [r.whole for r in self.alone.values()]),
            f"  whole page over its fair share: p50 {self._p(ratios, 50):.2f}, p95 {self._p(ratios, 95):.2f}, "
            f"most {most_ratio:.2f} (fair share: the page alone x the runs beside it per slot)",
            f"  {self.slots} new messages at once on the quiet server: each page took {self.slowdown():.2f}x its "
            f"page alone ({len(self.together)} pages); over a fair share of that machine: p50 "
            f"{self._p(machine, 50):.2f}, p95 {self._p(machine, 95):.2f}, most {most_machine:.2f}",
            f"  server RSS {self.rss_start_mib:.0f} MiB at the start, {self.rss_most_mib:.0f} at most, "
            f"{self.rss_end_mib:.0f} at the end",
            f"lab: sessions={self.sessions} runs={len(self.runs)} errors={len(errors)} "
            f"mismatched={len(self.mismatched())} first_picture_p95={self._p(firsts, 95):.1f}s "
            f"whole_p95={self._p(wholes, 95):.1f}s fair_most={most_ratio:.2f} machine_most={most_machine:.2f}",
        ]
        return "\n".join(lines)


async def _fresh_run(url: str, page: str, prompt: str) -> LabRun:
    """One message, in a session of its own: the app reads a session's text from its address once, at its first run
    (a student's next message is typed into the page; a new session is the same work for the server)."""
    async with Session(url, timeout=600) as session:
        return await timed_run(session, page, prompt)


async def _student(url: str, prompts: list[str], every: float, offset: float, report: LabReport) -> None:
    await asyncio.sleep(offset)
    for k, prompt in enumerate(prompts):
        began = time.monotonic()
        report.runs.append(await _fresh_run(url, LAB_PAGES[k % len(LAB_PAGES)], prompt))
        await asyncio.sleep(max(0.0, every - (time.monotonic() - began)))


async def _alone(url: str, plan: list[tuple[str, str]]) -> dict[tuple[str, str], LabRun]:
    return {(page, prompt): await _fresh_run(url, page, prompt) for page, prompt in plan}


async def _together(url: str, slots: int, alone: dict[tuple[str, str], LabRun], rounds: int = 5) -> list[float]:
    """`rounds` times, `slots` messages of their own (not the lab's: a cached answer costs nothing) sent at once, one
    page each: each page's whole over the median of its page's runs alone."""
    medians = {page: statistics.median(r.whole for (p, _), r in alone.items() if p == page) for page in LAB_PAGES}
    prompts = [p for mine in lab_prompts(slots * rounds, 1) for p in mine]
    slowdowns = []
    for k in range(rounds):
        mine = [(LAB_PAGES[j % len(LAB_PAGES)], prompts[k * slots + j] + " (at once)") for j in range(slots)]
        runs = await asyncio.gather(*(_fresh_run(url, page, prompt) for page, prompt in mine))
        slowdowns += [run.whole / medians[run.page] for run in runs]
    return slowdowns


def run_lab(sessions: int = 30, every: float = 20.0, seconds: float = 120.0, env: dict[str, str] | None = None):
    """Every page and prompt alone on a server, then the lab on a fresh one: `sessions` students, each a new chat
    message every `every` seconds (the first ones spread over `every`) for `seconds`."""
    rounds = max(1, int(seconds // every))
    prompts = lab_prompts(sessions, rounds)
    plan = [(LAB_PAGES[k % len(LAB_PAGES)], p) for mine in prompts for k, p in enumerate(mine)]
    slots = int(os.environ.get("ANATOMY_DECODING_SLOTS", "") or os.cpu_count() or 1)
    report = LabReport(sessions, seconds, slots)
    with running_app(None, env=env) as app:
        asyncio.run(_fresh_run(app.url, LAB_PAGES[0], "Hello!"))  # the model loaded first: no page alone waits for it
        report.alone = asyncio.run(_alone(app.url, plan))
        report.together = asyncio.run(_together(app.url, slots, report.alone))
    with running_app(None, env=env) as app:

        async def lab() -> None:
            await _fresh_run(app.url, LAB_PAGES[0], "Hello!")  # the model loaded, as a lab's lecturer does first
            report.rss_start_mib = report.rss_most_mib = rss_mib(app.pid)
            stop = asyncio.Event()

            async def sample() -> None:
                while not stop.is_set():
                    report.rss_most_mib = max(report.rss_most_mib, rss_mib(app.pid))
                    await asyncio.sleep(1.0)

            sampler = asyncio.create_task(sample())
            students = [_student(app.url, mine, every, every * s / sessions, report) for s, mine in enumerate(prompts)]
            await asyncio.gather(*students)
            stop.set()
            await sampler

        asyncio.run(lab())
        report.rss_end_mib = rss_mib(app.pid)
    return report

"""Many concurrent browser-less sessions against one real app: the load test and its benchmark."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlencode

from live_server import ROOT, rss_mib, running_app
from st_session import PageRun, Session

sys.path.insert(0, str(ROOT))

from deploy.room import running_room

PAGES = ("attention", "translate")
SWITCHES = [
    {},
    {"causal": "off"},
    {"ablate": "dec-cross-1-1,enc-self-2-3"},
    {"pe": "off"},
    {"decode": "beam", "beam": "3"},
    {"padding": "off", "layer": "2", "head": "3"},
]


def scenario(n_sessions: int, configs_each: int, seed: int = 7) -> list[list[tuple[str, str]]]:
    """Per session, its own (page, query string) list: a corpus sentence under varied switches."""
    from model.training.corpus import generate

    sentences = [example.en for example in generate(n_sessions * configs_each, seed)]
    plan = []
    for session in range(n_sessions):
        mine = []
        for k in range(configs_each):
            index = session * configs_each + k
            query = urlencode({"sentence": sentences[index], **SWITCHES[index % len(SWITCHES)]})
            mine.append((PAGES[index % len(PAGES)], query))
        plan.append(mine)
    return plan


@dataclass
class LoadReport:
    """Figures of one load run."""

    sessions: int
    seconds: float | None  # None: a fixed amount of work, however long it takes
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    rss_start_mib: float = 0.0
    rss_end_mib: float = 0.0
    rss_half_mib: float | None = None  # after the first half of a fixed amount of work
    rss_samples: list[tuple[float, float]] = field(default_factory=list)  # (seconds, MiB) every 10 s
    replicas: int = 0  # 0: one app, reached directly; N: N replicas behind nginx

    def percentile(self, q: float) -> float:
        """Latency percentile in seconds."""
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")

    def summary(self) -> str:
        """One paragraph of figures, then one line in a fixed format to compare runs at a glance."""
        span = f"for {self.seconds:.0f} s" if self.seconds is not None else "with a fixed amount of work"
        half = f", {self.rss_half_mib:.0f} MiB after half the work" if self.rss_half_mib is not None else ""
        return (
            f"{self.sessions} concurrent sessions {span}: {self.requests} page runs, "
            f"{len(self.errors)} errors, {len(self.mismatches)} differing from the single-session run; "
            f"latency p50 {self.percentile(50):.2f} s, p95 {self.percentile(95):.2f} s, "
            f"mean {statistics.fmean(self.latencies) if self.latencies else float('nan'):.2f} s; "
            f"server RSS {self.rss_start_mib:.0f} MiB at the start{half}, {self.rss_end_mib:.0f} MiB at the end "
            f"(every 10 s: {', '.join(f'{mib:.0f}' for _, mib in self.rss_samples)})"
            + (f", summed over {self.replicas} replicas behind nginx" if self.replicas else "")
            + f"\nload: sessions={self.sessions} runs={self.requests} errors={len(self.errors)} "
            f"mismatched={len(self.mismatches)} p50={self.percentile(50):.1f}s p95={self.percentile(95):.1f}s "
            f"rss_start={self.rss_start_mib:.0f} rss_end={self.rss_end_mib:.0f}"
        )


async def _visit(url: str, page: str, query: str, reruns: int = 1) -> list[PageRun]:
    """Open the URL in a new session (as a browser tab does), then rerun it `reruns` times."""
    async with Session(url) as session:
        return [await session.run(page, query) for _ in range(1 + reruns)]


async def _alone(url: str, plan: list[list[tuple[str, str]]]) -> dict[tuple[str, str], PageRun]:
    baseline = {}
    for configs in plan:
        for page, query in configs:
            baseline[(page, query)] = (await _visit(url, page, query, reruns=0))[0]
    return baseline


def _rss(pids: list[int]) -> float:
    return sum(rss_mib(pid) for pid in pids)


async def _sample_rss(pids: list[int], report: LoadReport, stop: asyncio.Event) -> None:
    start = time.monotonic()
    while not stop.is_set():
        report.rss_samples.append((time.monotonic() - start, _rss(pids)))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 10)


async def _together(url: str, plan, baseline, report: LoadReport, seconds: float | None) -> None:
    """Every session at once, each over its own configurations: again and again until `seconds`
    have passed (each at least once), or with seconds=None exactly once each."""
    deadline = time.monotonic() + (seconds or 0.0)

    async def user(configs):
        rounds = 0
        while rounds == 0 or (seconds is not None and time.monotonic() < deadline):
            for page, query in configs:
                for run in await _visit(url, page, query, reruns=1):
                    report.requests += 1
                    report.latencies.append(run.seconds)
                    report.errors.extend(run.errors)
                    if run.elements != baseline[(page, query)].elements:
                        report.mismatches.append(f"{page}?{query}")
            rounds += 1

    await asyncio.gather(*(user(configs) for configs in plan))


@contextmanager
def _server(checkpoint, replicas: int, env: dict[str, str] | None) -> Iterator[tuple[str, list[int], list[str]]]:
    """(url, server process ids, each server's own url): one app reached directly, or `replicas`
    behind nginx."""
    if replicas:
        with running_room(replicas, checkpoint=checkpoint, env=env) as room:
            yield room.url, [r.process.pid for r in room.replicas], [f"http://{r.address}" for r in room.replicas]
    else:
        with running_app(checkpoint, env=env) as app:
            yield app.url, [app.pid], [app.url]


def run_load(
    checkpoint=None,
    n_sessions: int = 20,
    configs_each: int = 2,
    seconds: float | None = 30.0,
    replicas: int = 0,
    env: dict[str, str] | None = None,
) -> LoadReport:
    """Single-session baseline on one server, then all sessions at once on a fresh one (or on
    `replicas` fresh replicas behind nginx), each server started with `env` added.

    With seconds=None the work is fixed instead of the time: every session opens the first half
    of its configurations, the server's RSS is read (`rss_half_mib`), then the second half."""
    plan = scenario(n_sessions, configs_each)
    with running_app(checkpoint, env=env) as app:
        baseline = asyncio.run(_alone(app.url, plan))
    report = LoadReport(n_sessions, seconds, replicas=replicas)
    report.errors.extend(e for run in baseline.values() for e in run.errors)
    with _server(checkpoint, replicas, env) as (url, pids, servers):  # fresh caches: pages are computed under load

        async def warm_then_load():
            for server in servers:  # load the model and every page's modules before measuring RSS
                async with Session(server) as session:
                    for page in PAGES:
                        await session.run(page, urlencode({"sentence": "The cat sleeps."}))
            report.rss_start_mib = _rss(pids)
            stop = asyncio.Event()
            sampler = asyncio.create_task(_sample_rss(pids, report, stop))
            if seconds is None:
                half = (configs_each + 1) // 2
                await _together(url, [configs[:half] for configs in plan], baseline, report, None)
                report.rss_half_mib = _rss(pids)
                await _together(url, [configs[half:] for configs in plan], baseline, report, None)
            else:
                await _together(url, plan, baseline, report, seconds)
            stop.set()
            await sampler

        asyncio.run(warm_then_load())
        report.rss_end_mib = _rss(pids)
    return report

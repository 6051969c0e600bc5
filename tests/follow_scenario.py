"""A presenter and N browser-less followers of one room on the real app: the follow test and its benchmark.

The presenter is a Streamlit session (tests/st_session.py) on the Attention page of a room; each follower holds
the room's server-sent events open and, at each new view, fetches it (gzip), as ui/room/follow.html does. Then V
phones vote at once on one question.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from live_server import ROOT, rss_mib, running_app
from st_session import Session

sys.path.insert(0, str(ROOT))

from deploy.room import running_room
from ui.room import store

SENTENCES = [
    "The small girl sees a white bird.",
    "The cat eats the apple.",
    "My sisters will see the old house.",
    "The boys did not close the blue door.",
    "She gives the new book to the teacher.",
]


@dataclass
class FollowReport:
    """Figures of one run."""

    followers: int
    changes: int
    errors: list[str] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)  # end of the presenter's run -> a follower holds the view
    # the view's file written (during the presenter's run, so often before its end) -> a follower holds the view
    from_publish: list[float] = field(default_factory=list)
    bytes_received: int = 0
    views_received: int = 0
    model_runs: int = 0
    votes: int = 0
    counted: int = 0
    rss_start: float = 0.0
    rss_end: float = 0.0
    client_cpu: float = 0.0  # CPU seconds of this process (simulated followers, presenter) during the changes
    server_cpu: float = 0.0  # CPU seconds of the processes serving the room during the changes
    # the presenter's page runs (a reload of the Attention page, as its browser sees it), in seconds: with the
    # followers attached, and the same changes on a fresh server that nobody follows
    presenter_followed: list[float] = field(default_factory=list)
    presenter_alone: list[float] = field(default_factory=list)

    def percentile(self, q: float, delays: list[float] | None = None) -> float:
        """Delay percentile in seconds."""
        ordered = sorted(self.delays if delays is None else delays)
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")

    def summary(self) -> str:
        """A sentence, then the line of the issue's format."""
        per_change = self.bytes_received / max(1, self.followers * self.changes)
        return (
            f"{self.followers} followers, {self.changes} changes: {self.views_received} views received, "
            f"{len(self.errors)} errors{' (' + '; '.join(self.errors[:3]) + ')' if self.errors else ''}, "
            f"mean delay {statistics.fmean(self.delays) if self.delays else float('nan'):.3f} s (from the view's "
            f"publishing: p50 {self.percentile(50, self.from_publish):.2f} s, p95 "
            f"{self.percentile(95, self.from_publish):.2f} s), "
            f"CPU during the changes: server {self.server_cpu:.1f} s, simulated followers and presenter "
            f"{self.client_cpu:.1f} s; the presenter's page run: median "
            f"{statistics.median(self.presenter_followed) if self.presenter_followed else float('nan'):.2f} s "
            f"followed, {statistics.median(self.presenter_alone) if self.presenter_alone else float('nan'):.2f} s "
            f"alone\n"
            f"follow: followers={self.followers} changes={self.changes} errors={len(self.errors)} "
            f"p50={self.percentile(50):.2f}s p95={self.percentile(95):.2f}s bytes_per_change={per_change:.0f} "
            f"model_runs={self.model_runs} votes={self.votes} counted={self.counted} "
            f"rss_start={self.rss_start:.0f} rss_end={self.rss_end:.0f}"
        )


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _request(host: str, port: int, method: str, path: str, body: bytes = b"") -> tuple[int, dict, bytes]:
    """One HTTP/1.1 request on its own connection: (status, headers, body)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept-Encoding: gzip\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        writer.write(head.encode() + body)
        await writer.drain()
        status, headers = await _head(reader)
        return status, headers, await reader.read()
    finally:
        writer.close()


async def _head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status = int((await reader.readline()).split()[1])
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


class Follower:
    """One phone, as ui/room/follow.html behaves in a browser: the room's events held open on one connection, and each
    new view fetched (gzip) on a second connection kept alive between views, as a browser keeps it."""

    def __init__(self, host: str, port: int, code: str, report: FollowReport, held: dict[bytes, bool]) -> None:
        self.host, self.port, self.code, self.report = host, port, code, report
        self.views: dict[int, float] = {}  # version -> when this follower held it
        self.clock: dict[int, float] = {}  # version -> the same, by the wall clock
        self.connected = asyncio.Event()
        self.held = held  # the view bodies seen so far, each decompressed and parsed once (is it a view?)
        self.files: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def run(self) -> None:
        """Follow until cancelled."""
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        except OSError as exc:
            self.report.errors.append(f"connect: {exc}")
            return
        try:
            writer.write(f"GET /room-events/{self.code} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
            await writer.drain()
            status, headers = await _head(reader)
            if status != 200:
                self.report.errors.append(f"events: HTTP {status}")
                return
            self.connected.set()
            chunked = headers.get("transfer-encoding") == "chunked"
            buffer = b""
            shown = None
            while data := await self._chunk(reader, chunked):
                self.report.bytes_received += len(data)
                buffer += data
                while b"\n\n" in buffer:
                    event, buffer = buffer.split(b"\n\n", 1)
                    for line in event.split(b"\n"):
                        if line.startswith(b"data: "):
                            state = json.loads(line[6:])
                            if state.get("view") and state["view"] != shown:
                                shown = state["view"]
                                if "gz" in state:  # the view rode in the event
                                    self._hold(state, base64.b64decode(state["gz"]), True)
                                else:
                                    await self._fetch(state)
            self.report.errors.append("events: the server closed the stream")
        finally:
            writer.close()
            if self.files:
                self.files[1].close()

    async def _chunk(self, reader: asyncio.StreamReader, chunked: bool) -> bytes:
        if not chunked:
            return await reader.read(65536)
        size = int((await reader.readline()).strip() or b"0", 16)
        if size == 0:
            return b""
        data = await reader.readexactly(size)
        await reader.readexactly(2)
        return data

    async def _get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """GET on the kept-alive connection (opened again when the server closed it)."""
        for attempt in (1, 2):
            if self.files is None:
                self.files = await asyncio.open_connection(self.host, self.port)
            reader, writer = self.files
            try:
                writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nAccept-Encoding: gzip\r\n\r\n".encode())
                status, headers = await _head(reader)
                body = await reader.readexactly(int(headers.get("content-length", "0")))
            except (OSError, asyncio.IncompleteReadError, IndexError, ValueError):
                writer.close()
                self.files = None
                if attempt == 2:
                    raise
                continue
            if headers.get("connection", "").lower() == "close":
                writer.close()
                self.files = None
            return status, headers, body
        raise AssertionError("unreachable")

    async def _fetch(self, state: dict) -> None:
        try:
            status, headers, body = await self._get(f"/room-files/{self.code}/{state['view']}")
        except (OSError, asyncio.IncompleteReadError, IndexError, ValueError) as exc:
            self.report.errors.append(f"view: {exc!r}")
            return
        if status != 200:
            self.report.errors.append(f"view: HTTP {status}")
            return
        self.report.bytes_received += len(body)
        self._hold(state, body, headers.get("content-encoding") == "gzip")

    def _hold(self, state: dict, body: bytes, gzipped: bool) -> None:
        """This follower holds the view of `state`: `body`, compressed or not."""
        if body not in self.held:  # the first copy of these bytes: a whole view? (the same bytes: the same view)
            self.held[body] = bool(json.loads(gzip.decompress(body) if gzipped else body).get("figures"))
        if not self.held[body]:
            self.report.errors.append("view without figures")
        self.views[state["version"]] = time.monotonic()
        self.clock[state["version"]] = time.time()
        self.report.views_received += 1


async def _stats(host: str, port: int) -> dict:
    status, _, body = await _request(host, port, "GET", "/room-stats")
    return json.loads(body) if status == 200 else {}


async def _model_runs(servers: list[tuple[str, int]]) -> int:
    """Model results computed so far, summed over the processes serving the room (each asked directly), once
    every one has finished its start-up warm-up (which computes one result, followed or not)."""
    for _ in range(600):
        stats = [await _stats(host, port) for host, port in servers]
        if not any(s.get("warming_up") for s in stats):
            return sum(s.get("model_runs", 0) for s in stats)
        await asyncio.sleep(0.1)
    raise RuntimeError("a server's warm-up did not finish within a minute")


async def _vote_all(host: str, port: int, code: str, qid: str, votes: int, report: FollowReport) -> None:
    semaphore = asyncio.Semaphore(200)

    async def one(index: int) -> None:
        body = json.dumps({"question": qid, "option": index % 3, "voter": f"bench-{index:06d}"}).encode()
        async with semaphore:
            status, _, reply = await _request(host, port, "POST", f"/room-vote/{code}", body)
        if status != 200:
            report.errors.append(f"vote: HTTP {status} {reply[:80]!r}")

    await asyncio.gather(*(one(i) for i in range(votes)))


def run_follow(followers: int, changes: int, votes: int | None = None, replicas: int = 0) -> FollowReport:
    """The presenter's `changes` on the Attention page with `followers` following, then `votes` votes."""
    report = FollowReport(followers, changes, votes=followers if votes is None else votes)
    folder = tempfile.mkdtemp(prefix="anatomy-rooms-")
    os.environ[store.ROOMS_ENV] = folder  # this process opens the room and asks the question, as the presenter's would
    env = {store.ROOMS_ENV: folder}
    alone, report.presenter_alone = _presenter_runs_alone(changes)
    if replicas:
        with running_room(replicas, env=env) as room:
            pids = [r.process.pid for r in room.replicas] + [room.nginx.pid]
            _measure(room.url, pids, [("127.0.0.1", r.port) for r in room.replicas], report, alone)
    else:
        with running_app(None, env=env) as app:
            _measure(app.url, [app.pid], [("127.0.0.1", app.port)], report, alone)
    return report


# The presenter's browser keeps nginx's route cookie, so all its tabs reach one replica (ignored without nginx).
PRESENTER_COOKIE = "anatomy_route=bench-presenter"


def _reload(url: str, query: str) -> tuple[float, float, list[str]]:
    """The presenter's reload of the Attention page with `query` (a session reads its URL once), run in a
    process of its own as the presenter's browser is: the simulated followers' event loop would delay its
    messages. (seconds, time.monotonic() at its end, errors)."""

    async def reload() -> tuple[float, float, list[str]]:
        began = time.monotonic()
        async with Session(url, cookie=PRESENTER_COOKIE) as tab:
            run = await tab.run("attention", query)
        ended = time.monotonic()  # the system's monotonic clock: the same in every process here
        return ended - began, ended, run.errors

    return asyncio.run(reload())


def _presenter_process() -> ProcessPoolExecutor:
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))


def _measure(url: str, pids: list[int], servers: list[tuple[str, int]], report: FollowReport, alone: int) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    code, key = store.create()

    async def scenario() -> None:
        async with Session(url, cookie=PRESENTER_COOKIE) as presenter:
            base = {"room": code, "key": key, "share": "on"}
            first = await presenter.run("attention", urlencode({"sentence": SENTENCES[0], **base}))
            report.errors.extend(first.errors)
            runs_before = await _model_runs(servers)  # waits for every replica's warm-up, before the RSS too
            report.rss_start = sum(rss_mib(pid) for pid in pids)
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(presenter_process, time.monotonic)  # the process started before the crowd
            held: dict[bytes, bool] = {}
            crowd = [Follower(host, port, code, report, held) for _ in range(report.followers)]
            tasks = [asyncio.create_task(f.run()) for f in crowd]
            await asyncio.wait_for(asyncio.gather(*(f.connected.wait() for f in crowd)), 120)
            await asyncio.sleep(1.0)
            report.bytes_received = 0  # count what the changes cost, not the first view
            server_cpu, client_cpu = sum(_cpu_seconds(pid) for pid in pids), time.process_time()
            for change in range(report.changes):
                query = {"sentence": SENTENCES[(change + 1) % len(SENTENCES)], "layer": str(1 + change % 2), **base}
                seconds, ended, errors = await loop.run_in_executor(presenter_process, _reload, url, urlencode(query))
                report.presenter_followed.append(seconds)
                report.errors.extend(errors)
                version = store.state(code)["version"]
                published = (store.public_dir(code) / f"view-{version}.json.gz").stat().st_mtime
                deadline = ended + 30
                while time.monotonic() < deadline and any(version not in f.views for f in crowd):
                    await asyncio.sleep(0.02)
                for follower in crowd:
                    if version in follower.views:
                        report.delays.append(max(0.0, follower.views[version] - ended))
                        report.from_publish.append(follower.clock[version] - published)
                    else:
                        report.errors.append(f"a follower never got view {version}")
            report.server_cpu = sum(_cpu_seconds(pid) for pid in pids) - server_cpu
            report.client_cpu = time.process_time() - client_cpu
            runs_after = await _model_runs(servers)
            # the presenter's own changes computed results; followers add none: what the same changes cost alone
            report.model_runs = max(0, runs_after - runs_before - alone)
            qid = store.ask(code, key, store.Question("Which one?", ("a", "b", "c"), 0))
            await _vote_all(host, port, code, qid, report.votes, report)
            report.counted = sum(store.tally(code, qid))
            store.reveal(code, key, qid)
            report.rss_end = sum(rss_mib(pid) for pid in pids)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    with _presenter_process() as presenter_process:
        asyncio.run(scenario())


_ALONE: dict[int, tuple[int, list[float]]] = {}


def _presenter_runs_alone(changes: int) -> tuple[int, list[float]]:
    """Model results the presenter's changes compute with nobody following, on a fresh server (measured once),
    and the seconds each of those page runs took."""
    if changes not in _ALONE:
        with running_app(None, env={store.ROOMS_ENV: os.environ[store.ROOMS_ENV]}) as app:
            code, key = store.create()
            parts = urlsplit(app.url)

            async def alone() -> tuple[int, list[float]]:
                seconds = []
                loop = asyncio.get_running_loop()
                async with Session(app.url) as presenter:
                    base = {"room": code, "key": key, "share": "on"}
                    await presenter.run("attention", urlencode({"sentence": SENTENCES[0], **base}))
                    server = [(parts.hostname or "127.0.0.1", parts.port or 80)]
                    before = await _model_runs(server)
                    for change in range(changes):
                        query = {"sentence": SENTENCES[(change + 1) % len(SENTENCES)], "layer": str(1 + change % 2)}
                        took, _, _ = await loop.run_in_executor(
                            presenter_process, _reload, app.url, urlencode({**query, **base})
                        )
                        seconds.append(took)
                    return await _model_runs(server) - before, seconds

            with _presenter_process() as presenter_process:
                _ALONE[changes] = asyncio.run(alone())
    return _ALONE[changes]

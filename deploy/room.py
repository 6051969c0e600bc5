"""Serve a room from one machine without containers: N app replicas behind Debian's nginx.

    ./scripts/serve_room.sh [--replicas 2] [--port 8080] [--threads 1]

Each replica is the app as ./app.sh starts it, on its own loopback port; nginx (rendered from
deploy/nginx.conf.in into a run folder) listens on --port, forwards websockets and keeps every
person on the replica that holds their session. Tests and the load benchmark start the same
topology through `running_room`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.in"
THREADS_ENV = "ANATOMY_TORCH_THREADS"
ROOMS_ENV = "ANATOMY_ROOMS_DIR"  # ui/room/store.py: a shared room's files, written by any replica, served by nginx


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def app_command(port: int, script: str = "serve.py") -> list[str]:
    """What ./app.sh runs, on a loopback port."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]


def app_env(checkpoint: Path | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment an app process starts with: this one's, the checkpoint to serve (None: the
    shipped model) and `extra` (the cache budgets of ui/session/cache.py, torch threads, ...)."""
    env = {**os.environ, "ANATOMY_CHECKPOINT": str(checkpoint) if checkpoint else ""}
    return {**env, **(extra or {})}


def wait_until_healthy(url: str, process: subprocess.Popen, log: Path, timeout: float) -> float:
    """Seconds until `url`/_stcore/health answers 200; a RuntimeError with the log's end if the
    process exits first or the time runs out."""
    started = time.monotonic()
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {process.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as reply:
                if reply.status == 200:
                    return time.monotonic() - started
        except OSError:
            pass
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{url} did not answer within {timeout} s:\n{log.read_text()[-2000:]}")
        time.sleep(0.1)


@contextmanager
def process(command: list[str], log: Path, env: dict | None = None) -> Iterator[subprocess.Popen]:
    """A child process writing to `log`, stopped (terminate, then kill) on the way out."""
    with open(log, "w") as out:
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


@dataclass
class Replica:
    """One app process of the room."""

    port: int
    process: subprocess.Popen
    log: Path

    @property
    def address(self) -> str:
        """host:port, as nginx names it in X-Anatomy-Replica."""
        return f"127.0.0.1:{self.port}"


@dataclass
class Room:
    """A running room: the address people open, the replicas behind it, and nginx."""

    url: str
    replicas: list[Replica]
    nginx: subprocess.Popen
    run: Path


def nginx_config(ports: list[int], listen: str, run: Path, rooms: Path | None = None) -> str:
    """deploy/nginx.conf.in with the replicas' ports, the listening address, the run folder and the rooms'
    folder every replica shares (default: run/rooms)."""
    servers = "\n".join(f"        server 127.0.0.1:{port} max_fails=1 fail_timeout=10s;" for port in ports)
    text = TEMPLATE.read_text()
    filled = {
        "servers": servers,
        "listen": listen,
        "run": str(run),
        "errors": str(run / "error.log"),
        "rooms": str(rooms or run / "rooms"),
    }
    for name, value in filled.items():
        text = text.replace("${" + name + "}", value)  # nginx's own $variables stay as they are
    if "${" in text:
        raise ValueError(f"{TEMPLATE.name} has a placeholder nobody fills: {text[text.index('${') :][:40]}")
    return text


def nginx_binary() -> str:
    """Debian's nginx, or a RuntimeError saying how to install it."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if not found:
        raise RuntimeError("nginx is not installed: sudo apt-get install nginx (Debian's package)")
    return found


@contextmanager
def running_room(
    replicas: int = 2,
    port: int = 0,
    checkpoint: Path | None = None,
    threads: int = 1,
    host: str = "127.0.0.1",
    timeout: float = 90.0,
    env: dict[str, str] | None = None,
) -> Iterator[Room]:
    """Start `replicas` app processes on loopback and nginx in front of them on host:port (port 0: a
    free one), each with `env` added to its environment; stop everything on the way out."""
    nginx = nginx_binary()
    run = Path(tempfile.mkdtemp(prefix="anatomy-room-"))
    rooms = Path((env or {}).get(ROOMS_ENV) or run / "rooms")  # one rooms' folder for every replica and nginx
    (rooms / "public").mkdir(parents=True, exist_ok=True)
    for folder in {run, rooms}:  # nginx's workers (another user) walk into rooms/public; private/ stays 0700
        folder.chmod(0o711)
    env = app_env(checkpoint, {THREADS_ENV: str(threads), **(env or {}), ROOMS_ENV: str(rooms)})
    with ExitStack() as stack:
        members = []
        for index in range(replicas):
            replica_port = free_port()
            log = run / f"replica-{index + 1}.log"
            members.append(
                Replica(replica_port, stack.enter_context(process(app_command(replica_port), log, env)), log)
            )
        for member in members:
            wait_until_healthy(f"http://{member.address}", member.process, member.log, timeout)
        listen = f"{host}:{port or free_port()}"
        config = run / "nginx.conf"
        config.write_text(nginx_config([m.port for m in members], listen, run, rooms))
        proxy = stack.enter_context(
            process([nginx, "-p", str(run), "-c", str(config), "-g", "daemon off;"], run / "nginx.out")
        )
        url = f"http://{listen}".replace("0.0.0.0", "127.0.0.1")
        wait_until_healthy(url, proxy, run / "nginx.out", 15)
        yield Room(url, members, proxy, run)


def main(argv: list[str] | None = None) -> None:
    """Command line: serve until Ctrl-C."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=2, help="app processes (about one per core)")
    parser.add_argument("--port", type=int, default=8080, help="where people connect")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per replica")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address nginx listens on (0.0.0.0: everyone on the network)"
    )
    args = parser.parse_args(argv)
    with running_room(args.replicas, args.port, threads=args.threads, host=args.host) as room:
        print(
            f"Serving Transformer Anatomy at http://{args.host}:{args.port} with {args.replicas} replicas "
            f"({', '.join(r.address for r in room.replicas)}); Ctrl-C stops everything.",
            flush=True,
        )
        try:
            while all(r.process.poll() is None for r in room.replicas) and room.nginx.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

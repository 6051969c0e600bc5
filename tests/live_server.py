"""Start the real app (`streamlit run serve.py`, as ./app.sh does) on a free local port for a test or a benchmark."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class LiveApp:
    """A running server: where it listens, its process id and how long it took to answer."""

    url: str
    port: int
    pid: int
    started: float              # time.monotonic() when the process was launched
    seconds_to_healthy: float
    log: Path


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rss_mib(pid: int) -> float:
    """Resident memory of a process in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@contextmanager
def running_app(checkpoint: Path | None = None, timeout: float = 60.0, script: str = "serve.py") -> Iterator[LiveApp]:
    """`streamlit run serve.py` with ANATOMY_CHECKPOINT=checkpoint (None: the shipped model);
    `script` runs another Streamlit script of the repository instead."""
    port = free_port()
    env = {**os.environ, "ANATOMY_CHECKPOINT": str(checkpoint) if checkpoint else ""}
    log = Path(tempfile.mkstemp(prefix="anatomy-server-", suffix=".log")[1])
    command = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    started = time.monotonic()
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {process.returncode}:\n{log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"streamlit did not answer within {timeout} s:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield LiveApp(url, port, process.pid, started, time.monotonic() - started, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

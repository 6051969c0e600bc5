"""Start the real app (`streamlit run serve.py`, as ./app.sh does) on a free local port for a test or a benchmark."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deploy.room import app_command, app_env, free_port, process, wait_until_healthy  # noqa: E402


@dataclass(frozen=True)
class LiveApp:
    """A running server: where it listens, its process id and how long it took to answer."""

    url: str
    port: int
    pid: int
    started: float  # time.monotonic() when the process was launched
    seconds_to_healthy: float
    log: Path


def rss_mib(pid: int) -> float:
    """Resident memory of a process in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@contextmanager
def running_app(
    checkpoint: Path | None = None, timeout: float = 60.0, script: str = "serve.py", env: dict[str, str] | None = None
) -> Iterator[LiveApp]:
    """`streamlit run serve.py` with ANATOMY_CHECKPOINT=checkpoint (None: the shipped model) and
    `env` added to its environment; `script` runs another Streamlit script of the repository instead."""
    port = free_port()
    env = app_env(checkpoint, env)
    log = Path(tempfile.mkstemp(prefix="anatomy-server-", suffix=".log")[1])
    started = time.monotonic()
    with process(app_command(port, script), log, env) as child:
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, child, log, timeout)
        yield LiveApp(url, port, child.pid, started, time.monotonic() - started, log)

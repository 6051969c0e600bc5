"""The code's own checks, run by ./test.sh like every other test: ruff's lint rules, ruff's format and
mypy's types, as configured in pyproject.toml. Each failure says which tool failed and the command
that fixes or shows it locally."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300)


def _report(done: subprocess.CompletedProcess[str], fix: str) -> str:
    return f"{done.stdout}{done.stderr}\nFix or see it locally, from the project root: {fix}"


def test_ruff_finds_no_lint():
    """ruff check: the lint rules chosen in pyproject.toml hold in every Python file."""
    done = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, _report(done, "`.venv/bin/ruff check --fix .`, then fix what it cannot by hand")


def test_every_file_is_formatted_by_ruff():
    """ruff format: every Python file is laid out as the formatter lays it out."""
    done = _run("ruff", "format", "--no-cache", "--check", ".")
    assert done.returncode == 0, _report(done, "`.venv/bin/ruff format .` (and commit the result on its own)")


def test_mypy_finds_no_type_error():
    """mypy: model/, viz/, ui/ and the entry points type-check with torch's own annotations."""
    done = _run("mypy")
    assert done.returncode == 0, _report(done, "`.venv/bin/mypy` (pyproject.toml says what it reads and how)")
    assert "Success: no issues found" in done.stdout, done.stdout

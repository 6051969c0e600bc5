"""The project installs into a user's own environment (`pip install .`): its runtime dependencies are
requirements.txt's, at the same versions, and its wheel carries the code, the page scripts, the shipped model,
the catalogs and the app's settings, and the command that starts the app."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from ui.launch import SETTINGS, settings_flags

ROOT = Path(__file__).resolve().parents[2]


def _runtime_requirements() -> list[str]:
    """requirements.txt's pins before its code checks and tests: what the app itself imports."""
    pins = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.startswith("# code checks"):
            break
        requirement = line.split("#")[0].strip()
        if requirement:
            pins.append(requirement)
    return pins


def test_the_projects_dependencies_are_the_pinned_runtime_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = set(project["dependencies"])
    assert set(_runtime_requirements()) <= declared
    assert declared - set(_runtime_requirements()) == {"segno==1.6.6"}  # the room's QR code, pinned with the tests
    assert project["scripts"]["transformer-anatomy"] == "ui.launch:main"


def test_the_launcher_passes_every_setting_of_the_app():
    flags = settings_flags()
    settings = tomllib.loads(SETTINGS.read_text())
    assert len(flags) == sum(len(table) for table in settings.values())
    assert "--client.showSidebarNavigation=false" in flags
    assert "--server.fileWatcherType=none" in flags
    assert (ROOT / ".streamlit" / "config.toml").resolve() == SETTINGS  # `streamlit run` in a clone reads the same


_NOT_COPIED = (".git", ".venv", "*_cache", "__pycache__", "artifacts", "build", "*.egg-info", "models", "tests")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The wheel `pip install .` would install, built from a copy of the tree (a build writes build/ and
    *.egg-info beside the sources, and a stale build/ would leak into the next wheel)."""
    out = tmp_path_factory.mktemp("wheel")
    tree = tmp_path_factory.mktemp("tree") / "transformer-anatomy"
    shutil.copytree(ROOT, tree, symlinks=True, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(tree), "--no-deps", "-q", "-w", str(out)],
        check=True,
        capture_output=True,
    )
    return zipfile.ZipFile(next(out.glob("transformer_anatomy-*.whl")))


def test_the_wheel_carries_the_app_and_the_shipped_model(wheel):
    names = set(wheel.namelist())
    for needed in (
        "app.py",
        "serve.py",
        "views/__init__.py",
        "views/pages.py",
        "model/bundle.py",
        "viz/attention.py",
        "ui/launch.py",
        "ui/streamlit.toml",
        "ui/room/follow.html",
        "i18n/locale/zh/LC_MESSAGES/anatomy.mo",
        "checkpoints/default/model.safetensors",
        "checkpoints/default/tokenizer.model",
        "checkpoints/default/card.json",
        "talks/transformer-in-20-views.toml",
    ):
        assert needed in names, needed
    assert {name for name in names if name.startswith("pages/")} == {
        f"pages/{path.name}" for path in (ROOT / "pages").glob("*.py")
    }
    tops = {name.split("/")[0] for name in names}
    assert not tops & {"tests", "bench", "models", "scripts", "docs"}
    entry = next(name for name in names if name.endswith("entry_points.txt"))
    assert "transformer-anatomy = ui.launch:main" in wheel.read(entry).decode()

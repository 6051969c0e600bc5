"""A checkpoint is a directory: config.json, model.safetensors, tokenizer.model, card.json
(and train_log.jsonl when it was trained here). Loading checks everything and never unpickles."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import torch
from safetensors.torch import save_file

from i18n import later

from ..engine.config import ModelConfig
from ..engine.tokenizer import Tokenizer
from ..engine.transformer import Transformer
from ..errors import REBUILD_HINT, CheckpointError, message
from . import gguf, snapshots
from .families import load_family
from .image import keep_image, load_image, release_freed_memory
from .record import Checkpoint
from .weights import build_model, fingerprint, read_tensors, weight_files

CONFIG, WEIGHTS, TOKENIZER, CARD, TRAIN_LOG = (
    "config.json",
    "model.safetensors",
    "tokenizer.model",
    "card.json",
    "train_log.jsonl",
)
REQUIRED = (CONFIG, WEIGHTS, TOKENIZER, CARD)


def save_checkpoint(path: Path, model: Transformer, tokenizer: Tokenizer, card: dict) -> None:
    """Write the four files of a checkpoint directory (the training log is appended elsewhere)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / CONFIG).write_text(json.dumps(model.cfg.to_dict(), indent=2) + "\n")
    # copies: a loaded model's parameters may be views of one block (Transformer.store_for_decoding)
    tensors = {
        name: p.detach().cpu().clone(memory_format=torch.contiguous_format) for name, p in model.named_parameters()
    }
    save_file(tensors, str(path / WEIGHTS), metadata={"format": "pt"})
    tokenizer.save(path / TOKENIZER)
    (path / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")


def _fail(path: Path, problem: str) -> CheckpointError:
    return CheckpointError(
        later(
            "Cannot load the checkpoint at {path}: {problem}. {hint}",
            path=str(path),
            problem=problem,
            hint=REBUILD_HINT,
        )
    )


def _read_json(path: Path, name: str) -> dict:
    try:
        data = json.loads((path / name).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(path, later("{name} is not readable JSON ({problem})", name=name, problem=str(exc))) from None
    if not isinstance(data, dict):
        raise _fail(path, later("{name} must hold a JSON object", name=name))
    return data


def load_checkpoint(path: Path, snapshot: int | None = None, progress: gguf.Progress | None = None) -> Checkpoint:
    """Load and validate a checkpoint directory, or raise CheckpointError naming the problem: this
    project's own layout, a Hugging Face one whose config.json names a supported model_type, or a GGUF
    file (or a folder holding one; `progress` hears how its first open goes).
    `snapshot`: the weights kept at that training step instead of the final ones."""
    path = Path(path)
    file = gguf.find(path)
    if file is not None:
        if snapshot is not None:
            raise _fail(path, later("snapshots are kept only by checkpoints trained here"))
        return load_gguf(file, progress)
    if not path.is_dir():
        raise _fail(path, later("the directory does not exist"))
    if not (path / CONFIG).is_file():
        raise _fail(path, later("missing {files}", files=CONFIG))
    config_data = _read_json(path, CONFIG)
    if "model_type" in config_data:
        if snapshot is not None:
            raise _fail(path, later("snapshots are kept only by checkpoints trained here"))
        return load_family(path, config_data)
    missing = [name for name in REQUIRED if not (path / name).is_file()]
    if missing:
        raise _fail(path, later("missing {files}", files=", ".join(missing)))
    try:
        config = ModelConfig.from_dict(config_data)
    except (TypeError, ValueError) as exc:
        raise _fail(
            path, later("{name} is not a valid model config ({problem})", name=CONFIG, problem=str(exc))
        ) from None
    card = _read_json(path, CARD)
    try:
        tokenizer = Tokenizer.load(path / TOKENIZER)
    except Exception as exc:  # sentencepiece raises RuntimeError/ValueError/OSError on bad protos
        raise _fail(
            path, later("{name} is not a usable SentencePiece model ({problem})", name=TOKENIZER, problem=str(exc))
        ) from None
    if tokenizer.vocab_size != config.vocab_size:
        raise _fail(
            path,
            later(
                "the tokenizer has {pieces} pieces but the config says vocab_size {size}",
                pieces=tokenizer.vocab_size,
                size=config.vocab_size,
            ),
        )
    if snapshot is not None:
        tensors = snapshots.read(path, snapshot)  # its own error lists the steps there are
        weights = path / snapshots.FOLDER / snapshots.file_name(snapshot)
    try:
        if snapshot is None:
            tensors, weights = read_tensors(weight_files(path)), path / WEIGHTS
        model = build_model(config, tensors, path)
    except CheckpointError as exc:
        raise CheckpointError(later("{error} {hint}", error=message(exc), hint=REBUILD_HINT)) from None
    checkpoint_id = fingerprint([path / CONFIG, path / TOKENIZER, weights])
    return Checkpoint(path, config, model, tokenizer, card, checkpoint_id, snapshot=snapshot)


def load_gguf(file: Path, progress: gguf.Progress | None = None) -> Checkpoint:
    """A GGUF file through its family. The first open dequantizes it and keeps the loaded weights as an
    image in the cache (`image.py`, written beside the running model); a later open maps that image (made
    again when it no longer opens). The checkpoint id is the file's own hash."""
    for attempt in range(2):
        folder, sha, tensors = gguf.hub_folder(file, progress)
        try:
            config, facts = _read_json(folder, CONFIG), gguf.source(folder)
            ours = load_image(folder / gguf.IMAGE) if tensors is None else None
            checkpoint = load_family(folder, config, identity=sha[:16], tensors=tensors, ours=ours)
        except (CheckpointError, OSError, ValueError):
            gguf.discard(folder)  # a cached copy someone changed or cut: make it again from the file
            if attempt or tensors is not None:
                raise
            continue
        if tensors is not None:
            del tensors
            keep_image(dict(checkpoint.model.named_parameters()), folder / gguf.IMAGE)
            release_freed_memory()
        card = checkpoint.card | {
            "name": facts["name"],
            "source": later("{file} (a GGUF file, llama.cpp's format)", file=Path(facts["file"]).name),
            "path": facts["file"],
            "licence": later("not stated in the file") if facts["licence"] == gguf.NO_LICENCE else facts["licence"],
            "stored_as": later("GGUF: {types}; dequantized to float32", types=facts["stored_as"]),
            "weights_bytes": file.stat().st_size,
        }
        return replace(checkpoint, path=file, card=card)
    raise AssertionError("unreachable")


def read_train_log(path: Path) -> list[dict]:
    """The training log's records (one JSON object per line); empty when there is none."""
    log = Path(path) / TRAIN_LOG
    if not log.is_file():
        return []
    records = []
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by an interrupted run
        if isinstance(record, dict):
            records.append(record)
    return records

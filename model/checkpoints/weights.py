"""Weights from safetensors files (one file, or shards with an index) into the one Transformer.

Nothing here unpickles: a directory that has only PyTorch's pickle format is refused with the
command that converts it once (`python -m model.convert_bin DIR`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from safetensors import safe_open
from torch.nn import init

from i18n import later

from ..engine.config import ModelConfig
from ..engine.transformer import Transformer
from ..errors import CheckpointError

_BUILDING = threading.Lock()
WEIGHTS, INDEX, PICKLE = "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"
CONVERT_COMMAND = "python -m model.convert_bin"


def weight_files(path: Path) -> list[Path]:
    """The safetensors file(s) of a checkpoint directory, or a CheckpointError that says what to do."""
    if (path / WEIGHTS).is_file():
        return [path / WEIGHTS]
    if (path / INDEX).is_file():
        try:
            index = json.loads((path / INDEX).read_text(encoding="utf-8"))
            shards = sorted(set(index["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _cannot(
                path, later("{name} is not a valid shard index ({problem})", name=INDEX, problem=str(exc))
            ) from None
        missing = [name for name in shards if not (path / name).is_file() or "/" in name or "\\" in name]
        if missing:
            raise _cannot(
                path, later("shards named in {name} are missing: {files}", name=INDEX, files=", ".join(missing[:3]))
            )
        return [path / name for name in shards]
    if (path / PICKLE).is_file():
        raise CheckpointError(
            later(
                "The checkpoint at {path} has only {name}, PyTorch's pickle format, which this app never opens (a "
                "pickle can run code). Convert it once with: {command}",
                path=str(path),
                name=PICKLE,
                command=f"{CONVERT_COMMAND} {path}",
            )
        )
    raise _cannot(path, later("it has no {name} (nor {index})", name=WEIGHTS, index=INDEX))


def _cannot(path: Path, problem: str) -> CheckpointError:
    """The refusal of the checkpoint at `path`, for `problem` (a clause, said when shown)."""
    return CheckpointError(later("Cannot load the checkpoint at {path}: {problem}.", path=str(path), problem=problem))


def read_tensors(files: Iterable[Path]) -> dict[str, torch.Tensor]:
    """Every tensor of the safetensors files, by name; a corrupt or foreign file is refused."""
    tensors: dict[str, torch.Tensor] = {}
    for file in files:
        # safe_open parses the safetensors header itself: a pickle or a truncated file is
        # refused, never executed.
        try:
            with safe_open(str(file), framework="pt") as handle:
                for name in handle.keys():
                    # a copy in the process's own memory: the file's memory map would change under a
                    # running model if the file were overwritten (and fault if it were truncated)
                    tensors[name] = handle.get_tensor(name).clone()
        except Exception as exc:  # the library raises several types for corrupt files
            raise _cannot(
                file.parent,
                later(
                    "{name} is not a valid safetensors file ({problem})",
                    name=file.name,
                    problem=f"{type(exc).__name__}: {exc}",
                ),
            ) from None
    return tensors


def build_model(cfg: ModelConfig, state: dict[str, torch.Tensor], where: Path) -> Transformer:
    """A Transformer in eval mode holding exactly `state` (our parameter names), checked name by
    name and shape by shape. The tensors become the parameters (no second copy in memory), the
    decoder's stored for decoding (`Transformer.store_for_decoding`)."""
    with _no_initial_values():
        model = Transformer(cfg, init_weights=False)
    every = dict(model.named_parameters(remove_duplicate=False))
    expected = dict(model.named_parameters())  # a tied matrix once, under its first name
    first_name = {id(param): name for name, param in expected.items()}
    canonical = {name: first_name[id(param)] for name, param in every.items()}
    absent, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if absent or extra:
        raise _cannot(
            where,
            later(
                "the weights do not match the config (missing {absent}, unexpected {extra})",
                absent=str(absent[:3]),
                extra=str(extra[:3]),
            ),
        )
    ready = {}
    for name, param in expected.items():
        tensor = state[name]
        if tuple(tensor.shape) != tuple(param.shape):
            raise _cannot(
                where,
                later(
                    "weight {name} has shape {shape}, the config needs {needed}",
                    name=name,
                    shape=str(tuple(tensor.shape)),
                    needed=str(tuple(param.shape)),
                ),
            )
        if not tensor.dtype.is_floating_point or not _finite(tensor):
            raise _cannot(where, later("weight {name} is not a finite floating-point tensor", name=name))
        ready[name] = tensor.float()  # no copy when already float32
    model.load_state_dict({name: ready[canonical[name]] for name in every}, strict=True, assign=True)
    model.store_for_decoding()
    return model.eval()


def _finite(tensor: torch.Tensor) -> bool:
    """No NaN or infinity in `tensor`. Its sum is finite unless one is there (or the sum overflows, and then
    every value is checked): this reads the tensor once and allocates nothing, where isfinite(t).all()
    first makes a mask as large as the tensor (1.1 s of SmolLM2-135M's 3-s load here)."""
    return bool(torch.isfinite(tensor.sum())) or bool(torch.isfinite(tensor).all())


@contextmanager
def _no_initial_values() -> Iterator[None]:
    """Build modules without drawing initial values: their parameters stay uninitialized memory that
    is never touched (so it costs neither time nor resident memory) until the loaded tensors replace
    them. (The meta device would do the same, but on this torch it imports torch._dynamo: +1.2 s.)"""
    _BUILDING.acquire()  # the patch is process-wide: one build at a time
    names = (
        "uniform_",
        "normal_",
        "kaiming_uniform_",
        "xavier_uniform_",
        "zeros_",
        "ones_",
        "constant_",
        "trunc_normal_",
    )
    saved = {name: getattr(init, name) for name in names}
    try:
        for name in names:
            setattr(init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, function in saved.items():
            setattr(init, name, function)
        _BUILDING.release()


def fingerprint(files: Iterable[Path]) -> str:
    """sha256 over the files' contents, in order: names one exact model (config, tokenizer, weights)."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode())
        with open(file, "rb") as handle:
            while chunk := handle.read(1 << 22):
                digest.update(chunk)
    return digest.hexdigest()[:16]

"""A loaded model's weights as they lie in memory, in one file that is memory-mapped back.

Loading lays the decoder's matrices out for decoding (`Transformer.store_for_decoding`: transposed
copies, the queries, keys and values in one block), and on this machine every fresh page of memory
costs: 538 MB of float32 (SmolLM2-135M) took 1.9 s just to touch. An image keeps each storage once,
in its final layout, and every parameter as a view of it (offset, shape, strides), in the safetensors
format (the storages as tensors, the views in its metadata). Reading one maps the file: the weights
stay in the page cache, nothing is copied, and the layout is already the decoding one. An image is
only ever written whole and put in place by a rename, never changed in place: a process that maps the
old one keeps reading it (reading a page cut from under a mapping would be a bus error).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import struct
import tempfile
import threading
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import save_file

from i18n import later

from ..errors import CheckpointError

VIEWS = "anatomy.views"  # metadata key: parameter name -> [storage key, offset, shape, strides]


def save_image(tensors: dict[str, torch.Tensor], file: Path) -> None:
    """Write float32 tensors (views sharing storages are kept as views) to `file`, atomically."""
    storages: dict[int, tuple[str, torch.Tensor]] = {}
    views = {}
    for name, tensor in tensors.items():
        if tensor.dtype != torch.float32:
            raise ValueError(f"{name} is {tensor.dtype}: an image holds float32 weights")
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in storages:
            flat = torch.empty(0, dtype=torch.float32).set_(storage)  # the whole storage, as float32
            storages[storage.data_ptr()] = (f"storage.{len(storages)}", flat)
        key = storages[storage.data_ptr()][0]
        views[name] = [key, tensor.storage_offset(), list(tensor.shape), list(tensor.stride())]
    arrays = {key: flat.detach().numpy() for key, flat in storages.values()}
    file.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".image-", dir=file.parent)
    os.close(handle)
    try:
        save_file(arrays, temporary, metadata={VIEWS: json.dumps(views)})
        os.replace(temporary, file)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


_WRITERS: list[threading.Thread] = []


def keep_image(tensors: dict[str, torch.Tensor], file: Path) -> None:
    """Write an image of `tensors` in a thread of its own, beside whatever runs next: the 538 MB of SmolLM2
    took 1.3 s to write here, and safetensors writes without holding the GIL. The thread is not a daemon,
    so a process that ends at once still finishes the image first. A cache that cannot be written costs
    only the next open's speed (it converts the file again)."""

    def write() -> None:
        with contextlib.suppress(OSError):
            save_image(tensors, file)

    writer = threading.Thread(target=write, name=f"image {file.parent.name}")
    _WRITERS.append(writer)
    writer.start()


def images_written() -> None:
    """Wait for every image being written (tests, benchmarks)."""
    while _WRITERS:
        _WRITERS.pop().join()


def load_image(file: Path) -> dict[str, torch.Tensor]:
    """The tensors of an image, views of the file mapped copy-on-write (a write stays in this process)."""

    def refuse(problem: str) -> CheckpointError:
        return CheckpointError(
            later("Cannot read the weights image {file}: {problem}.", file=str(file), problem=problem)
        )

    try:
        size = file.stat().st_size
        with open(file, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if length > size - 8:
                raise refuse(later("its header is longer than the file"))
            header = json.loads(handle.read(length))
        views = json.loads(header["__metadata__"][VIEWS])
        mapped = np.memmap(file, dtype=np.uint8, mode="c")
    except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
        raise refuse(later("it is not an image ({problem})", problem=f"{type(exc).__name__}: {exc}")) from None
    start = 8 + length
    bases = {}
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        if entry.get("dtype") != "F32" or start + end > size or (end - begin) % 4:
            raise refuse(later("its storage {key} is not float32 inside the file", key=key))
        bases[key] = torch.from_numpy(mapped[start + begin : start + end].view(np.float32))
    tensors = {}
    for name, (key, offset, shape, strides) in views.items():
        base = bases.get(key)
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) if all(shape) else offset
        if base is None or offset < 0 or last >= max(len(base), 1):
            raise refuse(later("its view {name} lies outside its storage", name=name))
        tensors[name] = torch.as_strided(base, shape, strides, offset)
    return tensors


def release_freed_memory() -> None:
    """Hand the memory freed inside the process back to the system (glibc keeps freed blocks of under
    32 MB for reuse: after a first GGUF open, 0.5 GB that the process no longer uses). A no-op elsewhere."""
    name = ctypes.util.find_library("c")
    if name is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(name).malloc_trim(0)

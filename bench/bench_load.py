"""Load: N concurrent browser-less sessions (Streamlit's websocket protocol) on the real app with
the shipped model; prints requests, errors, mismatches against single-session runs, latency and RSS.

    python bench/bench_load.py [--sessions 20] [--configs 3] [--seconds 60]
"""

from __future__ import annotations

import argparse
import sys

from common import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from load_scenario import run_load  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--configs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    print(run_load(None, args.sessions, args.configs, args.seconds).summary())


if __name__ == "__main__":
    main()

"""Load: N concurrent browser-less sessions (Streamlit's websocket protocol) on the real app with
the shipped model; prints requests, errors, mismatches against single-session runs, latency and RSS.

    python bench/bench_load.py [--sessions 20] [--configs 3] [--seconds 60] [--via-proxy --replicas 2]

--via-proxy drives the same sessions through nginx in front of --replicas app processes
(deploy/room.py, the topology of ./scripts/serve_room.sh). The last line of every run reads
`load: sessions=S runs=R errors=E mismatched=M p50=X.Xs p95=Y.Ys rss_start=A rss_end=B`: the server's
resident memory in MiB after loading the model and opening every page once, and at the end (with
--via-proxy, summed over the replicas). The caches' byte budgets (ui/session/cache.py) come from the
environment, e.g. `ANATOMY_RESULTS_MB=64 python bench/bench_load.py`.
"""

from __future__ import annotations

import argparse
import sys

from common import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from load_scenario import run_load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--configs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--via-proxy", action="store_true", help="through nginx in front of --replicas apps")
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()
    print(run_load(None, args.sessions, args.configs, args.seconds, args.replicas if args.via_proxy else 0).summary())


if __name__ == "__main__":
    main()

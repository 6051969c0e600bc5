"""Load: N concurrent browser-less sessions (Streamlit's websocket protocol) on the real app with
the shipped model; prints requests, errors, mismatches against single-session runs, latency and RSS.

    python bench/bench_load.py [--sessions 20] [--configs 3] [--seconds 60] [--via-proxy --replicas 2]
    python bench/bench_load.py --lab [--sessions 30] [--every 20] [--seconds 120]

--lab is a class on the real SmolLM2-135M-Instruct (tests/lab_scenario.py): each session types a new chat message
every --every seconds on the pages that stream the answer (Continue, Attention), and each page run is timed as its
student sees it: the first picture, the first piece, the time it said it waited for its turn, the whole page, and
the whole page over its fair share (the page alone, times the runs in flight beside it per decoding slot; and of
the machine as measured: as many new messages as slots sent at once to the quiet server, each page's time over
its page alone, since slots computing at once share the memory, the interpreter and the pages' own work); its
final page is compared with the same page and message run alone; the server's RSS at the start, at most and at the
end. Its last line reads
`lab: sessions=S runs=R errors=E mismatched=M first_picture_p95=… whole_p95=… fair_most=… machine_most=…`.

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

from lab_scenario import run_lab
from load_scenario import run_load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=None, help="20 (--lab: 30)")
    parser.add_argument("--configs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=None, help="60 (--lab: 120)")
    parser.add_argument("--via-proxy", action="store_true", help="through nginx in front of --replicas apps")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--lab", action="store_true", help="a class on the real SmolLM2, chat messages streamed")
    parser.add_argument("--every", type=float, default=20.0, help="--lab: seconds between a session's messages")
    args = parser.parse_args()
    if args.lab:
        print(run_lab(args.sessions or 30, args.every, args.seconds or 120.0).summary())
        return
    sessions, seconds = args.sessions or 20, args.seconds or 60.0
    print(run_load(None, sessions, args.configs, seconds, args.replicas if args.via_proxy else 0).summary())


if __name__ == "__main__":
    main()

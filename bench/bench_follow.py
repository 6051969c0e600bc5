"""Follow the talk: N simulated followers (no browser) of one room while its presenter makes C changes on the
Attention page, then N phones vote at once on one question.

    python bench/bench_follow.py [--followers 100] [--changes 10] [--votes N] [--via-proxy --replicas 2]

p50 and p95 run from the end of the presenter's run to each follower holding the new view (a follower holding it
before that end counts 0; the first line also gives them from the view's writing, and the CPU seconds the
server and this process, the simulated followers, spent during the changes, and the median time of the
presenter's page runs with the followers attached and on a fresh server nobody follows); bytes_per_change is per
follower (the events, the view inside them, or the compressed view when fetched); model_runs counts the model results
computed beyond what the same changes compute with nobody following (a second, fresh server measures that; through
nginx, summed over the replicas); RSS is in MiB, summed over the processes that serve the room (with
--via-proxy: the replicas and nginx). The last line reads

    follow: followers=N changes=C errors=E p50=X.XXs p95=Y.YYs bytes_per_change=B model_runs=R votes=V counted=K
            rss_start=A rss_end=B   (one line)
"""

from __future__ import annotations

import argparse
import sys

from common import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from follow_scenario import run_follow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--followers", type=int, default=100)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--votes", type=int, default=None, help="votes cast at once (default: one per follower)")
    parser.add_argument("--via-proxy", action="store_true", help="through nginx in front of --replicas apps")
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()
    report = run_follow(args.followers, args.changes, args.votes, args.replicas if args.via_proxy else 0)
    print(report.summary())


if __name__ == "__main__":
    main()

"""CLI: python -m model.corpus --out data/corpus --train 200000 --valid 2000 --test 2000 --seed 1"""

from __future__ import annotations

import argparse
import time

from .generator import write_splits


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m model.corpus", description="Write the synthetic English->French corpus splits."
    )
    ap.add_argument("--out", default="data/corpus", help="output directory")
    ap.add_argument("--train", type=int, default=200_000)
    ap.add_argument("--valid", type=int, default=2_000)
    ap.add_argument("--test", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    paths = write_splits(args.out, args.train, args.valid, args.test, args.seed)
    dt = time.perf_counter() - t0
    for name, p in paths.items():
        with p.open(encoding="utf-8") as f:
            n = sum(1 for _ in f)
        print(f"{name}: {n} examples -> {p}")
    print(f"done in {dt:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`python -m model.corpus`: the corpus generator's command (model/training/corpus/), under its documented name."""

from .training.corpus.__main__ import main

if __name__ == "__main__":
    raise SystemExit(main())

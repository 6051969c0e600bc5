"""`python -m model.convert_bin`: the command of model/checkpoints/convert_bin.py, under its documented name."""

from .checkpoints.convert_bin import main

if __name__ == "__main__":
    raise SystemExit(main())

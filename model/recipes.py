"""`python -m model.recipes`: the command of model/training/recipes.py, under its documented name."""

from .training.recipes import main

if __name__ == "__main__":
    raise SystemExit(main())

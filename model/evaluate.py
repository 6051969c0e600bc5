"""`python -m model.evaluate`: the command of model/training/evaluate.py, under its documented name."""

from .training.evaluate import main

if __name__ == "__main__":
    main()

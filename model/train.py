"""`python -m model.train`: the command of model/training/train.py, under its documented name."""

from .training.train import main

if __name__ == "__main__":
    main()

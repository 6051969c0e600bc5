"""The engine tests: the engine and training (masks, softmax, hooks, decoding, checkpoints, the corpus, the
analyses; marker `engine`)."""

from areas import marking

pytest_collection_modifyitems = marking(__file__)

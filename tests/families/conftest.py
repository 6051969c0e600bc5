"""The families tests: the real families against transformers itself, and GGUF files (marker `families`)."""

from areas import marking

pytest_collection_modifyitems = marking(__file__)

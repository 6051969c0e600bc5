"""The browser tests: the real app in chromium (marked e2e) (marker `browser`)."""

from areas import marking

pytest_collection_modifyitems = marking(__file__)

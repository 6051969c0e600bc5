"""The room tests: rooms shared with an audience, and replicas behind nginx (marker `room`)."""

from areas import marking

pytest_collection_modifyitems = marking(__file__)

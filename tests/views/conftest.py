"""The views tests: pictures as data: viz/ figures, views/ panels, the notebook (marker `views`)."""

from areas import marking

pytest_collection_modifyitems = marking(__file__)

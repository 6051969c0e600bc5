"""The app tests: the Streamlit frame in AppTest (controls, notices, the URL), the shared caches, the server,
the code's own checks (marker `app`)."""

import pytest
from areas import marking

pytest_collection_modifyitems = marking(__file__)


@pytest.fixture
def shipped_model(monkeypatch):
    """The app on the shipped model (no $ANATOMY_CHECKPOINT), for the tests that read its real weights."""
    monkeypatch.setenv("ANATOMY_CHECKPOINT", "")

"""The app tests: the Streamlit frame in AppTest (controls, notices, the URL), the shared caches, the server,
the code's own checks (marker `app`)."""

from areas import marking

pytest_collection_modifyitems = marking(__file__)

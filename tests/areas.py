"""The suite's areas: one folder of tests each, whose conftest.py marks its tests with the area's name, so that
one area runs alone (`./test.sh -m views`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def marking(conftest: str) -> Callable[[list[pytest.Item]], None]:
    """A pytest_collection_modifyitems hook for an area's conftest.py (`conftest` is its __file__): every test
    collected from that folder gets the folder's name as a marker."""
    folder = Path(conftest).resolve().parent

    def mark(items: list[pytest.Item]) -> None:
        marker = getattr(pytest.mark, folder.name)
        for item in items:
            if folder in item.path.resolve().parents:
                item.add_marker(marker)

    return mark

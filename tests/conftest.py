import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fixtures import build_tiny_checkpoint  # noqa: E402


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    """Path of a tiny checkpoint built once per test session."""
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt")


@pytest.fixture(scope="session")
def tiny_bundle(tiny_checkpoint):
    from model import load_bundle

    return load_bundle(tiny_checkpoint)


@pytest.fixture(scope="module", autouse=True)
def restore_torch_threads():
    """The app sets one torch thread (ui.engine), and new threads inherit the last value set in
    any thread: give every test module torch's own count back, in this thread and for new ones,
    so that traces compared across threads are computed alike."""
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)

import json
import os
import sys
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent
# Under pytest-xdist two workers share the cores: one torch thread each (read when torch is first imported), so
# that a worker's parallel loops never wait on a core the other worker, or its browser and app, is using.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
# The tests live in one folder per area (tests/areas.py); a test file may import another area's (its fixtures, its
# page runner), so every area's folder is on the path too.
AREAS = ("engine", "families", "views", "app", "browser", "room")
for _area in AREAS:
    sys.path.insert(0, str(ROOT / "tests" / _area))
# GGUF files are converted into a cache folder of the run's own (the app's is ~/.cache/transformer-anatomy):
# the first open of SmolLM2 in each worker converts it, every later one (the app servers' too) maps its image.
# Made by the first process (pytest-xdist's workers inherit it) and removed when that process ends.
if not os.environ.get("ANATOMY_CACHE"):
    import tempfile

    from model.checkpoints.catalog import GEMMA3_FILE

    os.environ["ANATOMY_CACHE"] = tempfile.mkdtemp(prefix="anatomy-test-cache-")
    _OWN_CACHE = os.environ["ANATOMY_CACHE"]
    # Gemma 3 270M, when fetched into the person's own cache (./fetch.sh gemma-3-270m), is linked into the run's,
    # where the tests that compare with it look for it (converting it is then the run's own work)
    _person_cache = Path(os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache")
    _fetched = _person_cache / "transformer-anatomy" / "models" / GEMMA3_FILE
    if _fetched.is_file():
        (Path(_OWN_CACHE) / "models").mkdir()
        (Path(_OWN_CACHE) / "models" / _fetched.name).symlink_to(_fetched)
else:
    _OWN_CACHE = ""


def pytest_unconfigure(config) -> None:
    """Remove the run's GGUF cache (half a gigabyte per converted SmolLM2)."""
    if _OWN_CACHE:
        import shutil

        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


from fixtures import build_tiny_checkpoint  # noqa: E402


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    """Path of a tiny checkpoint built once per test session."""
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt")


@pytest.fixture(scope="session")
def trained_tiny(tmp_path_factory) -> tuple[Path, dict]:
    """(folder, card): the `tiny` preset trained 120 steps with four snapshots and scored (ckpt/ and
    data/ in the folder), built once per test run and shared by pytest-xdist's workers through a file
    lock. Read it; copy it before changing it."""
    from model.training.evaluate import evaluate
    from model.training.train import train

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the run's own folder
    root = shared / "trained-tiny"
    with FileLock(str(shared / "trained-tiny.lock")):
        if not (root / "scored").exists():
            train(
                "tiny",
                root / "ckpt",
                root / "data",
                seed=3,
                budget_minutes=10,
                max_steps=120,
                progress=False,
                snapshots=4,
            )
            evaluate(root / "ckpt", root / "data", n_alignment=30, n_variants=5)
            (root / "scored").touch()
    return root, json.loads((root / "ckpt" / "card.json").read_text())


@pytest.fixture(scope="session")
def tiny_bundle(tiny_checkpoint):
    from model import load_bundle

    return load_bundle(tiny_checkpoint)


@pytest.fixture(scope="module", autouse=True)
def restore_torch_threads():
    """The app sets one torch thread (ui.session.engine), and new threads inherit the last value set in
    any thread: give every test module torch's own count back, in this thread and for new ones,
    so that traces compared across threads are computed alike."""
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


# Two workers (pyproject's `-n 2`). The browser tests (marked e2e) are one unit of work that one worker starts on
# at once and runs one test at a time, as on one worker, the player's first: two browsers drawing at once on two
# cores, all along, is where its Pause click was lost. The other worker takes the other files one by one, the
# slow ones first, then LATER_BROWSER_FILES (each its own unit), then the quick files, which fill the end of both
# workers' time so that they finish together. (pytest-xdist's own xdist_group marks group nothing
# with this pytest: their nodeid suffix never reaches its scheduler.)
TESTS = Path(__file__).parent
BROWSER_FILES = frozenset(p.name for p in TESTS.rglob("test_*.py") if "mark.e2e" in p.read_text())
# browser files that run as units of their own on the other worker, after its slow files: the longest with no Play
# in them, so that the two workers end together (measured: the browser unit took 885 s and the rest 580 s)
LATER_BROWSER_FILES = frozenset(
    {"test_browser_room.py", "test_readme_pictures.py", "test_browser_zh.py", "test_browser_addresses.py"}
)
FIRST_BROWSER_FILE = "test_browser_player.py"


def _order(item) -> int:
    name = item.path.name
    if name in LATER_BROWSER_FILES:
        return 3
    if name in BROWSER_FILES:
        return 0 if name == FIRST_BROWSER_FILE else 1
    return 2 if item.get_closest_marker("slow") else 4


def pytest_collection_modifyitems(config, items):
    """The order the two workers take the tests in (above)."""
    items[:] = sorted(items, key=_order)


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's one-file-at-a-time scheduling, with the browser files but LATER_BROWSER_FILES as one unit,
    in the collection's order."""
    from xdist.scheduler import LoadFileScheduling

    class BrowserTestsOneAtATime(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            name = Path(module).name
            return "browser" if name in BROWSER_FILES - LATER_BROWSER_FILES else module

    config.option.loadscopereorder = False  # keep the collection's order
    return BrowserTestsOneAtATime(config, log)

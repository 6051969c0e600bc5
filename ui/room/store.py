"""Rooms a presenter shares with an audience, kept as files (no streamlit, no plotly): what the presenter's
screen shows, published once per change as a static file any web server can hand to every follower, and the
room's question with one vote per phone.

    $ANATOMY_ROOMS_DIR/public/<code>/state.json        the room now: view version and language, question (answer
                                                       once revealed)
    $ANATOMY_ROOMS_DIR/public/<code>/view-<n>.json     the view as drawn (+ .json.gz, the same bytes compressed)
    $ANATOMY_ROOMS_DIR/private/<code>/room.json        the presenter key's hash, the question's answer
    $ANATOMY_ROOMS_DIR/private/<code>/votes/<q>/<id>   one file per phone: the option it chose
    $ANATOMY_ROOMS_DIR/private/<code>/alive            touched by the presenter's page while it is open

Only public/ is ever served. Every process serving the room (./app.sh alone, or replicas behind nginx) shares
the folder, so a follower or a vote may reach any of them; writes take the room's lock (fcntl.flock), so
concurrent votes from any number of processes are each counted once. A room code and a presenter key are drawn
by `secrets` (80 and 128 random bits). A room idle for $ANATOMY_ROOM_IDLE_HOURS (default 6: no presenter's page
open, no change) no longer exists, and its files go when the next room is created (`sweep`).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import gzip
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from i18n import later

ROOMS_ENV = "ANATOMY_ROOMS_DIR"
IDLE_ENV = "ANATOMY_ROOM_IDLE_HOURS"  # a room nobody presented or changed for this long is deleted (default 6)
IDLE_HOURS = 6.0
CODE = re.compile(r"^[a-z2-7]{16}$")  # 10 random bytes in lower-case base32
VOTER = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
PRESENT_SECONDS = 12.0  # the presenter counts as there while their page touched `alive` this recently
KEPT_VIEWS = 4  # a follower that is fetching an older view still finds it
MAX_OPTIONS = 40

# Called with a room's code after this process changed its state (a view, a question, a reveal, the end): the
# audience server in the same process pushes it at once instead of at its next look (ui/room/server.py).
_LISTENERS: list[Callable[[str], None]] = []


class RoomError(ValueError):
    """A request the room refuses (unknown room, wrong key, closed question, bad vote): says why."""


def root() -> Path:
    """The rooms' folder: $ANATOMY_ROOMS_DIR, else one per user in the system's temporary folder."""
    chosen = os.environ.get(ROOMS_ENV, "").strip()
    path = Path(chosen) if chosen else Path(tempfile.gettempdir()) / f"anatomy-rooms-{os.getuid()}"
    (path / "public").mkdir(mode=0o755, parents=True, exist_ok=True)
    (path / "private").mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def public_dir(code: str) -> Path:
    """Where the room's servable files are."""
    return root() / "public" / code


def _private(code: str) -> Path:
    return root() / "private" / code


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _write(path: Path, data: bytes) -> None:
    """Write a whole file at once: a reader sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


@contextmanager
def _locked(code: str) -> Iterator[None]:
    with open(_private(code) / "lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def valid_code(code: str) -> bool:
    """True for text shaped like a room code (it may still name no room)."""
    return bool(CODE.match(code))


def exists(code: str) -> bool:
    """True when `code` names a room on this server (one idle for too long no longer counts, see `sweep`)."""
    return valid_code(code) and (_private(code) / "room.json").is_file() and not _idle(code)


def _idle_seconds() -> float:
    try:
        hours = float(os.environ.get(IDLE_ENV, "") or IDLE_HOURS)
    except ValueError:
        hours = IDLE_HOURS
    return hours * 3600


def _idle(code: str, now: float | None = None) -> bool:
    """True when the room's presenter was last there, and the room last changed, longer ago than the idle limit."""
    latest = 0.0
    for path in (_private(code) / "alive", _private(code) / "room.json", public_dir(code) / "state.json"):
        with contextlib.suppress(FileNotFoundError):
            latest = max(latest, path.stat().st_mtime)
    return (now or time.time()) - latest > _idle_seconds()


def sweep(now: float | None = None) -> list[str]:
    """Delete every room idle for longer than $ANATOMY_ROOM_IDLE_HOURS (default 6 hours: the presenter's page
    touches the room every few seconds while it is open), its views and votes with it; returns their codes.
    Run whenever a room is created."""
    gone = []
    for folder in (root() / "private").iterdir():
        code = folder.name  # a room still being created has no room.json yet: left alone
        if valid_code(code) and (folder / "room.json").is_file() and _idle(code, now):
            shutil.rmtree(public_dir(code), ignore_errors=True)
            shutil.rmtree(folder, ignore_errors=True)
            gone.append(code)
    return gone


def create() -> tuple[str, str]:
    """A new room: (code, presenter key). Rooms idle for too long go first (`sweep`)."""
    with contextlib.suppress(OSError):
        sweep()
    code = base64.b32encode(secrets.token_bytes(10)).decode().lower()
    key = secrets.token_urlsafe(16)
    (_private(code) / "votes").mkdir(parents=True)
    public_dir(code).mkdir(parents=True)
    _write(_private(code) / "room.json", json.dumps({"key": _hash(key), "created": time.time()}).encode())
    with _locked(code):
        _set_state(code, {"room": code, "version": 0, "view": None, "question": None, "ended": False})
    touch(code, key)
    return code, key


def is_presenter(code: str, key: str) -> bool:
    """True when `key` is the presenter key of room `code` (compared in constant time)."""
    if not exists(code) or not key:
        return False
    return hmac.compare_digest(_read_json(_private(code) / "room.json")["key"], _hash(key))


def _check(code: str, key: str) -> None:
    if not exists(code):
        raise RoomError(later("There is no room {code!r} on this server.", code=code[:20]))
    if not is_presenter(code, key):
        raise RoomError(later("That key does not open room {code}: only its presenter can move it.", code=code))


def state(code: str) -> dict[str, Any]:
    """What every follower reads: the view's version and file, the question, whether the room ended."""
    return _read_json(public_dir(code) / "state.json")


def _set_state(code: str, value: dict[str, Any]) -> None:
    _write(public_dir(code) / "state.json", json.dumps(value, separators=(",", ":")).encode())
    for listener in _LISTENERS:
        listener(code)


def on_change(listener: Callable[[str], None]) -> None:
    """Call `listener(code)` (from any thread; it must return at once) after this process changes a room's state."""
    _LISTENERS.append(listener)


def view_gz(code: str, name: str) -> bytes:
    """The compressed copy of one of the room's views (a FileNotFoundError once a newer view replaced it)."""
    return (public_dir(code) / (name + ".gz")).read_bytes()


def touch(code: str, key: str) -> None:
    """The presenter's page is open: mark them present."""
    _check(code, key)
    (_private(code) / "alive").touch()


def presenter_present(code: str, now: float | None = None) -> bool:
    """True while the presenter's page has touched the room within PRESENT_SECONDS (and it is not ended)."""
    try:
        seen = (_private(code) / "alive").stat().st_mtime
    except FileNotFoundError:
        return False
    return (now or time.time()) - seen < PRESENT_SECONDS


def end(code: str, key: str) -> None:
    """The presenter stopped sharing: followers keep the last view and are told."""
    _check(code, key)
    with _locked(code):
        _set_state(code, state(code) | {"ended": True})
    (_private(code) / "alive").unlink(missing_ok=True)


def publish(code: str, key: str, data: bytes, language: str = "") -> int:
    """Publish what the presenter's screen shows (a JSON document) and the language it is in (an i18n code, kept
    in the state: a phone speaks it unless its link says otherwise); returns its version. Written once, whatever
    the number of followers: each fetches the same file (compressed beside it)."""
    _check(code, key)
    with _locked(code):
        current = state(code)
        version = current["version"] + 1
        name = f"view-{version}.json"
        _write(public_dir(code) / (name + ".gz"), gzip.compress(data, compresslevel=6, mtime=0))
        _write(public_dir(code) / name, data)
        said = {"lang": language} if language else {}
        _set_state(code, current | {"version": version, "view": name, "ended": False} | said)
        for old in range(max(1, version - 20), version - KEPT_VIEWS + 1):
            for suffix in ("", ".gz"):
                (public_dir(code) / f"view-{old}.json{suffix}").unlink(missing_ok=True)
    (_private(code) / "alive").touch()
    return version


@dataclass(frozen=True)
class Question:
    """A question drawn from the view on screen: its text, the options, and the model's answer (an index)."""

    text: str
    options: tuple[str, ...]
    answer: int
    note: str = ""  # said with the reveal: how the model's answer was read

    def __post_init__(self) -> None:
        if not 2 <= len(self.options) <= MAX_OPTIONS:
            raise RoomError(
                later("A question needs 2 to {most} options, not {n}.", most=MAX_OPTIONS, n=len(self.options))
            )
        if not 0 <= self.answer < len(self.options):
            raise RoomError(later("The model's answer must be one of the options."))


def ask(code: str, key: str, question: Question) -> str:
    """Open `question` to the room (closing any earlier one); returns its id."""
    _check(code, key)
    qid = secrets.token_hex(6)
    with _locked(code):
        (_private(code) / "votes" / qid).mkdir(parents=True)
        _write(
            _private(code) / "question.json",
            json.dumps({"id": qid, "answer": question.answer, "note": question.note}).encode(),
        )
        public = {"id": qid, "text": question.text, "options": list(question.options), "open": True}
        _set_state(code, state(code) | {"question": public})
    return qid


def _question(code: str, qid: str) -> dict[str, Any]:
    current = state(code).get("question")
    if not current or current["id"] != qid:
        raise RoomError(later("That question is no longer asked in this room."))
    return current


def vote(code: str, qid: str, voter: object, option: object) -> str:
    """Count one phone's answer (a phone may change it until the reveal); returns what happened, in words
    (said in the language of whoever shows it: `later`). A RoomError, and nothing changed, for an unknown room,
    a closed question, an option that does not exist, a malformed phone id, or the same answer twice."""
    if not exists(code):
        raise RoomError(later("There is no room {code!r} on this server.", code=code[:20]))
    if not isinstance(voter, str) or not VOTER.match(voter):
        raise RoomError(later("A vote needs this phone's id (8 to 64 letters, digits, - or _)."))
    if isinstance(option, bool) or not isinstance(option, int):
        raise RoomError(later("A vote names its option by number."))
    with _locked(code):
        current = _question(code, qid)
        options = current["options"]
        if not current["open"]:
            raise RoomError(later("The answer is revealed: this question takes no more votes."))
        if not 0 <= option < len(options):
            raise RoomError(
                later("There is no option {option}: pick one of 1 to {n}.", option=option + 1, n=len(options))
            )
        ballot = _private(code) / "votes" / qid / voter
        before = int(ballot.read_text()) if ballot.is_file() else None
        if before == option:
            raise RoomError(later("This phone already voted for {option!r}: counted once.", option=options[option]))
        _write(ballot, str(option).encode())
    if before is None:
        return later("Counted: {option}.", option=options[option])
    return later("Changed from {before} to {after}.", before=options[before], after=options[option])


def tally(code: str, qid: str) -> list[int]:
    """Votes per option of question `qid` (each phone once)."""
    options = len(_question(code, qid)["options"])
    counts = [0] * options
    folder = _private(code) / "votes" / qid
    for ballot in folder.iterdir():
        if not ballot.name.startswith("."):
            counts[int(ballot.read_text())] += 1
    return counts


def reveal(code: str, key: str, qid: str) -> dict[str, Any]:
    """Close the question and publish the model's answer and the final tally to every phone."""
    _check(code, key)
    with _locked(code):
        current = _question(code, qid)
        secret = _read_json(_private(code) / "question.json")
        revealed = current | {
            "open": False,
            "answer": secret["answer"],
            "note": secret["note"],
            "tally": tally(code, qid),
        }
        _set_state(code, state(code) | {"question": revealed})
    return revealed

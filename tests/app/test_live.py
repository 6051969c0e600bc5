"""Decodings in flight shared by sessions (ui/session/live.py): one decoding for every session that asks for it
while it is written, its news so far told to a session that comes late, and a decoding that stops when the last
session following it leaves; with a decoding that tells a piece each time the test lets it."""

from __future__ import annotations

import itertools
import queue
import threading
import time

import pytest

from ui.session import live

WAIT = 30.0  # seconds: a bound that only a broken test reaches


class Scripted:
    """A decoding that tells piece k when the test lets it (`allow`), then DONE with "result" after `pieces`."""

    def __init__(self, pieces: int) -> None:
        self.pieces, self.starts = pieces, 0
        self.allowed: queue.Queue[None] = queue.Queue()
        self.error: BaseException | None = None
        self.ended = threading.Event()

    def allow(self, n: int = 1) -> None:
        for _ in range(n):
            self.allowed.put(None)

    def __call__(self, tell: live.Tell) -> None:
        self.starts += 1
        try:
            for k in range(self.pieces):
                self.allowed.get(timeout=WAIT)
                tell("piece", k)
            tell(live.DONE, "result")
        except live.Abandoned as exc:
            self.error = exc
        finally:
            self.ended.set()


def take(inbox: queue.Queue, n: int) -> list:
    return [inbox.get(timeout=WAIT) for _ in range(n)]


_keys = itertools.count()


@pytest.fixture
def key():
    return ("test", next(_keys))


def test_two_sessions_asking_at_once_follow_one_decoding(key):
    decoding = Scripted(3)
    with live.following(key, decoding) as first, live.following(key, decoding) as second:
        decoding.allow(3)
        told = [("piece", 0), ("piece", 1), ("piece", 2), (live.DONE, "result")]
        assert take(first, 4) == told
        assert take(second, 4) == told
    assert decoding.ended.wait(WAIT) and decoding.starts == 1


def test_a_session_that_comes_late_hears_what_was_told_so_far_first(key):
    decoding = Scripted(3)
    with live.following(key, decoding) as first:
        decoding.allow(2)
        assert take(first, 2) == [("piece", 0), ("piece", 1)]
        with live.following(key, decoding) as late:
            assert take(late, 2) == [("piece", 0), ("piece", 1)]
            decoding.allow()
            assert take(late, 2) == [("piece", 2), (live.DONE, "result")]
    assert decoding.starts == 1


def test_the_decoding_goes_on_while_one_session_follows_and_stops_when_none_does(key):
    decoding = Scripted(5)
    with live.following(key, decoding) as first:
        with live.following(key, decoding):
            decoding.allow()
            assert take(first, 1) == [("piece", 0)]
        # the second left: the first still hears every piece
        decoding.allow()
        assert take(first, 1) == [("piece", 1)]
    decoding.allow()  # nobody follows: the next piece stops the decoding
    assert decoding.ended.wait(WAIT)
    assert isinstance(decoding.error, live.Abandoned)
    assert not live.live(key)
    again = Scripted(1)  # a session asking now starts its own
    with live.following(key, again) as inbox:
        again.allow()
        assert take(inbox, 2) == [("piece", 0), (live.DONE, "result")]
    assert again.starts == 1


def test_a_finished_decoding_is_let_go_of(key):
    decoding = Scripted(1)
    with live.following(key, decoding) as inbox:
        decoding.allow()
        take(inbox, 2)
    assert decoding.ended.wait(WAIT)
    for _ in range(600):  # the decoding's thread forgets it just after its last news
        if not live.live(key):
            break
        time.sleep(0.05)
    assert not live.live(key)

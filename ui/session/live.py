"""Decodings in flight, shared by the sessions that follow them: when a second session asks for a continuation
(or a translation) that another is writing at that moment, it follows the same decoding, from the news told
so far, instead of waiting in silence for the shared results cache or starting a second one. A decoding
runs in a thread of its own for as long as one session follows it; when the last one leaves (a rerun, a closed
tab), it stops at its next piece."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

News = tuple[str, object]  # (what it is, its value): the decoding's own words, which the stream reads
Tell = Callable[[str, object], None]
DONE = "done"  # the last news of every decoding: its result, or the error that ended it
WAITING = "waiting"  # a decoding waiting for its turn (ui/session/fair.py): how many decodings go before it
# News true for a moment only (a waiting decoding's place in line): told to those following now, not kept for a
# session that follows later (it hears the next telling)
PASSING = frozenset({WAITING})


class Abandoned(Exception):
    """Raised in the decoding's thread when no session follows it any more."""


@dataclass
class _Decoding:
    """One decoding in flight: its news so far, in order, and a queue for each session following it."""

    news: list[News] = field(default_factory=list)
    followers: list[queue.Queue[News]] = field(default_factory=list)


_LOCK = threading.Lock()
_LIVE: dict[Hashable, _Decoding] = {}


@contextmanager
def following(key: Hashable, decode: Callable[[Tell], None], name: str = "continuation") -> Iterator[queue.Queue[News]]:
    """The news of the decoding of `key`, in a queue: of the one another session started and still writes (its
    news so far first), else of `decode(tell)` started here in a thread called `name`. `decode` tells its news
    with `tell(kind, value)`, the last one DONE; `tell` raises Abandoned once nobody follows."""
    inbox: queue.Queue[News] = queue.Queue()
    with _LOCK:
        decoding = _LIVE.get(key)
        started = decoding is None
        if decoding is None:
            decoding = _LIVE[key] = _Decoding()
        for news in decoding.news:
            inbox.put(news)
        decoding.followers.append(inbox)
    if started:
        threading.Thread(target=_run, args=(key, decoding, decode), name=name, daemon=True).start()
    try:
        yield inbox
    finally:
        with _LOCK:
            decoding.followers.remove(inbox)


def live(key: Hashable) -> bool:
    """Whether a decoding of `key` is being written now."""
    with _LOCK:
        return key in _LIVE


def _run(key: Hashable, decoding: _Decoding, decode: Callable[[Tell], None]) -> None:
    def tell(kind: str, value: object) -> None:
        with _LOCK:
            if not decoding.followers and kind != DONE:  # dropped: a session asking from now on starts anew
                _forget(key, decoding)
                raise Abandoned
            if kind not in PASSING:
                decoding.news.append((kind, value))
            for inbox in decoding.followers:
                inbox.put((kind, value))

    try:
        decode(tell)
    except Abandoned:  # no one follows it: it ends here, quietly (it may have been waiting for its turn, fair.py)
        pass
    finally:
        with _LOCK:
            _forget(key, decoding)


def _forget(key: Hashable, decoding: _Decoding) -> None:
    """Let go of a decoding that ended or was dropped (under _LOCK): a session asking for `key` from now on
    starts its own."""
    if _LIVE.get(key) is decoding:
        del _LIVE[key]

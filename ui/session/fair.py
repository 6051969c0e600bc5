"""Decodings take turns by piece: at most SLOTS of them (the cores) compute at once, the others wait in line, and
each moves to the back of the line after each piece it writes; a new one goes before those already writing. A
200-piece answer so holds the model for one piece at a time, not for its whole length, and twenty 20-piece
answers asked behind it are written beside it.

On two cores, thirty students asking the real SmolLM2 at once are a queue of half a minute whatever is done; what
the line adds is that no one waits behind a long answer, that a page waiting says where it stands ("3 answers
ahead of yours", ui/page/stream.py), and that a decoding no one follows any more (a tab closed, a new prompt) gives
its place up at once: while it waits, it tells its place every WAIT_STEP, and telling raises live.Abandoned once no
session follows it (ui/session/live.py).

A decoding alone, or with fewer than SLOTS others, never waits.

What the decodings started and not yet ended hold together is bounded in bytes ($ANATOMY_DECODINGS_MB,
ui/session/cache.py): each joins with what it will hold at most (ui/session/footprint.py), and a new one whose
bytes would pass the budget waits for started ones to end (saying its place as any other), and the new ones behind
it with it. Thirty chat answers of the real SmolLM2 started at once held 2.5-3 GB before there was a budget.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ui.session.cache import DECODINGS_ENV, budget_bytes
from ui.session.live import WAITING

WAIT_STEP = 0.25  # seconds between two tellings of a waiting decoding's place
SLOTS_ENV = "ANATOMY_DECODING_SLOTS"  # how many decodings compute at once (default: the cores)


class Line:
    """Decodings in line, in order: the first `slots` compute, the others wait; after a piece, a decoding goes to
    the back. A new decoding waits only for those computing and the new ones before it: its first turn, the
    prompt's pass, is the page's first picture, and a student who just pressed Enter sees it within a turn or two,
    not after every piece of every answer in the room. Any object is a decoding's ticket."""

    def __init__(self, slots: int, budget: int | None = None) -> None:
        self.slots = max(1, slots)
        self.budget = budget  # bytes the started decodings may hold together (None: no bound)
        self._lock = threading.Lock()
        self._order: list[object] = []
        self._new: set[object] = set()  # joined, and not yet had a turn
        self._bytes: dict[object, int] = {}  # what each decoding will hold at most (ui/session/footprint.py)
        # each decoding's own signal, set while it may compute: a change wakes those whose turn it is, not the
        # whole line (thirty decodings woken at every piece to find it was not theirs)
        self._turns: dict[object, threading.Event] = {}

    def join(self, ticket: object, nbytes: int = 0) -> None:
        with self._lock:
            waiting_new = sum(1 for other in self._order[self.slots :] if other in self._new)
            self._order.insert(min(len(self._order), self.slots + waiting_new), ticket)
            self._new.add(ticket)
            self._bytes[ticket] = nbytes
            self._turns[ticket] = threading.Event()
            self._signal()

    def leave(self, ticket: object) -> None:
        with self._lock:
            self._new.discard(ticket)
            self._bytes.pop(ticket, None)
            self._turns.pop(ticket, None)
            if ticket in self._order:
                self._order.remove(ticket)
                self._signal()

    def to_the_back(self, ticket: object) -> None:
        """A piece written: the decoding goes behind every other, and the first waiting one may compute."""
        with self._lock:
            self._order.remove(ticket)
            self._order.append(ticket)
            self._signal()

    def ahead(self, ticket: object) -> int:
        """How many decodings are before this one in line, those computing now included: each writes a piece
        before this one does its next."""
        with self._lock:
            return self._order.index(ticket)

    def wait(self, ticket: object, seconds: float) -> bool:
        """Wait up to `seconds` for this decoding's turn; whether it may compute now."""
        with self._lock:
            turn = self._turns[ticket]
        turn.wait(seconds)
        with self._lock:  # the line may have changed since the signal: it is read again
            now = ticket in self._computing()
            if now and ticket in self._new:
                self._new.discard(ticket)
                self._signal()  # its bytes now count as held: a new one after it may no longer fit
            elif not now:
                turn.clear()  # a signal the line overtook: the next wait sleeps until a change
            return now

    def held(self) -> int:
        """The bytes the started decodings will hold at most, together."""
        with self._lock:
            return sum(nbytes for ticket, nbytes in self._bytes.items() if ticket not in self._new)

    def _signal(self) -> None:
        """Set the signal of each decoding that may compute now, and clear the others' (under the lock)."""
        computing = set(self._computing())
        for ticket, turn in self._turns.items():
            if ticket in computing:
                turn.set()
            else:
                turn.clear()

    def _computing(self) -> list[object]:
        """The decodings that compute now (under the lock): the first `slots` in line, passing over a new one
        whose bytes the budget cannot hold beside the started ones, and every new one after it, so that a large
        one is not passed for ever (it waits for started ones to end; alone, it starts)."""
        held = sum(nbytes for ticket, nbytes in self._bytes.items() if ticket not in self._new)
        computing: list[object] = []
        full = False
        for ticket in self._order:
            if ticket in self._new:
                full = full or (self.budget is not None and held > 0 and held + self._bytes[ticket] > self.budget)
                if full:
                    continue
                held += self._bytes[ticket]
            computing.append(ticket)
            if len(computing) == self.slots:
                break
        return computing

    def __len__(self) -> int:
        with self._lock:
            return len(self._order)


def _slots() -> int:
    given = os.environ.get(SLOTS_ENV, "")
    return int(given) if given.isdigit() and int(given) > 0 else os.cpu_count() or 1


DECODINGS = Line(_slots(), budget_bytes(DECODINGS_ENV))  # every streamed decoding in the process (ui/page/stream.py)


@contextmanager
def in_line(
    tell: Callable[[str, object], None], nbytes: int = 0, line: Line = DECODINGS
) -> Iterator[Callable[[], None]]:
    """A decoding's place in `line`, from its first turn (waited for here, its place told with `tell(WAITING,
    ahead)` every WAIT_STEP) to its end: gives `next_turn`, to call after each piece (to the back, then wait for the
    turn again). However the decoding ends, its place is given up; `tell` raising (live.Abandoned: no one follows
    it) ends a wait."""
    ticket = object()
    line.join(ticket, nbytes)

    def turn() -> None:
        while not line.wait(ticket, WAIT_STEP):
            tell(WAITING, line.ahead(ticket))

    def next_turn() -> None:
        line.to_the_back(ticket)
        turn()

    try:
        turn()
        yield next_turn
    finally:
        line.leave(ticket)

"""Long texts take turns (ui/session/turns.py): one page run with a long text at a time, and a turn a run
never gave back does not block the others."""

from __future__ import annotations

import threading

from ui.session import turns


def _in_thread(work) -> threading.Thread:
    thread = threading.Thread(target=work)
    thread.start()
    return thread


def test_a_second_long_text_waits_until_the_first_ends_its_turn():
    holding, release, order = threading.Event(), threading.Event(), []

    def first() -> None:
        turns.take_turn(True)
        order.append("first in")
        holding.set()
        release.wait(10)
        order.append("first out")
        turns.end_turn()

    def second() -> None:
        turns.take_turn(True)
        order.append("second in")
        turns.end_turn()

    a = _in_thread(first)
    assert holding.wait(10)
    b = _in_thread(second)
    b.join(0.5)
    assert b.is_alive() and turns.busy()  # waiting for the first
    release.set()
    a.join(10), b.join(10)
    assert order == ["first in", "first out", "second in"]
    assert not turns.busy()


def test_short_texts_never_wait():
    holding, release = threading.Event(), threading.Event()

    def long_run() -> None:
        turns.take_turn(True)
        holding.set()
        release.wait(10)
        turns.end_turn()

    a = _in_thread(long_run)
    assert holding.wait(10)
    done = threading.Event()
    b = _in_thread(lambda: (turns.take_turn(False), done.set()))
    assert done.wait(5)
    release.set()
    a.join(10), b.join(10)


def test_a_turn_whose_thread_is_gone_or_starts_again_is_free():
    gone = _in_thread(lambda: turns.take_turn(True))  # a run stopped before its end: no end_turn
    gone.join(10)
    took = threading.Event()
    _in_thread(lambda: (turns.take_turn(True), took.set())).join(10)  # its thread ended: not waited on
    assert took.is_set()
    seen: list[bool] = []
    turns.take_turn(True)  # this thread, then its next run with a short text gives the turn back
    _in_thread(lambda: seen.append(turns.busy())).join(10)
    turns.take_turn(False)
    _in_thread(lambda: seen.append(turns.busy())).join(10)
    assert seen == [True, False]

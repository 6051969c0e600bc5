"""Long texts take turns: one page run at a time, in the whole process, works on a text of more than
LONG_PIECES pieces; other page runs with long texts wait for it, short ones never do.

A result's arrays grow with the square of the text: at 2,000 characters (about 430 pieces) one
all-MiniLM-L6-v2 trace is 165 MiB, and a page holds up to four while it draws. Six tabs that opened
pasted paragraphs at the same moment took the server from 0.5 to 3.2 GB (Positional encoding) and
5.5 GB (Masks and heads lab); a room doing it would run a replica out of memory. On two cores the
runs share the processor anyway, so taking turns costs the last of them little: the runs finish in
about the same total time, one after another instead of all at the end.

A turn is held by the thread of the page run that took it (Streamlit runs a session's page runs on
its script thread). It ends when that run finishes (`end_turn`), when the same thread starts its next
page run (a run stopped by st.stop or st.rerun never reaches its end), or when the thread is gone.
"""

from __future__ import annotations

import threading

LONG_PIECES = 192  # about 900 characters of English for MiniLM's tokenizer; the default model reads at most 96

_changed = threading.Condition()
_holder: threading.Thread | None = None
WAIT_STEP = 0.25  # seconds between looks at whether the holder's thread is still there


def _free() -> bool:
    return _holder is None or not _holder.is_alive() or _holder is threading.current_thread()


def busy() -> bool:
    """True when a page run of another thread holds the turn (a long text would wait)."""
    with _changed:
        return not _free()


def take_turn(long: bool) -> None:
    """Called as a page run starts: give back a turn this thread still holds from an earlier run,
    then, for a long text, wait until no other run holds it and take it."""
    global _holder
    with _changed:
        if _holder is threading.current_thread():
            _holder = None
            _changed.notify_all()
        if not long:
            return
        while not _free():
            _changed.wait(WAIT_STEP)
        _holder = threading.current_thread()


def end_turn() -> None:
    """Called as a page run ends: give back the turn if this thread holds it."""
    global _holder
    with _changed:
        if _holder is threading.current_thread():
            _holder = None
            _changed.notify_all()

"""A play button for talks: decoding steps itself forward, about one step a second.

The button sits outside the animated part of the page; a click reruns the whole page, which
registers the animated part as a fragment that reruns itself every PERIOD seconds while playing.
Each run of that fragment moves the shared `step` control one step on, so the Attention page's
step slider and the Translate page's partial output follow it; at the last step it pauses.
"""

from __future__ import annotations

from typing import Callable

import streamlit as st

from .page import set_value, stored

PERIOD = 1.0  # seconds per step
PLAYING = "_anatomy_playing"
ENGAGED = "_anatomy_player_engaged"  # played and not yet run to the end: pages show the output so far


def _toggle(n_steps: int) -> None:
    st.session_state[PLAYING] = not playing()
    if playing() and (stored("step") >= n_steps or not engaged()):
        set_value("step", 0)  # play from the start: the first run of the player shows step 1
    st.session_state[ENGAGED] = True


def playing() -> bool:
    """True while decoding plays itself (controls it drives are shown disabled)."""
    return bool(st.session_state.get(PLAYING))


def engaged() -> bool:
    """True while playing, or paused before the last step: show the output built so far."""
    return bool(st.session_state.get(ENGAGED))


def _disengage() -> None:
    st.session_state[PLAYING] = False
    st.session_state[ENGAGED] = False


def controls(n_steps: int, key: str) -> bool:
    """The Play / Pause button (and a note of what it does); True while playing."""
    now = playing()
    label = "Pause" if now else ("Resume" if engaged() else "Play decoding")
    left, right = st.columns([1, 4])
    with left:
        st.button(label, icon=":material/pause:" if now else ":material/play_arrow:", key=f"play-{key}",
                  on_click=_toggle, args=(n_steps,), disabled=n_steps < 2,
                  help="Step through decoding by itself, about one step a second; press again to pause.")
    with right:
        if engaged() and not now:
            st.button("Show the whole output", key=f"stop-{key}", on_click=_disengage)
    return now


def run(body: Callable[[int], None], n_steps: int) -> None:
    """Draw `body(step)` (step counted from 0); while playing, again every PERIOD seconds, one step on."""
    def frame() -> None:
        step = min(max(stored("step"), 1), n_steps)
        finished = False
        if playing():
            step = min(stored("step") + 1, n_steps)
            finished = step >= n_steps
        set_value("step", step)
        body(step - 1)
        if finished:  # the last step: stop, and rerun the page once so that the timer stops
            _disengage()
            st.rerun()

    st.fragment(frame, run_every=PERIOD if playing() else None)()

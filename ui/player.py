"""Play buttons for talks: a stored control steps itself forward, about one step a second.

DECODING moves the decoding step (Attention and Translate pages); TIME_LAPSE moves the training
snapshot (Training page). The button sits outside the animated part of the page; a click reruns
the whole page, which registers the animated part as a fragment that reruns itself every PERIOD
seconds while playing (paused, it is drawn as part of the page). Each run of that fragment moves the
control one step on, so the sliders that show it follow; at the last step it pauses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from .page import LIVE_FRAGMENT, set_value, stored

PERIOD = 1.0  # seconds per step


@dataclass(frozen=True)
class Player:
    """A play button over one stored control counted from 1 (its own playing state per session)."""

    control: str  # the stored control it moves
    label: str  # the button before the first play
    help: str

    @property
    def _playing_key(self) -> str:
        return f"_anatomy_playing_{self.control}"

    @property
    def _engaged_key(self) -> str:  # played and not yet run to the end: pages show the state so far
        return f"_anatomy_engaged_{self.control}"

    def playing(self) -> bool:
        """True while it plays itself (controls it drives are shown disabled)."""
        return bool(st.session_state.get(self._playing_key))

    def engaged(self) -> bool:
        """True while playing, or paused before the last step: show what was built so far."""
        return bool(st.session_state.get(self._engaged_key))

    def _toggle(self, n_steps: int) -> None:
        st.session_state[self._playing_key] = not self.playing()
        if self.playing() and (stored(self.control) >= n_steps or not self.engaged()):
            set_value(self.control, 0)  # play from the start: the first run of the player shows step 1
        st.session_state[self._engaged_key] = True

    def _disengage(self) -> None:
        st.session_state[self._playing_key] = False
        st.session_state[self._engaged_key] = False

    def controls(self, n_steps: int, key: str, finish_label: str | None = "Show the whole output") -> bool:
        """The Play / Pause button (and, with a finish label, a way out of a paused play); True while playing."""
        now = self.playing()
        label = "Pause" if now else ("Resume" if self.engaged() else self.label)
        left, right = st.columns([1, 4])
        with left:
            st.button(
                label,
                icon=":material/pause:" if now else ":material/play_arrow:",
                key=f"play-{key}",
                on_click=self._toggle,
                args=(n_steps,),
                disabled=n_steps < 2,
                help=self.help,
            )
        with right:
            if finish_label and self.engaged() and not now:
                st.button(finish_label, key=f"stop-{key}", on_click=self._disengage)
        return now

    def run(self, body: Callable[[int], None], n_steps: int) -> None:
        """Draw `body(step)` (step counted from 0); while playing, again every PERIOD seconds, one step on."""

        def frame() -> None:
            step = min(max(stored(self.control), 1), n_steps)
            finished = False
            if self.playing():
                step = min(stored(self.control) + 1, n_steps)
                finished = step >= n_steps
            set_value(self.control, step)
            body(step - 1)
            if finished:  # the last step: stop, and rerun the page once so that the timer stops
                self._disengage()
                st.rerun()

        # Only a playing part is a fragment: a paused page has none left holding its data (Page.finish),
        # and a control moved inside it reruns the whole page.
        st.session_state[LIVE_FRAGMENT] = self.playing()
        if self.playing():
            st.fragment(frame, run_every=PERIOD)()
        else:
            frame()


DECODING = Player(
    "step", "Play decoding", "Step through decoding by itself, about one step a second; press again to pause."
)
TIME_LAPSE = Player(
    "snapshot",
    "Play the time-lapse",
    "Step through the training snapshots by themselves, about one a second; press again to pause.",
)

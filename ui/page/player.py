"""Play buttons for talks: a stored control steps itself forward, about one step a second, and a
lecturer's clicker steps it by hand.

DECODING moves the decoding step (Translate, Attention and Why this word?); TIME_LAPSE moves the
training snapshot (Training page). The button sits outside the animated part of the page; a click
reruns the whole page, which draws the animated part as a fragment, playing or paused (so that its
unchanged charts are kept across the switch), that reruns itself every PERIOD seconds while playing.
Each run of that fragment moves the control one step on, so the sliders that show it follow; at the
last step it pauses.

Beside it, a step back and a step on: buttons with Streamlit's keyboard shortcuts, PageUp and
PageDown (what a presenter's clicker sends), and two hidden ones for the arrow keys that some
clickers send. Streamlit leaves keys typed into a text box, and arrows on a focused slider, to
them, and never binds "b" or "." (a clicker's blank-screen key).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from i18n import N_, _, set_language
from ui.page import talk
from ui.page.binding import renew_widgets, set_value, stored
from ui.page.markup import NEWEST, PLAYING_CSS
from ui.page.start import LIVE_FRAGMENT, Page

PERIOD = 1.0  # seconds per step
FINISH = N_("Show the whole output")  # the way out of a paused play


@dataclass(frozen=True)
class Player:
    """A play button over one stored control counted from 1 (its own playing state per session)."""

    control: str  # the stored control it moves
    label: str  # the button before the first play (English, marked with N_: said with _() when shown)

    @property
    def _playing_key(self) -> str:
        return f"_anatomy_playing_{self.control}"

    @property
    def _engaged_key(self) -> str:  # played and not yet run to the end: pages show the state so far
        return f"{talk.ENGAGED}{self.control}"

    def playing(self) -> bool:
        """True while it plays itself (controls it drives are shown disabled)."""
        return bool(st.session_state.get(self._playing_key))

    def engaged(self) -> bool:
        """True while playing, or paused before the last step: show what was built so far."""
        return bool(st.session_state.get(self._engaged_key))

    # Each button's callback sets a state rather than flipping it, and Play and Pause are two buttons (two
    # keys): while playing, Streamlit can run one click's callback twice (a timed fragment rerun preempts
    # the click's rerun, which replays the click, even after the page has redrawn the button), and a second
    # flip, or a replayed Pause reaching the Play button drawn since, would undo the Pause.
    def _play(self, n_steps: int, from_the_start: bool) -> None:
        if stored(self.control) >= n_steps or (from_the_start and not self.engaged()):
            set_value(self.control, 0)  # play from the start: the first run of the player shows step 1
        st.session_state[self._playing_key] = True
        st.session_state[self._engaged_key] = True

    def _pause(self) -> None:
        if self.playing():
            renew_widgets(self.control)  # the browser's late copies of the moving widget cannot move it back
        st.session_state[self._playing_key] = False

    def _disengage(self) -> None:
        self._pause()
        st.session_state[self._engaged_key] = False

    def _step_by(self, change: int, n_steps: int) -> None:
        """A step back or on by hand: the play pauses there, and the page shows the output so far."""
        self._pause()
        st.session_state[self._engaged_key] = True
        set_value(self.control, min(max(stored(self.control) + change, 1), n_steps))

    def _step_through(self, change: int, n_steps: int) -> None:
        """A talk's press within this view's steps (ui/page/talk.py): the first press after the view opens shows
        the step on show, played so far, rather than the one after it."""
        if not self.engaged():
            self._step_by(0, n_steps)
        else:
            self._step_by(change, n_steps)

    def controls(self, n_steps: int, key: str, finish_label: str | None = FINISH, whole_at_rest: bool = False) -> bool:
        """The Play / Pause button, a step back and on (PageUp and PageDown, or the arrow keys) and, with a
        finish label (marked with N_, or said already), a way out of a paused play; True while playing. Play goes
        on from the step on show, or from the first when the page at rest shows every step (`whole_at_rest`) or the
        last one."""
        now = self.playing()
        if now:
            st.html(PLAYING_CSS)
        label = _("Pause") if now else (_("Resume") if self.engaged() else _(self.label))
        disabled = n_steps < 2
        in_a_talk = talk.giving() is not None  # the talk's keys step through these steps, then on to its next view
        if in_a_talk:
            st.session_state[talk.CLICKER] = talk.Clicker(lambda: stored(self.control), n_steps, self._step_through)

        def step_button(
            label: str, change: int, shortcut: str, icon: str | None = None, tooltip: str | None = None
        ) -> None:
            st.button(
                label,
                icon=icon,
                key=f"{shortcut.lower()}-{key}",
                on_click=self._step_by,
                args=(change, n_steps),
                disabled=disabled,
                shortcut=None if in_a_talk else shortcut,
                help=tooltip,
            )

        # content-wide buttons in one row: a label is never cut to "Play dec…"; no tooltip over the title
        with st.container(horizontal=True, vertical_alignment="center", key=f"player-{key}"):
            st.button(
                label,
                icon=":material/pause:" if now else ":material/play_arrow:",
                key=f"{'pause' if now else 'play'}-{key}",
                on_click=self._pause if now else self._play,
                args=() if now else (n_steps, whole_at_rest),
                disabled=disabled,
            )
            step_button("", -1, "PageUp", ":material/chevron_left:", _("A step back (PageUp or ←)"))
            step_button("", 1, "PageDown", ":material/chevron_right:", _("A step on (PageDown or →)"))
            if finish_label and self.engaged() and not now:
                st.button(_(finish_label), key=f"stop-{key}", on_click=self._disengage)
        if not in_a_talk:
            with st.container(key=f"arrows-{key}"):  # hidden by ui.page.markup.APP_CSS: arrow keys some clickers send
                step_button(_("Left"), -1, "Left")
                step_button(_("Right"), 1, "Right")
        return now

    def run(self, body: Callable[[int], None], n_steps: int, page: Page | None = None) -> None:
        """Draw `body(step)` (step counted from 0); while playing, again every PERIOD seconds, one step on.
        With the `page` body draws on, each frame after the page's full run is published to its room, if shared
        (the full run publishes itself when it finishes)."""
        drawn: list[int] = []  # where the full run's frame put its figures in page.figures: [start, end]
        # Paused, let go of after the page's run: the body and the page hold the run's data (Page.finish).
        held: dict[str, tuple[Callable[[int], None], Page | None]] = {"run": (body, page)}

        def frame() -> None:
            set_language(stored("lang"))  # a rerun of the fragment alone runs no start()
            if "run" not in held:  # a control moved inside the paused part: it is the whole page's to redraw
                st.rerun(scope="app")
            # The last step has had its period: stop, and rerun the page so that the timer stops. Nothing is drawn
            # first: a frame drawn, then the page's run over it, left both on screen for a moment.
            if self.playing() and stored(self.control) >= n_steps:
                self._disengage()
                st.rerun()
            draw, shown = held["run"]
            step = (
                min(stored(self.control) + 1, n_steps) if self.playing() else min(max(stored(self.control), 1), n_steps)
            )
            set_value(self.control, step)
            mark = len(shown.figures) if shown else 0
            draw(step - 1)
            if shown is not None:
                if drawn:  # a rerun of the fragment alone: Page.finish does not run
                    shown.publish_frame(drawn[0], drawn[1], mark)
                else:
                    drawn.extend((mark, len(shown.figures)))

        # The animated part is a fragment playing or paused: Streamlit redraws every chart of a part that turns
        # into a fragment or back (each a blank area until plotly has drawn it again), but keeps the charts of a
        # fragment that stays one. Paused, it holds nothing of the page's run (Page.finish lets go of it all).
        st.session_state[LIVE_FRAGMENT] = self.playing()
        st.fragment(frame, run_every=PERIOD if self.playing() else None)()
        if not self.playing():
            held.clear()

    def steady_chart(
        self, page: Page, key: str, figure_at: Callable[[int], go.Figure], step: int, first: int = 0, caption: str = ""
    ) -> None:
        """A chart that changes at every step, drawn without a blank while it changes: the step's figure in one of
        two slots stacked in one place (ui.page.markup.APP_CSS), over the step before's in the other (from `first`
        on, while the player is engaged), the caption under both. Streamlit remounts a chart whose figure changed,
        and until plotly has drawn it, its area is empty; the other slot's chart is unchanged, so it stays drawn
        and shows through until then."""
        newest = step % 2
        with st.container(key=f"steady-{key}"):
            for slot in (0, 1):
                with st.container(key=f"slot-{key}-{slot}"):
                    if slot == newest:
                        page.show(figure_at(step), key=f"{key}-{slot}")
                        st.html(f"<span class='{NEWEST}'></span>")
                    elif step > first and self.engaged():
                        page.draw(figure_at(step - 1), key=f"{key}-{slot}")
        if caption:
            st.caption(caption)


DECODING = Player("step", N_("Play decoding"))
TIME_LAPSE = Player("snapshot", N_("Play the time-lapse"))

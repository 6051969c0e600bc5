"""A talk given in the app (views/talks.py): `talk=<name>` opens talks/<name>.toml at its first view, `at=<n>` at its
n-th; PageDown / → steps through the view's own Play steps, then moves to the next view, PageUp / ← back; a slim bar
says "4 / 12 · title". Everything is in presentation mode's layout (`present=on` unless the view says otherwise).

A view opens as its file says, whatever the view before changed: the session's store of controls is emptied and
the view's controls become the address the page reads its controls from (binding.RAW), as on a first visit; the
language, the room and the talk itself stay the person's. The address of any moment of the talk is the talk, the
view's number and every control, so a reload or a link reproduces it.

While a view is shown, the next one's model and result are prepared in the background (ui/session/prepare.py), so
that a press does not wait for a model to load or a text to be read.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import streamlit as st

from i18n import _, language
from ui.page import talk_notes
from ui.page.binding import EPOCH, FIELDS, NOTES, RAW, VALUES, stored_values
from ui.room import presenter, store
from ui.session import prepare
from ui.session.nav import PAGES as NAV_PAGES
from ui.session.nav import ROOT
from views.controls import LANGUAGE, PRESENT
from views.markdown import md
from views.models import menu_models
from views.talks import NAME, PERSONAL_KEYS, Talk, TalkError, View, dump, parse

TALKS_DIR = ROOT / "talks"
SESSION = "_anatomy_talk"  # the talk this session gives: a Giving, or None
MOVE = "_anatomy_talk_move"  # the view a press asked for, shown from the next run
CLICKER = "_anatomy_talk_clicker"  # the Play steps of the view on show (a Clicker), set by ui/page/player.py
TALK_KEY, AT_KEY = "talk", "at"
PLAYED_KEY = "played"  # on: the view's Play steps are being stepped through (the page shows the output so far)
ENGAGED = "_anatomy_engaged_"  # + a player's control: its play engaged (ui/page/player.py)
PLAYED_CONTROLS = ("step", "snapshot")  # the controls the players move (ui/page/player.py's DECODING, TIME_LAPSE)
SAVED = re.compile(r"@[0-9a-f]{12}")  # a talk made or opened in the app (saved_name)
# What a view change resets besides the controls: Play's state per control (ui/page/player.py) and the widgets'
# epochs (ui/page/binding.py)
_PLAYER_STATE = ("_anatomy_playing_", ENGAGED, EPOCH)
_FILES = {slug: path for path, _title, slug in NAV_PAGES}
KEPT_KEYS = (*presenter.ROOM_PARAMS, presenter.BACK)  # the person's room, kept from view to view


@dataclass
class Giving:
    """The talk a session gives: its name (its file under talks/, "" for one made or uploaded here), the talk, the
    view on show (from 0), the token of its notes window's cue and when it began."""

    name: str
    talk: Talk
    at: int
    cue: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    began: float = field(default_factory=time.time)

    @cached_property
    def text(self) -> str:
        """The talk as its file says it."""
        return dump(self.talk)

    @property
    def view(self) -> View:
        return self.talk.views[self.at]

    @property
    def next_view(self) -> View | None:
        return self.talk.views[self.at + 1] if self.at + 1 < len(self.talk.views) else None


@dataclass(frozen=True)
class Clicker:
    """The Play steps of the view on show: where it stands (from 1), how many steps, and a step by hand (a change
    of -1 or 1, and the number of steps)."""

    position: Callable[[], int]
    n_steps: int
    step: Callable[[int, int], None]

    def can_step(self, change: int) -> bool:
        return 1 <= self.position() + change <= self.n_steps


def talk_file(name: str) -> Path:
    """The file of a talk under talks/ (TalkError for a name that is not a plain file name)."""
    if not NAME.fullmatch(name):
        raise TalkError(_("A talk's name is its file's name under talks/, in small letters, digits, - and _."))
    return TALKS_DIR / f"{name}.toml"


def _saved_folder() -> Path:
    folder = store.root() / "private" / "talks"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def saved_name(talk: Talk) -> str:
    """A name for a talk made or opened in the app, so that an address names it as it names a file under talks/:
    "@" and its file's hash; the file is kept in the rooms' private folder (ui/room/store.py)."""
    text = dump(talk)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = _saved_folder() / f"{digest}.toml"
    if not path.is_file():
        path.write_text(text, encoding="utf-8")
    return f"@{digest}"


def load(name: str) -> Talk:
    """The talk named `name` under talks/ (or saved by `saved_name`), every view checked against the Model menu
    (TalkError)."""
    if SAVED.fullmatch(name):
        path = _saved_folder() / f"{name[1:]}.toml"
        if not path.is_file():
            raise TalkError(_("The talk {name} was made on another server, or was deleted since.", name=name))
        return parse(path.read_text(encoding="utf-8"), models=menu_models())
    path = talk_file(name)
    if not path.is_file():
        shipped = ", ".join(sorted(p.stem for p in TALKS_DIR.glob("*.toml")))
        raise TalkError(_("There is no talk {name} under talks/; there are: {talks}.", name=repr(name), talks=shipped))
    return parse(path.read_text(encoding="utf-8"), models=menu_models())


def giving() -> Giving | None:
    """The talk this session gives, if any."""
    return st.session_state.get(SESSION)


def begin() -> None:
    """At the start of every page run, once the session's store exists: on the session's first run, open the talk
    its address names (at `at=`, else at its first view); then show the view a press asked for, if any (this run
    stops and the view's page runs instead); keep the talk in the address."""
    raw = st.session_state[RAW]
    if raw.get(talk_notes.NOTES_KEY) == "on":
        talk_notes.notes_window(raw.get(talk_notes.CUE_KEY, ""))  # stops the run
    if SESSION not in st.session_state:
        st.session_state[SESSION] = None
        _open(raw)
    talk = giving()
    if talk is None:
        return
    if MOVE in st.session_state:
        show(talk, st.session_state.pop(MOVE))
    st.session_state.pop(CLICKER, None)  # the page's player, if any, says its steps in this run
    played = any(st.session_state.get(f"{ENGAGED}{control}") for control in PLAYED_CONTROLS)
    for key, value in ((TALK_KEY, talk.name), (AT_KEY, str(talk.at + 1)), (PLAYED_KEY, "on" if played else "")):
        if value and st.query_params.get(key) != value:
            st.query_params[key] = value
        elif not value and key in st.query_params:
            del st.query_params[key]


def _open(raw: dict[str, str]) -> None:
    name = raw.get(TALK_KEY, "").strip()
    if not name:
        return
    try:
        talk = load(name)
    except TalkError as error:
        st.session_state[NOTES].append(_("This talk cannot be given: {why}", why=str(error)))
        _forget_place()
        return
    at = raw.get(AT_KEY, "")
    index = int(at) - 1 if at.isdigit() and 1 <= int(at) <= len(talk.views) else 0
    st.session_state[SESSION] = Giving(name, talk, index)
    # An address with the view's controls is a moment of the talk, reproduced as it is; one that names the talk (and
    # a view) alone opens that view as the file says
    if not set(raw) - PERSONAL_KEYS:
        st.session_state[MOVE] = index
    elif raw.get(PLAYED_KEY) == "on":  # a moment within the view's Play steps: played so far, as it was
        for control in PLAYED_CONTROLS:
            if control in raw:
                st.session_state[f"{ENGAGED}{control}"] = True


def start_talk(name: str, talk: Talk, at: int = 0) -> None:
    """Give `talk` (named `name`, "" for one made or opened here: saved_name names it) from view `at` on, from the
    next run."""
    st.session_state[SESSION] = Giving(name or saved_name(talk), talk, at)
    st.session_state[MOVE] = at


def stop_talk() -> None:
    st.session_state[SESSION] = None
    st.session_state.pop(MOVE, None)
    _forget_place()


def _forget_place() -> None:
    """Take where a talk stands out of the address."""
    for key in (TALK_KEY, AT_KEY, PLAYED_KEY):
        if key in st.query_params:
            del st.query_params[key]


def view_query(talk: Giving, index: int) -> dict[str, str]:
    """The address of a view as the talk opens it: its controls, presentation mode unless it says otherwise, the
    session's language unless it names one, and the talk's place."""
    view = talk.talk.views[index]
    query = {PRESENT.key: "on"} | dict(view.controls)
    query.setdefault(LANGUAGE.key, stored_values().get(LANGUAGE.key) or language())
    query |= {key: st.query_params[key] for key in KEPT_KEYS if key in st.query_params}
    return query | {TALK_KEY: talk.name, AT_KEY: str(index + 1)}


def show(talk: Giving, index: int) -> None:
    """Open view `index` as its file says: the store emptied, the view's address read as a first visit's, its
    page run (this run stops)."""
    talk.at = index
    query = view_query(talk, index)
    st.session_state[VALUES] = {}
    st.session_state[FIELDS] = {}
    st.session_state[RAW] = dict(query)
    for key in [key for key in st.session_state if str(key).startswith(_PLAYER_STATE)]:
        del st.session_state[key]
    st.switch_page(str(ROOT / _FILES[talk.view.page]), query_params=query)


def _press(change: int) -> None:
    """A key or a button: a Play step of the view if it has one left that way, else the next or previous view."""
    talk = giving()
    if talk is None:
        return
    clicker: Clicker | None = st.session_state.get(CLICKER)
    if clicker is not None and talk.view.steps and clicker.can_step(change):
        clicker.step(change, clicker.n_steps)
        return
    target = talk.at + change
    if 0 <= target < len(talk.talk.views):
        st.session_state[MOVE] = target


KEYS = (("PageDown", 1), ("PageUp", -1), ("Right", 1), ("Left", -1))


def first_view() -> bool:
    """True unless a talk is given past its first view (the room's panel folds then: ui/room/presenter.py)."""
    talk = giving()
    return talk is None or talk.at == 0


def line() -> str:
    """Where the talk stands, "4 / 12 · title" in this run's language; "" when no talk is given."""
    talk = giving()
    if talk is None:
        return ""
    return _("{at} / {n} · {title}", at=talk.at + 1, n=len(talk.talk.views), title=talk.view.title(language()))


def bar(switched: list[str]) -> None:
    """While a talk is given: the keys that move through it (hidden buttons with the clicker's shortcuts) and the
    slim bar that says where it stands and what is switched away from the model as trained (`switched`, said: the
    banner the pages show otherwise, which would take the picture's room on a projector); and where it stands, for
    the notes window."""
    talk = giving()
    if talk is None:
        return
    with st.container(key="talk-keys"):  # hidden by ui.page.markup.APP_CSS
        for shortcut, change in KEYS:
            st.button(shortcut, key=f"talk-{shortcut.lower()}", on_click=_press, args=(change,), shortcut=shortcut)
    said = md(line())
    if switched:
        joined = ("；" if language() == "zh" else "; ").join(switched)
        said += " · :orange[" + md(_("not as trained: {changes}", changes=joined)) + "]"
    with st.container(key="talk-bar", horizontal=True, vertical_alignment="center"):
        st.button(
            "",
            icon=":material/chevron_left:",
            key="talk-back",
            on_click=_press,
            args=(-1,),
            disabled=talk.at == 0,
            help=_("The view before (PageUp or ←)"),
        )
        st.markdown(said)
        st.button(
            "",
            icon=":material/chevron_right:",
            key="talk-on",
            on_click=_press,
            args=(1,),
            disabled=talk.next_view is None,
            help=_("The next view, after this one's steps (PageDown or →)"),
        )
    talk_notes.publish(talk.cue, talk.text, talk.at, talk.began)


FIRST_PAUSE = 0.08  # seconds between a talk view's first picture and the rest of its page
PAUSE_ENV = "ANATOMY_FIRST_PAUSE"  # another pause in seconds, 0 for none (bench/talk_presses.py measures both)


def let_it_paint() -> None:
    """After the first chart of a run while a talk is given: a pause, so that the browser draws and paints that
    chart before the rest of the page arrives. Sent in one burst, the Attention view's 18 charts were drawn
    together and its first picture came 0.87-1.07 s after the key; with the pause, 0.36-0.44 s (the whole page
    80 ms later)."""
    if giving() is not None:
        time.sleep(first_pause())


def first_pause() -> float:
    """The pause after a talk view's first picture, in seconds: $ANATOMY_FIRST_PAUSE within [0, 1], else FIRST_PAUSE
    (time.sleep raises on "nan")."""
    try:
        pause = float(os.environ.get(PAUSE_ENV, FIRST_PAUSE))
    except ValueError:
        return FIRST_PAUSE
    return FIRST_PAUSE if math.isnan(pause) else min(max(pause, 0.0), 1.0)


def prepare_next() -> None:
    """At the end of a page's run, while a talk is given: prepare its next view in the background. Not sooner: the
    worker's figures took the interpreter from the page's own run (Attention's first picture came 1.0 s after the
    press when the preparing began with the run)."""
    talk = giving()
    if talk is not None and talk.next_view is not None:
        prepare.soon(talk.next_view.page, view_query(talk, talk.at + 1))

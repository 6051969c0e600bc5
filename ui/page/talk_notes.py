"""The speaker's notes of a talk in a window of their own (`notes=on&cue=<token>`), never on the projector: the view on
show, its note, the next view's title and the time since the talk began, following the projector as it moves.

The projector's session writes where it stands to a cue file after each run (`publish`): the talk itself and the
view's number, in the rooms' private folder (ui/room/store.py: shared by replicas, never served). The notes window
reads it twice a second and loads no model.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import streamlit as st

from i18n import _, language
from ui.room import store
from views.markdown import md
from views.talks import TalkError, parse

CUE = re.compile(r"[A-Za-z0-9_-]{16,64}")
NOTES_KEY, CUE_KEY = "notes", "cue"
READ_EVERY = 0.5  # seconds between two readings of the cue


def _cue_file(token: str) -> Path:
    folder = store.root() / "private" / "talk-cues"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / f"{token}.json"


def publish(token: str, talk_text: str, at: int, began: float) -> None:
    """Where the projector stands: the talk (as its file), the view on show (from 0) and when the talk began."""
    cue = {"talk": talk_text, "at": at, "began": began}
    path = _cue_file(token)
    data = json.dumps(cue, ensure_ascii=False)
    try:
        if path.read_text(encoding="utf-8") == data:
            return
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(data)
    os.replace(tmp, path)


def read(token: str) -> dict[str, Any] | None:
    """The projector's cue, None when there is none (yet) or it cannot be read."""
    if not CUE.fullmatch(token):
        return None
    try:
        return json.loads(_cue_file(token).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def notes_window(token: str) -> None:
    """The notes window's whole page: it follows the cue `token` (the rest of the page run stops here)."""
    st.title(_("Speaker's notes"))
    if not CUE.fullmatch(token):
        st.info(_("Open the notes from the projector's sidebar (Talk, “Speaker's notes”): its link names the talk."))
        st.stop()

    @st.fragment(run_every=READ_EVERY)
    def follow() -> None:
        cue = read(token)
        if cue is None:
            st.info(_("Waiting for the projector: these notes follow it once its talk is on show."))
            return
        try:
            talk = parse(cue["talk"])
        except (TalkError, KeyError, TypeError):
            st.warning(_("The projector's talk cannot be read."))
            return
        at = min(max(int(cue.get("at", 0)), 0), len(talk.views) - 1)
        view, lang = talk.views[at], language()
        minutes = int(max(0.0, time.time() - float(cue.get("began", time.time()))) // 60)
        st.markdown(
            _(
                "**{at} / {n} · {title}** · {minutes} min",
                at=at + 1,
                n=len(talk.views),
                title=md(view.title(lang)),
                minutes=minutes,
            )
        )
        st.markdown(view.note(lang) or _("(No note for this view.)"))
        if at + 1 < len(talk.views):
            st.caption(_("Next: {title}", title=md(talk.views[at + 1].title(lang))))
        else:
            st.caption(_("This is the talk's last view."))

    follow()
    st.stop()

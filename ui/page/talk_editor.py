"""Making a talk in the app, in the sidebar's Talk section: "Add this view to the talk" keeps the page on show with
every control that differs from its default; the views can be retitled, annotated, moved and removed (a dialog);
the talk downloads as its TOML file (views/talks.py) and a file can be opened from disk. While a talk is given, the
section links to the speaker's notes window and stops the talk.

The talk being made is the session's own (DRAFT) until it is given; the talk being given is edited in place, a view
added after the one on show.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import streamlit as st

from i18n import _, language
from ui.page import talk, talk_notes
from ui.page.binding import FIELDS, stored_values
from ui.session.nav import OTHER_FIRST_TITLES, PAGES
from views.controls import LANGUAGE, PRESENT
from views.fields import Field
from views.models import menu_models
from views.talks import PERSONAL_KEYS, Talk, TalkError, View, dump, parse

DRAFT = "_anatomy_talk_draft"  # the talk this session makes, before it gives it


def slug_of(title: str) -> str:
    """A page's URL path from its English title (the first page's other titles included)."""
    if title in OTHER_FIRST_TITLES:
        return PAGES[0][2]
    return next((slug for _file, page_title, slug in PAGES if page_title == title), PAGES[0][2])


def working() -> Talk | None:
    """The talk being given, else the one being made."""
    giving = talk.giving()
    return giving.talk if giving is not None else st.session_state.get(DRAFT)


def _set_working(new: Talk | None) -> None:
    giving = talk.giving()
    if giving is None:
        st.session_state[DRAFT] = new
    elif new is not None:
        # an edited talk is no longer its file: the address names the edited one
        name = talk.saved_name(new)
        st.session_state[talk.SESSION] = talk.Giving(
            name, new, min(giving.at, len(new.views) - 1), giving.cue, giving.began
        )


def this_view(slug: str, title: str) -> View:
    """The page on show as a view: every control that differs from its default (the sentence always), titled with
    the page's name."""
    fields: dict[str, Field] = st.session_state.get(FIELDS, {})
    values = stored_values()
    controls = {}
    for key, spec in fields.items():
        if key in PERSONAL_KEYS or key not in values:
            continue
        written = spec.dump(values[key])
        if key == "sentence" or written != spec.dump(spec.default):
            controls[key] = written
    return View(slug, controls, {"en": title})


def _add(slug: str, title: str) -> None:
    view = this_view(slug, title)
    current = working()
    giving = talk.giving()
    if current is None:
        _set_working(Talk({"en": _("My talk")}, (view,)))
        return
    at = giving.at + 1 if giving is not None else len(current.views)
    _set_working(replace(current, views=(*current.views[:at], view, *current.views[at:])))


def _move(index: int, change: int) -> None:
    current = working()
    if current is None:
        return
    views = list(current.views)
    target = index + change
    if 0 <= target < len(views):
        views[index], views[target] = views[target], views[index]
        _set_working(replace(current, views=tuple(views)))


def _remove(index: int) -> None:
    """Remove a view; the last view of a talk being made removes the talk (a talk being given keeps its last)."""
    current = working()
    if current is None:
        return
    if len(current.views) > 1:
        _set_working(replace(current, views=current.views[:index] + current.views[index + 1 :]))
    elif talk.giving() is None:
        st.session_state[DRAFT] = None


def _said(index: int, what: str, key: str) -> None:
    """A title or note typed in the editor, in the language of the interface."""
    current = working()
    if current is None:
        return
    view = current.views[index]
    said = dict(getattr(view, what))
    text = str(st.session_state[key]).strip()
    if text:
        said[language()] = text
    elif language() != "en" or what == "notes":
        said.pop(language(), None)
    changed = replace(view, titles=said) if what == "titles" else replace(view, notes=said)
    _set_working(replace(current, views=current.views[:index] + (changed,) + current.views[index + 1 :]))


def _edit() -> None:
    st.dialog(_("Edit the talk"), width="large")(_editor)()


def _editor() -> None:
    current = working()
    if current is None:
        return
    lang = language()
    for index, view in enumerate(current.views):
        st.markdown(f"**{index + 1}.** `{view.page}` · {', '.join(f'{k}={v}' for k, v in view.controls.items())[:120]}")
        cols = st.columns([4, 1, 1, 1])
        with cols[0]:
            key = f"talk-title-{index}-{lang}"
            st.session_state[key] = view.title(lang)
            st.text_input(_("Title"), key=key, on_change=_said, args=(index, "titles", key))
            key = f"talk-note-{index}-{lang}"
            st.session_state[key] = view.note(lang)
            st.text_area(_("Speaker's note"), key=key, on_change=_said, args=(index, "notes", key), height=80)
        cols[1].button("", icon=":material/arrow_upward:", key=f"talk-up-{index}", on_click=_move, args=(index, -1))
        cols[2].button("", icon=":material/arrow_downward:", key=f"talk-down-{index}", on_click=_move, args=(index, 1))
        cols[3].button("", icon=":material/delete:", key=f"talk-drop-{index}", on_click=_remove, args=(index,))


def _opened() -> None:
    upload: Any = st.session_state.get("talk-file")
    if upload is None:
        return
    try:
        opened = parse(upload.getvalue().decode("utf-8", errors="replace"), models=menu_models())
    except TalkError as error:
        st.session_state["talk-file-error"] = str(error)
        return
    st.session_state.pop("talk-file-error", None)
    talk.stop_talk()
    st.session_state[DRAFT] = opened


def section(title: str) -> None:
    """The sidebar's Talk section for the page titled `title` (English)."""
    giving = talk.giving()
    with st.sidebar:
        st.markdown(_("### Talk"))
        if giving is not None:
            st.caption(
                _(
                    "Giving “{title}”: view {at} of {n}.",
                    title=giving.talk.title(language()),
                    at=giving.at + 1,
                    n=len(giving.talk.views),
                )
            )
            cue = f"{talk_notes.NOTES_KEY}=on&{talk_notes.CUE_KEY}={giving.cue}"
            notes = f"?{cue}&{LANGUAGE.key}={language()}&{PRESENT.key}=on"  # large type, the sidebar closed
            st.link_button(_("Speaker's notes (a second window)"), notes, icon=":material/speaker_notes:")
        st.button(
            _("Add this view to the talk"),
            icon=":material/playlist_add:",
            key="talk-add",
            on_click=_add,
            args=(slug_of(title), title),
        )
        current = working()
        if current is not None:
            if st.button(_("Edit the talk ({n} views)", n=len(current.views)), key="talk-edit"):
                _edit()
            st.download_button(
                _("Download the talk"),
                data=dump(current),
                file_name="talk.toml",
                mime="application/toml",
                icon=":material/download:",
                on_click="ignore",
            )
        if giving is not None:
            st.button(_("Stop the talk"), key="talk-stop", on_click=talk.stop_talk)
        elif current is not None:
            st.button(
                _("Give this talk"),
                icon=":material/slideshow:",
                key="talk-give",
                on_click=talk.start_talk,
                args=("", current),
            )
        st.file_uploader(_("Open a talk file"), type=["toml"], key="talk-file", on_change=_opened)
        if "talk-file-error" in st.session_state:
            st.error(st.session_state["talk-file-error"])

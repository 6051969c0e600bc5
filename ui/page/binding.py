"""Widgets bound to the session's store of control values and to the URL: every page's widget of a control
shows the stored value, a change is stored and written to the address bar, and a value read from the URL
the first time a session sees its control."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from i18n import _
from views.fields import Field, read_fields, write_fields
from views.markdown import md

VALUES, RAW, NOTES, FIELDS = "_anatomy_values", "_anatomy_url", "_anatomy_notes", "_anatomy_fields"


def stored_values() -> dict[str, Any]:
    return st.session_state[VALUES]


def register(fields: list[Field]) -> list[str]:
    """Give each field its value from the URL the first time this session sees it; return notes."""
    known: dict[str, Field] = st.session_state.setdefault(FIELDS, {})
    new = [f for f in fields if f.key not in known]
    if not new:
        return []
    values, notes = read_fields(new, st.session_state[RAW])
    stored_values().update(values)
    known.update({f.key: f for f in new})
    return notes


def _write_url() -> None:
    known: dict[str, Field] = st.session_state[FIELDS]
    wanted = write_fields(list(known.values()), stored_values())
    for key, value in wanted.items():
        if st.query_params.get(key) != value:
            st.query_params[key] = value


def _copy_from_widget(key: str, from_widget: Callable[[Any], Any], wkey: str) -> None:
    stored_values()[key] = from_widget(st.session_state[wkey])


KEPT = "kept-"  # the container of a bound widget kept hidden while a player moves its control
EPOCH = "_anatomy_epoch_"  # + a control's key: how many times a player has let go of the control


def widget_key(key: str, widget: str | None = None) -> str:
    """The widget key of a control's widget (`widget` names a second widget of it): a new one each time a player
    lets go of the control (renew_widgets)."""
    epoch = st.session_state.get(f"{EPOCH}{key}", 0)
    return f"w_{widget or key}" + (f"_{epoch}" if epoch else "")


def renew_widgets(key: str) -> None:
    """Give the control's widgets new keys from the next run on. A browser that lags behind a playing fragment
    goes on sending its timer's reruns after the play has stopped, each with the value its copy of the moving
    widget had then; the widget drawn at rest took those for a person's changes, and the step went back (8, then
    5, 6, 8 under load). A widget with a new key has no such copy."""
    st.session_state[f"{EPOCH}{key}"] = st.session_state.get(f"{EPOCH}{key}", 0) + 1


def bind(
    key: str,
    render: Callable[..., Any],
    to_widget: Callable[[Any], Any] = lambda v: v,
    from_widget: Callable[[Any], Any] = lambda v: v,
    widget: str | None = None,
    moving: bool = False,
    **kwargs: Any,
) -> Any:
    """Render a widget whose value lives in the session store (so every page shares it) and the URL;
    `widget` names a second widget of the same control (its own widget key). `moving`: a player moves the
    control, so the widget only shows it, read-only."""
    wkey = widget_key(key, widget)
    if moving:
        # The bound widget, redrawn by a playing fragment, showed the value before in the browser (the slider one
        # step behind the step line): a new widget for each value shows it instead. The bound one stays, hidden
        # (ui.page.markup.APP_CSS): a widget left out of a run and drawn again later came back with the value the
        # browser last had for it, and moved the control back.
        value = stored_values()[key]
        render(key=f"{wkey}_at_{value}", value=to_widget(value), disabled=True, **kwargs)
        with st.container(key=f"{KEPT}{wkey}"):
            return bind(key, render, to_widget, from_widget, widget, disabled=True, **kwargs)
    # Always seed the widget from the store: a widget on another page (or a page reached
    # through the menu) is a new widget for Streamlit, and its on_change has already copied
    # any change the person made into the store before this run started.
    st.session_state[wkey] = to_widget(stored_values()[key])
    if kwargs.get("disabled"):
        # No person moves a disabled widget: a change the browser reports for it is its stale copy (a request the
        # player's timer sent before the browser had the last frame), which must not move the control back.
        render(key=wkey, **kwargs)
    else:
        render(key=wkey, on_change=_copy_from_widget, args=(key, from_widget, wkey), **kwargs)
    stored_values()[key] = from_widget(st.session_state[wkey])
    _write_url()
    return stored_values()[key]


def page_value(spec: Field) -> Any:
    """Register a page's own control (restored from the URL) and return its current value."""
    for note in register([spec]):
        st.warning(md(note))
    return stored_values()[spec.key]


def stored(key: str) -> Any:
    """The current value of a stored control (it may have changed since this run's Controls were read)."""
    return stored_values()[key]


def set_value(key: str, value: Any) -> None:
    """Change a stored control (e.g. from a chart click); the widget follows on this run."""
    stored_values()[key] = value


def set_sentence(text: str) -> None:
    stored_values()["sentence"] = text


def not_applicable(label: str, reason: str) -> None:
    """A control that does not apply to the loaded model: shown greyed out, with the reason (already said).
    `label` is the English one, marked with N_ where it is written: the widget's key is made of it, the words
    shown are it in the run's language."""
    st.toggle(_(label), value=False, disabled=True, help=reason, key=f"na_{label}")
    st.caption(md(reason))

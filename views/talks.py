"""A talk: an ordered list of views, each a page of the app with its URL controls, a title and a speaker's note, in
a small TOML file a lecturer edits by hand, loads by URL (`talk=<name>` for a file under talks/) or uploads, and
downloads from the app after making it there. No Streamlit here: ui/page/talk.py gives a talk in the app.

    [talk]
    title = "The Transformer in 20 views"
    title_zh = "…"                      # title_<code> / note_<code>: the same in another language (i18n.LANGUAGES)

    [talk.controls]                     # every view's, unless the view says otherwise
    present = "on"

    [[view]]
    page = "attention"                  # a page's URL path (views.pages.PAGES)
    title = "Cross-attention at step 3"
    note = "Ask the room where the French word looks."
    steps = false                       # a press goes to the next view at once (default: through Play's steps first)

    [view.controls]                     # the page's URL controls, named and spelled as in its address
    step = 3

A view is its page with the talk's controls, then its own, every other control at its default, so no view inherits
what the one before changed. A file that names an unknown page, control or model, or gives a value a control
refuses, is refused in one sentence naming the view.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from i18n import LANGUAGES, Later, later
from views.controls import CHAT, LANGUAGE, MOST_NEW_PIECES, NEW_KEY, PREFIX, PRESENT, Limits, shared_fields
from views.fields import Field, int_in
from views.pages import PAGES, page_module

DEFAULT_LANGUAGE = "en"
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")  # a talk's file name under talks/, without .toml
MAX_VIEWS = 200
MAX_BYTES = 200_000  # a talk file larger than this is refused unread
# The URL names of where a talk stands (ui/page/talk.py, talk_notes.py)
TALK_PLACE = ("talk", "at", "played", "notes", "cue")
# The URL names a talk never stores in a view: where the talk is, and what belongs to the person, not the talk
TALK_KEYS = (*TALK_PLACE, "room", "key", "share", "follow", "export")
# What an address may give besides a view's controls: those, the language and presentation mode
PERSONAL_KEYS = frozenset({*TALK_KEYS, LANGUAGE.key, PRESENT.key})
# Ranges wide enough for any model of the menu: a value's range is the model's to check, when the view is shown
_ANY_MODEL = Limits(n_encoder_layers=128, n_decoder_layers=128, n_heads=128, max_len=32_768)


class TalkError(ValueError):
    """A talk file that cannot be given: what is wrong, in one sentence naming the view."""


@dataclass(frozen=True)
class View:
    """One moment of a talk: a page with its URL controls (as the address spells them), titled and annotated in
    one or more languages (English always)."""

    page: str
    controls: dict[str, str]
    titles: dict[str, str]
    notes: dict[str, str] = field(default_factory=dict)
    steps: bool = True  # a press steps through the page's Play steps before it moves on

    def title(self, language: str) -> str:
        return self.titles.get(language) or self.titles[DEFAULT_LANGUAGE]

    def note(self, language: str) -> str:
        return self.notes.get(language) or self.notes.get(DEFAULT_LANGUAGE, "")


@dataclass(frozen=True)
class Talk:
    """A titled list of views."""

    titles: dict[str, str]
    views: tuple[View, ...]

    def title(self, language: str) -> str:
        return self.titles.get(language) or self.titles[DEFAULT_LANGUAGE]


def talk_fields(page: str) -> list[Field]:
    """Every control a page may be given in a talk, whatever the model: the shared ones, the language, the model's
    own (prefix, chat message, new pieces) and the page's."""
    module = page_module(page)
    fields = [*shared_fields(_ANY_MODEL, chat=True), LANGUAGE, PREFIX, CHAT, _NEW]
    return fields + list(getattr(module, "FIELDS", []))


_NEW = Field(NEW_KEY, 20, int_in(1, MOST_NEW_PIECES))  # a decoder-only model's `new=` (views.controls.new_pieces_field)


def _said(table: Mapping[str, Any], key: str, where: Later, required: bool) -> dict[str, str]:
    """`key` and `key_<code>` of a table: the text in each language given."""
    said = {}
    for code in LANGUAGES:
        name = key if code == DEFAULT_LANGUAGE else f"{key}_{code}"
        value = table.get(name)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise TalkError(later("{where}: “{name}” must be some text.", where=where, name=name))
        said[code] = value.strip()
    if required and DEFAULT_LANGUAGE not in said:
        raise TalkError(later("{where} has no title.", where=where))
    return said


def _controls(table: Any, where: Later) -> dict[str, str]:
    """A [controls] table as the URL spells it: true/false as on/off, numbers as digits."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise TalkError(later("{where}: its controls must be a table of names and values.", where=where))
    spelled = {}
    for name, value in table.items():
        if isinstance(value, bool):
            spelled[name] = "on" if value else "off"
        elif isinstance(value, int | float | str):
            spelled[name] = str(value)
        else:
            raise TalkError(later("{where}: the control {name} must be a word or a number.", where=where, name=name))
    return spelled


def _known_entry(name: str) -> bool:
    said = name.split("_")[0] in ("title", "note") and name.partition("_")[2] in ("", *LANGUAGES)
    return said or name in ("page", "controls", "steps")


def _view(table: Any, number: int, shared: dict[str, str], models: Collection[str] | None) -> View:
    if not isinstance(table, dict):
        raise TalkError(later("View {n} is not a table.", n=number))
    titles = _said(table, "title", later("View {n}", n=number), required=True)
    where = later("View {n} (“{title}”)", n=number, title=titles[DEFAULT_LANGUAGE])
    unknown = sorted(name for name in table if not _known_entry(name))
    if unknown:
        raise TalkError(later("{where}: unknown entries {names}.", where=where, names=", ".join(unknown)))
    page = table.get("page")
    if page not in PAGES:
        pages = ", ".join(PAGES)
        raise TalkError(
            later("{where}: no page {page}; the pages are {pages}.", where=where, page=repr(page), pages=pages)
        )
    steps = table.get("steps", True)
    if not isinstance(steps, bool):
        raise TalkError(later("{where}: “steps” must be true or false.", where=where))
    controls = shared | _controls(table.get("controls"), where)
    _check(page, controls, where, models)
    return View(page, controls, titles, _said(table, "note", where, required=False), steps)


def _check(page: str, controls: dict[str, str], where: Later, models: Collection[str] | None) -> None:
    """Refuse a control the page does not have, one of TALK_KEYS, a value its parser refuses, or a model the menu
    does not hold (`models`: the menu's names; None: any name)."""
    given = dict(controls)
    model = given.pop("model", None)
    if model is not None and models is not None and model not in models:
        names = ", ".join(models)
        raise TalkError(
            later("{where}: no model {name} here; the models are {names}.", where=where, name=repr(model), names=names)
        )
    kept = sorted(set(given) & set(TALK_KEYS))
    if kept:
        names = ", ".join(kept)
        raise TalkError(
            later("{where}: {names} belong to whoever gives the talk, not to a view.", where=where, names=names)
        )
    fields = {field.key: field for field in talk_fields(page)}
    for name, value in given.items():
        if name not in fields:
            names = ", ".join(key for key in fields if key not in TALK_KEYS)
            raise TalkError(
                later(
                    "{where}: no control {name} on this page; its controls are {names}.",
                    where=where,
                    name=name,
                    names=names,
                )
            )
        try:
            fields[name].parse(value)
        except (ValueError, TypeError) as error:
            reason = error.args[0] if len(error.args) == 1 and isinstance(error.args[0], Later) else str(error)
            raise TalkError(
                later(
                    "{where}: {name} = {value} is refused ({reason}).",
                    where=where,
                    name=name,
                    value=repr(value[:60]),
                    reason=reason,
                )
            ) from None


def parse(text: str, models: Collection[str] | None = None) -> Talk:
    """The talk a TOML text describes, every view checked (`models`: the model names a view may give; None: any);
    TalkError says what is wrong, naming the view."""
    if len(text.encode()) > MAX_BYTES:
        raise TalkError(later("A talk file is at most {n} bytes.", n=MAX_BYTES))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TalkError(later("This is not a TOML file: {why}.", why=str(error))) from None
    head = data.get("talk", {})
    if not isinstance(head, dict):
        raise TalkError(later("[talk] must be a table."))
    the_talk = later("The talk")
    titles = _said(head, "title", the_talk, required=True)
    shared = _controls(head.get("controls"), the_talk)
    views = data.get("view", [])
    if not isinstance(views, list) or not views:
        raise TalkError(later("The talk has no views: each is a [[view]] table."))
    if len(views) > MAX_VIEWS:
        raise TalkError(later("A talk has at most {n} views.", n=MAX_VIEWS))
    return Talk(titles, tuple(_view(table, n, shared, models) for n, table in enumerate(views, start=1)))


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML wants escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _said_lines(said: Mapping[str, str], key: str) -> list[str]:
    return [
        f"{key if code == DEFAULT_LANGUAGE else f'{key}_{code}'} = {_string(said[code])}"
        for code in LANGUAGES
        if code in said
    ]


def dump(talk: Talk) -> str:
    """The talk as a TOML file that `parse` reads back to the same talk (every view's controls written whole)."""
    lines = ["[talk]", *_said_lines(talk.titles, "title")]
    for view in talk.views:
        lines += ["", "[[view]]", f"page = {_string(view.page)}", *_said_lines(view.titles, "title")]
        lines += _said_lines(view.notes, "note")
        if not view.steps:
            lines.append("steps = false")
        if view.controls:
            lines += ["", "[view.controls]"]
            lines += [f"{_string(name)} = {_string(value)}" for name, value in view.controls.items()]
    return "\n".join(lines) + "\n"

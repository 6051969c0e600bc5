"""The interface's languages: English (the words as written in the code) and 简体中文 (a gettext catalog).

A message is marked where it is written, as one whole sentence with named fields, so that each language
keeps its own word order:

    _("Step {t} of {n}", t=3, n=9)          translated now, in the language of this run
    n_("{n} piece", "{n} pieces", count)     with the plural the language has ({n} is the count, formatted)
    N_("Greedy")                             marked only: a constant, translated where it is shown (_(NAME))
    later("Cut to {n} pieces.", n=7)         a str that says itself in the language of whoever shows it:
                                             for the engine's warnings and errors, which the shared caches keep

The language is one per run (a context variable set by the page's start, `speaking`), so that sessions of one
server never share it. The catalog is `i18n/locale/<lang>/LC_MESSAGES/anatomy.po`, compiled to `.mo` by
`python -m i18n.catalog` (babel), read by Python's gettext. Nothing here imports the rest of the project."""

from __future__ import annotations

import gettext
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any

LANGUAGES = {"en": "English", "zh": "简体中文"}  # code (the URL's lang=) -> the language's own name
DEFAULT = "en"
DOMAIN = "anatomy"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"

_LANGUAGE: ContextVar[str] = ContextVar("anatomy_language", default=DEFAULT)


def language() -> str:
    """The language of this run: a code of LANGUAGES."""
    return _LANGUAGE.get()


def set_language(code: str) -> None:
    """Speak `code` (a LANGUAGES code; anything else is English) for the rest of this thread's run."""
    _LANGUAGE.set(code if code in LANGUAGES else DEFAULT)


@contextmanager
def speaking(code: str) -> Iterator[None]:
    """Speak `code` inside the block, then the language before."""
    token = _LANGUAGE.set(code if code in LANGUAGES else DEFAULT)
    try:
        yield
    finally:
        _LANGUAGE.reset(token)


def from_locale(locale: str | None) -> str:
    """The language a browser's locale ("zh-CN", "zh-Hans-TW", "en-US") asks for: Chinese for any zh, else
    English."""
    return "zh" if (locale or "").lower().replace("_", "-").split("-")[0] == "zh" else DEFAULT


@cache
def _catalog(code: str) -> gettext.NullTranslations:
    """The compiled catalog of a language (English needs none: its words are the code's)."""
    if code == DEFAULT:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[code], fallback=True)


def _filled(text: str, params: dict[str, Any]) -> str:
    """`text` with its named fields filled (a Later among them said in the same language)."""
    if not params:
        return text
    return text.format(**{key: str(value) if isinstance(value, Later) else value for key, value in params.items()})


def _(message: str, /, **params: Any) -> str:
    """`message` in the language of this run, its {fields} filled from `params`."""
    return _filled(_catalog(language()).gettext(message), params)


def n_(singular: str, plural: str, count: int, /, **params: Any) -> str:
    """The singular or plural form the language uses for `count`, its {n} the count as the language writes it."""
    return _filled(_catalog(language()).ngettext(singular, plural, count), {"n": number(count), **params})


def N_(message: str) -> str:
    """Mark `message` for the catalog and return it unchanged: translate it with `_` where it is shown."""
    return message


class Later(str):
    """A message said when shown: as a str it is the English text (what the code and the logs read), and
    str() says it in the language of the run that shows it. The engine's warnings and errors are these, since
    a result kept in the shared caches is shown to people of any language."""

    _message: str
    _plural: str | None
    _count: int | None
    _params: dict[str, Any]

    def __new__(cls, message: str, params: dict[str, Any], plural: str | None = None, count: int | None = None):
        with speaking(DEFAULT):
            english = _say(message, plural, count, params)
        self = super().__new__(cls, english)
        self._message, self._plural, self._count, self._params = message, plural, count, params
        return self

    def __str__(self) -> str:
        return _say(self._message, self._plural, self._count, self._params)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __add__(self, other: str) -> str:
        return str(self) + str(other)

    def __radd__(self, other: str) -> str:
        return str(other) + str(self)

    def __reduce__(self) -> tuple:
        return (Later, (self._message, self._params, self._plural, self._count))


def _say(message: str, plural: str | None, count: int | None, params: dict[str, Any]) -> str:
    if plural is None or count is None:
        return _(message, **params)
    return n_(message, plural, count, **params)


def later(message: str, /, **params: Any) -> Later:
    """`message` with its fields, said in the language of whoever shows it (see Later)."""
    return Later(message, params)


def later_n(singular: str, plural: str, count: int, /, **params: Any) -> Later:
    """`n_` said in the language of whoever shows it (see Later)."""
    return Later(singular, params, plural, count)


def number(value: float, digits: int | None = None) -> str:
    """A number as the language writes it: thousands grouped, `digits` after the point (None: as many as it
    has, for a whole number none)."""
    if digits is None:
        digits = 0 if float(value).is_integer() else 2
    return _number_format(language())(value, digits)


@cache
def _number_format(code: str):
    """How `code` writes numbers (babel's CLDR data; English and Chinese both group by three with a comma)."""
    from babel.numbers import format_decimal

    locale = "zh_Hans_CN" if code == "zh" else "en_US"

    def write(value: float, digits: int) -> str:
        pattern = "#,##0" + ("." + "0" * digits if digits else "")
        return format_decimal(value, format=pattern, locale=locale)

    return write


def listing(items: Iterable[str]) -> str:
    """Items named one after another, as the language separates them ("a, b, c"; "a、b、c")."""
    return ("、" if language() == "zh" else ", ").join(str(item) for item in items)


def sentences(*parts: str) -> str:
    """Whole sentences one after another, as the language sets them: a space between English sentences, none
    between Chinese ones (each already ends with its own 。)."""
    kept = [str(part) for part in parts if part]
    return ("" if language() == "zh" else " ").join(kept)

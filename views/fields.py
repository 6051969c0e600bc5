"""A control in the URL: its key, default, parser and writer (`Field`), the parsers the controls share, and the
round trip of a page's fields through query parameters, a bad value falling back to its default with a note."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from i18n import Later, later
from viz.lengths import Span


def whole(text: str) -> int:
    """A whole number, or a ValueError that says so (in the language of whoever reads it)."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(later("expected a whole number, got {text}", text=repr(text))) from None


def _on_off(text: str) -> bool:
    value = text.strip().lower()
    if value in ("on", "1", "true", "yes"):
        return True
    if value in ("off", "0", "false", "no"):
        return False
    raise ValueError(later("expected on or off, got {text}", text=repr(text)))


def on_off_field(key: str, default: bool) -> Field:
    """A page's own control that is on or off, in the URL as `key=on` / `key=off`."""
    return Field(key, default, _on_off, lambda value: "on" if value else "off")


def int_in(low: int, high: int) -> Callable[[str], int]:
    """A URL parser for whole numbers from low to high."""

    def parse(text: str) -> int:
        value = whole(text)
        if not low <= value <= high:
            raise ValueError(later("{value} is outside {low}..{high}", value=value, low=low, high=high))
        return value

    return parse


def number_in(low: float, high: float, above_low: bool = False) -> Callable[[str], float]:
    """A URL parser for numbers from low (or, `above_low`, above it) to high."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(later("expected a number, got {text}", text=repr(text))) from None
        if not (low < value if above_low else low <= value) or not value <= high:  # NaN is neither
            raise ValueError(later("{value} is outside {low}..{high}", value=text, low=low, high=high))
        return value

    return parse


def choice(*options: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(later("expected one of {options}", options=", ".join(options)))
        return text

    return parse


def span(text: str) -> Span:
    """'40-79' (positions from 0, both ends shown) -> (40, 80)."""
    first, _dash, last = text.strip().partition("-")
    start, stop = whole(first), whole(last) + 1
    if not 0 <= start < stop:
        raise ValueError(later("expected first-last positions counted from 0, got {text}", text=repr(text)))
    return start, stop


def dump_span(span: Span) -> str:
    return f"{span[0]}-{span[1] - 1}"


@dataclass(frozen=True)
class Field:
    """One control: its URL key, default, parser (raises ValueError) and URL writer."""

    key: str
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str] = str


def read_fields(fields: list[Field], params: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Values for `fields` from query parameters; a bad value falls back to its default, with a note."""
    values: dict[str, Any] = {}
    notes: list[str] = []  # later() messages, said when shown
    for field in fields:
        values[field.key] = field.default
        if field.key not in params:
            continue
        raw = params[field.key]
        try:
            values[field.key] = field.parse(raw)
        except (ValueError, TypeError) as exc:
            notes.append(_bad_value(field, raw, exc))
    return values, notes


def _bad_value(field: Field, raw: str, exc: Exception) -> Later:
    """The note on a URL value that is not valid: said when shown, in the language of the page that shows it
    (the parsers' reasons are later() messages too)."""
    reason = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], Later) else str(exc)
    value, default = repr(raw[:60]), field.dump(field.default)
    if not default:
        return later(
            "URL parameter {key}={value} is not valid ({reason}); using the default (none).",
            key=field.key,
            value=value,
            reason=reason,
        )
    return later(
        "URL parameter {key}={value} is not valid ({reason}); using the default, “{default}”.",
        key=field.key,
        value=value,
        reason=reason,
        default=default,
    )


def write_fields(fields: list[Field], values: Mapping[str, Any]) -> dict[str, str]:
    """Query parameters for `values` (every field, so a URL fixes the whole view)."""
    return {field.key: field.dump(values[field.key]) for field in fields if field.key in values}

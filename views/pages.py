"""The pages by URL path, and `show(page, text, model=None, **controls)`: a page's pictures outside Streamlit, read
with the URL's own names and parsers, drawn by the same view functions the page draws with."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from i18n import speaking
from model import Bundle
from views.controls import (
    CHAT,
    LANGUAGE,
    PREFIX,
    Controls,
    chat_offered,
    new_pieces_field,
    reads_chat,
    shared_fields,
    typed_prefix,
)
from views.fields import Field, read_fields
from views.models import open_model
from views.panels import PageView
from views.runs import main_result
from views.scene import Scene, limits_of

# A page's URL path -> the views module that holds its panels (each has FIELDS, its own controls, and
# `panels(scene)`; NEEDS_RESULT False when the page draws without running the model on the text).
PAGES = {
    "translate": "views.translate",
    "attention": "views.attention",
    "positional_encoding": "views.positional",
    "tensor_shapes": "views.shapes",
    "masks_and_heads": "views.masks",
    "design_choices": "views.design",
    "training": "views.training",
    "why": "views.why",
    "compare": "views.compare",
}


class ControlError(ValueError):
    """A control a page does not have, or a value its parser refuses (the URL's own message)."""


def page_module(page: str) -> ModuleType:
    """The views module of a page, by its URL path."""
    if page not in PAGES:
        raise ValueError(f"no page {page!r}; the pages are {', '.join(PAGES)}")
    return importlib.import_module(PAGES[page])


def _url_text(field: Field, value: Any) -> str:
    """A control given in Python, as the URL would spell it: True/False as on/off, numbers as digits."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return str(value)
    return field.dump(value)


def read_controls(
    fields: list[Field], given: Mapping[str, Any], strict: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """The values of `fields` from controls given by their URL names; a name no field has, or (with `strict`) a
    value its parser refuses, raises ControlError with the message the page would show."""
    by_key = {field.key: field for field in fields}
    unknown = sorted(set(given) - set(by_key))
    if unknown:
        raise ControlError(f"no control {', '.join(unknown)} on this page; its controls: {', '.join(by_key)}")
    params = {key: _url_text(by_key[key], value) for key, value in given.items()}
    values, notes = read_fields(fields, params)
    if notes and strict:
        raise ControlError(" ".join(str(note) for note in notes))
    return values, [str(note) for note in notes]


def scene_for(page: str, text: str | None = None, model: str | None = None, **controls: Any) -> Scene:
    """The Scene a page would draw for these controls, its main result computed (no panels drawn)."""
    return module_scene(page_module(page), text, model, **controls)


def module_scene(module: ModuleType, text: str | None = None, model: str | None = None, **controls: Any) -> Scene:
    """The Scene a views module (its FIELDS and NEEDS_RESULT) draws for these controls, its main result computed."""
    bundle = open_model(model)
    given = dict(controls) | ({} if text is None else {"sentence": text})
    values, ctl, why_not = controls_for(module, bundle, given)
    with speaking(values[LANGUAGE.key]):
        result = main_result(bundle, ctl) if getattr(module, "NEEDS_RESULT", True) else None
    own = {field.key: values[field.key] for field in getattr(module, "FIELDS", [])}
    return Scene(bundle, ctl, result, own, notes=(why_not,) if why_not else ())


def page_fields(module: ModuleType, bundle: Bundle) -> list[Field]:
    """Every control a page's views module reads on this model, by its URL name."""
    fields = shared_fields(limits_of(bundle), chat_offered(bundle)) + [LANGUAGE] + list(getattr(module, "FIELDS", []))
    if typed_prefix(bundle):
        fields.append(PREFIX)
    if chat_offered(bundle):
        fields.append(CHAT)
    if bundle.capabilities.decoder_only:
        fields.append(new_pieces_field(bundle))
    return fields


def controls_for(
    module: ModuleType, bundle: Bundle, given: Mapping[str, Any], strict: bool = True
) -> tuple[dict[str, Any], Controls, str]:
    """(every control's value, the Controls, why the text is not read as a chat message or "") of a page on this
    model, for controls given by their URL names (read_controls: an unknown name is refused)."""
    values, _notes = read_controls(page_fields(module, bundle), given, strict)
    with speaking(values[LANGUAGE.key]):
        chat, why_not = reads_chat(bundle, values)
        prefix = values.get(PREFIX.key, "") if values["sentence"].strip() else ""
        ctl = Controls.from_values(values, prefix=prefix, chat=chat, continues=bundle.capabilities.decoder_only)
    return values, ctl, why_not


def show(page: str, text: str | None = None, model: str | None = None, **controls: Any) -> PageView:
    """A page's pictures and words, in the page's order, for `text` (None: the page's example sentence) on a model
    of the Model menu (None: the shipped model), with controls named as in the URL (`layer=2, head=3,
    causal="off", ablate="dec-cross-1-2", lang="zh"`). In Jupyter the result displays itself."""
    scene = scene_for(page, text, model, **controls)
    with speaking(scene.controls.language):
        panels = page_module(page).panels(scene)
    return PageView(page, scene.result, list(panels), list(scene.notes))

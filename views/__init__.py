"""A page's pictures as data, between viz/ (single figures) and ui/ (Streamlit): for each page, functions that take
the run's result and the controls and return what the page shows, as ordered panels (a figure or a table, with its
title, caption and a stable key). A Streamlit page draws these panels; a notebook gets them from `show`:

    import views
    page = views.show("attention", "The cat eats the apple.", layer=2, head=3)
    page.figures  # the plotly figures, in the page's order

Imports model/, viz/ and i18n/, never streamlit (tests/app/test_layout.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from views.panels import PageView, Panel

if TYPE_CHECKING:
    from views.scene import Scene

__all__ = ["PageView", "Panel", "Scene", "show", "scene_for", "PAGES"]


def show(page: str, text: str | None = None, model: str | None = None, **controls: Any) -> PageView:
    """A page's pictures and words for `text` on a model of the Model menu (views.pages.show)."""
    from views.pages import show as show_page  # the engine loads on the first call, not on `import views`

    return show_page(page, text, model, **controls)


def scene_for(page: str, text: str | None = None, model: str | None = None, **controls: Any) -> Scene:
    """The inputs a page's panels are drawn from (views.pages.scene_for)."""
    from views.pages import scene_for as scene

    return scene(page, text, model, **controls)


def __getattr__(name: str) -> Any:
    if name == "PAGES":
        from views.pages import PAGES

        return PAGES
    if name == "Scene":
        from views.scene import Scene

        return Scene
    raise AttributeError(name)

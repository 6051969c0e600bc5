"""The pages of the app, in menu order: (file, title, url path), and the menu that links them.

No icons: a material icon on a page becomes the favicon, fetched from a font CDN (fails
offline), and emoji need a colour-emoji font that projector machines may lack.

Every page lives at its own address, `/<url path>`, the first one too. Streamlit serves st.navigation's
default page at "/" alone: its `url_path` is reserved but never looked up, so with the first page as the
default, its address showed a "Page not found" dialog once st.navigation had run in the server. The
default is `root_page` instead, hidden, which opens the first page at its own address with the root's query.

Until app.py's st.navigation has run once in the server (it turns Streamlit's pages/ folder lookup off for
every later visitor), Streamlit looks an address up among the pages/ file names and runs that file
directly: so a URL path is its file's name without the number, since a path it does not find there
("masks-and-heads") shows the dialog even though the page then opens.

Streamlit draws no menu of its own (`client.showSidebarNavigation = false`): until app.py's
st.navigation has run once in the server, a page address runs its page file directly, and
Streamlit's automatic menu for that case lists the file names and "app". Every page draws
`menu()` instead, so the menu is the same whichever address is opened first, and in AppTest.
A link finds its page by URL path, which is the file's name in both cases: one more reason
the paths above are the file names.
"""

from functools import cache
from pathlib import Path

import streamlit as st

import i18n
from i18n import N_

ROOT = Path(__file__).resolve().parents[2]

# The titles are English here (the catalog's words): the menu and the pages say them (i18n._) as they draw.
PAGES: list[tuple[str, str, str]] = [
    ("pages/1_translate.py", N_("Translate"), "translate"),
    ("pages/2_attention.py", N_("Attention"), "attention"),
    ("pages/3_positional_encoding.py", N_("Positional encoding"), "positional_encoding"),
    ("pages/4_tensor_shapes.py", N_("Tensor shapes"), "tensor_shapes"),
    ("pages/5_masks_and_heads.py", N_("Masks and heads lab"), "masks_and_heads"),
    ("pages/6_design_choices.py", N_("Design choices"), "design_choices"),
    ("pages/7_training.py", N_("Training"), "training"),
    ("pages/8_why.py", N_("Why this word?"), "why"),
    ("pages/9_compare.py", N_("Compare"), "compare"),
]
# The first page's titles for a model that does not translate (ui/page/sidebar.py, first_page_titles): an
# encoder-only model's, a decoder-only model's.
OTHER_FIRST_TITLES = (N_("Sentence"), N_("Continue"))
ROOT_URL_PATH = "start"  # reserved for the root page; Streamlit serves it at "/" and never at /start


def pages() -> list[st.Page]:
    """The menu's pages, each at its own address, titled in the language of this run; absolute paths, so a
    page file run directly finds them."""
    return [st.Page(ROOT / path, title=i18n._(title), url_path=slug) for path, title, slug in PAGES]


@cache
def _linked_pages() -> tuple[st.Page, ...]:
    """The pages the menu links to, made once: a link says its own label, and making them at every run was 3% of
    the server's time at 20 sessions (bench/bench_load.py). Only links use them: st.navigation marks the page it
    runs, so app.py makes its own at each run (navigation_pages)."""
    return tuple(st.Page(ROOT / path, title=title, url_path=slug) for path, title, slug in PAGES)


def root_page(first: st.Page) -> st.Page:
    """The app's root address, "/": hidden from the menu, it opens `first` at its own address and keeps
    the query (a link to "/?sentence=..." opens the first page with that sentence)."""

    def open_first_page() -> None:
        query = {key: st.query_params.get_all(key) for key in st.query_params}
        st.switch_page(first, query_params=query)

    return st.Page(open_first_page, title=first.title, url_path=ROOT_URL_PATH, default=True, visibility="hidden")


def navigation_pages() -> list[st.Page]:
    """Every page st.navigation knows: the root page, then the menu's pages."""
    menu_pages = pages()
    return [root_page(menu_pages[0]), *menu_pages]


def menu(titles: dict[str, str] | None = None) -> None:
    """The page menu at the top of the sidebar: one link per page, titled, in menu order. `titles`
    (file -> title) renames a page for the model in use (the first page is "Continue" for a
    decoder-only model; English, or already said: it is said in the language of this run); call it inside
    `st.sidebar` or a container of it."""
    renamed = titles or {}
    for page, (path, title, _slug) in zip(_linked_pages(), PAGES, strict=True):
        st.page_link(page, label=i18n._(renamed.get(path, title)))
    st.divider()

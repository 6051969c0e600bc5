"""The pages of the app, in menu order: (file, title, url path), and the menu that links them.

No icons: a material icon on a page becomes the favicon, fetched from a font CDN (fails
offline), and emoji need a colour-emoji font that projector machines may lack.

A URL path is its file's name without the number: because of the pages/ folder, Streamlit first
looks a URL up among the file names, before st.navigation runs, and a path it does not find
there ("masks-and-heads") shows a "Page not found" dialog even though the page then opens.

Streamlit draws no menu of its own (`client.showSidebarNavigation = false`): until app.py's
st.navigation has run once in the server, a page address runs its page file directly, and
Streamlit's automatic menu for that case lists the file names and "app". Every page draws
`menu()` instead, so the menu is the same whichever address is opened first, and in AppTest.
A link finds its page by URL path, which is the file's name in both cases: one more reason
the paths above are the file names.
"""

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]

PAGES: list[tuple[str, str, str]] = [
    ("pages/1_translate.py", "Translate", "translate"),
    ("pages/2_attention.py", "Attention", "attention"),
    ("pages/3_positional_encoding.py", "Positional encoding", "positional_encoding"),
    ("pages/4_tensor_shapes.py", "Tensor shapes", "tensor_shapes"),
    ("pages/5_masks_and_heads.py", "Masks and heads lab", "masks_and_heads"),
    ("pages/6_design_choices.py", "Design choices", "design_choices"),
    ("pages/7_training.py", "Training", "training"),
    ("pages/8_why.py", "Why this word?", "why"),
]


def pages() -> list[st.Page]:
    """The pages for st.navigation and the menu; absolute paths, so a page file run directly finds them."""
    return [
        st.Page(ROOT / path, title=title, url_path=slug, default=(index == 0))
        for index, (path, title, slug) in enumerate(PAGES)
    ]


def menu(titles: dict[str, str] | None = None) -> None:
    """The page menu at the top of the sidebar: one link per page, titled, in menu order. `titles`
    (file -> title) renames a page for the model in use (the first page is "Continue" for a
    decoder-only model); call it inside `st.sidebar` or a container of it."""
    renamed = titles or {}
    for page, (path, _, _) in zip(pages(), PAGES, strict=True):
        st.page_link(page, label=renamed.get(path))
    st.divider()

"""Transformer Anatomy: `streamlit run app.py` (or serve.py, which loads the model first).
Only the page menu lives here.

Every page file sets itself up through `ui.page.start.start` (model, sidebar controls, URL state),
so the live server (app.py -> page) and AppTest (which runs page files directly) take the
same path through the same code.
"""

import streamlit as st

from ui.page import warmup

with st.spinner("Loading the model ..."):  # only an early visitor sees it: serve.py started the load
    warmup.wait()  # let it finish before this thread imports torch

from ui.session.nav import navigation_pages

# Hidden: every page draws ui.session.nav.menu() itself, the same menu on the path that skips this file.
# "/" opens the first page at its own address (ui/session/nav.py: a default page has none).
st.navigation(navigation_pages(), position="hidden").run()

"""Transformer Anatomy: `streamlit run app.py` (or serve.py, which loads the model first).
Only the page menu lives here.

Every page file sets itself up through `ui.page.start.start` (model, sidebar controls, URL state),
so the live server (app.py -> page) and AppTest (which runs page files directly) take the
same path through the same code.
"""

import streamlit as st

from i18n import _, from_locale, set_language, speaking
from ui.page import warmup

# Only an early visitor sees the loading sign (serve.py started the load), in the language the URL (lang=) or else
# the browser asks for; let the load finish before this thread imports torch.
with speaking(st.query_params.get("lang") or from_locale(st.context.locale)), st.spinner(_("Loading the model ...")):
    warmup.wait()

from ui.page.binding import VALUES
from ui.session.nav import navigation_pages
from views.controls import LANGUAGE

# The language of this run until the page says it (ui/page/sidebar.py, choose_language), for the titles of the
# menu's pages (the browser's tab): the session's choice, else what the URL or the browser asks for.
set_language(
    st.session_state.get(VALUES, {}).get(LANGUAGE.key) or st.query_params.get("lang") or from_locale(st.context.locale)
)

# Hidden: every page draws ui.session.nav.menu() itself, the same menu on the path that skips this file.
# "/" opens the first page at its own address (ui/session/nav.py: a default page has none).
st.navigation(navigation_pages(), position="hidden").run()

"""Transformer Anatomy behind a warm-up: `streamlit run serve.py` (what ./app.sh runs).

The app itself is app.py (`streamlit run app.py` works too); this launcher adds the start-up hook that
loads the model before the first visitor arrives, and the audience's routes of a shared room
(ui/room/server.py: the phone page, the room's files, its events and votes).
"""

import streamlit as st

from ui.page.warmup import lifespan, running
from ui.room.server import routes

app = st.App("app.py", lifespan=lifespan, routes=routes(warming_up=running))

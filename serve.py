"""Transformer Anatomy behind a warm-up: `streamlit run serve.py` (what ./app.sh runs).

The app itself is app.py (`streamlit run app.py` works too); this launcher only adds the
start-up hook that loads the model before the first visitor arrives.
"""

import streamlit as st

from ui.warmup import lifespan

app = st.App("app.py", lifespan=lifespan)

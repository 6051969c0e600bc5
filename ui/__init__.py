"""Streamlit glue shared by every page: controls, URL state, cached model calls, figure display."""

"""The least a Streamlit page with one plotly chart can cost: the cold-start benchmark's yardstick."""

import plotly.graph_objects as go
import streamlit as st

st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])))

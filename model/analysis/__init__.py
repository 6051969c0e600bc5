"""What the pages measure on top of a loaded model, without Streamlit."""

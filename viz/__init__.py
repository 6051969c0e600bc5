"""Pure figure and table builders: Trace or arrays in, plotly Figure or pandas DataFrame out."""

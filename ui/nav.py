"""The pages of the app, in menu order: (file, title, url path).

No icons: a material icon on a page becomes the favicon, fetched from a font CDN (fails
offline), and emoji need a colour-emoji font that projector machines may lack.

A URL path is its file's name without the number: because of the pages/ folder, Streamlit first
looks a URL up among the file names, before st.navigation runs, and a path it does not find
there ("masks-and-heads") shows a "Page not found" dialog even though the page then opens.
"""

PAGES: list[tuple[str, str, str]] = [
    ("pages/1_translate.py", "Translate", "translate"),
    ("pages/2_attention.py", "Attention", "attention"),
    ("pages/3_positional_encoding.py", "Positional encoding", "positional_encoding"),
    ("pages/4_tensor_shapes.py", "Tensor shapes", "tensor_shapes"),
    ("pages/5_masks_and_heads.py", "Masks and heads lab", "masks_and_heads"),
    ("pages/6_training.py", "Training", "training"),
]

"""The pages of the app, in menu order: (file, title, url path).

No icons: a material icon on a page becomes the favicon, fetched from a font CDN (fails
offline), and emoji need a colour-emoji font that projector machines may lack.
"""

PAGES: list[tuple[str, str, str]] = [
    ("pages/1_translate.py", "Translate", "translate"),
    ("pages/2_attention.py", "Attention", "attention"),
    ("pages/3_positional_encoding.py", "Positional encoding", "positional-encoding"),
    ("pages/4_tensor_shapes.py", "Tensor shapes", "tensor-shapes"),
    ("pages/5_masks_and_heads.py", "Masks and heads lab", "masks-and-heads"),
    ("pages/6_training.py", "Training", "training"),
]

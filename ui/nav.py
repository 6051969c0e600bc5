"""The pages of the app, in menu order: (file, title, icon, url path)."""

PAGES: list[tuple[str, str, str, str]] = [
    ("pages/1_translate.py", "Translate", ":material/translate:", "translate"),
    ("pages/2_attention.py", "Attention", ":material/grid_on:", "attention"),
    ("pages/3_positional_encoding.py", "Positional encoding", ":material/waves:", "positional-encoding"),
    ("pages/4_tensor_shapes.py", "Tensor shapes", ":material/view_in_ar:", "tensor-shapes"),
    ("pages/5_masks_and_heads.py", "Masks and heads lab", ":material/science:", "masks-and-heads"),
    ("pages/6_training.py", "Training", ":material/monitoring:", "training"),
]

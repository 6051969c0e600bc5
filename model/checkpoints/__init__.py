"""Files -> engine: our own checkpoint layout, weights (safetensors only), training snapshots, the
catalog of models on disk, and the converters of Hugging Face families (`families/`)."""

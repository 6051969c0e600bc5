"""The engine: the Transformer in torch and everything it runs with (config, layers, attention,
positions, masks, hook points, decoding, tokenizers). It reads no files but a tokenizer's."""

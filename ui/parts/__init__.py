"""Parts of single pages, by topic: rotary positions (Positional encoding), the KV cache, attention
sinks and the model view (Attention), the masks and the head knock-outs (Masks and heads lab),
attribution, the logit lens and patching, with the output they explain (Why this word?), the time-lapse
and the recipe comparison (Training), the window and colour controls of long texts (lengths).

Imports ui.session and ui.page."""

"""Parts of single pages, by topic: rotary positions (Positional encoding), the KV cache and attention
sinks (Attention), the time-lapse and the recipe comparison (Training), the window and colour controls
of long texts (lengths).

Imports ui.session and ui.page."""

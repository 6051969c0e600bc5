"""The frame of every page: start-up, the shared sidebar and its notices (start), buttons for parts
too costly to compute unasked (ondemand), the play button and the clicker (player), and the server's
warm-up (warmup).

Imports ui.session and ui.room, and nothing of ui.parts."""

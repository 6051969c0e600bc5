"""The frame of every page: start-up and the Page a page draws with (start), the shared sidebar (sidebar)
and its switches with their banner (switches), widgets bound to the store and the URL (binding), notices
under the title (notices), markdown and CSS (markup), buttons for parts too costly to compute unasked
(ondemand), the play button and the clicker (player), and the server's warm-up (warmup).

Imports ui.session and ui.room, and nothing of ui.parts."""

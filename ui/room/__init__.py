"""A room a presenter shares with an audience: the room's files (store: no streamlit, no plotly), the
presenter's panel (presenter), questions drawn from the view on screen (questions), and the audience's
Starlette routes (server, with the phone page follow.html).

Imports ui.session, and nothing else of ui/."""

"""Streamlit glue between the engine (model/), the pictures (viz/) and the page files (pages/), in four
packages, each importing only the ones before it (tests/app/test_layout.py checks the order):

    ui.session  what every page shares and nothing draws: the controls and their URL round trip, the
                menu, the byte-bounded caches, the cached engine calls, figures shared across sessions
    ui.room     a room a presenter shares with an audience: its files, the presenter's panel, the
                questions, the phones' routes (may import ui.session)
    ui.page     the frame of every page: start-up, sidebar, notices, markup, buttons for costly parts,
                the player, the server's warm-up (may import ui.session, ui.room)
    ui.parts    parts of single pages, by topic (may import ui.session, ui.page)
"""

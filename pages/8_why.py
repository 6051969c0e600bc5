"""Why this word: which source pieces made each output piece (attribution), what each decoder layer
would already write (logit lens), which heads wrote it and the routes to it (direct logit attribution, information
flow), what an activation from another sentence changes (patching), and
what each head mostly does (roles). For a decoder-only model (GPT-2) the source is the prompt and the
output its continuation. What is drawn is views.why's (and views.attribution's, lens's, patching's); here,
the piece picker, the player, the buttons and the cache."""

import streamlit as st

from i18n import N_, _
from model import AnatomyError
from ui.page import player
from ui.page.binding import bind, set_value
from ui.page.notices import hidden_until_the_reveal
from ui.page.ondemand import filling, spare_work, without_the_mask
from ui.page.panels import draw_one
from ui.page.start import _take_turn, start
from ui.parts import attribution, lengths, lens, patching, shares
from ui.room import presenter, questions
from ui.session import explanations
from views import why as view
from views.explained import explained, words
from views.markdown import md
from viz.explain import ROLE_SCORES, role_columns
from viz.lengths import DETAIL, around

PIECE_WIDGET = "w_why_piece"


def _piece_picked() -> None:
    picked = st.session_state[PIECE_WIDGET]
    if picked is not None:
        set_value("step", picked + 1)


def _pick_piece(out_pieces: list[str], step: int, playing: bool) -> int:
    """The output pieces around the step as buttons (a click explains that piece) and a slider over
    all of them (`step=` in the URL); returns the piece on show, from 0."""
    chips = view.piece_chips(out_pieces)
    # on a projector, the pieces' buttons (and the clicker) pick the piece while they show every one
    if len(out_pieces) > 1 and not (ctl.presentation and len(out_pieces) <= DETAIL):
        step = bind("step", st.slider, label=PIECE, min_value=1, max_value=len(out_pieces), moving=playing) - 1
    st.session_state[PIECE_WIDGET] = step
    st.pills(
        _("{label} to explain: click one", label=PIECE),
        list(range(*around(step, len(out_pieces)))),
        key=PIECE_WIDGET,
        on_change=_piece_picked,
        format_func=chips.__getitem__,
        disabled=playing,
        label_visibility="collapsed",
    )
    return step


def body(step: int) -> None:
    """Everything that explains the output piece at `step` (0-based)."""
    step = _pick_piece(why.out_pieces, step, player.DECODING.playing())
    lines = st.container()  # every method's line for the piece, then the whole table; what they say below
    source = lengths.source_window(len(why.src_pieces))
    output = around(step, len(why.out_ids))
    if presenter.asking(page.room):  # the room votes on which source piece matters: attribution and patching wait
        hidden_until_the_reveal("why-attribution")
        lens.section(page, why, step, output)
        return
    attribution.whole_table(page, why, output, source)
    notes_below = st.container()
    with lines:
        attribution.every_method(page, why, step, notes_below)
    lens.section(page, why, step, output)
    shares.section(page, why, step)
    patching.section(page, why, step, source)


page = start(N_("Why this word?"), needs_result=False)
ctl, bundle = page.controls, page.bundle
decoder_only = page.decoder_only
_take_turn(bundle, ctl.sentence, ctl.chat)  # a long text waits for its turn, as start() does when it runs the result
PIECE = words(ctl.chat, decoder_only).piece  # what the page calls the output's pieces

if decoder_only:  # its continuation (ui.page.start runs a translation or an encoding)
    unmasked = without_the_mask(bundle, ctl)  # a costly continuation without the causal mask waits
    if unmasked is False:
        st.stop()
    with filling(unmasked):
        page.result = page.run_written()  # a costly continuation says which piece it is writing
else:
    page.result = page.run_written()  # a costly translation too (an encoding is never written piece by piece)
shares.register()  # before the scene reads the stored controls
scene = page.scene
said = view.warnings(scene)
if said:
    with page.notes:  # on a projector, folded into "Notes on this run" as every page's notes are
        page.panels(said)

if page.encoder_only:
    page.panels([view.no_output(scene)])
else:
    # what the page's parts read (ui/parts/attribution.py, lens.py, patching.py); the work it computes unasked
    # beside its translation or continuation is ui.page.ondemand's (tests set it)
    why = explained(scene, spare_work)
    if ctl.presentation:  # on a projector what was read and written folds into the notes: the lines come first
        with page.notes:
            page.panels(view.opening(why))
    else:
        page.panels(view.opening(why))
    if why.out_ids:
        set_value("step", min(ctl.step, len(why.out_ids) - 1) + 1)
        player.DECODING.controls(len(why.out_ids), "why")
        try:
            player.DECODING.run(body, len(why.out_ids), page)
        except AnatomyError as exc:
            st.error(md(str(exc)))
        out_ids, src_pieces, iv = why.out_ids, why.src_pieces, why.iv
        presenter.offer(
            page.room,
            lambda: questions.why(bundle, ctl.sentence, out_ids, iv, ctl.step, src_pieces, decoder_only, ctl.chat),
        )

head_roles = explanations.roles(bundle, ctl.sentence, ctl.interventions(), ctl.options(), ctl.chat)
summary, table = view.roles(scene, head_roles)
page.panels([summary])
draw_one(
    page,
    table,
    hide_index=True,
    column_config={
        column: st.column_config.NumberColumn(column, format="%.3f") for column in role_columns(ROLE_SCORES)
    },
)
page.finish(globals())

"""Why this word: which source pieces made each output piece (attribution), what each decoder layer
would already write (logit lens), what an activation from another sentence changes (patching), and
what each head mostly does (roles). For a decoder-only model (GPT-2) the source is the prompt and the
output its continuation."""

import streamlit as st

from i18n import N_, _, n_
from model import AnatomyError
from ui.page import player
from ui.page.binding import bind, set_value
from ui.page.ondemand import filling, spare_work, without_the_mask
from ui.page.start import _take_turn, start
from ui.parts import attribution, lengths, lens, patching
from ui.parts.explained import Explained, words
from ui.room import presenter, questions
from ui.session import explanations
from views.markdown import md
from viz.explain import ROLE_SCORES, role_columns, roles_frame, roles_summary
from viz.labels import display_piece, reads_bytes
from viz.lengths import DETAIL, around

PIECE_WIDGET = "w_why_piece"


def _piece_picked() -> None:
    picked = st.session_state[PIECE_WIDGET]
    if picked is not None:
        set_value("step", picked + 1)


def _pick_piece(out_pieces: list[str], step: int, playing: bool) -> int:
    """The output pieces around the step as buttons (a click explains that piece) and a slider over
    all of them (`step=` in the URL); returns the piece on show, from 0."""
    byte_level = reads_bytes(out_pieces)
    # on a projector, the pieces' buttons (and the clicker) pick the piece while they show every one
    if len(out_pieces) > 1 and not (ctl.presentation and len(out_pieces) <= DETAIL):
        step = bind("step", st.slider, label=PIECE, min_value=1, max_value=len(out_pieces), moving=playing) - 1
    st.session_state[PIECE_WIDGET] = step
    st.pills(
        _("{label} to explain: click one", label=PIECE),
        list(range(*around(step, len(out_pieces)))),
        key=PIECE_WIDGET,
        on_change=_piece_picked,
        format_func=lambda i: md(display_piece(out_pieces[i], byte_level)),
        disabled=playing,
        label_visibility="collapsed",
    )
    return step


def body(step: int) -> None:
    """Everything that explains the output piece at `step` (0-based)."""
    step = _pick_piece(out_pieces, step, player.DECODING.playing())
    lines = st.container()  # every method's line for the piece, then the whole table; what they say below
    source = lengths.source_window(len(src_pieces))
    output = around(step, len(out_pieces))
    attribution.whole_table(why, output, source)
    notes_below = st.container()
    with lines:
        attribution.every_method(why, step, notes_below)
    st.subheader(_("What each decoder layer would already write"))
    lens.section(why, step, output)
    st.subheader(
        _("Patching: activations from another prompt")
        if decoder_only
        else _("Patching: activations from another sentence")
    )
    patching.section(why, step, source)


page = start(N_("Why this word?"), needs_result=False)
ctl, bundle = page.controls, page.bundle
caps = bundle.capabilities
decoder_only = page.decoder_only
_take_turn(bundle, ctl.sentence, ctl.chat)  # a long text waits for its turn, as start() does when it runs the result
WORDS = words(ctl.chat, decoder_only)  # what the page calls the output's pieces, its source and the output
PIECE = WORDS.piece

if decoder_only:  # its continuation (ui.page.start runs a translation or an encoding)
    unmasked = without_the_mask(bundle, ctl)  # a costly continuation without the causal mask waits
    if unmasked is False:
        st.stop()
    with filling(unmasked):
        page.result = page.run_written()  # a costly continuation says which piece it is writing
else:
    page.result = page.run_written()  # a costly translation too (an encoding is never written piece by piece)
for warning in page.result.warnings:
    st.warning(md(warning))

if caps.encoder_only:
    st.info(
        _(
            "{model} does not translate, so no output piece needs explaining (attribution, the logit lens and "
            "patching a translation do not apply): below are the roles its heads play on your sentence.",
            model=md(bundle.name),
        )
    )
else:
    result = page.result
    iv = ctl.interventions()
    out_ids = tuple(result.output_ids)
    out_pieces = bundle.tokenizer.pieces(list(out_ids))
    src_pieces = bundle.tokenizer.pieces(list(result.prompt_ids)) if decoder_only else result.trace.src_pieces
    why = Explained(  # what the page's parts read (ui/parts/attribution.py, lens.py, patching.py)
        page=page,
        iv=iv,
        out_ids=out_ids,
        out_pieces=out_pieces,
        src_pieces=src_pieces,
        own_trace=result.trace,  # the output's own trace: attention, rollout and the lens read it instead of a pass
        spare=spare_work(bundle, len(out_ids)),  # what the page computes unasked beside its translation or continuation
        words=WORDS,
    )
    if ctl.chat:
        answer = md(result.continuation) or _("(empty)")
        # i18n: the typed message and the model's answer follow their labels (in Chinese, inside “”)
        st.markdown(_("**Chat message** {message}  \n**Answer** {answer}", message=md(ctl.sentence), answer=answer))
        st.caption(
            n_(
                "The prompt's pieces below are the message as the model read it, wrapped by the chat template: "
                "{n} piece, its turn markers and line breaks (↵) included.",
                "The prompt's pieces below are the message as the model read it, wrapped by the chat template: "
                "{n} pieces, its turn markers and line breaks (↵) included.",
                len(src_pieces),
            )
        )
    elif decoder_only:
        written = md(result.continuation) or _("(empty)")
        st.markdown(
            # i18n: the typed prompt and the model's continuation follow their labels (in Chinese, inside “”)
            _("**Prompt** {prompt}  \n**Continuation** {continuation}", prompt=md(result.prompt), continuation=written)
        )
    if not out_ids:
        st.info(_("The {output} is empty: there is no {label} to explain.", output=WORDS.output, label=WORDS.a_piece))
    else:
        set_value("step", min(ctl.step, len(out_ids) - 1) + 1)
        player.DECODING.controls(len(out_ids), "why")
        try:
            player.DECODING.run(body, len(out_ids), page)
        except AnatomyError as exc:
            st.error(md(str(exc)))
        presenter.offer(
            page.room,
            lambda: questions.why(bundle, ctl.sentence, out_ids, iv, ctl.step, src_pieces, decoder_only, ctl.chat),
        )

st.subheader(_("What each head mostly does"))
head_roles = explanations.roles(bundle, ctl.sentence, ctl.interventions(), ctl.beam_size, ctl.chat)
st.markdown(md(roles_summary(head_roles)))
st.dataframe(
    roles_frame(head_roles),
    hide_index=True,
    column_config={
        column: st.column_config.NumberColumn(column, format="%.3f") for column in role_columns(ROLE_SCORES)
    },
)
if decoder_only:
    st.caption(
        _(
            "Scores are averages over the head's queries (the prompt's positions, then the new pieces'): weight "
            "on the piece before (previous), on itself (same), on the first piece, and how spread its weight is "
            "(broad, normalised entropy). A head is tagged with the highest of the first three when it reaches "
            "0.5, else broad at 0.9 or more. {model} has no encoder and no cross-attention, so only the "
            "decoder's self-attention has heads here: no encoder heads, no sink on a source's last piece "
            "(“last”), and no alignment with a gold word alignment, which scores the cross-attention heads of a "
            "translation model against the source words each French word comes from.",
            model=md(bundle.name),
        )
    )
else:
    st.caption(
        _(
            "Scores are averages over the head's queries: weight on the piece before (previous), on itself "
            "(same), on the first piece, on the last source piece (</s> or [SEP]), and how spread its weight is "
            "(broad, normalised entropy). A head is tagged with the highest of the first four when it reaches "
            "0.5, else broad at 0.9 or more."
        )
    )
page.finish(globals())

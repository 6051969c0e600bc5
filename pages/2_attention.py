"""Attention: every head of the chosen layer, the head average, and the all-layers model view.
A decoder-only model (GPT-2) has decoder self-attention alone, over its prompt and continuation."""

import streamlit as st

from i18n import N_, _, later, n_, sentences
from model.results import Trace
from ui.page import player
from ui.page.binding import bind, page_value, set_value, stored
from ui.page.start import Page, start
from ui.page.stream import Preview
from ui.parts import kvcache, lengths, modelview, sinks
from ui.room import presenter, questions
from ui.session.figures import shared
from views.controls import BLOCK_NAMES, BLOCKS, Field
from views.markdown import md
from viz.attention import attention_heads, attention_map
from viz.labels import CONTAINER_PX, display_piece, on_one_line
from viz.lengths import around


def prompt_heads(page: Page, prompt: Trace) -> None:
    """While the continuation or translation is written: the chosen head's self-attention over the prompt alone,
    its last pieces' rows (the first piece kept in view, where most heads put much of their weight); for an
    encoder-decoder, the encoder's over the sentence."""
    ctl = page.controls
    encoder = bool(page.limits.layers_of("encoder"))
    stack, pieces = ("encoder", prompt.src_pieces) if encoder else ("decoder", prompt.tgt_pieces)
    layer = min(ctl.layer, page.limits.layers_of(stack) - 1)
    n = len(pieces)
    window = around(n - 1, n)
    said = {"layer": layer + 1, "head": ctl.head + 1}
    if encoder:
        st.subheader(_("The sentence's self-attention"))
        title = _("Encoder self-attention over the sentence · L{layer} H{head}", **said)
    else:
        st.subheader(_("The prompt's self-attention"))
        title = _("Decoder self-attention over the prompt · L{layer} H{head}", **said)
    figure = attention_map(
        prompt.pattern(stack, "self", layer)[ctl.head],
        pieces,
        pieces,
        page.style,
        title,
        rows=window,
        columns=window,
        first=True,
    )
    page.draw(figure, key="prompt-heads")
    if encoder:
        st.caption(
            _(
                "The encoder reads the whole sentence in one pass before the decoder writes its first piece: rows "
                "and columns are the sentence's pieces. Every head, and the decoder's self- and cross-attention, "
                "follow when the translation is whole."
            )
        )
    else:
        st.caption(
            _(
                "Read in one pass before the first new piece: rows are the prompt's pieces, columns the pieces each "
                "may look back at. Every head and the new pieces' rows follow when the continuation is whole."
            )
        )
    sinks.prompt_shares(page, prompt, stack)


page = start(N_("Attention"), preview=Preview(prompt=prompt_heads))
trace, ctl, style = page.result.trace, page.controls, page.style
# Decoding steps: one per output piece. A decoder-only model's rows are its prompt's pieces and then the new
# pieces fed back in: step t is row `first + t` (first = the prompt's last position); a translation's step t is row t.
n_steps = len(page.result.output_ids) if page.decoder_only else len(trace.tgt_pieces)
first = len(trace.tgt_pieces) - n_steps if page.decoder_only else 0
blocks = page.limits.blocks  # an encoder-only model has one, a decoder-only model one

CAPTIONS = {
    "enc-self": _(
        "Rows are queries, columns are keys, both source pieces. Row i shows how much piece i "
        "took from every piece of the sentence (each row sums to 1)."
    ),
    "dec-self": _(
        "Rows are decoder positions (the piece fed in at that step), columns the pieces it may "
        "look back at. Everything right of the diagonal is 0: the causal mask hides it, and with the mask "
        "off those pieces did not exist yet when the step ran."
    ),
    "dec-cross": _(
        "Rows are decoder positions, columns are source pieces: where in the English sentence "
        "each step of the French output looked."
    ),
}
if page.decoder_only:
    CAPTIONS["dec-self"] = sentences(
        _(
            "Rows are positions: the prompt's pieces, then each new piece fed back in; columns the pieces a row may "
            "look back at."
        ),
        _("Everything right of the diagonal is 0: the causal mask hides it.")
        if ctl.causal
        else _(
            "With the causal mask off, the prompt's rows also read the prompt's later pieces; a new "
            "piece's row cannot, as those pieces did not exist yet when its step ran."
        ),
        _("The outlined row is the step being produced; the rows above it read the prompt."),
    )


def _block_code(text: str) -> str:
    """A `view=` of the URL: an attention block's code, or a ValueError that says so (when shown)."""
    if text not in BLOCKS:
        raise ValueError(later("expected one of {options}", options=", ".join(BLOCKS)))
    return text


VIEW = Field("view", "dec-cross", _block_code)
if page_value(VIEW) not in blocks:  # a decoder view kept from another model
    set_value("view", next(iter(blocks)))


def _step_header(step: int) -> int:
    """The step slider (the player moves it too) and what step t did; returns the step from 0."""
    if n_steps > 1:
        step = (
            bind(
                "step",
                st.slider,
                label=_("Decoding step t (outlined row in the decoder plots)"),
                min_value=1,
                max_value=n_steps,
                moving=player.DECODING.playing(),
            )
            - 1
        )
    row = first + step
    if page.decoder_only:
        output = page.bundle.tokenizer.decode(list(page.result.output_ids[: step + 1])).strip()
    else:
        output = "".join(
            display_piece(p) if not p.startswith("▁") else " " + display_piece(p) for p in trace.out_pieces[: step + 1]
        ).strip()
    so_far = md(on_one_line(output)) or _("(nothing yet)")
    if page.chat:
        said = _("Answer so far: **{text}**", text=so_far)
    elif page.decoder_only:
        said = _("Continuation so far: **{text}**", text=so_far)
    else:
        said = _("Output so far: **{text}**", text=so_far)
    step_said = _(
        "Step **t = {t}** of {n} read “{read}” (decoder position {row}, counted from 0 like every position here) "
        "and produced “{made}”.",
        t=step + 1,
        n=n_steps,
        read=md(display_piece(trace.tgt_pieces[row])),
        row=row,
        made=md(display_piece(trace.out_pieces[row])),
    )
    st.markdown(sentences(step_said, said))
    return step


def _step_view(step: int, source, output, colour: str) -> None:
    """The moving picture under the step control: the chosen head's decoder self-attention and
    cross-attention, the step's row outlined."""
    decoding = [block for block in blocks if block != "enc-self"]
    for column, block in zip(st.columns(len(decoding)), decoding, strict=True):
        stack, kind = blocks[block]
        layer = min(ctl.layer, page.limits.layers_of(stack) - 1)
        off = ctl.interventions().heads_off(stack, kind, layer)
        at = {"block": _(BLOCK_NAMES[block]).capitalize(), "layer": layer + 1, "head": ctl.head + 1}
        title = (
            _("{block} · L{layer} H{head} (knocked out)", **at)
            if ctl.head in off
            else _("{block} · L{layer} H{head}", **at)
        )

        def at_row(row: int, block=block, stack=stack, kind=kind, layer=layer, title=title):
            return shared(
                attention_map,
                trace.pattern(stack, kind, layer)[ctl.head],
                modelview.query_pieces(trace, block),
                modelview.key_pieces(trace, block),
                style,
                title,
                row,
                colour=colour,
                first=block != "dec-cross",
                width_px=CONTAINER_PX / len(decoding),
                **lengths.block_windows(block, source, output if row == step else around(row, len(trace.tgt_pieces))),
            )

        with column:
            player.DECODING.steady_chart(page, f"step-{block}", at_row, step, first)
    st.caption(_step_caption(len(decoding) > 1, player.DECODING.playing()))


def _step_caption(cross: bool, playing: bool) -> str:
    """What the moving picture shows: the step's row, in one chart or two (`cross`), outlined below when paused."""
    outlined = (
        _(
            "The outlined row is step t: what the piece fed in looks back at (left), and where in the English "
            "sentence it looks (right)."
        )
        if cross
        else _("The outlined row is step t: what the piece fed in looks back at.")
    )
    below = (
        _(
            "The layer and head are the sidebar's; every layer and head follow below, outlined at the step again "
            "when paused."
        )
        if playing
        else _("The layer and head are the sidebar's; every layer and head follow below.")
    )
    return sentences(outlined, below)


def _mask_off_note() -> None:
    """With the causal mask off, what the decoder plots still show and what changes."""
    if not ctl.causal and page.decoder_only:
        st.info(
            _(
                "The causal mask is off. The prompt is read in one pass, so its pieces now also look at the pieces "
                "after them (the prompt's rows fill in right of the diagonal). Each new piece's row is what its step "
                "computed in its own pass: it still reads only the pieces made so far, because later ones did not "
                "exist yet. The Masks and heads lab shows prompt and continuation read in one pass, where the future "
                "lights up everywhere."
            )
        )
    elif not ctl.causal and not page.encoder_only:
        st.info(
            _(
                "The causal mask is off. While decoding, step t still reads only the pieces made so far (later ones "
                "do not exist yet, so the right of the diagonal stays empty): each row below is what its step "
                "computed in its own pass. What changes is that those earlier pieces, recomputed at every step, now "
                "read each other both ways, so from decoder layer 2 on their keys and values differ from the masked "
                "run. The Masks and heads lab shows the whole output read in one pass, where the future lights up."
            )
        )


def _layer_heads(block: str, step: int, source, output, colour: str) -> None:
    """Every head of the sidebar's layer in one attention block, then their average and the sidebar's head."""
    stack, kind = blocks[block]
    n_layers = page.limits.layers_of(stack)
    layer = min(ctl.layer, n_layers - 1)
    pattern = trace.pattern(stack, kind, layer)
    # playing, the charts below the moving picture hold still: redrawn every second, they kept the browser busy
    highlight = None if block == "enc-self" or player.DECODING.playing() else step
    off = ctl.interventions().heads_off(stack, kind, layer)
    window = {**lengths.block_windows(block, source, output), "first": block != "dec-cross"}
    st.subheader(_("{block} · layer L{layer}", block=_(BLOCK_NAMES[block]).capitalize(), layer=layer + 1))
    if layer != ctl.layer:
        if stack == "encoder":
            last = n_(
                "The encoder has {n} layer: showing its last.",
                "The encoder has {n} layers: showing its last.",
                n_layers,
            )
        else:
            last = n_(
                "The decoder has {n} layer: showing its last.",
                "The decoder has {n} layers: showing its last.",
                n_layers,
            )
        st.caption(last)
    page.show(
        shared(
            attention_heads,
            pattern,
            modelview.query_pieces(trace, block),
            modelview.key_pieces(trace, block),
            style,
            _("{block}, L{layer}: every head", block=_(BLOCK_NAMES[block]), layer=layer + 1),
            highlight,
            off,
            colour=colour,
            **window,
        ),
        CAPTIONS[block],
        key=f"heads-{block}",
    )
    _average_and_one(block, pattern, highlight, off, window, colour)


def _average_and_one(block: str, pattern, highlight: int | None, off, window: dict, colour: str) -> None:
    """Side by side: the average of the heads still on, and the sidebar's head alone."""
    left, right = st.columns(2)
    live = modelview.live_heads(pattern.shape[0], off)
    with left:
        page.show(
            shared(
                attention_map,
                pattern[live].mean(axis=0),
                modelview.query_pieces(trace, block),
                modelview.key_pieces(trace, block),
                style,
                n_("Average of the {n} head still on", "Average of the {n} heads still on", len(live))
                if off
                else n_("Average of the {n} head", "Average of the {n} heads", len(live)),
                highlight,
                colour=colour,
                width_px=CONTAINER_PX / 2,
                **window,
            ),
            _(
                "The mean over heads: what the layer attends to as a whole. Knocked-out heads are left out: they "
                "still compute weights, but their output is zeroed."
            )
            if off
            else _("The mean over heads: what the layer attends to as a whole."),
            key=f"avg-{block}",
        )
    with right:
        page.show(
            shared(
                attention_map,
                pattern[ctl.head],
                modelview.query_pieces(trace, block),
                modelview.key_pieces(trace, block),
                style,
                _("Head H{head} alone (knocked out)", head=ctl.head + 1)
                if ctl.head in off
                else _("Head H{head} alone", head=ctl.head + 1),
                highlight,
                colour=colour,
                width_px=CONTAINER_PX / 2,
                **window,
            ),
            _("The head picked in the sidebar, with its weights: it still computes them, but its output is zeroed.")
            if ctl.head in off
            else _("The head picked in the sidebar, with its weights."),
            key=f"one-{block}",
        )


def body(step: int) -> None:
    """Everything that follows the decoding step: drawn again at every step while playing."""
    picture = st.container()  # the step's picture first; the controls that shape it sit below it
    t = step
    if not page.encoder_only:
        with picture:
            t = _step_header(step)
            step = first + t  # from here on: the decoder row of the step
            moving = st.container()
    source = lengths.source_window(len(trace.src_pieces))
    output = around(step, len(trace.tgt_pieces))
    colour = lengths.colour()
    if not page.encoder_only:
        with moving:
            _step_view(step, source, output, colour)
            kvcache.cache_at_step(page, t, trace.tgt_pieces)
    _mask_off_note()

    for block in blocks:
        _layer_heads(block, step, source, output, colour)

    modelview.section(page, trace, step, source, output, colour, outlined=not player.DECODING.playing())
    if (stored("layer"), stored("head")) != (ctl.layer + 1, ctl.head + 1):
        st.rerun()  # a tile was clicked inside the player: redraw the whole page, sidebar pickers included


if page.encoder_only:
    st.info(
        _(
            "{name} is encoder-only: below is its self-attention, where every piece looks at every piece. Decoder "
            "masked self-attention and cross-attention do not apply: the model has no decoder.",
            name=page.bundle.name,
        )
    )
    body(0)
elif page.decoder_only:
    with page.notes:
        decoder_only = _(
            "{name} is decoder-only: below is its masked self-attention alone, over the prompt and the continuation. "
            "It has no encoder and no cross-attention: there is no source sentence to read, only the text so far, "
            "which every step reads through self-attention.",
            name=page.bundle.name,
        )
        chat_note = _(
            "The prompt is your chat message wrapped by the chat template (its turn markers are pieces too), and the "
            "continuation is the answer."
        )
        st.info(sentences(decoder_only, chat_note if page.chat else ""))
    set_value("step", min(ctl.step, n_steps - 1) + 1)
    player.DECODING.controls(n_steps, "attention")
    player.DECODING.run(body, n_steps, page)
else:
    # A step kept from a longer output (or a URL) is brought inside this output before the slider sees it.
    set_value("step", min(ctl.step, n_steps - 1) + 1)
    player.DECODING.controls(n_steps, "attention")
    player.DECODING.run(body, n_steps, page)
    presenter.offer(
        page.room, lambda: questions.attention(trace, ctl.layer, ctl.head, stored("step") - 1), questions.NO_CROSS
    )
if not page.encoder_only:
    kvcache.without_cache(page)
    kvcache.shared_heads(page, len(trace.tgt_pieces))
sink_stack = "encoder" if page.limits.layers_of("encoder") else "decoder"
sinks.section(page, trace, sink_stack, trace.src_pieces if sink_stack == "encoder" else trace.tgt_pieces)
sinks.windows(page, trace.tgt_pieces)
page.finish(globals())

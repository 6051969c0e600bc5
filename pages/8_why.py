"""Why this word: which source pieces made each output piece (attribution), what each decoder layer
would already write (logit lens), what an activation from another sentence changes (patching), and
what each head mostly does (roles). For a decoder-only model (GPT-2) the source is the prompt and the
output its continuation."""

import numpy as np
import streamlit as st

from model import AnatomyError
from model.analysis import METHODS
from model.analysis.attribution import BATCH, IG_STEPS, padding_baseline
from model.analysis.forced import work
from model.analysis.patching import Mismatch, mismatch, moved_pieces
from model.engine import stages
from ui.page import player
from ui.page.binding import bind, page_value, set_value
from ui.page.markup import md
from ui.page.ondemand import asked, filling, spare_work, without_the_mask
from ui.page.start import _take_turn, start
from ui.parts import lengths
from ui.room import presenter, questions
from ui.session import engine
from ui.session.figures import shared
from ui.session.urlstate import Field
from viz.explain import doubts, lens_heatmap, lens_table, patch_effect, patch_grid_map, roles_frame, roles_summary
from viz.focus import shaded_text
from viz.labels import display_piece
from viz.lengths import DETAIL, around
from viz.shapes import tensor_heatmap


def definitions(decoder_only: bool, padding: bool) -> dict[str, str]:
    """What each attribution method measures, in the page's words (model.analysis.attribution)."""
    source = "prompt piece" if decoder_only else "source piece"
    start_from = "a sentence of padding pieces" if padding else "a zero embedding"
    if decoder_only:
        attention = (
            "the last decoder layer's self-attention from the position that chose the piece, averaged "
            "over its heads, on the prompt's pieces (the rest of its weight is on the new pieces before)"
        )
        rollout = (
            "attention rollout: the last layer's self-attention times the layers' below it, layer after "
            "layer, each half attention and half the piece itself; on the prompt's pieces"
        )
    else:
        attention = "the last decoder layer's cross-attention, averaged over its heads"
        rollout = (
            "attention rollout: the last layer's cross-attention times the encoder's self-attention, "
            "layer after layer, each half attention and half the piece itself"
        )
    return {
        "attention": attention,
        "rollout": rollout,
        "gradient": f"input × gradient: each {source}'s token embedding times the gradient of the piece's "
        "log-probability with respect to it (red raises it, blue lowers it)",
        "integrated-gradients": f"integrated gradients: input × the gradient averaged along the way from {start_from} "
        f"to the real one ({IG_STEPS} steps); a row sums to how much the "
        f"{'prompt' if decoder_only else 'sentence'} raises that piece's log-probability over "
        f"{'a sentence of padding pieces as long' if padding else 'an empty one'}",
        "occlusion": f"occlusion: how much the piece's log-probability drops when that one {source}'s embedding "
        f"is set to {'the padding piece’s' if padding else 'zero'}",
    }


NAMES = {"gradient": "input × gradient", "integrated-gradients": "integrated gradients"}  # the others as they are
METHOD = Field(
    "method",
    "occlusion",
    lambda text: (
        text if text in METHODS else (_ for _ in ()).throw(ValueError(f"expected one of {', '.join(METHODS)}"))
    ),
)
# Differs from the default sentence at four words, each translated into its own pieces (measured on the
# shipped model: seven of its ten output pieces move by 7 to 12 in log-probability at their own word)
DONOR = Field("donor", "The big boy sees a red car.", lambda text: text[:300])
PIECE_WIDGET = "w_why_piece"
# A grid cell below this is float rounding (an activation recorded in a pass of one row, the grid's passes have many)
UNCHANGED = 1e-4
SHOWN = 0.005  # the biggest change is written to two decimals: below this it would read 0.00
MOVED = 0.1  # a piece whose log-probability a patch moves this much or more is offered to explain instead


def _hook_points(n_layers: int, norm_first: bool) -> dict[str, str]:
    """Source-side hook points worth patching, by what they are, in the order the model runs them. A
    post-LN encoder's last layer output is its memory (no final norm after it): one row, not two."""
    points = {"source embeddings": stages.embedding("sum")}
    points.update(
        {
            f"encoder layer {layer + 1}": stages.layer_output("encoder", layer, norm_first)
            for layer in range(n_layers - (0 if norm_first else 1))
        }
    )
    points["encoder memory" if norm_first else f"encoder layer {n_layers} (memory)"] = stages.MEMORY
    return points


def _prompt_points(n_layers: int, norm_first: bool) -> dict[str, str]:
    """A decoder-only model's hook points worth patching at the prompt's positions: its embeddings
    and every decoder layer's output (the decoder's own output after its final norm is read by no
    later position, so it could change only piece 1)."""
    return {
        "prompt embeddings": stages.embedding("sum", "target"),
        **{
            f"decoder layer {layer + 1}": stages.layer_output("decoder", layer, norm_first) for layer in range(n_layers)
        },
    }


def _piece_picked() -> None:
    picked = st.session_state[PIECE_WIDGET]
    if picked is not None:
        set_value("step", picked + 1)


def _pick_piece(out_pieces: list[str], step: int, playing: bool) -> int:
    """The output pieces around the step as buttons (a click explains that piece) and a slider over
    all of them (`step=` in the URL); returns the piece on show, from 0."""
    # on a projector, the pieces' buttons (and the clicker) pick the piece while they show every one
    if len(out_pieces) > 1 and not (ctl.presentation and len(out_pieces) <= DETAIL):
        step = bind("step", st.slider, label=PIECE, min_value=1, max_value=len(out_pieces), disabled=playing) - 1
    st.session_state[PIECE_WIDGET] = step
    st.pills(
        f"{PIECE} to explain: click one",
        list(range(*around(step, len(out_pieces)))),
        key=PIECE_WIDGET,
        on_change=_piece_picked,
        format_func=lambda i: md(display_piece(out_pieces[i])),
        disabled=playing,
        label_visibility="collapsed",
    )
    return step


def _piece_work(method: str) -> float:
    """What one method costs for one output piece (`_table_work` for a single row)."""
    rows = {
        "attention": 1,
        "rollout": 1,
        "gradient": 1,
        "occlusion": len(src_pieces) + 1,
        "integrated-gradients": IG_STEPS,
    }[method]
    return work(bundle, rows, len(src_pieces) + len(out_ids), gradients=method in ("gradient", "integrated-gradients"))


def _methods_for(step: int) -> list[str]:
    """The methods shown for the piece: attention, rollout and those cheap or already computed at once, the
    others when asked (a real-size model's integrated gradients and occlusion take seconds per piece)."""
    costly = [
        name
        for name in ("gradient", "integrated-gradients", "occlusion")
        if _piece_work(name) > SPARE
        and not engine.attribution_cached(bundle, ctl.sentence, out_ids, name, iv, pieces=(step,), chat=ctl.chat)
    ]
    if not costly or st.button(f"Add {' and '.join(costly)} for this piece", key="why-costly-methods"):
        return list(METHODS)
    st.caption(
        f"{' and '.join(name.capitalize() for name in costly)} for one piece of {md(bundle.name)} cost more "
        "than this page computes unasked (at this size, as much as the continuation itself or more): the button "
        "adds them."
    )
    return [name for name in METHODS if name not in costly]


def _every_method(step: int, notes_below) -> None:
    """Every method's line over the source for the piece on show; what they say, in `notes_below` (under
    the table, so that the picture comes first)."""
    rows = {
        name: engine.attribution(
            bundle, ctl.sentence, out_ids, name, iv, pieces=(step,), trace=own_trace, chat=ctl.chat
        )[0]
        for name in _methods_for(step)
    }
    best = {name: int(abs(row).argmax()) for name, row in rows.items()}
    st.markdown(f"#### {PIECE} {step + 1}, **{md(display_piece(out_pieces[step]))}**: where it came from")
    st.markdown(
        shared(shaded_text, list(rows.values()), src_pieces, list(rows), style, signed=True), unsafe_allow_html=True
    )
    with notes_below:
        _method_notes(rows, best, step)


def _method_notes(rows: dict[str, np.ndarray], best: dict[str, int], step: int) -> None:
    agree = len(set(best.values())) == 1
    st.caption(
        f"Each line is one method, shaded by its value over the line's largest (the methods measure in "
        f"different units; hover a word for the value). {'Blue' if style.presentation else 'Pink'} raises the "
        f"piece, {'orange' if style.presentation else 'blue'} lowers it. "
        + (
            f"Every method points first to **{md(display_piece(src_pieces[next(iter(best.values()))]))}**."
            if agree
            else f"The methods disagree on the {SOURCE} piece that matters most: "
            + ", ".join(f"{name} **{md(display_piece(src_pieces[at]))}**" for name, at in best.items())
            + "."
        )
    )
    _doubts(rows, step)
    _sink_note(rows, best)
    notes = []
    if decoder_only:
        notes.append(
            f"{md(bundle.name)} is decoder-only: it has no encoder and no cross-attention, so the "
            "“source” is your prompt"
            + (" (your chat message, wrapped by the chat template)" if ctl.chat else "")
            + ", fed to the decoder before the new pieces. Attention and rollout "
            "come from its self-attention; the gradient methods and occlusion change the prompt's token "
            "embeddings only, keeping the new pieces written before this one."
        )
    if bundle.task_prefix:
        notes.append(
            f"The source begins with the checkpoint's task prefix “{md(bundle.task_prefix.strip())}”: the "
            "model reads it as part of the sentence, so its pieces are columns too."
        )
    if padding_baseline(bundle, iv):
        notes.append(
            "Integrated gradients and occlusion start from the padding piece's embedding, not from zero: "
            + (
                "this model adds nothing to its token embeddings (its positions are a bias on the attention scores)"
                if bundle.config.positional == "relative"
                else "with the positions switched off, nothing is added to the token embeddings"
            )
            + " and normalizes them first. A norm sends any vector but zero to unit size, so on the way from "
            "a zero embedding the log-probabilities jump within the first tiny stretch, too steeply for any "
            "number of steps to follow, and the rows would not add up."
        )
    for note in notes:
        st.caption(note)


def _sink_note(rows: dict[str, np.ndarray], best: dict[str, int]) -> None:
    """Attention and rollout of a decoder alone pointing first to the first piece, which a trained model's heads
    use as a sink: say so, and what they point to after it."""
    sunk = [name for name in ("attention", "rollout") if best.get(name) == 0 and len(rows[name]) > 1]
    if not decoder_only or not sunk:
        return
    first = md(display_piece(src_pieces[0]))
    weight = ", ".join(f"{name} {rows[name][0]:.2f}" for name in sunk)
    after = ", ".join(
        f"{name} to **{md(display_piece(src_pieces[1 + int(abs(rows[name][1:]).argmax())]))}**" for name in sunk
    )
    st.caption(
        f"{' and '.join(sunk).capitalize()} point{'s' if len(sunk) == 1 else ''} first to "
        f"**{first}**, the first piece ({weight} of the weight): {md(bundle.name)}'s heads park much of their "
        "attention there whatever the piece (an attention sink: the Attention page's sink view), so this says "
        f"where they rest rather than what they read. After the first piece, {after}."
    )


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "its"


def _doubts(rows: dict[str, np.ndarray], step: int) -> None:
    """Beside the lines: each method the model's card finds unreliable, with the card's figure and what
    it does on this piece against the other methods."""
    card = bundle.card.get("explanations", {})
    for doubt in doubts(card.get("attribution_agreement", {}), rows):
        name = NAMES.get(doubt.method, doubt.method)
        text = (
            f"**{name.capitalize()} is known to disagree.** This model's card scores every method on "
            f"{_count(card.get('french_words'))} French words of {_count(card.get('sentences'))} test sentences: "
            f"{name}'s most-attributed word is the gold-aligned English word for **{doubt.agreement:g}%** of them ("
            + ", ".join(
                f"{NAMES.get(m, m)} {card['attribution_agreement'][m]:g}%"
                for m in rows
                if m != doubt.method and m in card["attribution_agreement"]
            )
            + ")."
        )
        word = lambda at: f"**{md(display_piece(src_pieces[at]))}**"  # noqa: E731
        if doubt.others_top is not None and doubt.opposite:
            text += (
                f" Here it gives {word(doubt.others_top)} the opposite sign to "
                + " and ".join(NAMES.get(m, m) for m in doubt.opposite)
                + f": it says {word(doubt.others_top)} "
                + ("lowers" if rows[doubt.method][doubt.others_top] < 0 else "raises")
                + f" **{md(display_piece(out_pieces[step]))}**, they say it "
                + ("raises" if rows[doubt.method][doubt.others_top] < 0 else "lowers")
                + " it."
            )
        elif doubt.others_top is not None and doubt.top != doubt.others_top:
            text += f" Here it points first to {word(doubt.top)}; the other methods, to {word(doubt.others_top)}."
        elif doubt.others_top is not None:
            text += f" Here it agrees with the others on {word(doubt.top)}."
        text += (
            f" It reads the slope at one point, and where a model is sure of a piece its log-probability is flat "
            f"there. Its largest value for this piece is {doubt.peak:.2g}; like every line, it is shaded by its own "
            "largest value, so a faint line looks as strong as the others."
        )
        st.caption(text)


def _table_work(method: str) -> float:
    positions = len(src_pieces) + len(out_ids)
    rows = {
        "attention": 0 if iv.causal_mask else 1,  # both read the output's own trace when it is that pass
        "rollout": 0 if iv.causal_mask else 1,
        "gradient": len(out_ids),
        "occlusion": len(src_pieces) + 1,
        "integrated-gradients": IG_STEPS * len(out_ids),
    }[method]
    return work(bundle, rows, positions, gradients=method in ("gradient", "integrated-gradients"))


def _whole_table(output: tuple[int, int], source: tuple[int, int]) -> None:
    page_value(METHOD)
    table = st.container()  # the picture first, its method picker under it
    method = bind(
        "method", st.radio, label=f"Every {PIECE.lower()} by one method", options=list(METHODS), horizontal=True
    )
    with table:
        _draw_table(method, output, source)


def _draw_table(method: str, output: tuple[int, int], source: tuple[int, int]) -> None:
    passes = -(-IG_STEPS * len(out_ids) // BATCH) if method == "integrated-gradients" else 1
    wanted = asked(
        _table_work(method),
        engine.attribution_cached(bundle, ctl.sentence, out_ids, method, iv, chat=ctl.chat),
        f"Compute the whole table ({passes} batched pass{'es' if passes > 1 else ''})",
        "why-whole-table",
        f"{method.capitalize()} over every {PIECE.lower()} costs more than this page computes unasked; the "
        "piece on show is above.",
        SPARE,
    )
    if wanted is False:
        return
    with filling(wanted) as progress:
        scores = engine.attribution(
            bundle, ctl.sentence, out_ids, method, iv, progress=progress, trace=own_trace, chat=ctl.chat
        )
    page.show(
        shared(
            tensor_heatmap,
            scores,
            out_pieces,
            style,
            f"Attribution: {method}",
            f"{SOURCE} piece",
            src_pieces,
            output,
            source,
        ),
        f"Rows are the {PIECE.lower()}s, columns the {SOURCE} pieces; a cell is {DEFINITIONS[method]}. "
        f"Every piece is scored as the model wrote it, teacher-forced on this {WHAT}.",
        key="attribution",
    )


def _lens(step: int, output: tuple[int, int]) -> None:
    cfg = bundle.config
    cached = engine.lens_cached(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    # every piece's lens puts each layer x piece through the output projection (layers x pieces x vocabulary x
    # d_model products); the table needs the piece on show alone, a piece's share of that
    cost = float(cfg.n_decoder_layers * len(out_ids) * cfg.vocab_size * cfg.d_model)
    if cached or cost <= SPARE:
        view = engine.lens(bundle, ctl.sentence, out_ids, iv, trace=own_trace, chat=ctl.chat)
        top_pieces, top_probs = view.top_pieces_at(step), view.top_probs[:, step]
    else:
        one = engine.lens(bundle, ctl.sentence, out_ids, iv, trace=own_trace, pieces=(step,), chat=ctl.chat)
        top_pieces, top_probs = one.top_pieces_at(0), one.top_probs[:, 0]
    st.dataframe(lens_table(top_pieces, top_probs, out_pieces[step]))
    after = (
        "its final norm, the rescale by 1/√d_model and the output projection"
        if cfg.rescale_output
        else "its final norm and the output projection"
        if cfg.norm_first
        else "the output projection"
    )
    st.caption(
        f"{PIECE} {step + 1}: each decoder layer's output put through what the model does after its last "
        f"layer ({after}), and its first candidates with their probabilities; the piece the model wrote is "
        "checked."
        + (
            " The rows are the decoder's positions that chose the new pieces: the prompt's last, then each new piece's."
            if decoder_only
            else ""
        )
    )
    whole = asked(
        cost,
        cached,
        f"Compute the lens of every {PIECE.lower()}",
        "why-lens-all",
        f"Every {PIECE.lower()}'s lens puts each layer's output through the output projection over the whole "
        f"vocabulary ({cfg.vocab_size:,} pieces): at this size it is computed when you ask.",
        SPARE,
    )
    if whole is False:
        return
    with filling(whole):
        view = engine.lens(bundle, ctl.sentence, out_ids, iv, trace=own_trace, chat=ctl.chat)
    page.show(
        shared(
            lens_heatmap,
            view.final,
            view.firsts,
            out_pieces,
            style,
            columns=output,
            piece_axis=f"{PIECE.lower()} (what the model wrote)",
        ),
        f"Every {PIECE.lower()}: the colour is the probability each layer's lens gives the piece the model "
        "finally wrote, the text that layer's own first choice. With the causal mask on, the last row is the "
        f"model itself; with it off, every row sees the whole {WHAT} at once, as in training, and may "
        "disagree with what decoding chose.",
        key="lens",
    )


def _patching(step: int, source: tuple[int, int]) -> None:
    page_value(DONOR)
    donor = bind(
        "donor",
        st.text_input,
        label="Donor chat message (wrapped as yours is; its activations replace your prompt's)"
        if ctl.chat
        else f"Donor {'prompt' if decoder_only else 'sentence'} (its activations "
        f"replace your {'prompt' if decoder_only else 'sentence'}'s)",
    )
    cfg = bundle.config
    points = (
        _prompt_points(cfg.n_decoder_layers, cfg.norm_first)
        if decoder_only
        else _hook_points(cfg.n_encoder_layers, cfg.norm_first)
    )
    hooks = tuple(points.values())
    cost = work(bundle, len(hooks) * len(src_pieces), len(src_pieces) + step + 1)
    wanted = asked(
        cost,
        engine.patch_cells_cached(bundle, donor, ctl.sentence, out_ids, step, hooks, iv, ctl.chat),
        f"Compute the patching grid ({len(hooks)} batched passes)",
        "why-patch-grid",
        f"The grid patches every {SOURCE} position at every hook point: at this model's size, it is "
        "computed when you ask.",
        SPARE,
    )
    if wanted is False:
        return
    try:
        with filling(wanted) as progress:
            grid = engine.patch_cells(
                bundle, donor, ctl.sentence, out_ids, step, hooks, iv, progress=progress, chat=ctl.chat
            )
    except AnatomyError as exc:
        st.warning(md(str(exc)))
        return
    yours = "your prompt" if decoder_only else "your sentence"
    page.show(
        shared(
            patch_grid_map,
            grid,
            list(points),
            src_pieces,
            style,
            f"{PIECE} {step + 1}, {display_piece(out_pieces[step])}: one position from the donor",
            source,
            f"{SOURCE} position ({yours})",
        ),
        f"A cell: how much the log-probability of the piece on show changes when {yours}'s activation at "
        f"that hook point (row) and {SOURCE} position (column) is the donor's. Positions both have, matched "
        "by index"
        + (
            ": a donor prompt with as many pieces lines up with yours throughout. Only the prompt's "
            "positions are patched; the new pieces are the same in both."
            if decoder_only
            else "."
        ),
        key="patch-grid",
    )
    row, position = divmod(int(abs(grid).argmax()), grid.shape[1])
    differ = mismatch(bundle, donor, ctl.sentence, out_ids, ctl.chat)
    biggest = float(grid[row, position])
    if abs(biggest) < SHOWN:
        _no_single_position(biggest, differ, donor, hooks[0], step)
        return
    where = list(points)[row]
    moved = engine.translation_patched(bundle, donor, ctl.sentence, points[where], (position,), iv, ctl.chat)
    st.markdown(
        f"The biggest change ({biggest:+.2f}): the **{md(where)}** at position {position + 1} "
        f"(**{md(display_piece(src_pieces[position]))}**"
        + (
            f", the donor's **{md(display_piece(differ.donor[position]))}**)."
            if position in differ.positions
            else ", the same piece in the donor: the words that differ reach it through the layers before)."
        )
    )
    unchanged_text = moved == bundle.tokenizer.decode(list(out_ids))
    st.markdown(
        (
            "Your prompt continued with that one activation from the donor (greedy, every step)"
            if decoder_only
            else "Your sentence translated with that one activation from the donor"
        )
        + (
            f": the {WHAT} stays the same (the change lowers or raises the piece's probability, but the model's "
            "first choice is still the same piece)."
            if unchanged_text
            else ":"
        )
    )
    if not unchanged_text:
        st.markdown(f"> {md(moved)}")
    own = engine.score(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    with st.expander("Your own patch: any hook point, a span of positions"):
        where = st.selectbox("Hook point", list(points), index=row, key="w_patch_point")
        both = grid.shape[1]
        span = (
            st.slider(
                f"{SOURCE.capitalize()} positions to patch (from 1)",
                1,
                both,
                (1, both),
                key="w_patch_positions",
                disabled=both < 2,
            )
            if both > 1
            else (1, 1)
        )
        try:
            moved_scores = engine.patched(
                bundle, donor, ctl.sentence, out_ids, points[where], tuple(range(span[0] - 1, span[1])), iv, ctl.chat
            )
        except AnatomyError as exc:
            st.warning(md(str(exc)))
            return
        page.show(
            shared(
                patch_effect,
                own,
                moved_scores,
                out_pieces,
                style,
                f"Your {WHAT}'s pieces, the {where} at positions {span[0]}-{span[1]} from the donor",
                PIECE.lower(),
            ),
            f"Teacher-forced on your {WHAT}: how likely the model still finds each piece once that "
            f"activation comes from the donor. Patching {yours} with itself changes nothing.",
            key="patch",
        )


def _no_single_position(biggest: float, differ: Mismatch, donor: str, embeddings: str, step: int) -> None:
    """The grid's biggest change rounds to 0.00: say so, name where the donor differs, and offer the
    pieces that those differing words do move."""
    piece = f"**{md(display_piece(out_pieces[step]))}**"
    yours = "your prompt" if decoder_only else "your sentence"
    size = (
        "" if abs(biggest) < UNCHANGED else f" (the biggest change is {biggest:+.2g} in log-probability, shown as 0.00)"
    )
    if not differ.positions:
        st.caption(
            f"No single position changes the piece {piece}{size}: the donor is the same as {yours} at every "
            f"position both have"
            + ("." if len(differ.donor) == len(differ.receiver) else ", and only its length differs.")
        )
        return
    words = ", ".join(
        f"**{md(display_piece(differ.receiver[p]))}** (donor: **{md(display_piece(differ.donor[p]))}**)"
        for p in differ.positions
    )
    st.caption(
        f"No single position changes the piece {piece}{size}: the donor differs from {yours} only at {words}, "
        f"and none of those alone moves {piece}."
    )
    own = engine.score(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    swapped = engine.patched(bundle, donor, ctl.sentence, out_ids, embeddings, differ.positions, iv, ctl.chat)
    moved = [(t, change) for t, change in moved_pieces(own, swapped, MOVED) if t != step]
    if not moved:
        return
    st.markdown(f"With all of those words from the donor, these {PIECE.lower()}s move: pick one to see where.")
    with st.container(horizontal=True):
        for t, change in moved:
            st.button(
                f"{display_piece(out_pieces[t])} ({change:+.1f})",
                key=f"why-moved-{t}",
                on_click=set_value,
                args=("step", t + 1),
                help=f"Explain {PIECE.lower()} {t + 1}: its log-probability changes by {change:+.2f}",
            )


def body(step: int) -> None:
    """Everything that explains the output piece at `step` (0-based)."""
    step = _pick_piece(out_pieces, step, player.DECODING.playing())
    lines = st.container()  # every method's line for the piece, then the whole table; what they say below
    source = lengths.source_window(len(src_pieces))
    output = around(step, len(out_pieces))
    _whole_table(output, source)
    notes_below = st.container()
    with lines:
        _every_method(step, notes_below)
    st.subheader("What each decoder layer would already write")
    _lens(step, output)
    st.subheader(f"Patching: activations from another {'prompt' if decoder_only else 'sentence'}")
    _patching(step, source)


page = start("Why this word?", needs_result=False)
ctl, style, bundle = page.controls, page.style, page.bundle
caps = bundle.capabilities
decoder_only = page.decoder_only
_take_turn(bundle, ctl.sentence, ctl.chat)  # a long text waits for its turn, as start() does when it runs the result
PIECE, SOURCE, WHAT = (
    ("Answer piece", "prompt", "answer")  # a chat message: the prompt is the wrapped message, the output its answer
    if ctl.chat
    else ("New piece", "prompt", "continuation")
    if decoder_only
    else ("Output piece", "source", "translation")
)

if decoder_only:  # its continuation (ui.page.start runs a translation or an encoding)
    unmasked = without_the_mask(bundle, ctl)  # a costly continuation without the causal mask waits
    if unmasked is False:
        st.stop()
    try:
        with filling(unmasked):
            page.result = engine.generate(bundle, ctl.sentence, ctl.interventions(), ctl.beam_size, chat=ctl.chat)
    except AnatomyError as exc:
        st.error(md(str(exc)))
        st.stop()
else:
    page.result = page.run()
for warning in page.result.warnings:
    st.warning(md(warning))

if caps.encoder_only:
    st.info(
        f"{md(bundle.name)} does not translate, so no output piece needs explaining (attribution, the logit "
        "lens and patching a translation do not apply): below are the roles its heads play on your sentence."
    )
else:
    result = page.result
    iv = ctl.interventions()
    DEFINITIONS = definitions(decoder_only, padding_baseline(bundle, iv))
    out_ids = tuple(result.output_ids)
    SPARE = spare_work(bundle, len(out_ids))  # what the page computes unasked beside its translation or continuation
    own_trace = result.trace  # the output's own trace: attention, rollout and the lens read it instead of a pass
    out_pieces = bundle.tokenizer.pieces(list(out_ids))
    src_pieces = bundle.tokenizer.pieces(list(result.prompt_ids)) if decoder_only else result.trace.src_pieces
    if ctl.chat:
        st.markdown(f"**Chat message** {md(ctl.sentence)}  \n**Answer** {md(result.continuation) or '(empty)'}")
        st.caption(
            f"The prompt's pieces below are the message as the model read it, wrapped by the chat template: "
            f"{len(src_pieces)} pieces, its turn markers and line breaks (↵) included."
        )
    elif decoder_only:
        st.markdown(f"**Prompt** {md(result.prompt)}  \n**Continuation** {md(result.continuation) or '(empty)'}")
    if not out_ids:
        st.info(f"The {WHAT} is empty: there is no {PIECE.lower()} to explain.")
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

st.subheader("What each head mostly does")
head_roles = engine.roles(bundle, ctl.sentence, ctl.interventions(), ctl.beam_size, ctl.chat)
st.markdown(md(roles_summary(head_roles)))
st.dataframe(
    roles_frame(head_roles),
    hide_index=True,
    column_config={
        c: st.column_config.NumberColumn(c, format="%.3f")
        for c in ("previous", "same", "first", "last", "broad", "alignment")
    },
)
if decoder_only:
    st.caption(
        "Scores are averages over the head's queries (the prompt's positions, then the new pieces'): weight "
        "on the piece before (previous), on itself (same), on the first piece, and how spread its weight is "
        "(broad, normalised entropy). A head is tagged with the highest of the first three when it reaches "
        "0.5, else broad at 0.9 or more. "
        f"{md(bundle.name)} has no encoder and no cross-attention, so only the decoder's self-attention has "
        "heads here: no encoder heads, no sink on a source's last piece (“last”), and no alignment with a "
        "gold word alignment, which scores the cross-attention heads of a translation model against the "
        "source words each French word comes from."
    )
else:
    st.caption(
        "Scores are averages over the head's queries: weight on the piece before (previous), on itself "
        "(same), on the first piece, on the last source piece (</s> or [SEP]), and how spread its weight is "
        "(broad, normalised entropy). A head is tagged with the highest of the first four when it reaches "
        "0.5, else broad at 0.9 or more."
    )
page.finish(globals())

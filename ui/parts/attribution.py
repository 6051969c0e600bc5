"""The Why this word? page's attribution (pages/8_why.py): which source pieces made the output piece on
show, by every method as lines of shaded text, with what the methods say and where the model's card doubts
one of them; and the whole table of every output piece by one method."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model.analysis import METHODS
from model.analysis.attribution import BATCH, IG_STEPS, padding_baseline
from model.analysis.forced import work
from ui.page.binding import bind, page_value
from ui.page.markup import md
from ui.page.ondemand import asked, filling
from ui.parts.explained import Explained
from ui.session import explanations
from ui.session.figures import shared
from ui.session.urlstate import Field
from viz.explain import doubts
from viz.focus import shaded_text
from viz.lengths import Span
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


def _piece_work(why: Explained, method: str) -> float:
    """What one method costs for one output piece (`_table_work` for a single row)."""
    rows = {
        "attention": 1,
        "rollout": 1,
        "gradient": 1,
        "occlusion": len(why.src_pieces) + 1,
        "integrated-gradients": IG_STEPS,
    }[method]
    return work(
        why.bundle,
        rows,
        len(why.src_pieces) + len(why.out_ids),
        gradients=method in ("gradient", "integrated-gradients"),
    )


def _methods_for(why: Explained, step: int) -> list[str]:
    """The methods shown for the piece: attention, rollout and those cheap or already computed at once, the
    others when asked (a real-size model's integrated gradients and occlusion take seconds per piece)."""
    bundle, ctl = why.bundle, why.ctl
    costly = [
        name
        for name in ("gradient", "integrated-gradients", "occlusion")
        if _piece_work(why, name) > why.spare
        and not explanations.attribution_cached(
            bundle, ctl.sentence, why.out_ids, name, why.iv, pieces=(step,), chat=ctl.chat
        )
    ]
    if not costly or st.button(f"Add {' and '.join(costly)} for this piece", key="why-costly-methods"):
        return list(METHODS)
    st.caption(
        f"{' and '.join(name.capitalize() for name in costly)} for one piece of {md(bundle.name)} cost more "
        "than this page computes unasked (at this size, as much as the continuation itself or more): the button "
        "adds them."
    )
    return [name for name in METHODS if name not in costly]


def every_method(why: Explained, step: int, notes_below) -> None:
    """Every method's line over the source for the piece on show; what they say, in `notes_below` (under
    the table, so that the picture comes first)."""
    bundle, ctl = why.bundle, why.ctl
    rows = {
        name: explanations.attribution(
            bundle, ctl.sentence, why.out_ids, name, why.iv, pieces=(step,), trace=why.own_trace, chat=ctl.chat
        )[0]
        for name in _methods_for(why, step)
    }
    best = {name: int(abs(row).argmax()) for name, row in rows.items()}
    st.markdown(f"#### {why.piece_word} {step + 1}, **{why.shown(why.out_pieces[step])}**: where it came from")
    st.markdown(
        shared(shaded_text, list(rows.values()), why.src_pieces, list(rows), why.style, signed=True),
        unsafe_allow_html=True,
    )
    with notes_below:
        _method_notes(why, rows, best, step)


def _method_notes(why: Explained, rows: dict[str, np.ndarray], best: dict[str, int], step: int) -> None:
    """Under the table: whether the methods agree on the piece that matters most, where the card doubts one,
    the first piece as a sink, what this model's source is and where its baseline starts."""
    agree = len(set(best.values())) == 1
    src_pieces = why.src_pieces
    st.caption(
        f"Each line is one method, shaded by its value over the line's largest (the methods measure in "
        f"different units; hover a word for the value). {'Blue' if why.style.presentation else 'Pink'} raises the "
        f"piece, {'orange' if why.style.presentation else 'blue'} lowers it. "
        + (
            f"Every method points first to **{why.shown(src_pieces[next(iter(best.values()))])}**."
            if agree
            else f"The methods disagree on the {why.source_word} piece that matters most: "
            + ", ".join(f"{name} **{why.shown(src_pieces[at])}**" for name, at in best.items())
            + "."
        )
    )
    _doubts(why, rows, step)
    _sink_note(why, rows, best)
    bundle = why.bundle
    notes = []
    if why.decoder_only:
        notes.append(
            f"{md(bundle.name)} is decoder-only: it has no encoder and no cross-attention, so the "
            "“source” is your prompt"
            + (" (your chat message, wrapped by the chat template)" if why.ctl.chat else "")
            + ", fed to the decoder before the new pieces. Attention and rollout "
            "come from its self-attention; the gradient methods and occlusion change the prompt's token "
            "embeddings only, keeping the new pieces written before this one."
        )
    if bundle.task_prefix:
        notes.append(
            f"The source begins with the checkpoint's task prefix “{md(bundle.task_prefix.strip())}”: the "
            "model reads it as part of the sentence, so its pieces are columns too."
        )
    if padding_baseline(bundle, why.iv):
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


def _sink_note(why: Explained, rows: dict[str, np.ndarray], best: dict[str, int]) -> None:
    """Attention and rollout of a decoder alone pointing first to the first piece, which a trained model's heads
    use as a sink: say so, and what they point to after it."""
    sunk = [name for name in ("attention", "rollout") if best.get(name) == 0 and len(rows[name]) > 1]
    if not why.decoder_only or not sunk:
        return
    src_pieces = why.src_pieces
    first = why.shown(src_pieces[0])
    weight = ", ".join(f"{name} {rows[name][0]:.2f}" for name in sunk)
    after = ", ".join(f"{name} to **{why.shown(src_pieces[1 + int(abs(rows[name][1:]).argmax())])}**" for name in sunk)
    st.caption(
        f"{' and '.join(sunk).capitalize()} point{'s' if len(sunk) == 1 else ''} first to "
        f"**{first}**, the first piece ({weight} of the weight): {md(why.bundle.name)}'s heads park much of their "
        "attention there whatever the piece (an attention sink: the Attention page's sink view), so this says "
        f"where they rest rather than what they read. After the first piece, {after}."
    )


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "its"


def _doubts(why: Explained, rows: dict[str, np.ndarray], step: int) -> None:
    """Beside the lines: each method the model's card finds unreliable, with the card's figure and what
    it does on this piece against the other methods."""
    card = why.bundle.card.get("explanations", {})
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
        word = lambda at: f"**{why.shown(why.src_pieces[at])}**"  # noqa: E731
        if doubt.others_top is not None and doubt.opposite:
            text += (
                f" Here it gives {word(doubt.others_top)} the opposite sign to "
                + " and ".join(NAMES.get(m, m) for m in doubt.opposite)
                + f": it says {word(doubt.others_top)} "
                + ("lowers" if rows[doubt.method][doubt.others_top] < 0 else "raises")
                + f" **{why.shown(why.out_pieces[step])}**, they say it "
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


def _table_work(why: Explained, method: str) -> float:
    positions = len(why.src_pieces) + len(why.out_ids)
    rows = {
        "attention": 0 if why.iv.causal_mask else 1,  # both read the output's own trace when it is that pass
        "rollout": 0 if why.iv.causal_mask else 1,
        "gradient": len(why.out_ids),
        "occlusion": len(why.src_pieces) + 1,
        "integrated-gradients": IG_STEPS * len(why.out_ids),
    }[method]
    return work(why.bundle, rows, positions, gradients=method in ("gradient", "integrated-gradients"))


def whole_table(why: Explained, output: Span, source: Span) -> None:
    """Every output piece by the method picked under it (`method=` in the URL), on a button when costly."""
    page_value(METHOD)
    table = st.container()  # the picture first, its method picker under it
    method = bind(
        "method",
        st.radio,
        label=f"Every {why.piece_word.lower()} by one method",
        options=list(METHODS),
        horizontal=True,
    )
    with table:
        _draw_table(why, method, output, source)


def _draw_table(why: Explained, method: str, output: Span, source: Span) -> None:
    bundle, ctl, out_ids = why.bundle, why.ctl, why.out_ids
    passes = -(-IG_STEPS * len(out_ids) // BATCH) if method == "integrated-gradients" else 1
    wanted = asked(
        _table_work(why, method),
        explanations.attribution_cached(bundle, ctl.sentence, out_ids, method, why.iv, chat=ctl.chat),
        f"Compute the whole table ({passes} batched pass{'es' if passes > 1 else ''})",
        "why-whole-table",
        f"{method.capitalize()} over every {why.piece_word.lower()} costs more than this page computes unasked; the "
        "piece on show is above.",
        why.spare,
    )
    if wanted is False:
        return
    with filling(wanted) as progress:
        scores = explanations.attribution(
            bundle, ctl.sentence, out_ids, method, why.iv, progress=progress, trace=why.own_trace, chat=ctl.chat
        )
    measures = definitions(why.decoder_only, padding_baseline(bundle, why.iv))
    why.page.show(
        shared(
            tensor_heatmap,
            scores,
            why.out_pieces,
            why.style,
            f"Attribution: {method}",
            f"{why.source_word} piece",
            why.src_pieces,
            output,
            source,
        ),
        f"Rows are the {why.piece_word.lower()}s, columns the {why.source_word} pieces; a cell is {measures[method]}. "
        f"Every piece is scored as the model wrote it, teacher-forced on this {why.output_word}.",
        key="attribution",
    )

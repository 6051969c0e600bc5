"""The Why this word? page's attribution, as panels: which source pieces made the output piece on show, by every
method as lines of shaded text, what the methods say and where the model's card doubts one of them; and the whole
table of every output piece by one method (`method=` in the URL). The app computes the scores through its cache
(ui/parts/attribution.py); `panels` computes them directly, as a notebook gets the page."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from i18n import _, later, listing, n_, sentences
from model.analysis import METHODS, attribute
from model.analysis.attribution import BATCH, IG_STEPS, padding_baseline
from model.analysis.forced import work
from views.explained import Ask, Explained, both, definitions, method_label, method_name
from views.fields import Field
from views.markdown import md
from views.panels import Panel, words
from viz.explain import Doubt, doubts
from viz.focus import shaded_text
from viz.lengths import Span
from viz.shapes import tensor_heatmap


def _method(text: str) -> str:
    if text not in METHODS:
        raise ValueError(later("expected one of {options}", options=", ".join(METHODS)))
    return text


METHOD = Field("method", "occlusion", _method)
COSTLY = ("gradient", "integrated-gradients", "occlusion")  # the methods that may wait for a button


def piece_work(why: Explained, method: str) -> float:
    """What one method costs for one output piece (`table_work` for a single row)."""
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


def _never(method: str) -> bool:
    return False


def costly_methods(why: Explained, cached: Callable[[str], bool] = _never) -> list[str]:
    """The methods that wait for a button for the piece on show: those that cost more than the page computes
    unasked and are not `cached` (a real-size model's integrated gradients and occlusion take seconds per
    piece); attention and rollout never do."""
    return [name for name in COSTLY if piece_work(why, name) > why.spare and not cached(name)]


def costly_label(costly: list[str]) -> str:
    """The button that adds the costly methods."""
    return _("Add {methods} for this piece", methods=both([method_label(name) for name in costly]))


def costly_note(why: Explained, costly: list[str]) -> str:
    """What the page says of the costly methods beside their button."""
    return _(
        "{methods} for one piece of {model} cost more than this page computes unasked (at this size, as much "
        "as the continuation itself or more): the button adds them.",
        methods=both([method_label(name).capitalize() for name in costly]),
        model=md(why.bundle.name),
    )


def lines(why: Explained, step: int, rows: dict[str, np.ndarray]) -> list[Panel]:
    """The piece on show, then every method's line over the source (`rows`: each method's scores for it)."""
    header = _(
        "#### {label} {n}, **{token}**: where it came from",
        label=why.words.piece,
        n=step + 1,
        token=why.shown(why.out_pieces[step]),
    )
    shaded = why.figure(
        shaded_text,
        list(rows.values()),
        why.src_pieces,
        [method_label(name) for name in rows],
        why.style,
        signed=True,
    )
    return [words(why.key("why-piece"), header), Panel(why.key("why-methods"), text=shaded, tone="html")]


def notes(why: Explained, rows: dict[str, np.ndarray], step: int) -> list[Panel]:
    """Under the table: whether the methods agree on the piece that matters most, where the card doubts one,
    the first piece as a sink, what this model's source is and where its baseline starts."""
    best = {name: int(abs(row).argmax()) for name, row in rows.items()}
    said = {"why-methods-say": _agreement(why, best)}
    said.update({f"why-doubt-{method}": text for method, text in _doubts(why, rows, step)})
    sink = _sink_note(why, rows, best)
    if sink:
        said["why-sink"] = sink
    said.update({f"why-model-note-{at}": note for at, note in enumerate(_model_notes(why))})
    return [Panel(why.key(key), caption=text) for key, text in said.items()]


def _agreement(why: Explained, best: dict[str, int]) -> str:
    """How to read the lines, and whether every method points first to the same piece (`notes`)."""
    src_pieces = why.src_pieces
    return sentences(
        _(
            "Each line is one method, shaded by its value over the line's largest (the methods measure in "
            "different units; hover a word for the value)."
        ),
        _("Blue raises the piece, orange lowers it.")
        if why.style.presentation
        else _("Pink raises the piece, blue lowers it."),
        _("Every method points first to **{token}**.", token=why.shown(src_pieces[next(iter(best.values()))]))
        if len(set(best.values())) == 1
        else _(
            "The methods disagree on the {source} piece that matters most: {methods}.",
            source=why.words.source,
            methods=listing(f"{method_label(name)} **{why.shown(src_pieces[at])}**" for name, at in best.items()),
        ),
    )


def _model_notes(why: Explained) -> list[str]:
    """What this model's source is and where its baseline starts (`notes`)."""
    bundle = why.bundle
    said = []
    if why.decoder_only:
        said.append(
            _(
                "{model} is decoder-only: it has no encoder and no cross-attention, so the “source” is your "
                "prompt (your chat message, wrapped by the chat template), fed to the decoder before the new "
                "pieces. Attention and rollout come from its self-attention; the gradient methods and occlusion "
                "change the prompt's token embeddings only, keeping the new pieces written before this one.",
                model=md(bundle.name),
            )
            if why.ctl.chat
            else _(
                "{model} is decoder-only: it has no encoder and no cross-attention, so the “source” is your "
                "prompt, fed to the decoder before the new pieces. Attention and rollout come from its "
                "self-attention; the gradient methods and occlusion change the prompt's token embeddings only, "
                "keeping the new pieces written before this one.",
                model=md(bundle.name),
            )
        )
    if bundle.task_prefix:
        said.append(
            _(
                "The source begins with the checkpoint's task prefix “{prefix}”: the model reads it as part of "
                "the sentence, so its pieces are columns too.",
                prefix=md(bundle.task_prefix.strip()),
            )
        )
    if padding_baseline(bundle, why.iv):
        said.append(
            _(
                "Integrated gradients and occlusion start from the padding piece's embedding, not from zero: this "
                "model adds nothing to its token embeddings (its positions are a bias on the attention scores) and "
                "normalizes them first. A norm sends any vector but zero to unit size, so on the way from a zero "
                "embedding the log-probabilities jump within the first tiny stretch, too steeply for any number "
                "of steps to follow, and the rows would not add up."
            )
            if bundle.config.positional == "relative"
            else _(
                "Integrated gradients and occlusion start from the padding piece's embedding, not from zero: with "
                "the positions switched off, nothing is added to the token embeddings and normalizes them first. "
                "A norm sends any vector but zero to unit size, so on the way from a zero embedding the "
                "log-probabilities jump within the first tiny stretch, too steeply for any number of steps to "
                "follow, and the rows would not add up."
            )
        )
    return said


def _sink_note(why: Explained, rows: dict[str, np.ndarray], best: dict[str, int]) -> str:
    """Attention and rollout of a decoder alone pointing first to the first piece, which a trained model's heads
    use as a sink: say so, and what they point to after it ('' otherwise)."""
    sunk = [name for name in ("attention", "rollout") if best.get(name) == 0 and len(rows[name]) > 1]
    if not why.decoder_only or not sunk:
        return ""
    src_pieces = why.src_pieces
    after = listing(
        _(
            "{method} to **{token}**",
            method=method_name(name),
            token=why.shown(src_pieces[1 + int(abs(rows[name][1:]).argmax())]),
        )
        for name in sunk
    )
    return n_(
        "{methods} points first to **{token}**, the first piece ({weight} of the weight): {model}'s heads "
        "park much of their attention there whatever the piece (an attention sink: the Attention page's sink "
        "view), so this says where they rest rather than what they read. After the first piece, {after}.",
        "{methods} point first to **{token}**, the first piece ({weight} of the weight): {model}'s heads "
        "park much of their attention there whatever the piece (an attention sink: the Attention page's sink "
        "view), so this says where they rest rather than what they read. After the first piece, {after}.",
        len(sunk),
        methods=both([method_name(name) for name in sunk]).capitalize(),
        token=why.shown(src_pieces[0]),
        weight=listing(f"{method_name(name)} {rows[name][0]:.2f}" for name in sunk),
        model=md(why.bundle.name),
        after=after,
    )


def _doubts(why: Explained, rows: dict[str, np.ndarray], step: int) -> Iterator[tuple[str, str]]:
    """Beside the lines: each method the model's card finds unreliable, with the card's figure and what
    it does on this piece against the other methods, as (method, what is said)."""
    card = why.bundle.card.get("explanations", {})
    agreement = card.get("attribution_agreement", {})
    words_, sentences_ = card.get("french_words"), card.get("sentences")
    for doubt in doubts(agreement, rows):
        called = method_name(doubt.method)
        others = listing(f"{method_name(m)} {agreement[m]:g}%" for m in rows if m != doubt.method and m in agreement)
        scored = (
            _(
                "This model's card scores every method on {words:,} French words of {sentences:,} test sentences: "
                "{method}'s most-attributed word is the gold-aligned English word for **{agreement:g}%** of them "
                "({others}).",
                words=words_,
                sentences=sentences_,
                method=called,
                agreement=doubt.agreement,
                others=others,
            )
            if isinstance(words_, int) and isinstance(sentences_, int)
            else _(
                "This model's card scores every method on its French words of its test sentences: {method}'s "
                "most-attributed word is the gold-aligned English word for **{agreement:g}%** of them ({others}).",
                method=called,
                agreement=doubt.agreement,
                others=others,
            )
        )
        yield (
            doubt.method,
            sentences(
                _("**{method} is known to disagree.**", method=called.capitalize()),
                scored,
                _here(why, rows, doubt, step),
                _(
                    "It reads the slope at one point, and where a model is sure of a piece its log-probability is "
                    "flat there. Its largest value for this piece is {peak:.2g}; like every line, it is shaded by "
                    "its own largest value, so a faint line looks as strong as the others.",
                    peak=doubt.peak,
                ),
            ),
        )


def _here(why: Explained, rows: dict[str, np.ndarray], doubt: Doubt, step: int) -> str:
    """What a doubted method does on this piece against the others (`_doubts`); '' when they point nowhere."""

    def word(at: int) -> str:
        return f"**{why.shown(why.src_pieces[at])}**"

    if doubt.others_top is None:
        return ""
    if doubt.opposite:
        lowers = rows[doubt.method][doubt.others_top] < 0
        fields = dict(
            word=word(doubt.others_top),
            methods=both([method_name(m) for m in doubt.opposite]),
            token=why.shown(why.out_pieces[step]),
        )
        return (
            _(
                "Here it gives {word} the opposite sign to {methods}: it says {word} lowers **{token}**, they say "
                "it raises it.",
                **fields,
            )
            if lowers
            else _(
                "Here it gives {word} the opposite sign to {methods}: it says {word} raises **{token}**, they say "
                "it lowers it.",
                **fields,
            )
        )
    if doubt.top != doubt.others_top:
        return _(
            "Here it points first to {word}; the other methods, to {theirs}.",
            word=word(doubt.top),
            theirs=word(doubt.others_top),
        )
    return _("Here it agrees with the others on {word}.", word=word(doubt.top))


def table_work(why: Explained, method: str) -> float:
    """What one method costs for every output piece at once."""
    positions = len(why.src_pieces) + len(why.out_ids)
    rows = {
        "attention": 0 if why.iv.causal_mask else 1,  # both read the output's own trace when it is that pass
        "rollout": 0 if why.iv.causal_mask else 1,
        "gradient": len(why.out_ids),
        "occlusion": len(why.src_pieces) + 1,
        "integrated-gradients": IG_STEPS * len(why.out_ids),
    }[method]
    return work(why.bundle, rows, positions, gradients=method in ("gradient", "integrated-gradients"))


def table_ask(why: Explained, method: str) -> Ask:
    """The whole table by one method, as a part that waits for a button when costly."""
    passes = -(-IG_STEPS * len(why.out_ids) // BATCH) if method == "integrated-gradients" else 1
    return Ask(
        table_work(why, method),
        n_("Compute the whole table ({n} batched pass)", "Compute the whole table ({n} batched passes)", passes),
        "why-whole-table",
        _(
            "{method} over every {label} costs more than this page computes unasked; the piece on show is above.",
            method=method_label(method).capitalize(),
            label=why.words.a_piece,
        ),
    )


def table(why: Explained, method: str, scores: np.ndarray, output: Span, source: Span) -> Panel:
    """Every output piece by one method (`scores`: output pieces x source pieces), in the windows shown."""
    measures = definitions(why.decoder_only, padding_baseline(why.bundle, why.iv))
    figure = why.figure(
        tensor_heatmap,
        scores,
        why.out_pieces,
        why.style,
        _("Attribution: {method}", method=method_label(method)),
        _("prompt piece") if why.decoder_only else _("source piece"),
        why.src_pieces,
        output,
        source,
    )
    caption = _(
        "Rows are the {pieces}, columns the {source} pieces; a cell is {measure}. Every piece is scored as the "
        "model wrote it, teacher-forced on this {output}.",
        pieces=why.words.pieces,
        source=why.words.source,
        measure=measures[method],
        output=why.words.output,
    )
    return Panel(why.key("attribution"), figure, caption=caption)


def scores(why: Explained, method: str, pieces: tuple[int, ...] | None = None) -> np.ndarray:
    """`model.analysis.attribute` of the page's output (or of its `pieces`), computed directly."""
    return attribute(
        why.bundle, why.ctl.sentence, why.out_ids, method, why.iv, pieces=pieces, trace=why.own_trace, chat=why.ctl.chat
    )


def panels(why: Explained, step: int, output: Span, source: Span, method: str) -> list[Panel]:
    """The attribution of the piece at `step` as the page shows it first (nothing cached, no button clicked),
    computed directly: the costly methods' note, every method's line, the whole table by `method` (or what the
    page says in its place), and what the methods say."""
    costly = costly_methods(why)
    shown = [Panel(why.key("why-costly-methods"), caption=costly_note(why, costly))] if costly else []
    rows = {name: scores(why, name, (step,))[0] for name in METHODS if name not in costly}
    shown += lines(why, step, rows)
    ask = table_ask(why, method)
    shown.append(table(why, method, scores(why, method), output, source) if ask.eager(why.spare) else ask.instead(why))
    return shown + notes(why, rows, step)

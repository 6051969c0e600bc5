"""The Training page's time-lapse: the current sentence through the weights kept at each training
snapshot, with a step slider and a play button (the player shared with decoding)."""

from __future__ import annotations

import streamlit as st

from i18n import _, n_, number, sentences
from model import Bundle, TranslationResult
from ui.page.binding import bind, page_value, set_value, stored
from ui.page.markup import two_translations
from ui.page.player import TIME_LAPSE
from ui.page.start import Page
from ui.session import engine, explanations
from ui.session.figures import shared
from views.controls import Field, int_in
from views.markdown import md
from viz.attention import attention_map, model_view
from viz.training import snapshot_curves

# On a projector the layers × heads view is at most this tall, so that it is whole in a 720-px first screen
PROJECTED_VIEW_PX = 400
SNAPSHOT = Field("snapshot", 10_000, int_in(1, 10_000))  # which snapshot, counted from 1; past the last: the last


def _scores_at(card: dict, step: int) -> dict:
    return next((row for row in card.get("snapshots", []) if row.get("step") == step), {})


def show(page: Page) -> None:
    """The time-lapse section, or why this model has none."""
    bundle = page.bundle
    steps = bundle.snapshots
    if not bundle.capabilities.trained_here:
        st.info(
            _(
                "{model} was trained elsewhere: its checkpoint keeps no snapshots of its training, so there is no "
                "time-lapse to play. Models trained here can keep them.",
                model=bundle.name,
            )
        )
        return
    if not steps:
        st.info(
            _(
                "This checkpoint keeps no training snapshots, so there is no time-lapse to play. "
                "`python -m model.train --snapshots 8` keeps eight, and `python -m model.evaluate` scores them."
            )
        )
        return
    if page.encoder_only:  # never for this project's own models today; said rather than drawn wrong
        st.info(_("The time-lapse follows cross-attention, which an encoder-only model does not have."))
        return
    final = page.translate()
    n = len(steps)
    page_value(SNAPSHOT)
    set_value(SNAPSHOT.key, min(stored(SNAPSHOT.key), n))  # another checkpoint may keep fewer (0: play from the start)
    best = bundle.card.get("alignment", {}).get("best")
    focus = _focus(page, best)
    about = sentences(
        n_(
            "This model kept its weights at {n} step of its training, spaced evenly on a log scale from step "
            "{first:,} to the end (step {last:,}). Move the slider, or press play, to run the sentence in the "
            "sidebar through each of them: the translation, and the cross-attention of the final translation fed "
            "through that snapshot, so that every frame has the same rows and columns.",
            "This model kept its weights at {n} steps of its training, spaced evenly on a log scale from step "
            "{first:,} to the end (step {last:,}). Move the slider, or press play, to run the sentence in the "
            "sidebar through each of them: the translation, and the cross-attention of the final translation fed "
            "through that snapshot, so that every frame has the same rows and columns.",
            n,
            first=steps[0],
            last=steps[-1],
        ),
        _(
            "Watch decoder layer L{layer} head H{head}, enlarged on the right: the head that ends up agreeing most "
            "with the word alignment ({agreement:.1f}%).",
            layer=best["layer"] + 1,
            head=best["head"] + 1,
            agreement=best["agreement"],
        )
        if best and focus == (best["layer"], best["head"])
        else _(
            "Enlarged on the right: decoder layer L{layer} head H{head}, picked in the sidebar.",
            layer=focus[0] + 1,
            head=focus[1] + 1,
        ),
    )
    TIME_LAPSE.controls(n, "training", finish_label=None)  # paused, the slider is the way on

    def frame(index: int) -> None:
        step = steps[index]
        bind(
            SNAPSHOT.key,
            st.select_slider,
            label=_("Training step"),
            options=list(range(1, n + 1)),
            format_func=lambda k: number(steps[k - 1]),
            moving=TIME_LAPSE.playing(),
        )
        _draw(page, engine.get_snapshot(str(bundle.path), step), step, final, focus)

    TIME_LAPSE.run(frame, n, page)
    st.markdown(about)  # the pictures come first: a projector's or a phone's first screen is theirs


def _focus(page: Page, best: dict | None) -> tuple[int, int]:
    """The decoder (layer, head) enlarged: the one the card names best, unless the sidebar picks another
    than its first layer and head."""
    cfg, ctl = page.bundle.config, page.controls
    if best and (ctl.layer, ctl.head) == (0, 0) and best["layer"] < cfg.n_decoder_layers:
        return best["layer"], best["head"]
    return min(ctl.layer, cfg.n_decoder_layers - 1), ctl.head


def _draw(page: Page, snapshot: Bundle, step: int, final: TranslationResult, focus: tuple[int, int]) -> None:
    ctl = page.controls
    text = engine.translation_text(snapshot, ctl.sentence, ctl.interventions(), ctl.beam_size)
    _pictures(page, snapshot, step, final, focus)  # first: a projector's or a phone's first screen is theirs
    two_translations((_("At step {step:,}", step=step), text), (_("After training"), final.translation), 1.3)
    scores = _scores_at(page.bundle.card, step)
    if scores:
        measured = dict(step=step, exact=scores["exact_match"], bleu=scores["bleu"], alignment=scores["alignment"])
        tested = page.bundle.card.get("test", {}).get("n")
        st.caption(
            _(
                "At step {step:,}, on the {n} test sentences: exact match {exact:.1f}%, BLEU {bleu:.1f}; the best "
                "head agrees with the word alignment {alignment:.1f}%.",
                n=tested,
                **measured,
            )
            if tested is not None
            else _(
                "At step {step:,}, on the held-out test sentences: exact match {exact:.1f}%, BLEU {bleu:.1f}; the "
                "best head agrees with the word alignment {alignment:.1f}%.",
                **measured,
            )
        )
    _curves(page, step)


def _pictures(page: Page, snapshot: Bundle, step: int, final: TranslationResult, focus: tuple[int, int]) -> None:
    """The snapshot's cross-attention: every layer and head, and the focused head large."""
    ctl, style, cfg = page.controls, page.style, page.bundle.config
    trace = explanations.teacher_forced(snapshot, ctl.sentence, final.output_ids, ctl.interventions())
    layer, head = focus
    patterns = [trace.pattern("decoder", "cross", i) for i in range(cfg.n_decoder_layers)]
    left, right = st.columns([3, 2])
    with left:
        page.show(
            shared(
                model_view,
                patterns,
                trace.tgt_pieces,
                trace.src_pieces,
                style,
                _("Cross-attention at step {step:,}: layers × heads", step=step),
                (layer, head),
                most_px=PROJECTED_VIEW_PX if ctl.presentation else None,
            ),
            _(
                "Every decoder layer (rows) and head (columns). Early in training the weights are spread out or "
                "all on one piece; a head that has learned the alignment shows a bright diagonal-like path from "
                "each French piece to the English word it translates."
            ),
            key="snapshot-view",
        )
    with right:
        page.show(
            shared(
                attention_map,
                patterns[layer][head],
                trace.tgt_pieces,
                trace.src_pieces,
                style,
                _("L{layer} H{head} at step {step:,}", layer=layer + 1, head=head + 1, step=step),
            ),
            _("The head named above, large (pick another layer and head in the sidebar)."),
            key="snapshot-head",
        )


def _curves(page: Page, step: int) -> None:
    """The test scores of every snapshot, the step on show marked."""
    curves = shared(snapshot_curves, page.bundle.card.get("snapshots", []), page.style, step)
    if curves is None:
        st.caption(
            md(
                _(
                    "The snapshots have not been scored yet: python -m model.evaluate measures each one (test "
                    "exact match, BLEU and the best head's agreement with the alignment)."
                )
            )
        )
    else:
        page.show(
            curves,
            _(
                "Measured on every snapshot by python -m model.evaluate, over the whole test split; the dotted "
                "line is the step on show."
            ),
            key="snapshot-curves",
        )

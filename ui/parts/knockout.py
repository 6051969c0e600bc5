"""The Masks and heads lab's head knock-outs (pages/5_masks_and_heads.py): the heads the sidebar knocks out
and what the output (an encoder-only model's sentence embedding) does without them, one-click knock-outs of
the layer and the head that matter most, and the sweep that knocks out each head in turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

import i18n
from i18n import _, listing, n_, sentences
from model import AnatomyError, EncodeResult, TranslationResult, cosine
from model.analysis.forced import work
from model.analysis.knockout import RETRANSLATED
from model.engine.interventions import Head
from ui.page.binding import set_value
from ui.page.markup import two_translations
from ui.page.ondemand import asked
from ui.page.start import Page
from ui.session import experiments, explanations
from ui.session.figures import shared
from views.controls import BLOCK_NAMES, all_heads
from views.markdown import md
from viz.masks import (
    OUTPUT_NOUNS,
    SMALL_DROP,
    embedding_knockout_chart,
    embedding_knockout_frame,
    fixed_output_probabilities,
    knockout_caption,
    knockout_chart,
    knockout_frame,
    probability_comparison,
)


@dataclass(frozen=True)
class Lab:
    """What the knock-out parts of the lab share."""

    page: Page
    labels: dict[Head, str]  # every head's name ("decoder cross L1 H2")
    sweep_key: tuple[Any, ...]  # what the sweep kept in the session ran under: a sweep under other controls is stale
    positions: int  # the pieces of the lab's one pass: the source's and the decoder's
    output_word: str  # what the model makes of the sentence: "answer", "continuation" or "translation"

    @property
    def output_noun(self) -> str:
        """The output word as a person reads it, in the language of this run."""
        return i18n._(OUTPUT_NOUNS[self.output_word])


def _table(lab: Lab, frame: pd.DataFrame, numbers: tuple[str, ...] = ()) -> None:
    """A knock-out table, its columns (codes, viz/masks.py) named for a person; `numbers` to 3 decimals."""
    noun = lab.output_noun
    names = {
        "head": _("head"),
        f"{lab.output_word} changed": _("{output} changed", output=noun),
        "log-prob drop": _("log-prob drop"),
        "log-prob of the original output": _("log-prob of the original output"),
        f"{lab.output_word} with the head knocked out": _("{output} with the head knocked out", output=noun),
        "embedding shift": _("embedding shift"),
        "cosine to the original": _("cosine to the original"),
        "distance": _("distance"),
    }
    formats = {names[code]: st.column_config.NumberColumn(format="%.3f") for code in numbers}
    st.dataframe(frame.rename(columns=names), hide_index=True, column_config=formats)


def _heading(lab: Lab) -> bool:
    """The knock-out section's heading and the heads knocked out; False (with a next step) when there are none."""
    page = lab.page
    st.subheader(_("Knock out heads"))
    if not page.controls.ablate:
        st.info(
            _(
                "No head is knocked out. Pick heads under “Knock out heads” in the sidebar to see what the model "
                "does without them."
            )
            if page.encoder_only
            else _(
                "No head is knocked out. Pick heads under “Knock out heads” in the sidebar to see what the model "
                "does without them, or start from the knock-out that changes the most:"
            )
        )
        if not page.encoder_only:
            _suggestions(lab, "tab")
        return False
    st.markdown(_("Knocked out: {heads}", heads=listing(f"`{lab.labels[h]}`" for h in page.controls.ablate)))
    return True


def _layer_groups(page: Page) -> dict[str, tuple[Head, ...]]:
    """Each layer of each attention block, all of its heads together, by name (in the language of this run)."""
    limits = page.limits
    return {
        n_(
            "{block} L{layer} (all {n} head)",
            "{block} L{layer} (all {n} heads)",
            limits.n_heads,
            block=i18n._(BLOCK_NAMES[code]),
            layer=layer + 1,
        ): tuple((stack, kind, layer, head) for head in range(limits.n_heads))
        for code, (stack, kind) in limits.blocks.items()
        for layer in range(limits.layers_of(stack))
    }


def _layer_drops(lab: Lab, output_ids: tuple[int, ...]) -> dict[str, float] | None:
    """How far knocking out each layer's heads together lowers the log-probability of the output made
    with every head on (`output_ids`; one teacher-forced pass per layer, cached); None when not computed
    (too costly unasked, and not asked)."""
    page, ctl = lab.page, lab.page.controls
    groups = _layer_groups(page)
    cost = work(page.bundle, len(groups), lab.positions)
    if not asked(
        cost,
        False,
        _("Find the layer whose heads matter most"),
        "knockout-layers",
        _("One pass per layer ({n}) takes seconds at this model's size: the button runs them.", n=len(groups)),
    ):
        return None
    base = sum(explanations.score(page.bundle, ctl.sentence, output_ids, ctl.interventions(), ctl.chat))
    return {
        name: base
        - sum(
            explanations.score(
                page.bundle, ctl.sentence, output_ids, ctl.interventions(ablate=frozenset(heads)), ctl.chat
            )
        )
        for name, heads in groups.items()
    }


def _suggestions(lab: Lab, where: str) -> None:
    """One-click knock-outs with the largest effect on the output made with every head on: the layer whose
    heads matter most together, and the head the sweep found (when it ran)."""
    page, result = lab.page, lab.page.result
    if page.controls.ablate or not isinstance(result, TranslationResult) or not result.output_ids:
        return
    drops = _layer_drops(lab, tuple(result.output_ids))
    if drops:
        name = max(drops, key=drops.__getitem__)
        heads = _layer_groups(page)[name]
        st.button(
            _("Knock out {heads}", heads=name),
            key=f"knockout-layer-{where}",
            icon=":material/block:",
            on_click=set_value,
            args=("ablate", tuple(sorted(heads))),
            help=_("Sets the sidebar's “Knock out heads” to these heads; clear it there to bring them back."),
        )
        st.caption(
            # i18n: {n} is 2 or more
            _(
                "Knocking out all the heads of one layer together, layer by layer: this one lowers the "
                "log-probability of the {output} made with every head by **{drop}**, the most of the {n} layers "
                "(the next: {next}).",
                output=lab.output_noun,
                drop=f"{drops[name]:.2f}",
                n=len(drops),
                next=f"{sorted(drops.values())[-2]:.2f}",
            )
            if len(drops) > 1
            else _(
                "It lowers the log-probability of the {output} by **{drop}**.",
                output=lab.output_noun,
                drop=f"{drops[name]:.2f}",
            )
        )
    stored = st.session_state.get("_anatomy_sweep")
    if stored and stored[0] == lab.sweep_key and stored[1]:
        best = max(stored[1], key=lambda row: row["base_log_prob"] - row["log_prob"])
        drop = best["base_log_prob"] - best["log_prob"]
        st.button(
            _("Knock out {head} alone", head=lab.labels[best["head"]]),
            key=f"knockout-head-{where}",
            on_click=set_value,
            args=("ablate", (best["head"],)),
            help=_("The head whose knock-out lowered the log-probability most in the sweep below."),
        )
        st.caption(_("The single head whose knock-out lowers it most in the sweep: by {drop}.", drop=f"{drop:.2g}"))


def embedding(lab: Lab) -> None:
    """A model without a decoder: its sentence embedding with and without the sidebar's heads, and the
    sweep that ranks each head by how far its knock-out moves the embedding."""
    page, ctl = lab.page, lab.page.controls
    if _heading(lab) and isinstance(page.result, EncodeResult):
        before = page.encode(ablate=frozenset())
        st.metric(
            _("Cosine similarity of the sentence embedding with and without them"),
            f"{cosine(before.embedding, page.result.embedding):.4f}",
        )
    st.subheader(_("Knock out each head in turn"))
    heads = [h for h in all_heads(page.limits) if h not in ctl.ablate]
    st.caption(
        n_(
            "Knocks out the {n} head (on top of the sidebar's switches) and measures how far the sentence "
            "embedding moves: 1 − its cosine similarity to the embedding with every head on.",
            "Knocks out each of the {n} heads in turn (on top of the sidebar's switches) and ranks them by how far "
            "the sentence embedding moves: 1 − its cosine similarity to the embedding with every head on.",
            len(heads),
        )
    )
    if st.button(_("Run the knock-out sweep"), icon=":material/play_arrow:"):
        st.session_state["_anatomy_embedding_sweep"] = (page.bundle.checkpoint_id, ctl.sentence, ctl.interventions())
    if st.session_state.get("_anatomy_embedding_sweep") == (
        page.bundle.checkpoint_id,
        ctl.sentence,
        ctl.interventions(),
    ):
        with st.spinner(n_("Knocking out {n} head ...", "Knocking out {n} heads ...", len(heads))):
            frame = embedding_knockout_frame(
                experiments.embedding_knockout(page.bundle, ctl.sentence, ctl.interventions(), heads), lab.labels
            )
        page.show(
            shared(embedding_knockout_chart, frame, page.style),
            _("The heads whose absence moves the embedding most."),
            key="embedding-sweep",
        )
        _table(lab, frame)


def before_and_after(lab: Lab) -> None:
    """The sidebar's knocked-out heads: the translation and its pieces' probabilities before and after."""
    page, ctl, style = lab.page, lab.page.controls, lab.page.style
    after = page.result
    if _heading(lab) and isinstance(after, TranslationResult):
        before = page.translate(ablate=frozenset())
        two_translations((_("All heads"), before.translation), (_("With the heads knocked out"), after.translation))
        page.show(
            shared(
                probability_comparison,
                before.steps,
                after.steps,
                style,
                _("Probability of each output piece, before and after the knock-out"),
            ),
            _(
                "Each step's chosen piece. Log-probability of the output: {before} before, {after} after.",
                before=f"{before.log_prob:.2f}",
                after=f"{after.log_prob:.2f}",
            ),
            key="knockout-probs",
        )
        if before.output_ids:
            knocked = explanations.score(page.bundle, ctl.sentence, before.output_ids, ctl.interventions(), ctl.chat)
            unchanged = explanations.score(
                page.bundle, ctl.sentence, before.output_ids, ctl.interventions(ablate=frozenset()), ctl.chat
            )
            page.show(
                shared(
                    fixed_output_probabilities,
                    page.bundle.tokenizer.pieces(before.output_ids),
                    unchanged,
                    knocked,
                    style,
                ),
                _(
                    "The original {output}, each piece scored after the same earlier pieces, with and without the "
                    "heads: its log-probability goes from {before} to {after}.",
                    output=lab.output_noun,
                    before=f"{sum(unchanged):.2f}",
                    after=f"{sum(knocked):.2f}",
                ),
                key="knockout-fixed",
            )


def sweep(lab: Lab) -> None:
    """Each head knocked out in turn (on a button), ranked by how far the original output's log-probability
    falls; the sweep's rows are kept in the session with the controls they ran under."""
    page, ctl = lab.page, lab.page.controls
    st.subheader(_("Knock out each head in turn"))
    heads = [h for h in all_heads(page.limits) if h not in ctl.ablate]
    st.caption(_sweep_note(lab, len(heads)))
    if st.button(_("Run the knock-out sweep"), icon=":material/play_arrow:"):
        with st.spinner(n_("Knocking out {n} head ...", "Knocking out {n} heads ...", len(heads))):
            try:
                rows = experiments.knockout_sweep(
                    page.bundle, ctl.sentence, ctl.interventions(), ctl.beam_size, heads, chat=ctl.chat
                )
            except AnatomyError as exc:
                st.error(md(str(exc)))
                rows = []
        st.session_state["_anatomy_sweep"] = (lab.sweep_key, rows)
    stored = st.session_state.get("_anatomy_sweep")
    if stored and stored[0] == lab.sweep_key and stored[1]:
        frame = knockout_frame(stored[1], lab.labels, lab.output_word)
        page.show(
            shared(knockout_chart, frame, page.style, output=lab.output_word),
            knockout_caption(frame, output=lab.output_word),
            key="sweep-chart",
        )
        if not ctl.ablate and not frame.empty and frame["log-prob drop"].max() < SMALL_DROP:
            _suggestions(lab, "sweep")
        _table(lab, frame, ("log-prob drop", "log-prob of the original output"))
    elif stored and stored[0] != lab.sweep_key:
        st.caption(_("The controls changed since the last sweep: run it again."))


def _sweep_note(lab: Lab, n: int) -> str:
    """What the sweep of `n` heads does, in words."""
    page, ctl = lab.page, lab.page.controls
    does = (
        n_(
            "Knocks out the {n} head (on top of the sidebar's switches, so the heads already knocked out there are "
            "left out), scores the original output under its knock-out, and measures how much its log-probability "
            "falls.",
            "Knocks out each of the {n} heads in turn (on top of the sidebar's switches, so the heads already "
            "knocked out there are left out), scores the original output under each knock-out, and ranks heads by "
            "how much its log-probability falls.",
            n,
        )
        if ctl.ablate
        else n_(
            "Knocks out the {n} head (on top of the sidebar's switches), scores the original output under its "
            "knock-out, and measures how much its log-probability falls.",
            "Knocks out each of the {n} heads in turn (on top of the sidebar's switches), scores the original output "
            "under each knock-out, and ranks heads by how much its log-probability falls.",
            n,
        )
    )
    if page.decoder_only:
        again = (
            n_(
                "It also continues the prompt again, for the {n} head with the largest drop, to show whether the "
                "continuation itself changes.",
                "It also continues the prompt again, for the {n} heads with the largest drops, to show whether the "
                "continuation itself changes.",
                RETRANSLATED,
            )
            if n > RETRANSLATED
            else _("It also continues the prompt again to show whether the continuation itself changes.")
        )
    else:
        again = (
            n_(
                "It also translates again, for the {n} head with the largest drop, to show whether the output "
                "itself changes.",
                "It also translates again, for the {n} heads with the largest drops, to show whether the output "
                "itself changes.",
                RETRANSLATED,
            )
            if n > RETRANSLATED
            else _("It also translates again to show whether the output itself changes.")
        )
    return sentences(does, again)

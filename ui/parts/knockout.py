"""The Masks and heads lab's head knock-outs (pages/5_masks_and_heads.py): the heads the sidebar knocks out
and what the output (an encoder-only model's sentence embedding) does without them, one-click knock-outs of
the layer and the head that matter most, and the sweep that knocks out each head in turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from model import AnatomyError, EncodeResult, TranslationResult, cosine
from model.analysis.forced import work
from model.analysis.knockout import RETRANSLATED
from model.engine.interventions import Head
from ui.page.binding import set_value
from ui.page.markup import md, two_translations
from ui.page.ondemand import asked
from ui.page.start import Page
from ui.session import experiments, explanations
from ui.session.figures import shared
from ui.session.urlstate import BLOCK_NAMES, all_heads
from viz.masks import (
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


def _heading(lab: Lab) -> bool:
    """The knock-out section's heading and the heads knocked out; False (with a next step) when there are none."""
    page = lab.page
    st.subheader("Knock out heads")
    if not page.controls.ablate:
        st.info(
            "No head is knocked out. Pick heads under “Knock out heads” in the sidebar to see what the model "
            "does without them" + ("." if page.encoder_only else ", or start from the knock-out that changes the most:")
        )
        if not page.encoder_only:
            _suggestions(lab, "tab")
        return False
    st.markdown("Knocked out: " + ", ".join(f"`{lab.labels[h]}`" for h in page.controls.ablate))
    return True


def _layer_groups(page: Page) -> dict[str, tuple[Head, ...]]:
    """Each layer of each attention block, all of its heads together, by name."""
    limits = page.limits
    return {
        f"{BLOCK_NAMES[code]} L{layer + 1} (all {limits.n_heads} heads)": tuple(
            (stack, kind, layer, head) for head in range(limits.n_heads)
        )
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
        "Find the layer whose heads matter most",
        "knockout-layers",
        f"One pass per layer ({len(groups)}) takes seconds at this model's size: the button runs them.",
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
            f"Knock out {name}",
            key=f"knockout-layer-{where}",
            icon=":material/block:",
            on_click=set_value,
            args=("ablate", tuple(sorted(heads))),
            help="Sets the sidebar's “Knock out heads” to these heads; clear it there to bring them back.",
        )
        st.caption(
            f"Knocking out all the heads of one layer together, layer by layer: this one lowers the log-probability "
            f"of the {lab.output_word} made with every head by **{drops[name]:.2f}**, the most of the {len(drops)} "
            f"layers (the next: {sorted(drops.values())[-2]:.2f})."
            if len(drops) > 1
            else f"It lowers the log-probability of the {lab.output_word} by **{drops[name]:.2f}**."
        )
    stored = st.session_state.get("_anatomy_sweep")
    if stored and stored[0] == lab.sweep_key and stored[1]:
        best = max(stored[1], key=lambda row: row["base_log_prob"] - row["log_prob"])
        drop = best["base_log_prob"] - best["log_prob"]
        st.button(
            f"Knock out {lab.labels[best['head']]} alone",
            key=f"knockout-head-{where}",
            on_click=set_value,
            args=("ablate", (best["head"],)),
            help="The head whose knock-out lowered the log-probability most in the sweep below.",
        )
        st.caption(f"The single head whose knock-out lowers it most in the sweep: by {drop:.2g}.")


def embedding(lab: Lab) -> None:
    """A model without a decoder: its sentence embedding with and without the sidebar's heads, and the
    sweep that ranks each head by how far its knock-out moves the embedding."""
    page, ctl = lab.page, lab.page.controls
    if _heading(lab) and isinstance(page.result, EncodeResult):
        before = page.encode(ablate=frozenset())
        st.metric(
            "Cosine similarity of the sentence embedding with and without them",
            f"{cosine(before.embedding, page.result.embedding):.4f}",
        )
    st.subheader("Knock out each head in turn")
    heads = [h for h in all_heads(page.limits) if h not in ctl.ablate]
    st.caption(
        f"Knocks out each of the {len(heads)} heads in turn (on top of the sidebar's switches) and ranks them "
        "by how far the sentence embedding moves: 1 − its cosine similarity to the embedding with every head on."
    )
    if st.button("Run the knock-out sweep", icon=":material/play_arrow:"):
        st.session_state["_anatomy_embedding_sweep"] = (page.bundle.checkpoint_id, ctl.sentence, ctl.interventions())
    if st.session_state.get("_anatomy_embedding_sweep") == (
        page.bundle.checkpoint_id,
        ctl.sentence,
        ctl.interventions(),
    ):
        with st.spinner(f"Knocking out {len(heads)} heads ..."):
            frame = embedding_knockout_frame(
                experiments.embedding_knockout(page.bundle, ctl.sentence, ctl.interventions(), heads), lab.labels
            )
        page.show(
            shared(embedding_knockout_chart, frame, page.style),
            "The heads whose absence moves the embedding most.",
            key="embedding-sweep",
        )
        st.dataframe(frame, hide_index=True)


def before_and_after(lab: Lab) -> None:
    """The sidebar's knocked-out heads: the translation and its pieces' probabilities before and after."""
    page, ctl, style = lab.page, lab.page.controls, lab.page.style
    after = page.result
    if _heading(lab) and isinstance(after, TranslationResult):
        before = page.translate(ablate=frozenset())
        two_translations(("All heads", before.translation), ("With the heads knocked out", after.translation))
        page.show(
            shared(
                probability_comparison,
                before.steps,
                after.steps,
                style,
                "Probability of each output piece, before and after the knock-out",
            ),
            f"Each step's chosen piece. Log-probability of the output: {before.log_prob:.2f} before, "
            f"{after.log_prob:.2f} after.",
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
                f"The original {lab.output_word}, each piece scored after the same earlier pieces, with and without "
                f"the heads: its log-probability goes from {sum(unchanged):.2f} to {sum(knocked):.2f}.",
                key="knockout-fixed",
            )


def sweep(lab: Lab) -> None:
    """Each head knocked out in turn (on a button), ranked by how far the original output's log-probability
    falls; the sweep's rows are kept in the session with the controls they ran under."""
    page, ctl = lab.page, lab.page.controls
    st.subheader("Knock out each head in turn")
    heads = [h for h in all_heads(page.limits) if h not in ctl.ablate]
    st.caption(
        f"Knocks out each of the {len(heads)} heads in turn (on top of the sidebar's switches"
        + (", so the heads already knocked out there are left out" if ctl.ablate else "")
        + "), scores the original output under each knock-out, and ranks heads by how much its log-probability "
        + (
            "falls; it also translates again to show whether the output itself changes"
            if not page.decoder_only
            else "falls; it also continues the prompt again to show whether the continuation itself changes"
        )
        + (f" (for the {RETRANSLATED} heads with the largest drops)." if len(heads) > RETRANSLATED else ".")
    )
    if st.button("Run the knock-out sweep", icon=":material/play_arrow:"):
        with st.spinner(f"Knocking out {len(heads)} heads ..."):
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
        st.dataframe(
            frame,
            hide_index=True,
            column_config={
                "log-prob drop": st.column_config.NumberColumn(format="%.3f"),
                "log-prob of the original output": st.column_config.NumberColumn(format="%.3f"),
            },
        )
    elif stored and stored[0] != lab.sweep_key:
        st.caption("The controls changed since the last sweep: run it again.")

"""The Masks and heads lab's head knock-outs in the app (pages/5_masks_and_heads.py): the cached runs, the buttons
that knock out the layer and the head that matter most, and the sweep behind its button, kept in the session;
what they show is views/knockout.py's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from i18n import _, n_
from model import AnatomyError, EncodeResult, Trace, TranslationResult
from ui.page.binding import set_value
from ui.page.ondemand import asked
from ui.page.panels import draw_one
from ui.page.start import Page
from ui.session import experiments, explanations
from views import knockout as shown
from views.markdown import md
from views.panels import Panel
from views.scene import Scene


@dataclass(frozen=True)
class Lab:
    """What the knock-out parts of the lab share."""

    page: Page
    scene: Scene
    trace: Trace  # the lab's one pass: its pieces are what finding the layer that matters most reads

    @property
    def sweep_key(self) -> tuple[Any, ...]:
        """What a sweep kept in the session ran under: a sweep under other controls is stale."""
        ctl = self.page.controls
        return (self.page.bundle.checkpoint_id, ctl.sentence, ctl.interventions(), ctl.options(), ctl.chat)

    def scores(self, output_ids: tuple[int, ...]) -> shown.Scores:
        """The log-probabilities of `output_ids`' pieces under some switches, cached."""
        ctl = self.page.controls
        return lambda iv: explanations.score(self.page.bundle, ctl.sentence, output_ids, iv, ctl.chat)

    def swept_rows(self) -> list[dict]:
        """The rows of the sweep kept in the session, when it ran under these controls."""
        stored = st.session_state.get("_anatomy_sweep")
        return stored[1] if stored and stored[0] == self.sweep_key else []


def _table(lab: Lab, panel: Panel, numbers: tuple[str, ...] = ()) -> None:
    """A knock-out table, its columns named for a person; `numbers` (codes) to 3 decimals."""
    names = shown.column_names(lab.scene)
    formats = {names[code]: st.column_config.NumberColumn(format="%.3f") for code in numbers}
    draw_one(lab.page, panel, hide_index=True, column_config=formats)


def _heading(lab: Lab) -> bool:
    """The knock-out section's heading and the heads knocked out; False (with a next step) when there are none."""
    lab.page.panels([shown.heading(lab.scene)])
    if lab.page.controls.ablate:
        return True
    if not lab.page.encoder_only:
        _suggestions(lab, "tab")
    return False


def _layer_drops(lab: Lab, output_ids: tuple[int, ...]) -> dict[str, float] | None:
    """How far knocking out each layer's heads together lowers the log-probability of the output made
    with every head on (`output_ids`; one teacher-forced pass per layer, cached); None when not computed
    (too costly unasked, and not asked)."""
    if not asked(
        shown.layer_drops_work(lab.scene, lab.trace),
        False,
        _("Find the layer whose heads matter most"),
        "knockout-layers",
        shown.layer_drops_note(lab.scene),
    ):
        return None
    return shown.layer_drops(lab.scene, lab.scores(output_ids))


def _suggestions(lab: Lab, where: str) -> None:
    """One-click knock-outs with the largest effect on the output made with every head on: the layer whose
    heads matter most together, and the head the sweep found (when it ran)."""
    result = lab.page.result
    if not shown.suggests(lab.scene) or not isinstance(result, TranslationResult):
        return
    drops = _layer_drops(lab, tuple(result.output_ids))
    if drops:
        suggested = shown.layer_suggestion(lab.scene, drops)
        heads = shown.layer_groups(lab.scene)[shown.strongest_layer(drops)]
        st.button(
            suggested.text,
            key=f"knockout-layer-{where}",
            icon=":material/block:",
            on_click=set_value,
            args=("ablate", tuple(sorted(heads))),
            help=_("Sets the sidebar's “Knock out heads” to these heads; clear it there to bring them back."),
        )
        st.caption(suggested.caption)
    rows = lab.swept_rows()
    if rows:
        suggested = shown.head_suggestion(lab.scene, rows)
        st.button(
            suggested.text,
            key=f"knockout-head-{where}",
            on_click=set_value,
            args=("ablate", (shown.strongest_head(rows)["head"],)),
            help=_("The head whose knock-out lowered the log-probability most in the sweep below."),
        )
        st.caption(suggested.caption)


def embedding(lab: Lab) -> None:
    """A model without a decoder: its sentence embedding with and without the sidebar's heads, and the
    sweep that ranks each head by how far its knock-out moves the embedding."""
    page = lab.page
    ctl = lab.page.controls
    if _heading(lab) and isinstance(page.result, EncodeResult):
        page.panels([shown.embedding_change(lab.scene, page.encode(ablate=frozenset()))])
    page.panels([shown.sweep_heading(lab.scene)])
    ran = (page.bundle.checkpoint_id, ctl.sentence, ctl.interventions())
    if st.button(_("Run the knock-out sweep"), icon=":material/play_arrow:"):
        st.session_state["_anatomy_embedding_sweep"] = ran
    if st.session_state.get("_anatomy_embedding_sweep") == ran:
        heads = shown.swept_heads(lab.scene)
        with st.spinner(n_("Knocking out {n} head ...", "Knocking out {n} heads ...", len(heads))):
            rows = experiments.embedding_knockout(page.bundle, ctl.sentence, ctl.interventions(), heads)
        chart, table = shown.embedding_sweep(lab.scene, rows)
        page.panels([chart])
        _table(lab, table)


def before_and_after(lab: Lab) -> None:
    """The sidebar's knocked-out heads: the translation and its pieces' probabilities before and after."""
    if _heading(lab) and isinstance(lab.page.result, TranslationResult):
        before = lab.page.translate(ablate=frozenset())
        lab.page.panels(shown.before_and_after(lab.scene, before, lab.scores(tuple(before.output_ids))))


def sweep(lab: Lab) -> None:
    """Each head knocked out in turn (on a button), ranked by how far the original output's log-probability
    falls; the sweep's rows are kept in the session with the controls they ran under."""
    page = lab.page
    ctl = lab.page.controls
    page.panels([shown.sweep_heading(lab.scene)])
    heads = shown.swept_heads(lab.scene)
    if st.button(_("Run the knock-out sweep"), icon=":material/play_arrow:"):
        with st.spinner(n_("Knocking out {n} head ...", "Knocking out {n} heads ...", len(heads))):
            try:
                rows = experiments.knockout_sweep(
                    page.bundle, ctl.sentence, ctl.interventions(), ctl.options(), heads, chat=ctl.chat
                )
            except AnatomyError as exc:
                st.error(md(str(exc)))
                rows = []
        st.session_state["_anatomy_sweep"] = (lab.sweep_key, rows)
    stored = st.session_state.get("_anatomy_sweep")
    if lab.swept_rows():
        frame = shown.sweep_frame(lab.scene, lab.swept_rows())
        page.panels([shown.sweep_chart(lab.scene, frame)])
        if shown.flat_sweep(lab.scene, frame):
            _suggestions(lab, "sweep")
        _table(lab, shown.table(lab.scene, "sweep-table", frame), shown.NUMBERS)
    elif stored and stored[0] != lab.sweep_key:
        st.caption(_("The controls changed since the last sweep: run it again."))

"""Compare: the same typed text through two sides, each picture of the pair beside the other. The left side is the
sidebar's model, switches and knock-outs; the right side's are picked here (`b_model=`, `b_snapshot=`, `b_causal=`
… in the URL). What is drawn is views.compare's; here, the right side's pickers, the cached engine and the player,
which steps both sides together."""

from dataclasses import replace

import streamlit as st

from i18n import N_, _
from model import AnatomyError, Bundle, EncodeResult, TranslationResult
from model.checkpoints.catalog import DEFAULT
from ui.page import player
from ui.page.binding import bind, page_value, stored
from ui.page.start import start
from ui.session import engine
from ui.session.cache import MODELS
from views import compare
from views.controls import Controls, all_heads, head_code, head_label
from views.markdown import md
from views.models import menu_models
from views.panels import Panel
from views.scene import Scene, limits_of

FOLDED = ("compare-sides", "compare-parting")  # on a projector, into the run's notes
OUTPUT_NAMES = {"answer": N_("Answer"), "continuation": N_("Continuation"), "translation": N_("Translation")}
SWITCH_LABELS = {
    "causal": N_("Causal mask"),
    "padding": N_("Padding mask"),
    "pe": N_("Positional encoding"),
    "scale": N_("Scale scores by 1/√d_k"),
    "embscale": N_("Scale embeddings by √d_model"),
}


def _run(bundle: Bundle, controls: Controls) -> TranslationResult | EncodeResult:
    """The right side's result, through the cached engine as the left's."""
    iv = controls.interventions()
    if bundle.capabilities.encoder_only:
        return engine.encode(bundle, controls.sentence, iv)
    return engine.translate(bundle, controls.sentence, iv, controls.options(), chat=controls.chat)


def _opened(name: str | None) -> Bundle:
    return engine.get_bundle(engine.model_path(name or DEFAULT))


def right_side_pickers() -> None:
    """The right side's model, snapshot, switches and knock-outs, each bound to its `b_` control, at the foot of
    the sidebar (whose controls are the left side's): the page's first screen is the pictures'."""
    for field in compare.FIELDS:
        page_value(field)
    st.subheader(_("The right side"))
    names = ["", *menu_models()]
    first, second = st.container(), st.container()
    with first:
        name = bind(
            f"{compare.B}model",
            st.selectbox,
            label=_("Model"),
            options=names,
            format_func=lambda option: _("the left side's") if option == "" else option,
        )
    right = _opened(name or None) if name else page.bundle
    with second:
        if right.snapshots:
            bind(
                f"{compare.B}snapshot",
                st.number_input,
                label=_("Training snapshot (0: the final weights)"),
                min_value=0,
                max_value=len(right.snapshots),
                step=1,
            )
    for key, label in SWITCH_LABELS.items():
        bind(f"{compare.B}{key}", st.toggle, label=_(label))
    by_label = {head_label(head): head for head in all_heads(limits_of(right))}
    label_of = {head_code(head): label for label, head in by_label.items()}
    asked = [code for code in str(page_value(compare.ABLATE)).split(",") if code.strip()]
    unknown = [code for code in asked if code not in label_of]
    if unknown:  # as the left side's knock-outs are: a note, and the heads the model has kept
        st.warning(md(_("{model} has no head {heads}: it is left out.", model=right.name, heads=", ".join(unknown))))
    bind(
        f"{compare.B}ablate",
        st.multiselect,
        to_widget=lambda text: [label_of[code] for code in str(text).split(",") if code in label_of],
        from_widget=lambda labels: ",".join(head_code(head) for head in sorted(by_label[label] for label in labels)),
        label=_("Knock out heads on the right"),
        options=list(by_label),
        placeholder=_("Choose heads to zero"),
    )


def body(step: int) -> None:
    """Both sides at decoding step `step` (from 0) while the player is engaged; at rest, every step."""
    step = step if player.DECODING.engaged() else max(steps) - 1
    stepped = replace(scene, controls=replace(scene.controls, step=step))
    right_stepped = replace(right, controls=replace(right.controls, step=step))
    draw(compare.panels(stepped, right_stepped))


def draw(panels: list[Panel]) -> None:
    """The panels in order; on a projector the sides' names and where the outputs part fold into the run's notes
    (each output's caption names its side), so that the first pair of pictures is in the first screen."""
    kept = len(page.figures)
    if not page.controls.presentation:
        page.panels(panels)
    else:
        with page.notes:
            page.panels([panel for panel in panels if panel.key in FOLDED])
        page.panels([panel for panel in panels if panel.key not in FOLDED])
    name_sides(panels, kept)


def name_sides(panels: list[Panel], kept: int) -> None:
    """Each figure the panels kept (from `kept` on; for the page's download and the room's phones, where the pairs
    are one above the other) says its side before its caption."""
    named = {compare.LEFT_KEYS: _("Left side"), compare.RIGHT_KEYS: _("Right side")}
    drawn = [panel for panel in panels if panel.figure is not None]
    for index, panel in zip(range(kept, len(page.figures)), drawn, strict=False):
        side = next((name for prefix, name in named.items() if panel.key.startswith(prefix)), "")
        caption, figure = page.figures[index]
        if side:
            page.figures[index] = (f"{side} · {caption}", figure)


def tell_the_room(left: Scene, right: Scene) -> None:
    """Both outputs, each under its side's name, for the room's phones."""
    page.outputs = [
        (f"{_(name)} · {_(OUTPUT_NAMES[side.output_noun])}", side.result.translation)
        for name, side in ((N_("Left side"), left), (N_("Right side"), right))
        if isinstance(side.result, TranslationResult)
    ]


page = start(N_("Compare"))
with st.sidebar:
    right_side_pickers()
scene = page.scene
try:
    right = compare.right_scene(scene, opened=_opened, snapshot=engine.get_snapshot, run=_run)
except AnatomyError as exc:
    st.error(md(str(exc)))
    st.stop()
left_name = stored("model")
if not all(
    ("bundle", engine.model_path(name)) in MODELS for name in (left_name, stored(f"{compare.B}model") or left_name)
):
    with page.notes:  # the budget holds one of the two: each run opens the other again, which takes seconds
        st.warning(
            md(
                _(
                    "The models cache keeps {budget} MiB of models (ANATOMY_MODELS_MB), less than both sides "
                    "need: every change on this page opens one of them again.",
                    budget=MODELS.budget // 2**20,
                )
            )
        )
tell_the_room(scene, right)
steps = [len(side.result.steps) for side in (scene, right) if isinstance(side.result, TranslationResult)]
if len(steps) == 2 and max(steps) > 1:
    player.DECODING.controls(max(steps), "compare", whole_at_rest=True)
    player.DECODING.run(body, max(steps), page)
else:
    draw(compare.panels(scene, right))
page.finish(globals())

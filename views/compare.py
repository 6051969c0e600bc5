"""Side by side, as panels: the same typed text through two sides, each picture of the pair beside the other. The
left side is the page's own model, switches and knock-outs; the right side is its own, in the URL with a `b_`
prefix (`b_model=`, `b_snapshot=`, `b_causal=`, `b_pe=`, `b_ablate=` …, the left's names and values); a right side
that names nothing is the left's model under the right's switches. The pairs: both outputs (the first piece where
they part marked), each step's top candidates, the chosen head's attention (at the same depth on a model of
another depth, and their difference when both read the same pieces), the layers × heads model view, the sinks'
shares by layer, and every stage's shape and statistics aligned by stage. Each side's panels are the ones its own
page draws (the same view functions, on a scene of its own whose keys start with "a-" or "b-"). The page:
pages/9_compare.py; a notebook: `views.show("compare", text, b_model=..., b_causal="off")`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from i18n import _, later, listing
from model import Bundle, EncodeResult, InputError, TranslationResult, load_bundle
from model.analysis.sinks import SINK
from model.analysis.sinks import sinks as first_piece_shares
from model.engine import stages
from views import translate
from views.attention import VIEW
from views.controls import (
    BLOCK_NAMES,
    BLOCKS,
    CHAT,
    Controls,
    changed_switches,
    chat_offered,
    head_label,
    parse_head_code,
)
from views.fields import Field, choice, int_in, on_off_field
from views.markdown import md
from views.models import menu_models, open_model
from views.modelview import key_pieces, knocked_heads, query_pieces, tiles_panels, trace_of
from views.panels import Panel, words
from views.runs import main_result
from views.scene import Scene, limits_of
from viz.attention import attention_map
from viz.labels import display_piece
from viz.shapes import stages_frame, tensor_heatmap
from viz.sinks import sink_shares as sink_figure

B = "b_"  # the right side's controls in the URL: the left's names after this prefix
SWITCH_KEYS = ("causal", "padding", "pe", "scale", "embscale")
SAME = 1e-6  # a difference of attention weights below this is float rounding
LEFT_KEYS, RIGHT_KEYS = "a-", "b-"  # the start of each side's panels' keys
PROJECTOR_OUTPUT_SIZE = 1.5  # rem: each output on a projector, half the width (the sides are named in the notes)


def _model_name(text: str) -> str:
    """A `b_model=`: a model of the menu, or '' for the left's."""
    if text and text not in menu_models():
        raise ValueError(later("no model {name} in the Model menu", name=repr(text)))
    return text


# The right side's controls: its model, a training snapshot of it (counted from 1 as the Training page counts them,
# 0 for the final weights), its switches and knock-outs (head codes, read against the right model when it opens)
ABLATE = Field(f"{B}ablate", "", lambda text: text.strip())  # head codes, read against the right model
FIELDS: list[Field] = [
    Field(f"{B}model", "", _model_name),
    Field(f"{B}snapshot", 0, int_in(0, 10_000)),
    *(on_off_field(f"{B}{key}", True) for key in SWITCH_KEYS),
    Field(f"{B}fill", "-inf", choice("-inf", "-1e9")),
    ABLATE,
    VIEW,
]
NEEDS_RESULT = True


def _snapshot(bundle: Bundle, wanted: int, opened: Callable[[str, int], Bundle]) -> Bundle:
    """The model at its training snapshot `wanted` (from 1; past the last, the last), or as it is for 0."""
    if not wanted:
        return bundle
    if not bundle.snapshots:
        raise InputError(later("{model} keeps no training snapshots to compare with.", model=bundle.name))
    return opened(str(bundle.path), bundle.snapshots[min(wanted, len(bundle.snapshots)) - 1])


def _opened_snapshot(path: str, step: int) -> Bundle:
    return load_bundle(path or None, snapshot=step)


def right_scene(
    scene: Scene,
    opened: Callable[[str | None], Bundle] = open_model,
    snapshot: Callable[[str, int], Bundle] = _opened_snapshot,
    run: Callable[[Bundle, Controls], TranslationResult | EncodeResult] = main_result,
) -> Scene:
    """The right side's scene: its model (`opened` by menu name; a snapshot `snapshot`(path, step)), the left's
    text and view controls under the right's switches and knock-outs, its own result (`run`), and keys after
    "b-". The app passes its cached engine's calls; a notebook opens and runs directly."""
    values = scene.values
    name = values.get(f"{B}model", "")
    bundle = opened(name) if name else scene.bundle
    bundle = _snapshot(bundle, values.get(f"{B}snapshot", 0), snapshot)
    limits = limits_of(bundle)
    codes = [code for code in str(values.get(f"{B}ablate", "")).split(",") if code.strip()]
    try:
        ablate = tuple(sorted({parse_head_code(code.strip(), limits) for code in codes}))
    except ValueError as exc:
        raise InputError(later("b_ablate: {problem}", problem=str(exc))) from None
    left = scene.controls
    chat = chat_offered(bundle) and bool(values.get(CHAT.key, True))  # on unless turned off, as on the left
    controls = replace(
        left,
        chat=chat,
        causal=values.get(f"{B}causal", True),
        padding=values.get(f"{B}padding", True),
        positional=values.get(f"{B}pe", True),
        scale_scores=values.get(f"{B}scale", True),
        scale_embeddings=values.get(f"{B}embscale", True),
        mask_value=values.get(f"{B}fill", "-inf"),
        ablate=ablate,
        layer=min(left.layer, limits.n_layers - 1),
        head=min(left.head, limits.n_heads - 1),
        new_pieces=left.new_pieces if bundle.capabilities.decoder_only else None,
    )
    return Scene(bundle, controls, run(bundle, controls), values, prefix=RIGHT_KEYS, notes=(), draw=scene.draw)


def sides(scene: Scene, right: Scene | None = None) -> tuple[Scene, Scene]:
    """(left, right): the page's scene with keys after "a-", and the right side's."""
    return replace(scene, prefix=LEFT_KEYS), right if right is not None else right_scene(scene)


def side_name(side: Scene) -> str:
    """A side as the page names it: its model (a snapshot's step), and what is switched away from it as trained."""
    bundle, values = side.bundle, side.controls
    named = md(bundle.name)
    if bundle.snapshot is not None:
        named = _("{model} at training step {step}", model=named, step=bundle.snapshot)
    changed = changed_switches(
        {
            "causal": values.causal,
            "padding": values.padding,
            "pe": values.positional,
            "scale": values.scale_scores,
            "embscale": values.scale_embeddings,
            "fill": values.mask_value,
        }
    )
    said = [named, *changed]
    if values.ablate:
        said.append(_("heads knocked out: {heads}", heads=listing([head_label(head) for head in values.ablate])))
    return "; ".join(said)


def _paired(key: str, left: Panel, right: Panel) -> list[Panel]:
    """Two panels side by side, one row (one above the other on a phone)."""
    return [replace(left, row=key), replace(right, row=key)]


def first_difference(left: TranslationResult, right: TranslationResult) -> int | None:
    """The first output piece (from 0) where the two outputs differ by the text they spell, None when equal."""
    a, b = list(left.steps), list(right.steps)
    for index, (one, other) in enumerate(zip(a, b, strict=False)):
        if one.chosen.strip() != other.chosen.strip():
            return index
    return None if len(a) == len(b) else min(len(a), len(b))


def outputs(a: Scene, b: Scene) -> list[Panel]:
    """Both outputs said large, under each side's name, and where they part."""
    shown = []
    for side in (a, b):
        steps = len(side.result.steps) if isinstance(side.result, TranslationResult) else 0
        panel = translate.output(side, steps)
        if side.style.presentation:  # a projector's first screen holds both outputs and the first pair of pictures
            shown.append(replace(panel, large=PROJECTOR_OUTPUT_SIZE))
        else:
            shown.append(replace(panel, caption=f"{panel.caption} · {side_name(side)}"))
    left, right = a.result, b.result
    assert isinstance(left, TranslationResult) and isinstance(right, TranslationResult)
    first = first_difference(left, right)
    if first is None:
        said = _("Both sides write the same output.")
    else:
        said = _(
            "The outputs part at piece {n}: “{left}” on the left, “{right}” on the right.",
            n=first + 1,
            left=md(display_piece(_piece_at(left, first))),
            right=md(display_piece(_piece_at(right, first))),
        )
    return [*_paired("compare-outputs", *shown), words("compare-parting", said, "info")]


def _piece_at(result: TranslationResult, index: int) -> str:
    return result.steps[index].chosen if index < len(result.steps) else _("(the end)")


def candidates(a: Scene, b: Scene, step: int) -> list[Panel]:
    """Each step's top candidates up to `step` (from 0), both sides."""
    drawn = []
    for side in (a, b):
        last = min(step, len(side.result.steps) - 1) if isinstance(side.result, TranslationResult) else 0
        drawn.append(Panel(side.key("candidates"), translate.candidates(side, last)))
    return _paired("compare-candidates", *drawn)


def same_depth(layer: int, layers: int, other_layers: int) -> int:
    """Layer `layer` of `layers` at the same depth in a stack of `other_layers` (0-based): the first layer to the
    first, the last to the last, and between them in proportion."""
    if layers <= 1:
        return 0
    return round(layer * (other_layers - 1) / (layers - 1))


def block_of(a: Scene, b: Scene) -> str:
    """The decoder block both sides draw: cross-attention when both have it and `view=` asks for it, else the
    decoder's self-attention."""
    both_cross = a.limits.cross_attention and b.limits.cross_attention
    return "dec-cross" if both_cross and a.values.get(VIEW.key, VIEW.default) == "dec-cross" else "dec-self"


def heads(a: Scene, b: Scene) -> list[Panel]:
    """The sidebar's layer and head on both sides (the right at the same depth), and their difference when both
    sides read and write the same pieces."""
    block = block_of(a, b)
    stack, kind = BLOCKS[block]
    layer_a = min(a.controls.layer, a.limits.layers_of(stack) - 1)
    layer_b = same_depth(layer_a, a.limits.layers_of(stack), b.limits.layers_of(stack))
    head_b = min(a.controls.head, b.limits.n_heads - 1)
    drawn, patterns = [], []
    for side, layer, head in ((a, layer_a, a.controls.head), (b, layer_b, head_b)):
        trace = trace_of(side)
        pattern = trace.pattern(stack, kind, layer)[head]
        patterns.append((pattern, query_pieces(trace, block), key_pieces(trace, block)))
        title = _("{block} L{layer} H{head}", block=_(BLOCK_NAMES[block]), layer=layer + 1, head=head + 1)
        figure = side.figure(attention_map, pattern, *patterns[-1][1:], side.style, title, first=block != "dec-cross")
        drawn.append(Panel(side.key("compare-head"), figure))
    said = _(
        "The left draws layer {a} of {la}; the right, layer {b} of {lb}: the same depth in its stack.",
        a=layer_a + 1,
        la=a.limits.layers_of(stack),
        b=layer_b + 1,
        lb=b.limits.layers_of(stack),
    )
    shown = [Panel("compare-heads-heading", heading=_("The chosen head on both sides"), caption=said)]
    shown += _paired("compare-heads", *drawn)
    (left, rows, columns), (right, rows_b, columns_b) = patterns
    if rows == rows_b and columns == columns_b:
        shown.append(_difference(a, right - left, rows, columns))
    return shown


def _difference(a: Scene, difference: np.ndarray, rows: list[str], columns: list[str]) -> Panel:
    """Right minus left on a diverging scale, or words when the two are the same but for float rounding."""
    if np.nanmax(np.abs(np.nan_to_num(difference))) < SAME:
        return words("compare-heads-difference", _("The two sides' weights are the same here."), "info")
    difference = np.where(np.abs(difference) < SAME, 0.0, difference)
    figure = a.figure(tensor_heatmap, difference, rows, a.style, _("Right minus left"), _("key piece"), columns)
    caption = _("Red where the right side attends more, blue where it attends less.")
    return Panel("compare-heads-difference", figure, caption=caption)


def model_views(a: Scene, b: Scene) -> list[Panel]:
    """Every layer × every head of the decoder block, both sides."""
    block = block_of(a, b)
    stack, kind = BLOCKS[block]
    drawn = []
    for side in (a, b):
        trace = trace_of(side)
        patterns = [trace.pattern(stack, kind, layer) for layer in range(side.limits.layers_of(stack))]
        selected = (min(side.controls.layer, len(patterns) - 1), side.controls.head)
        tiles = tiles_panels(side, block, patterns, selected, knocked_heads(side, block), "auto")[0]
        drawn.append(replace(tiles, caption=_("Rows: layers, columns: heads; the sidebar's layer and head outlined.")))
    return _paired("compare-model-view", *drawn)


def sink_shares(a: Scene, b: Scene) -> list[Panel]:
    """The share of attention on the first piece, layer × head, for both decoders (each titled by its model: the
    heading says what it is)."""
    drawn = []
    for side in (a, b):
        cfg = side.bundle.config
        found = first_piece_shares(trace_of(side), "decoder", cfg.norm_first, cfg.windows)
        figure = side.figure(sink_figure, found.shares, side.style, side.bundle.name, SINK)
        drawn.append(Panel(side.key("compare-sinks"), figure))
    heading = Panel(
        "compare-sinks-heading",
        heading=_("Attention sinks: the first piece's share, by layer"),
        caption=_(
            "A cell is the weight a head gives the first piece, averaged over every query after it; the last "
            "column is each layer's mean over its heads."
        ),
    )
    return [heading, *_paired("compare-sinks", *drawn)]


def stage_tables(a: Scene, b: Scene) -> list[Panel]:
    """Every stage's shape on both sides, one row per hook point of either, aligned by stage."""
    frames = [stages_frame(trace_of(side).tensors, side.bundle.config.kv_heads, statistics=False) for side in (a, b)]
    names = list(dict.fromkeys([*frames[0]["stage"], *frames[1]["stage"]]))
    order = sorted(names, key=_stage_order)
    tables = []
    for side, frame in zip((a, b), frames, strict=True):
        aligned = frame.drop_duplicates("stage").set_index("stage").reindex(order).drop(columns="#")
        tables.append(Panel(side.key("compare-stages"), table=aligned.fillna("")))
    heading = Panel(
        "compare-stages-heading",
        heading=_("Every stage, side by side"),
        caption=_("One row per hook point of either side, in the order they run; a blank row is one the side lacks."),
    )
    return [heading, *_paired("compare-stages", *tables)]


def _stage_order(name: str) -> tuple[int, int, str]:
    """Embeddings, then the encoder's layers, the decoder's, and the output, each in layer order."""
    try:
        parsed = stages.parse(name)
    except ValueError:
        return (4, 0, name)
    stack = {None: 0 if parsed.side else 3, "encoder": 1, "decoder": 2}[parsed.stack]
    return (stack, -1 if parsed.layer is None else parsed.layer, "")


def panels(scene: Scene, right: Scene | None = None) -> list[Panel]:
    """The page for the scene's text: both sides named, then each pair (`right`: the right side's scene, made
    by the caller; else `right_scene`'s)."""
    a, b = sides(scene, right)
    writes = all(isinstance(side.result, TranslationResult) for side in (a, b))
    named = words(
        "compare-sides",
        _("**Left** {left}  \n**Right** {right}", left=side_name(a), right=side_name(b)),
    )
    if not writes:
        said = _("An encoder alone writes no output: both sides of a comparison must translate or continue.")
        return [named, words("compare-no-output", said, "info")]
    step = scene.controls.step
    shown = [named, *outputs(a, b), *candidates(a, b, step), *heads(a, b), *model_views(a, b)]
    shown += sink_shares(a, b)
    return shown + stage_tables(a, b)

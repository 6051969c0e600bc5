"""The Attention page's model view as panels: every layer × every head of one attention block as tiles, each
tagged with its role, the head picked opened large, and one query piece's attention over the whole sentence as
text; and which pieces a block's rows and columns are (ui/parts/modelview.py draws them with the pickers)."""

from __future__ import annotations

import numpy as np

from i18n import N_, _, sentences
from model.analysis.roles import block_roles, card_roles
from model.results import Trace
from views.controls import BLOCK_NAMES, BLOCKS
from views.kvcache import kind_of_sharing
from views.lengths import block_windows
from views.markdown import md
from views.panels import Panel
from views.scene import Scene
from viz.attention import attention_map, model_view, model_view_legend
from viz.focus import shaded_text
from viz.labels import at_position, display_piece, reads_bytes
from viz.lengths import Span, colour_mode, pooled

# A head's role tag (model.analysis.roles) -> its name on the tiles, said with _(ROLE_NAMES[tag]).
ROLE_NAMES = {
    "previous": N_("previous"),
    "same": N_("same"),
    "sink": N_("sink"),
    "last": N_("last"),
    "broad": N_("broad"),
    "alignment": N_("alignment"),
}


def role_name(tag: str) -> str:
    """A role tag as the tiles say it, in the language of this run (a tag this page does not know, as it is)."""
    return _(ROLE_NAMES[tag]) if tag in ROLE_NAMES else tag


def trace_of(scene: Scene) -> Trace:
    """The trace of the scene's run (every Attention panel reads it)."""
    trace = None if scene.result is None else scene.result.trace
    if trace is None:
        raise ValueError("the Attention page draws a traced run: its scene has no trace")
    return trace


def key_pieces(trace: Trace, block: str) -> list[str]:
    """The pieces an attention block's columns are (its keys)."""
    return trace.src_pieces if block in ("enc-self", "dec-cross") else trace.tgt_pieces


def query_pieces(trace: Trace, block: str) -> list[str]:
    """The pieces an attention block's rows are (its queries)."""
    return trace.src_pieces if block == "enc-self" else trace.tgt_pieces


def live_heads(n_heads: int, off) -> list[int]:
    """The heads not knocked out (all of them if every one is: an average needs at least one)."""
    return [h for h in range(n_heads) if h not in off] or list(range(n_heads))


def shown_layer(scene: Scene, stack: str) -> int:
    """The sidebar's layer in a stack, or the stack's last when it has fewer layers."""
    return min(scene.controls.layer, scene.limits.layers_of(stack) - 1)


def block_name(block: str) -> str:
    """An attention block's name, capitalized, in the language of this run."""
    return _(BLOCK_NAMES[block]).capitalize()


def heading(scene: Scene) -> Panel:
    """The model view's heading (the attention block's picker sits under it)."""
    return Panel(scene.key("model-view-heading"), heading=_("Model view: all layers × all heads"))


def text_heading(scene: Scene) -> Panel:
    """The text view's heading (an encoder's query picker sits under it)."""
    return Panel(scene.key("text-view-heading"), heading=_("One piece's attention, as text"))


def knocked_heads(scene: Scene, view: str) -> set[tuple[int, int]]:
    """The (layer, head) of every head of the block knocked out."""
    stack, kind = BLOCKS[view]
    heads_off = scene.controls.interventions().heads_off
    return {(layer, head) for layer in range(scene.limits.layers_of(stack)) for head in heads_off(stack, kind, layer)}


def view_panels(
    scene: Scene, view: str, step: int, source: Span, output: Span, colour: str, outlined: bool = True
) -> list[Panel]:
    """The tiles of attention block `view`, their legend, and the selected head large under them; `step` is the
    decoder row of the step, outlined in the large head when `outlined`."""
    trace = trace_of(scene)
    stack, kind = BLOCKS[view]
    patterns = [trace.pattern(stack, kind, layer) for layer in range(scene.limits.layers_of(stack))]
    queries, keys = query_pieces(trace, view), key_pieces(trace, view)
    selected = (shown_layer(scene, stack), scene.controls.head)
    knocked = knocked_heads(scene, view)
    large = scene.figure(
        attention_map,
        patterns[selected[0]][selected[1]],
        queries,
        keys,
        scene.style,
        large_title(view, selected, selected in knocked),
        None if view == "enc-self" or not outlined else step,
        colour=colour,
        first=view != "dec-cross",
        **block_windows(view, source, output),
    )
    tiles = tiles_panels(scene, view, patterns, selected, knocked, colour)
    return [*tiles, Panel(scene.key("view-large"), large, caption=_("The selected head, large."))]


def large_title(view: str, selected: tuple[int, int], knocked: bool) -> str:
    """The title of the head opened large: its attention kind, layer and head, and whether it is knocked out."""
    at = {"block": block_name(view), "layer": selected[0] + 1, "head": selected[1] + 1}
    return _("{block} L{layer} H{head} (knocked out)", **at) if knocked else _("{block} L{layer} H{head}", **at)


def roles(scene: Scene, view: str, patterns: list[np.ndarray]) -> dict[tuple[int, int], str]:
    """Each head's role as the tiles say it: found on this text, else from the model's card (corpus)."""
    stack, kind = BLOCKS[view]
    card = card_roles(scene.bundle.card, stack, kind)
    named = {cell: _("{role} (corpus)", role=role_name(tag)) for cell, tag in card.items()}
    causal = scene.controls.interventions().causal_mask
    found = block_roles(patterns, stack, kind, causal, scene.bundle.config.windows)
    named.update({cell: role_name(tag) for cell, tag in found.items()})
    return named


def tiles_panels(
    scene: Scene,
    view: str,
    patterns: list[np.ndarray],
    selected: tuple[int, int],
    knocked: set[tuple[int, int]],
    colour: str,
) -> list[Panel]:
    """Every layer × every head of one attention kind as tiles (a click opens one: the page makes the tiles
    selectable), each tagged with its role, and their legend when there is one."""
    trace, cfg = trace_of(scene), scene.bundle.config
    queries, keys = query_pieces(trace, view), key_pieces(trace, view)
    scale = {
        "row": _("Colours: each row divided by its largest weight."),
        "log": _("Colours: log₁₀ of the weight."),
    }.get(colour_mode(colour, len(keys)), "")
    named = roles(scene, view, patterns)
    tiles = scene.figure(
        model_view,
        patterns,
        queries,
        keys,
        scene.style,
        _("{block}: layers × heads", block=block_name(view)),
        selected,
        knocked,
        colour,
        named,
        cfg.n_heads // cfg.kv_heads,
    )
    caption = sentences(_tiles_caption(scene, pooled(len(queries)) or pooled(len(keys))), scale)
    panels = [Panel(scene.key("model-view"), tiles, caption=caption)]
    legend = model_view_legend(named, knocked, len(patterns), scene.limits.n_heads)
    if legend:
        panels.append(Panel(scene.key("model-view-legend"), caption=md(legend)))
    return panels


def _tiles_caption(scene: Scene, tiles_pooled: bool) -> str:
    """What the tiles show: the heads framed by key/value head, the roles, and how a long sentence is pooled."""
    n_heads, kv_heads = scene.limits.n_heads, scene.bundle.config.kv_heads
    framed = (
        _(
            "Query heads sharing a key/value head are framed together ({sharing}).",
            sharing=kind_of_sharing(n_heads, kv_heads),
        )
        if kv_heads < n_heads
        else ""
    )
    tiles = _(
        "Each tile is one head (rows: layers, columns: heads). Click a tile, or use the sidebar pickers, to "
        "open that head large below. Inside the top of a tile, the head's role on this sentence when it has "
        "one (previous, same, sink on the first piece, last piece, or broad; defined on the Why this word? "
        "page), else its role over the test sentences of the model's card (corpus), where the gold alignment "
        "can tag it."
    )
    pooled_note = (
        _(
            "The sentence is long, so each tile is pooled to a fixed size: a cell is the mean, over the queries "
            "of its bin, of the weight they give to the keys of its bin (each row still sums to 1); where the cells "
            "are large enough to point at one, the hover names its bins. The head opened below is at full "
            "resolution."
        )
        if tiles_pooled
        else ""
    )
    return sentences(framed, tiles, pooled_note)


def query_names(queries: list[str]) -> list[str]:
    """Each query piece as the text view's query picker names it, with its position."""
    byte_level = reads_bytes(queries)
    return [at_position(display_piece(piece, byte_level), i) for i, piece in enumerate(queries)]


def text_panels(scene: Scene, view: str, query: int) -> list[Panel]:
    """What query piece `query` takes from each piece, in the sidebar's layer of block `view`, as shaded text:
    a line per head and their average (`query` is the decoding step's row for a decoder block)."""
    trace = trace_of(scene)
    stack, kind = BLOCKS[view]
    layer = shown_layer(scene, stack)
    pattern = trace.pattern(stack, kind, layer)
    queries, keys = query_pieces(trace, view), key_pieces(trace, view)
    off = scene.controls.interventions().heads_off(stack, kind, layer)
    live = live_heads(pattern.shape[0], off)
    lines = list(pattern[:, query, :]) + [pattern[live, query, :].mean(axis=0)]
    names = [_("H{head} (off)", head=h + 1) if h in off else f"H{h + 1}" for h in range(pattern.shape[0])]
    names.append(_("average"))
    shaded = scene.figure(shaded_text, lines, keys, names, scene.style, query if view != "dec-cross" else None)
    caption = _(
        "{block}, layer L{layer}: what query piece {query} “{piece}” takes from each piece, one line per head, "
        "each line shaded by the weight divided by that line's largest weight (hover a piece for the exact "
        "weight). This view grows with the sentence, not with its square: it reads a whole paragraph.",
        block=block_name(view),
        layer=layer + 1,
        query=query,
        piece=md(display_piece(queries[query], reads_bytes(queries))),
    )
    return [Panel(scene.key("text-view"), text=shaded, tone="html", caption=caption)]


def text_query(scene: Scene, view: str, step: int, focus: int) -> int:
    """The query row the text view reads: an encoder's piece picked (`focus=`, kept inside the sentence), a
    decoder block's decoding step."""
    if view != "enc-self":
        return step
    return min(focus, len(query_pieces(trace_of(scene), view)) - 1)


def section(
    scene: Scene, view: str, step: int, source: Span, output: Span, colour: str, focus: int = 0, outlined: bool = True
) -> list[Panel]:
    """The whole model view as the page shows it: the tiles of block `view`, the head large, and the text view
    of query `focus` (an encoder's) or the step's row."""
    query = text_query(scene, view, step, focus)
    return [
        heading(scene),
        *view_panels(scene, view, step, source, output, colour, outlined),
        text_heading(scene),
        *text_panels(scene, view, query),
    ]

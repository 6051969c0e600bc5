"""The Attention page's model view (pages/2_attention.py): every layer × every head of one attention kind as
tiles (a click opens that head), the head opened large, and one query piece's attention over the whole
sentence as text; and which pieces a block's rows and columns are."""

from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import N_, _, sentences
from model.analysis.roles import block_roles, card_roles
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.start import Page
from ui.parts import kvcache, lengths
from ui.session.figures import shared
from views.controls import BLOCK_NAMES, BLOCKS, FOCUS
from views.markdown import md
from viz.attention import attention_map, model_view, model_view_cell, model_view_legend
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


def key_pieces(trace: Trace, block: str) -> list[str]:
    """The pieces an attention block's columns are (its keys)."""
    return trace.src_pieces if block in ("enc-self", "dec-cross") else trace.tgt_pieces


def query_pieces(trace: Trace, block: str) -> list[str]:
    """The pieces an attention block's rows are (its queries)."""
    return trace.src_pieces if block == "enc-self" else trace.tgt_pieces


def live_heads(n_heads: int, off) -> list[int]:
    """The heads not knocked out (all of them if every one is: an average needs at least one)."""
    return [h for h in range(n_heads) if h not in off] or list(range(n_heads))


def _open_clicked() -> None:
    """A click on a tile of the model view picks that layer and head."""
    state = st.session_state.get("model-view")
    points = state.selection.points if state is not None else []
    if points:
        cell = model_view_cell(points[0].get("x"), points[0].get("y"))
        if cell is not None:
            set_value("layer", cell[0] + 1)
            set_value("head", cell[1] + 1)


def section(
    page: Page, trace: Trace, step: int, source: Span, output: Span, colour: str, outlined: bool = True
) -> None:
    """The model view of the attention kind picked, the selected head large under it, and that head's
    attention from one query piece as text; `step` is the decoder row of the step, `outlined` in the large head."""
    ctl, style = page.controls, page.style
    st.subheader(_("Model view: all layers × all heads"))
    view = bind(
        "view",
        st.radio,
        label=_("Attention kind"),
        options=list(page.limits.blocks),
        horizontal=True,
        format_func=lambda b: _(BLOCK_NAMES[b]).capitalize(),
    )
    stack, kind = BLOCKS[view]
    patterns = [trace.pattern(stack, kind, layer) for layer in range(page.limits.layers_of(stack))]
    queries, keys = query_pieces(trace, view), key_pieces(trace, view)

    selected = (min(ctl.layer, len(patterns) - 1), ctl.head)
    knocked = {
        (layer, head) for layer in range(len(patterns)) for head in ctl.interventions().heads_off(stack, kind, layer)
    }
    _tiles(page, view, patterns, queries, keys, selected, knocked, colour)
    page.show(
        shared(
            attention_map,
            patterns[selected[0]][selected[1]],
            queries,
            keys,
            style,
            _large_title(view, selected, selected in knocked),
            None if view == "enc-self" or not outlined else step,
            colour=colour,
            first=view != "dec-cross",
            **lengths.block_windows(view, source, output),
        ),
        _("The selected head, large."),
        key="view-large",
    )
    _text_view(
        page,
        view,
        patterns[selected[0]],
        queries,
        keys,
        selected[0],
        step,
        ctl.interventions().heads_off(stack, kind, selected[0]),
    )


def _large_title(view: str, selected: tuple[int, int], knocked: bool) -> str:
    """The title of the head opened large: its attention kind, layer and head, and whether it is knocked out."""
    at = {"block": _(BLOCK_NAMES[view]).capitalize(), "layer": selected[0] + 1, "head": selected[1] + 1}
    return _("{block} L{layer} H{head} (knocked out)", **at) if knocked else _("{block} L{layer} H{head}", **at)


def _tiles(
    page: Page,
    view: str,
    patterns: list[np.ndarray],
    queries: list[str],
    keys: list[str],
    selected: tuple[int, int],
    knocked: set[tuple[int, int]],
    colour: str,
) -> None:
    """Every layer × every head of one attention kind as tiles, each tagged with its role, and their legend."""
    stack, kind = BLOCKS[view]
    tiles_pooled = pooled(len(queries)) or pooled(len(keys))
    scale = {
        "row": _("Colours: each row divided by its largest weight."),
        "log": _("Colours: log₁₀ of the weight."),
    }.get(colour_mode(colour, len(keys)), "")
    card = card_roles(page.bundle.card, stack, kind)
    roles = {cell: _("{role} (corpus)", role=role_name(tag)) for cell, tag in card.items()}
    found = block_roles(patterns, stack, kind, page.controls.interventions().causal_mask, page.bundle.config.windows)
    roles.update({cell: role_name(tag) for cell, tag in found.items()})
    page.show(
        shared(
            model_view,
            patterns,
            queries,
            keys,
            page.style,
            _("{block}: layers × heads", block=_(BLOCK_NAMES[view]).capitalize()),
            selected,
            knocked,
            colour,
            roles,
            page.bundle.config.n_heads // page.bundle.config.kv_heads,
        ),
        sentences(_tiles_caption(page, tiles_pooled), scale),
        key="model-view",
        on_select=_open_clicked,
        selection_mode="points",
    )
    legend = model_view_legend(roles, knocked, len(patterns), page.limits.n_heads)
    if legend:
        with st.container(key="model-view-legend"):
            st.caption(md(legend))


def _tiles_caption(page: Page, tiles_pooled: bool) -> str:
    """What the tiles show: the heads framed by key/value head, the roles, and how a long sentence is pooled."""
    n_heads, kv_heads = page.limits.n_heads, page.bundle.config.kv_heads
    framed = (
        _(
            "Query heads sharing a key/value head are framed together ({sharing}).",
            sharing=kvcache.kind_of_sharing(n_heads, kv_heads),
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
            "of its bin, of the weight they give to the keys of its bin (each row still sums to 1); the hover "
            "names the bins. The head opened below is at full resolution."
        )
        if tiles_pooled
        else ""
    )
    return sentences(framed, tiles, pooled_note)


def _text_view(page: Page, view: str, pattern, queries: list[str], keys: list[str], layer: int, step: int, off) -> None:
    """One query piece's attention over the whole sentence, as shaded text, a line per head and the average."""
    st.subheader(_("One piece's attention, as text"))
    byte_level = reads_bytes(queries)
    if view == "enc-self":
        set_value("focus", min(page_value(FOCUS), len(queries) - 1))
        query = bind(
            "focus",
            st.select_slider,
            label=_("Query piece"),
            options=list(range(len(queries))),
            format_func=lambda i: at_position(display_piece(queries[i], byte_level), i),
        )
    else:
        query = step  # the decoding step's row, as in the heatmaps
    live = live_heads(pattern.shape[0], off)
    lines = list(pattern[:, query, :]) + [pattern[live, query, :].mean(axis=0)]
    names = [_("H{head} (off)", head=h + 1) if h in off else f"H{h + 1}" for h in range(pattern.shape[0])]
    names.append(_("average"))
    st.markdown(
        shared(shaded_text, lines, keys, names, page.style, query if view != "dec-cross" else None),
        unsafe_allow_html=True,
    )
    st.caption(
        _(
            "{block}, layer L{layer}: what query piece {query} “{piece}” takes from each piece, one line per head, "
            "each line shaded by the weight divided by that line's largest weight (hover a piece for the exact "
            "weight). This view grows with the sentence, not with its square: it reads a whole paragraph.",
            block=_(BLOCK_NAMES[view]).capitalize(),
            layer=layer + 1,
            query=query,
            piece=md(display_piece(queries[query], byte_level)),
        )
    )

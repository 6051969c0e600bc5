"""The Why this word? page's activation patching (pages/8_why.py): a donor text's activations put in place of
yours, one hook point and one source position at a time (the grid), the change that moves the piece on show
most and the text it gives, and a patch of your own (any hook point, a span of positions)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import _, listing, n_
from model import AnatomyError
from model.analysis.forced import work
from model.analysis.patching import Mismatch, mismatch, moved_pieces
from model.engine import stages
from ui.page.binding import bind, page_value, set_value
from ui.page.ondemand import asked, filling
from ui.parts.explained import Explained
from ui.session import explanations
from ui.session.figures import shared
from views.controls import Field
from views.markdown import md
from viz.explain import patch_effect, patch_grid_map
from viz.labels import plotly_piece
from viz.lengths import Span

# Differs from the default sentence at four words, each translated into its own pieces (measured on the
# shipped model: seven of its ten output pieces move by 7 to 12 in log-probability at their own word)
DONOR = Field("donor", "The big boy sees a red car.", lambda text: text[:300])
# A grid cell below this is float rounding (an activation recorded in a pass of one row, the grid's passes have many)
UNCHANGED = 1e-4
SHOWN = 0.005  # the biggest change is written to two decimals: below this it would read 0.00
MOVED = 0.1  # a piece whose log-probability a patch moves this much or more is offered to explain instead


Points = dict[str, tuple[str, str]]  # a hook point's name (English, the code's) -> (its label, the hook point)


def _hook_points(n_layers: int, norm_first: bool) -> Points:
    """Source-side hook points worth patching, by what they are, in the order the model runs them. A
    post-LN encoder's last layer output is its memory (no final norm after it): one row, not two."""
    points = {"source embeddings": (_("source embeddings"), stages.embedding("sum"))}
    points.update(
        {
            f"encoder layer {layer + 1}": (
                _("encoder layer {n}", n=layer + 1),
                stages.layer_output("encoder", layer, norm_first),
            )
            for layer in range(n_layers - (0 if norm_first else 1))
        }
    )
    if norm_first:
        points["encoder memory"] = (_("encoder memory"), stages.MEMORY)
    else:
        points[f"encoder layer {n_layers} (memory)"] = (_("encoder layer {n} (memory)", n=n_layers), stages.MEMORY)
    return points


def _prompt_points(n_layers: int, norm_first: bool) -> Points:
    """A decoder-only model's hook points worth patching at the prompt's positions: its embeddings
    and every decoder layer's output (the decoder's own output after its final norm is read by no
    later position, so it could change only piece 1)."""
    return {
        "prompt embeddings": (_("prompt embeddings"), stages.embedding("sum", "target")),
        **{
            f"decoder layer {layer + 1}": (
                _("decoder layer {n}", n=layer + 1),
                stages.layer_output("decoder", layer, norm_first),
            )
            for layer in range(n_layers)
        },
    }


def section(why: Explained, step: int, source: Span) -> None:
    """Patching for the output piece at `step`: the donor, the grid, its biggest change, your own patch."""
    donor = _donor(why)
    cfg = why.bundle.config
    points = (
        _prompt_points(cfg.n_decoder_layers, cfg.norm_first)
        if why.decoder_only
        else _hook_points(cfg.n_encoder_layers, cfg.norm_first)
    )
    hooks = tuple(hook for _label, hook in points.values())
    grid = _grid(why, donor, step, points, source)
    if grid is None:
        return
    row, position = divmod(int(abs(grid).argmax()), grid.shape[1])
    differ = mismatch(why.bundle, donor, why.ctl.sentence, why.out_ids, why.ctl.chat)
    biggest = float(grid[row, position])
    if abs(biggest) < SHOWN:
        _no_single_position(why, biggest, differ, donor, hooks[0], step)
        return
    _biggest_change(why, donor, points, list(points)[row], position, biggest, differ)
    _own_patch(why, donor, points, row, grid.shape[1])


def _donor(why: Explained) -> str:
    """The donor text's field (`donor=` in the URL)."""
    page_value(DONOR)
    return bind(
        "donor",
        st.text_input,
        label=_("Donor chat message (wrapped as yours is; its activations replace your prompt's)")
        if why.ctl.chat
        else _("Donor prompt (its activations replace your prompt's)")
        if why.decoder_only
        else _("Donor sentence (its activations replace your sentence's)"),
    )


def _grid(why: Explained, donor: str, step: int, points: Points, source: Span) -> np.ndarray | None:
    """The change of the piece's log-probability with the donor's activation at each hook point and source
    position, drawn (on a button when costly); None when not computed."""
    bundle, ctl, iv, out_ids, src_pieces = why.bundle, why.ctl, why.iv, why.out_ids, why.src_pieces
    hooks = tuple(hook for _label, hook in points.values())
    cost = work(bundle, len(hooks) * len(src_pieces), len(src_pieces) + step + 1)
    wanted = asked(
        cost,
        explanations.patch_cells_cached(bundle, donor, ctl.sentence, out_ids, step, hooks, iv, ctl.chat),
        n_(
            "Compute the patching grid ({n} batched pass)", "Compute the patching grid ({n} batched passes)", len(hooks)
        ),
        "why-patch-grid",
        _(
            "The grid patches every {source} position at every hook point: at this model's size, it is computed "
            "when you ask.",
            source=why.words.source,
        ),
        why.spare,
    )
    if wanted is False:
        return None
    try:
        with filling(wanted) as progress:
            grid = explanations.patch_cells(
                bundle, donor, ctl.sentence, out_ids, step, hooks, iv, progress=progress, chat=ctl.chat
            )
    except AnatomyError as exc:
        st.warning(md(str(exc)))
        return None
    why.page.show(
        shared(
            patch_grid_map,
            grid,
            [label for label, _hook in points.values()],
            src_pieces,
            why.style,
            _(
                "{label} {n}, {token}: one position from the donor",
                label=why.words.piece,
                n=step + 1,
                token=plotly_piece(why.out_pieces[step], why.byte_level),
            ),
            source,
            _("prompt position (your prompt)") if why.decoder_only else _("source position (your sentence)"),
        ),
        _(
            "A cell: how much the log-probability of the piece on show changes when your prompt's activation at "
            "that hook point (row) and prompt position (column) is the donor's. Positions both have, matched by "
            "index: a donor prompt with as many pieces lines up with yours throughout. Only the prompt's "
            "positions are patched; the new pieces are the same in both."
        )
        if why.decoder_only
        else _(
            "A cell: how much the log-probability of the piece on show changes when your sentence's activation at "
            "that hook point (row) and source position (column) is the donor's. Positions both have, matched by "
            "index."
        ),
        key="patch-grid",
    )
    return grid


def _biggest_change(
    why: Explained,
    donor: str,
    points: Points,
    where: str,
    position: int,
    biggest: float,
    differ: Mismatch,
) -> None:
    """The grid's biggest change, where it is, and your text made again with that one activation from the donor."""
    bundle, ctl = why.bundle, why.ctl
    label, hook = points[where]
    moved = explanations.translation_patched(bundle, donor, ctl.sentence, hook, (position,), why.iv, ctl.chat)
    fields = dict(change=biggest, point=md(label), position=position, token=why.shown(why.src_pieces[position]))
    st.markdown(
        _(
            "The biggest change ({change:+.2f}): the **{point}** at position {position} (**{token}**, the donor's "
            "**{theirs}**).",
            theirs=why.shown(differ.donor[position]),
            **fields,
        )
        if position in differ.positions
        else _(
            "The biggest change ({change:+.2f}): the **{point}** at position {position} (**{token}**, the same "
            "piece in the donor: the words that differ reach it through the layers before).",
            **fields,
        )
    )
    unchanged_text = moved == bundle.tokenizer.decode(list(why.out_ids))
    st.markdown(_made_again(why, unchanged_text))
    if not unchanged_text:
        # i18n: the model's own output under the patch, as a quote (in Chinese, inside “”)
        st.markdown(_("> {text}", text=md(moved)))


def _made_again(why: Explained, unchanged: bool) -> str:
    """What the text made again with the biggest change's activation is (`_biggest_change`)."""
    if why.decoder_only and unchanged:
        return _(
            "Your prompt continued with that one activation from the donor (greedy, every step): the {output} stays "
            "the same (the change lowers or raises the piece's probability, but the model's first choice is still "
            "the same piece).",
            output=why.words.output,
        )
    if why.decoder_only:
        return _("Your prompt continued with that one activation from the donor (greedy, every step):")
    if unchanged:
        return _(
            "Your sentence translated with that one activation from the donor: the {output} stays the same (the "
            "change lowers or raises the piece's probability, but the model's first choice is still the same piece).",
            output=why.words.output,
        )
    return _("Your sentence translated with that one activation from the donor:")


def _own_patch(why: Explained, donor: str, points: Points, row: int, both: int) -> None:
    """In an expander: the hook point (the grid's biggest at first) and the span of positions you pick from
    the donor, and every piece of your output teacher-forced under that patch; `both`: the positions both
    texts have."""
    bundle, ctl, iv, out_ids, words = why.bundle, why.ctl, why.iv, why.out_ids, why.words
    own = explanations.score(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    with st.expander(_("Your own patch: any hook point, a span of positions")):
        where = st.selectbox(
            _("Hook point"),
            list(points),
            index=row,
            format_func=lambda name: points[name][0],
            key="w_patch_point",
        )
        span = (
            st.slider(
                _("Prompt positions to patch (from 1)")
                if why.decoder_only
                else _("Source positions to patch (from 1)"),
                1,
                both,
                (1, both),
                key="w_patch_positions",
                disabled=both < 2,
            )
            if both > 1
            else (1, 1)
        )
        label, hook = points[where]
        try:
            moved_scores = explanations.patched(
                bundle, donor, ctl.sentence, out_ids, hook, tuple(range(span[0] - 1, span[1])), iv, ctl.chat
            )
        except AnatomyError as exc:
            st.warning(md(str(exc)))
            return
        why.page.show(
            shared(
                patch_effect,
                own,
                moved_scores,
                why.out_pieces,
                why.style,
                _(
                    "Your {output}'s pieces, the {point} at positions {first}-{last} from the donor",
                    output=words.output,
                    point=label,
                    first=span[0],
                    last=span[1],
                ),
                words.a_piece,
            ),
            _(
                "Teacher-forced on your {output}: how likely the model still finds each piece once that activation "
                "comes from the donor. Patching {yours} with itself changes nothing.",
                output=words.output,
                yours=why.yours,
            ),
            key="patch",
        )


def _no_single_position(
    why: Explained, biggest: float, differ: Mismatch, donor: str, embeddings: str, step: int
) -> None:
    """The grid's biggest change rounds to 0.00: say so, name where the donor differs, and offer the
    pieces that those differing words do move."""
    bundle, ctl, iv, out_ids, out_pieces = why.bundle, why.ctl, why.iv, why.out_ids, why.out_pieces
    token = f"**{why.shown(out_pieces[step])}**"
    size = (
        ""
        if abs(biggest) < UNCHANGED
        # i18n: said right after a piece, before a colon
        else _(" (the biggest change is {change:+.2g} in log-probability, shown as 0.00)", change=biggest)
    )
    if not differ.positions:
        st.caption(
            _(
                "No single position changes the piece {token}{size}: the donor is the same as {yours} at every "
                "position both have.",
                token=token,
                size=size,
                yours=why.yours,
            )
            if len(differ.donor) == len(differ.receiver)
            else _(
                "No single position changes the piece {token}{size}: the donor is the same as {yours} at every "
                "position both have, and only its length differs.",
                token=token,
                size=size,
                yours=why.yours,
            )
        )
        return
    where = listing(
        _("**{mine}** (donor: **{theirs}**)", mine=why.shown(differ.receiver[p]), theirs=why.shown(differ.donor[p]))
        for p in differ.positions
    )
    st.caption(
        _(
            "No single position changes the piece {token}{size}: the donor differs from {yours} only at {where}, "
            "and none of those alone moves {token}.",
            token=token,
            size=size,
            yours=why.yours,
            where=where,
        )
    )
    own = explanations.score(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    swapped = explanations.patched(bundle, donor, ctl.sentence, out_ids, embeddings, differ.positions, iv, ctl.chat)
    moved = [(t, change) for t, change in moved_pieces(np.asarray(own), swapped, MOVED) if t != step]
    if not moved:
        return
    st.markdown(
        _(
            "With all of those words from the donor, these {pieces} move: pick one to see where.",
            pieces=why.words.pieces,
        )
    )
    with st.container(horizontal=True):
        for t, change in moved:
            st.button(
                f"{why.shown(out_pieces[t])} ({change:+.1f})",
                key=f"why-moved-{t}",
                on_click=set_value,
                args=("step", t + 1),
                help=_(
                    "Explain {label} {n}: its log-probability changes by {change:+.2f}",
                    label=why.words.a_piece,
                    n=t + 1,
                    change=change,
                ),
            )

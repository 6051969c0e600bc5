"""The Why this word? page's activation patching, as panels: a donor text's activations put in place of yours, one
hook point and one source position at a time (the grid), the change that moves the piece on show most and the
text it gives, the pieces a donor moves when no single position does, and a patch of your own. The app computes
through its cache and offers the buttons and pickers (ui/parts/patching.py); `panels` computes directly, as a
notebook gets the page."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from i18n import _, listing, n_
from model import AnatomyError, Bundle, Interventions
from model.analysis import patch, patch_grid, patched_translation
from model.analysis.forced import work
from model.analysis.patching import Mismatch, mismatch, moved_pieces
from model.engine import stages
from views.explained import Ask, Explained
from views.fields import Field
from views.markdown import md
from views.panels import Panel, words
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


def _source_points(n_layers: int, norm_first: bool) -> Points:
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


def hook_points(why: Explained) -> Points:
    """The hook points the grid patches, in its rows' order: the prompt's for a decoder alone, else the source's."""
    cfg = why.bundle.config
    if why.decoder_only:
        return _prompt_points(cfg.n_decoder_layers, cfg.norm_first)
    return _source_points(cfg.n_encoder_layers, cfg.norm_first)


def hooks(points: Points) -> tuple[str, ...]:
    """The hook points' names, in the grid's rows' order."""
    return tuple(hook for _label, hook in points.values())


def heading(why: Explained) -> Panel:
    """The section's heading."""
    return Panel(
        why.key("why-patching"),
        heading=_("Patching: activations from another prompt")
        if why.decoder_only
        else _("Patching: activations from another sentence"),
    )


def grid_ask(why: Explained, step: int, points: Points) -> Ask:
    """The grid for the piece at `step`, as a part that waits for a button when costly."""
    src = len(why.src_pieces)
    n_hooks = len(points)
    return Ask(
        work(why.bundle, n_hooks * src, src + step + 1),
        n_("Compute the patching grid ({n} batched pass)", "Compute the patching grid ({n} batched passes)", n_hooks),
        "why-patch-grid",
        _(
            "The grid patches every {source} position at every hook point: at this model's size, it is computed "
            "when you ask.",
            source=why.words.source,
        ),
    )


def grid_map(why: Explained, step: int, grid: np.ndarray, points: Points, source: Span) -> Panel:
    """The change of the piece's log-probability with the donor's activation at each hook point (row) and source
    position (column), in the source window."""
    figure = why.figure(
        patch_grid_map,
        grid,
        [label for label, _hook in points.values()],
        why.src_pieces,
        why.style,
        _(
            "{label} {n}, {token}: one position from the donor",
            label=why.words.piece,
            n=step + 1,
            token=plotly_piece(why.out_pieces[step], why.byte_level),
        ),
        source,
        _("prompt position (your prompt)") if why.decoder_only else _("source position (your sentence)"),
    )
    caption = (
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
        )
    )
    return Panel(why.key("patch-grid"), figure, caption=caption)


def biggest(grid: np.ndarray) -> tuple[int, int, float]:
    """The grid's biggest change: its row (hook point), its column (source position) and its value."""
    row, position = divmod(int(abs(grid).argmax()), grid.shape[1])
    return row, position, float(grid[row, position])


def biggest_change(
    why: Explained, label: str, position: int, change: float, differ: Mismatch, moved: str
) -> list[Panel]:
    """The grid's biggest change, where it is (hook point `label`, `position`), and your text made again with that
    one activation from the donor (`moved`)."""
    fields = dict(change=change, point=md(label), position=position, token=why.shown(why.src_pieces[position]))
    headline = (
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
    unchanged = moved == why.bundle.tokenizer.decode(list(why.out_ids))
    said = [words(why.key("why-biggest"), headline), words(why.key("why-made-again"), _made_again(why, unchanged))]
    if not unchanged:
        # i18n: the model's own output under the patch, as a quote (in Chinese, inside “”)
        said.append(words(why.key("why-patched-text"), _("> {text}", text=md(moved))))
    return said


def _made_again(why: Explained, unchanged: bool) -> str:
    """What the text made again with the biggest change's activation is (`biggest_change`)."""
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


def whole_span(both: int) -> tuple[int, int]:
    """The span of positions (from 1) your own patch takes at first: every position both texts have."""
    return (1, both)


def span_positions(span: tuple[int, int]) -> tuple[int, ...]:
    """A span of positions counted from 1, as the positions (from 0) a patch replaces."""
    return tuple(range(span[0] - 1, span[1]))


def own_patch(why: Explained, own: Sequence[float], moved: np.ndarray, label: str, span: tuple[int, int]) -> Panel:
    """Every piece of your output teacher-forced without (`own`) and with (`moved`) the donor's activation at hook
    point `label` over `span` (from 1)."""
    words_ = why.words
    figure = why.figure(
        patch_effect,
        own,
        moved,
        why.out_pieces,
        why.style,
        _(
            "Your {output}'s pieces, the {point} at positions {first}-{last} from the donor",
            output=words_.output,
            point=label,
            first=span[0],
            last=span[1],
        ),
        words_.a_piece,
    )
    caption = _(
        "Teacher-forced on your {output}: how likely the model still finds each piece once that activation "
        "comes from the donor. Patching {yours} with itself changes nothing.",
        output=words_.output,
        yours=why.yours,
    )
    return Panel(why.key("patch"), figure, caption=caption)


def no_single_position(why: Explained, change: float, differ: Mismatch, step: int) -> Panel:
    """The grid's biggest change rounds to 0.00: say so, and name where the donor differs."""
    token = f"**{why.shown(why.out_pieces[step])}**"
    size = (
        ""
        if abs(change) < UNCHANGED
        # i18n: said right after a piece, before a colon
        else _(" (the biggest change is {change:+.2g} in log-probability, shown as 0.00)", change=change)
    )
    fields = dict(token=token, size=size, yours=why.yours)
    if not differ.positions:
        said = (
            _(
                "No single position changes the piece {token}{size}: the donor is the same as {yours} at every "
                "position both have.",
                **fields,
            )
            if len(differ.donor) == len(differ.receiver)
            else _(
                "No single position changes the piece {token}{size}: the donor is the same as {yours} at every "
                "position both have, and only its length differs.",
                **fields,
            )
        )
        return Panel(why.key("why-no-single-position"), caption=said)
    where = listing(
        _("**{mine}** (donor: **{theirs}**)", mine=why.shown(differ.receiver[p]), theirs=why.shown(differ.donor[p]))
        for p in differ.positions
    )
    said = _(
        "No single position changes the piece {token}{size}: the donor differs from {yours} only at {where}, "
        "and none of those alone moves {token}.",
        where=where,
        **fields,
    )
    return Panel(why.key("why-no-single-position"), caption=said)


def moved(own: Sequence[float], swapped: np.ndarray, step: int) -> list[tuple[int, float]]:
    """The output pieces (but the one on show) that all of the donor's differing words move, with the change."""
    return [(t, change) for t, change in moved_pieces(np.asarray(own), swapped, MOVED) if t != step]


def moved_lead(why: Explained) -> Panel:
    """The words before the pieces a donor moves, each a button to explain it."""
    return words(
        why.key("why-moved-lead"),
        _(
            "With all of those words from the donor, these {pieces} move: pick one to see where.",
            pieces=why.words.pieces,
        ),
    )


def moved_button(why: Explained, piece: int, change: float) -> tuple[str, str]:
    """A moved piece's button: its label and its help."""
    label = f"{why.shown(why.out_pieces[piece])} ({change:+.1f})"
    return label, _(
        "Explain {label} {n}: its log-probability changes by {change:+.2f}",
        label=why.words.a_piece,
        n=piece + 1,
        change=change,
    )


def patched_scores(
    bundle: Bundle,
    donor: str,
    receiver: str,
    output_ids: tuple[int, ...],
    hook: str,
    positions: Sequence[int] | None,
    iv: Interventions,
    chat: bool = False,
) -> np.ndarray:
    """`model.analysis.patch`, kept small: the receiver's log-probability of each output piece."""
    logp = patch(bundle, donor, receiver, output_ids, hook, positions, iv, chat)
    return logp[np.arange(len(output_ids)), list(output_ids)]


def patched_text(
    bundle: Bundle, donor: str, receiver: str, hook: str, positions: Sequence[int], iv: Interventions, chat: bool
) -> str:
    """The receiver's text made again (greedy) with the donor's activation at `hook`, `positions`."""
    return bundle.tokenizer.decode(patched_translation(bundle, donor, receiver, hook, positions, iv, chat))


def _unmoved(why: Explained, donor: str, change: float, differ: Mismatch, embeddings: str, step: int) -> list[Panel]:
    """No single position moves the piece (`no_single_position`), and the pieces the donor's differing words do
    move, computed directly."""
    said = [no_single_position(why, change, differ, step)]
    if not differ.positions:
        return said
    ctl = why.ctl
    own = why.bundle.score(ctl.sentence, list(why.out_ids), why.iv, ctl.chat)
    swapped = patched_scores(
        why.bundle, donor, ctl.sentence, why.out_ids, embeddings, differ.positions, why.iv, ctl.chat
    )
    pieces = moved(own, swapped, step)
    if not pieces:
        return said
    buttons = " · ".join(moved_button(why, t, change)[0] for t, change in pieces)
    return [*said, moved_lead(why), words(why.key("why-moved"), buttons)]


def panels(why: Explained, step: int, source: Span, donor: str) -> list[Panel]:
    """Patching for the piece at `step` as the page shows it first (nothing cached, no button clicked), computed
    directly: the grid (or what the page says in its place), its biggest change and your own patch at first."""
    bundle, ctl, iv = why.bundle, why.ctl, why.iv
    points = hook_points(why)
    shown = [heading(why)]
    ask = grid_ask(why, step, points)
    if not ask.eager(why.spare):
        return [*shown, ask.instead(why)]
    try:
        grid = patch_grid(bundle, donor, ctl.sentence, why.out_ids, step, hooks(points), iv, None, ctl.chat)
        shown.append(grid_map(why, step, grid, points, source))
        row, position, change = biggest(grid)
        differ = mismatch(bundle, donor, ctl.sentence, why.out_ids, ctl.chat)
        if abs(change) < SHOWN:
            return shown + _unmoved(why, donor, change, differ, hooks(points)[0], step)
        label, hook = points[list(points)[row]]
        again = patched_text(bundle, donor, ctl.sentence, hook, (position,), iv, ctl.chat)
        shown += biggest_change(why, label, position, change, differ, again)
        own = bundle.score(ctl.sentence, list(why.out_ids), iv, ctl.chat)
        span = whole_span(grid.shape[1])
        patched = patched_scores(bundle, donor, ctl.sentence, why.out_ids, hook, span_positions(span), iv, ctl.chat)
        return [*shown, own_patch(why, own, patched, label, span)]
    except AnatomyError as exc:  # the page says it as a warning where the grid or your own patch would be
        return [*shown, words(why.key("why-patch-error"), md(str(exc)), "warning")]

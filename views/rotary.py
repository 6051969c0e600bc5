"""The Positional encoding page's views of rotary positions (RoPE), as panels: which dimensions turn by which
base, each pair's frequency, the angle of every position and pair, and the relative property on a query and a
key of the text; with the controls of the base what-if, the key piece and the shift."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import plotly.graph_objects as go

from i18n import N_, _, later, listing, n_, sentences
from model.analysis import rotary
from model.results import Trace
from views.fields import Field, int_in
from views.markdown import md
from views.panels import Panel, words
from views.scene import Scene
from viz.labels import at_position, display_piece, plotly_piece, reads_bytes
from viz.rotary import angle_heatmap, frequency_chart, relative_chart, score_grid, two_bases

FACTORS = (0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0)  # base × these: the what-if's choices
SHOWN_POSITIONS = 64  # rows of the angle heatmap at least (the text's length when longer, up to MOST)
MOST = 256
# What a base's layers are (model.analysis.rotary.RotaryBase.kind, a code), in words: said with _(KINDS[kind]).
KINDS = {
    "every layer": N_("every layer"),
    "sliding-window layers": N_("sliding-window layers"),
    "full-attention layers": N_("full-attention layers"),
}


def _factor(text: str) -> float:
    value = float(text)
    if value not in FACTORS:
        raise ValueError(later("expected one of {options}", options=", ".join(f"{f:g}" for f in FACTORS)))
    return value


def _dump_key(value: int | None) -> str:
    return "" if value is None else str(value)


BASE = Field("rbase", 1.0, _factor, lambda v: f"{v:g}")
SHIFT = Field("shift", 100, int_in(0, 4096))
# The key piece n, counted from 0; None: four pieces before the last (key_field gives the page its text's own)
KEY = Field("rkey", None, int_in(0, 100_000), _dump_key)


def key_field(length: int) -> Field:
    """The key piece's control for a text of `length` pieces: a position of it, by default four before the
    last."""

    def parse(text: str) -> int:
        value = int(text)
        if not 0 <= value < length:
            raise ValueError(later("expected a position from 0 to {last}", last=length - 1))
        return value

    return replace(KEY, default=default_key(length), parse=parse)


def default_key(length: int) -> int:
    """The key piece shown first: four pieces before the last one (the query)."""
    return max(0, length - 4)


def key_piece(value: int | None, length: int) -> int:
    """The key piece a stored value asks for, inside a text of `length` pieces."""
    return default_key(length) if value is None or value >= length else value


def base_text(base: float) -> str:
    """A rotary base as a person reads it: 10,000 and 1,000,000, not 10000 and 1e+06."""
    return f"{base:,.0f}" if float(base).is_integer() else f"{base:,g}"


def _and(names: list[str]) -> str:
    """Names one after another, the last after "and": "L6, L12 and L18" (in the language of this run)."""
    return names[0] if len(names) == 1 else _("{items} and {last}", items=listing(names[:-1]), last=names[-1])


def layer_list(layers: tuple[int, ...]) -> str:
    """Layers (from 0) as "L6, L12 and L18"."""
    return _and([f"L{layer + 1}" for layer in layers])


def _where(found: rotary.RotaryBase) -> str:
    """Which layers turn by one base: "θ base 100,000 in every layer", "θ base 10,000 in its 15
    sliding-window layers (window 512)", "θ base 1,000,000 in its 3 full-attention layers (L6, L12 and L18)"."""
    base = base_text(found.base)
    if found.kind == "every layer":
        return _("θ base {base} in every layer", base=base)
    count = len(found.layers)
    named = [_("window {window}", window=found.window)] if found.window else []
    if count <= 4:
        named.append(layer_list(found.layers))
    where = (
        n_(
            "θ base {base} in its {n} sliding-window layer",
            "θ base {base} in its {n} sliding-window layers",
            count,
            base=base,
        )
        if found.kind == "sliding-window layers"
        else n_(
            "θ base {base} in its {n} full-attention layer",
            "θ base {base} in its {n} full-attention layers",
            count,
            base=base,
        )
    )
    return _("{where} ({details})", where=where, details=listing(named)) if named else where


def how_it_turns(scene: Scene, factor: float) -> Panel:
    """What the model does instead of adding positions: which dimensions turn, in pairs, by which base."""
    cfg = scene.bundle.config
    turned = (
        _(
            "the first {dims} of each head's {d_k} dimensions (partial rotary: the other {rest} never turn)",
            dims=cfg.rotary_dims,
            d_k=cfg.d_k,
            rest=cfg.d_k - cfg.rotary_dims,
        )
        if cfg.rotary_dims < cfg.d_k
        else _("all {d_k} dimensions of each head", d_k=cfg.d_k)
    )
    each = [_where(b) for b in rotary.bases(cfg, factor)]
    said = each[0] if len(each) == 1 else _("{clauses} and {last}", clauses=listing(each[:-1]), last=each[-1])
    text = _(
        "{name} adds **nothing** to its embeddings: it turns every query and key instead (**rotary position "
        "embedding, RoPE**). After the projections, {turned} are taken in pairs (dim i with dim i + {half}), "
        "and each pair is rotated by the angle position × θᵢ, with θᵢ = base^(−2i/{dims}): {said}. A query and "
        "a key then meet at an angle that depends only on how far apart they stand. The experiment at the "
        "bottom switches the rotation off.",
        name=md(scene.bundle.name),
        turned=turned,
        half=cfg.rotary_dims // 2,
        dims=cfg.rotary_dims,
        said=said,
    )
    return words(scene.key("rope-how"), text, "info")


def frequency_heading(scene: Scene) -> Panel:
    """The frequencies' heading, and what the base what-if under it does."""
    return Panel(
        scene.key("rope-freq-heading"),
        heading=_("Each pair's frequency θᵢ"),
        caption=_(
            "A what-if for this run: multiply every base by a factor (a larger base turns slower pairs still "
            "slower; Llama 3 and Qwen2.5 raised theirs to read longer texts). The continuation under it is at the "
            "bottom of the page, beside the switch that takes the rotation off."
        ),
    )


def factor_label(factor: float) -> str:
    """A choice of the base what-if, as its slider says it."""
    return _("× {factor} (as trained)", factor=f"{factor:g}") if factor == 1.0 else f"× {factor:g}"


def names(found: list[rotary.RotaryBase], factor: float) -> list[str]:
    """Each base's name under the what-if factor: its value, its layers and their window."""
    return [
        _(
            "base {base}: {kind}, window {window}",
            base=base_text(b.base * factor),
            kind=_(KINDS[b.kind]),
            window=b.window,
        )
        if b.window
        else _("base {base}: {kind}", base=base_text(b.base * factor), kind=_(KINDS[b.kind]))
        for b in found
    ]


def frequency_panel(scene: Scene, factor: float) -> Panel:
    """Each pair's frequency θᵢ under every base × `factor`, down to the slowest pair."""
    cfg = scene.bundle.config
    found = rotary.bases(cfg, factor)
    slowest = [
        _(
            "one turn every {n} positions (base {base})",
            n=f"{6.283 / b.frequencies[-1]:,.0f}",
            base=base_text(b.base * factor),
        )
        for b in found
    ]
    figure = scene.figure(
        frequency_chart,
        [b.frequencies for b in found],
        names(found, factor),
        scene.style,
        _("{model}: θᵢ of each pair, {pairs} pairs per head", model=scene.bundle.name, pairs=cfg.rotary_dims // 2),
        cfg.rotary_dims,
        cfg.d_k,
    )
    caption = _(
        "Pair 0 turns by one radian per position (a full turn every 6.3 positions); each later pair turns "
        "slower, geometrically, down to {slowest}. Hover a point for its wavelength.",
        slowest=listing(slowest),
    )
    return Panel(scene.key("rope-freq"), figure, caption=caption)


def angles_figure(scene: Scene, factor: float, pieces: list[str]) -> go.Figure:
    """The angle of every position and pair: one heatmap (the last piece's row outlined), or a panel per base."""
    found = rotary.bases(scene.bundle.config, factor)
    shown = min(MOST, max(SHOWN_POSITIONS, len(pieces)))
    tables = [rotary.angles(b.frequencies, shown) for b in found]
    title = _("Rotation angle per position × pair (first {n} positions)", n=shown)
    if len(found) > 1:
        return scene.figure(two_bases, tables, names(found, factor), scene.style, title)
    return scene.figure(angle_heatmap, tables[0], scene.style, title, len(pieces) - 1)


def angles_panel(scene: Scene, factor: float, pieces: list[str]) -> Panel:
    """The angle of every position and pair, under what it shows."""
    two = len(rotary.bases(scene.bundle.config, factor)) > 1
    caption = sentences(
        _(
            "Each cell is the angle by which a pair of dims is turned at a position, after whole turns (a "
            "cyclic colour: 0 and 2π look alike). Left, the fast pairs spin like a clock's second hand; right, "
            "the slow ones barely move in a sentence, so they can tell far positions apart."
        ),
        _("The outlined row is the text's last piece.") if not two else "",
        _("Each panel is one base: Gemma 3 turns its sliding-window layers by the smaller one.") if two else "",
    )
    return Panel(scene.key("rope-angles"), angles_figure(scene, factor, pieces), caption=caption)


def prompt_angles(scene: Scene, factor: float, pieces: list[str]) -> Panel:
    """While a continuation is written: how the prompt's positions turn."""
    one = len(rotary.bases(scene.bundle.config, factor)) == 1
    caption = sentences(
        _("Each cell is the angle by which a pair of dims is turned at a position."),
        _("The outlined row is the prompt's last piece.") if one else "",
        _("Its queries and keys, turned, follow when the continuation is whole."),
    )
    figure = angles_figure(scene, factor, pieces)
    return Panel(scene.key("prompt-angles"), figure, heading=_("How the prompt's positions turn"), caption=caption)


def relative_heading(scene: Scene, length: int) -> list[Panel]:
    """The relative part's heading, and for a text of one piece, why nothing follows."""
    heading = Panel(
        scene.key("rope-relative-heading"), heading=_("Why it is relative: a query and a key of your text, turned")
    )
    if length >= 2:
        return [heading]
    return [
        heading,
        Panel(scene.key("rope-too-short"), caption=_("Type at least two pieces to compare a query with a key.")),
    ]


def key_labels(pieces: list[str]) -> dict[int, str]:
    """Each piece as the key picker names it: the piece at its position."""
    byte_level = reads_bytes(pieces)
    return {position: at_position(display_piece(piece, byte_level), position) for position, piece in enumerate(pieces)}


def relative_layer(scene: Scene) -> int:
    """The layer whose query and key are turned: the sidebar's, within the model's decoder layers."""
    return min(scene.controls.layer, scene.bundle.config.n_decoder_layers - 1)


def relative_demo(scene: Scene, trace: Trace, length: int, key: int, shift: int, factor: float) -> rotary.RelativeDemo:
    """The last piece's query and the key piece `key` of `trace` (a run with the rotation on, as trained), turned
    to every offset, and with both moved by `shift`, by every base × `factor`."""
    cfg, ctl = scene.bundle.config, scene.controls
    return rotary.relative_demo(cfg, trace, relative_layer(scene), ctl.head, length - 1, key, shift, what_if=factor)


def relative_metrics(demo: rotary.RelativeDemo) -> list[tuple[str, str, str]]:
    """The scores the page states as metrics: (label, value, change, or '' for none)."""
    query, key, shift = demo.query_position, demo.key_position, demo.shift
    return [
        (_("Score at m = {m}, n = {n}", m=query, n=key), f"{demo.at_text:.4f}", ""),
        (
            _("Both moved by k = {k}: m = {m}, n = {n}", k=shift, m=query + shift, n=key + shift),
            f"{demo.at_shifted:.4f}",
            f"{demo.at_shifted - demo.at_text:+.1e}",
        ),
        (_("Without any rotation"), f"{demo.unrotated:.4f}", ""),
    ]


def metrics_words(scene: Scene, demo: rotary.RelativeDemo) -> Panel:
    """The scores as words, for a notebook (the page states them as metrics side by side)."""
    lines = [
        f"- {label}: **{value}**" + (f" ({change})" if change else "")
        for label, value, change in relative_metrics(demo)
    ]
    return words(scene.key("rope-scores"), "\n".join(lines))


def relative_panels(scene: Scene, demo: rotary.RelativeDemo, pieces: list[str], factor: float) -> list[Panel]:
    """The query and the key turned to every offset (the line, and the circles moved by k) and the score for
    every pair of positions, side by side."""
    cfg, ctl, style = scene.bundle.config, scene.controls, scene.style
    layer, key, shift, query = demo.layer, demo.key_position, demo.shift, demo.query_position
    byte_level = reads_bytes(pieces)
    title = _(
        "L{layer} H{head}: query “{query}” and key “{key}” at every offset",
        layer=layer + 1,
        head=ctl.head + 1,
        query=plotly_piece(pieces[query], byte_level),
        key=plotly_piece(pieces[key], byte_level),
    )
    line = scene.figure(
        relative_chart, demo.offsets, demo.scores, demo.shifted, shift, query - key, demo.unrotated, style, title
    )
    two = len(rotary.bases(cfg, factor)) > 1
    caption = relative_caption(layer, cfg.rotary_base_of(layer) * factor, bool(cfg.window(layer)), shift, two)
    grid = scene.figure(score_grid, demo.grid, style, _("Score for the query at m and the key at n"), query, key)
    row = scene.key("rope-relative-row")
    grid_caption = _(
        "Every diagonal holds one distance m − n, and one colour. The text's own pair is outlined when it "
        "falls on the grid."
    )
    return [
        Panel(scene.key("rope-relative"), line, caption=caption, row=row, width=3),
        Panel(scene.key("rope-grid"), grid, caption=grid_caption, row=row, width=2),
    ]


def relative_caption(layer: int, base: float, sliding: bool, shift: int, two: bool) -> str:
    """What the relative chart shows; `two`: the model has two bases, and L`layer` turns by `base` (a
    sliding-window layer's, or a full-attention layer's)."""
    fields: dict[str, Any] = dict(layer=layer + 1, base=base_text(base))
    return sentences(
        _(
            "The same two vectors (this head's projections of those pieces, their rotation undone), turned to "
            "every pair of positions m, n."
        )
        if not two
        else _(
            "The same two vectors (this head's projections of those pieces, their rotation undone), turned to "
            "every pair of positions m, n by L{layer}'s own base, {base} (a sliding-window layer; pick a layer in "
            "the sidebar for the other base).",
            **fields,
        )
        if sliding
        else _(
            "The same two vectors (this head's projections of those pieces, their rotation undone), turned to "
            "every pair of positions m, n by L{layer}'s own base, {base} (a full-attention layer; pick a layer in "
            "the sidebar for the other base).",
            **fields,
        ),
        _(
            "The line puts the key at one position and the query at each offset from it; the circles move both by "
            "k = {k}: they sit on the line, because the score depends on m − n alone. That is what makes RoPE "
            "relative, while each vector still carries its own position.",
            k=shift,
        ),
    )


def panels(scene: Scene, trace: Trace, pieces: list[str]) -> list[Panel]:
    """The rotary part of the page as drawn on a first run, from `trace` (a run with the rotation on, as trained)
    and the typed text's `pieces`."""
    factor = scene.value(BASE.key, BASE.default)
    shown = [how_it_turns(scene, factor), frequency_heading(scene), frequency_panel(scene, factor)]
    shown += [angles_panel(scene, factor, pieces), *relative_heading(scene, len(pieces))]
    if len(pieces) < 2:
        return shown
    key = key_piece(scene.value(KEY.key), len(pieces))
    demo = relative_demo(scene, trace, len(pieces), key, scene.value(SHIFT.key, SHIFT.default), factor)
    return shown + [metrics_words(scene, demo)] + relative_panels(scene, demo, pieces, factor)

"""The Positional encoding page's part for a model with rotary positions (RoPE): the frequencies of each
base, the angle of every position and pair, the relative property on a query and a key of the text, and a
base what-if beside the positions switch."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from i18n import N_, _, later, listing, n_, sentences
from model.analysis import rotary
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.markup import two_translations
from ui.page.ondemand import second_continuation
from ui.page.start import Page
from ui.session.figures import shared
from views.controls import Field, int_in
from views.markdown import md
from viz.labels import at_position, display_piece, plotly_piece, reads_bytes
from viz.rotary import angle_heatmap, frequency_chart, relative_chart, score_grid, two_bases

if TYPE_CHECKING:
    import plotly.graph_objects as go

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


BASE = Field("rbase", 1.0, _factor, lambda v: f"{v:g}")
SHIFT = Field("shift", 100, int_in(0, 4096))


def _key_field(length: int) -> Field:
    return Field("rkey", max(0, length - 4), lambda t: int(t) if 0 <= int(t) < length else _bad(length))


def base_text(base: float) -> str:
    """A rotary base as a person reads it: 10,000 and 1,000,000, not 10000 and 1e+06."""
    return f"{base:,.0f}" if float(base).is_integer() else f"{base:,g}"


def _and(names: list[str]) -> str:
    """Names one after another, the last after "and": "L6, L12 and L18" (in the language of this run)."""
    return names[0] if len(names) == 1 else _("{items} and {last}", items=listing(names[:-1]), last=names[-1])


def layer_list(layers: tuple[int, ...]) -> str:
    """Layers (from 0) as "L6, L12 and L18"."""
    return _and([f"L{layer + 1}" for layer in layers])


def _where(found: rotary.RotaryBase, layers: int) -> str:
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


def _bad(length: int) -> int:
    raise ValueError(later("expected a position from 0 to {last}", last=length - 1))


def section(page: Page, trace: Trace, pieces: list[str]) -> float:
    """Draw the rotary part of the page from `trace` (a run with the rotation on, as trained); return the
    base factor the person chose (1.0: as trained)."""
    factor = page_value(BASE)
    _how_it_turns(page, rotary.bases(page.bundle.config, factor))
    factor, found, names = _frequencies(page)
    _angles(page, found, names, pieces)
    _relative(page, trace, pieces, factor, found)
    return factor


def _how_it_turns(page: Page, found: list[rotary.RotaryBase]) -> None:
    """What the model does instead of adding positions: which dimensions turn, in pairs, by which base."""
    cfg, name = page.bundle.config, md(page.bundle.name)
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
    each = [_where(b, cfg.n_decoder_layers or cfg.n_encoder_layers) for b in found]
    said = each[0] if len(each) == 1 else _("{clauses} and {last}", clauses=listing(each[:-1]), last=each[-1])
    st.info(
        _(
            "{name} adds **nothing** to its embeddings: it turns every query and key instead (**rotary position "
            "embedding, RoPE**). After the projections, {turned} are taken in pairs (dim i with dim i + {half}), "
            "and each pair is rotated by the angle position × θᵢ, with θᵢ = base^(−2i/{dims}): {said}. A query and "
            "a key then meet at an angle that depends only on how far apart they stand. The experiment at the "
            "bottom switches the rotation off.",
            name=name,
            turned=turned,
            half=cfg.rotary_dims // 2,
            dims=cfg.rotary_dims,
            said=said,
        )
    )


def _frequencies(page: Page) -> tuple[float, list[rotary.RotaryBase], list[str]]:
    """The base what-if's slider and each pair's frequency under it; returns the factor chosen, the bases
    it gives, and their names."""
    cfg = page.bundle.config
    st.subheader(_("Each pair's frequency θᵢ"))
    st.caption(
        _(
            "A what-if for this run: multiply every base by a factor (a larger base turns slower pairs still "
            "slower; Llama 3 and Qwen2.5 raised theirs to read longer texts). The continuation under it is at the "
            "bottom of the page, beside the switch that takes the rotation off."
        )
    )
    factor = bind(
        "rbase",
        st.select_slider,
        label=_("Base × (what-if)"),
        options=list(FACTORS),
        format_func=lambda f: _("× {factor} (as trained)", factor=f"{f:g}") if f == 1.0 else f"× {f:g}",
    )
    found = rotary.bases(cfg, factor)
    names = _names(found, factor)
    slowest = [
        _(
            "one turn every {n} positions (base {base})",
            n=f"{6.283 / b.frequencies[-1]:,.0f}",
            base=base_text(b.base * factor),
        )
        for b in found
    ]
    page.show(
        shared(
            frequency_chart,
            [b.frequencies for b in found],
            names,
            page.style,
            _("{model}: θᵢ of each pair, {pairs} pairs per head", model=page.bundle.name, pairs=cfg.rotary_dims // 2),
            cfg.rotary_dims,
            cfg.d_k,
        ),
        _(
            "Pair 0 turns by one radian per position (a full turn every 6.3 positions); each later pair turns "
            "slower, geometrically, down to {slowest}. Hover a point for its wavelength.",
            slowest=listing(slowest),
        ),
        key="rope-freq",
    )
    return factor, found, names


def prompt_view(page: Page, prompt: Trace) -> None:
    """While a rotary model's continuation is written (ui/page/stream.py): how it turns its queries and keys,
    and the angle of each of the prompt's positions; the rest of the page follows when the continuation is
    whole. Nothing for a model that does not turn them."""
    cfg = page.bundle.config
    if cfg.positional != "rotary":
        return
    factor = page_value(BASE)
    found = rotary.bases(cfg, factor)
    _how_it_turns(page, found)
    st.subheader(_("How the prompt's positions turn"))
    figure = _angles_figure(page, found, _names(found, factor), prompt.tgt_pieces)
    page.draw(figure, key="prompt-angles")
    st.caption(
        sentences(
            _("Each cell is the angle by which a pair of dims is turned at a position."),
            _("The outlined row is the prompt's last piece.") if len(found) == 1 else "",
            _("Its queries and keys, turned, follow when the continuation is whole."),
        )
    )


def _names(found: list[rotary.RotaryBase], factor: float) -> list[str]:
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


def _angles_figure(page: Page, found: list[rotary.RotaryBase], names: list[str], pieces: list[str]) -> go.Figure:
    """The angle of every position and pair: one heatmap (the last piece's row outlined), or a panel per base."""
    shown = min(MOST, max(SHOWN_POSITIONS, len(pieces)))
    tables = [rotary.angles(b.frequencies, shown) for b in found]
    title = _("Rotation angle per position × pair (first {n} positions)", n=shown)
    if len(found) > 1:
        return shared(two_bases, tables, names, page.style, title)
    return shared(angle_heatmap, tables[0], page.style, title, len(pieces) - 1)


def _angles(page: Page, found: list[rotary.RotaryBase], names: list[str], pieces: list[str]) -> None:
    """The angle of every position and pair, under what it shows."""
    page.show(
        _angles_figure(page, found, names, pieces),
        sentences(
            _(
                "Each cell is the angle by which a pair of dims is turned at a position, after whole turns (a "
                "cyclic colour: 0 and 2π look alike). Left, the fast pairs spin like a clock's second hand; right, "
                "the slow ones barely move in a sentence, so they can tell far positions apart."
            ),
            _("The outlined row is the text's last piece.") if len(found) == 1 else "",
            _("Each panel is one base: Gemma 3 turns its sliding-window layers by the smaller one.")
            if len(found) > 1
            else "",
        ),
        key="rope-angles",
    )


def _relative(page: Page, trace: Trace, pieces: list[str], factor: float, found: list[rotary.RotaryBase]) -> None:
    """The relative property: the text's last piece as the query and a key piece picked, their score, and
    the same with both moved by k positions."""
    cfg, ctl = page.bundle.config, page.controls
    st.subheader(_("Why it is relative: a query and a key of your text, turned"))
    length = len(pieces)
    query = length - 1
    if length < 2:
        st.caption(_("Type at least two pieces to compare a query with a key."))
        return
    key, shift = _key_and_shift(pieces)
    layer = min(ctl.layer, cfg.n_decoder_layers - 1)
    demo = rotary.relative_demo(cfg, trace, layer, ctl.head, query, key, shift, what_if=factor)
    a, b, c = st.columns(3)
    a.metric(_("Score at m = {m}, n = {n}", m=query, n=key), f"{demo.at_text:.4f}")
    b.metric(
        _("Both moved by k = {k}: m = {m}, n = {n}", k=shift, m=query + shift, n=key + shift),
        f"{demo.at_shifted:.4f}",
        delta=f"{demo.at_shifted - demo.at_text:+.1e}",
        delta_color="off",
    )
    c.metric(_("Without any rotation"), f"{demo.unrotated:.4f}")
    _relative_figures(page, demo, pieces, layer, key, shift, factor, len(found) > 1)


def _key_and_shift(pieces: list[str]) -> tuple[int, int]:
    """The key piece n (the query is the last piece) and the shift k of both, side by side."""
    length, byte_level = len(pieces), reads_bytes(pieces)
    key_field = _key_field(length)
    if page_value(key_field) >= length:
        set_value("rkey", max(0, length - 4))
    page_value(SHIFT)
    left, right = st.columns(2)
    with left:
        key = bind(
            "rkey",
            st.select_slider,
            label=_("Key piece n (the query is the last piece)"),
            options=list(range(length - 1)),
            format_func=lambda i: at_position(display_piece(pieces[i], byte_level), i) if i < len(pieces) else str(i),
        )
    with right:
        shift = bind("shift", st.slider, label=_("Move both by k positions"), min_value=0, max_value=4096, step=1)
    return key, shift


def _relative_figures(
    page: Page,
    demo: rotary.RelativeDemo,
    pieces: list[str],
    layer: int,
    key: int,
    shift: int,
    factor: float,
    two: bool,
) -> None:
    """The query and the key turned to every offset (the line, and the circles moved by k), and the score
    for every pair of positions; `two`: the model has two bases."""
    cfg, ctl, style = page.bundle.config, page.controls, page.style
    query = len(pieces) - 1
    left, right = st.columns([3, 2])
    with left:
        page.show(
            shared(
                relative_chart,
                demo.offsets,
                demo.scores,
                demo.shifted,
                shift,
                query - key,
                demo.unrotated,
                style,
                _(
                    "L{layer} H{head}: query “{query}” and key “{key}” at every offset",
                    layer=layer + 1,
                    head=ctl.head + 1,
                    query=plotly_piece(pieces[query], reads_bytes(pieces)),
                    key=plotly_piece(pieces[key], reads_bytes(pieces)),
                ),
            ),
            _relative_caption(layer, cfg.rotary_base_of(layer) * factor, bool(cfg.window(layer)), shift, two),
            key="rope-relative",
        )
    with right:
        page.show(
            shared(score_grid, demo.grid, style, _("Score for the query at m and the key at n"), query, key),
            _(
                "Every diagonal holds one distance m − n, and one colour. The text's own pair is outlined when it "
                "falls on the grid."
            ),
            key="rope-grid",
        )


def _relative_caption(layer: int, base: float, sliding: bool, shift: int, two: bool) -> str:
    """What the relative chart shows; `two`: the model has two bases, and L`layer` turns by `base` (a
    sliding-window layer's, or a full-attention layer's)."""
    fields = dict(layer=layer + 1, base=base_text(base))
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


def what_if(page: Page, factor: float, steps: int, with_text: str) -> None:
    """The continuation with every base × `factor`, beside the one as trained (a button at a real size)."""
    if factor == 1.0 or not page.decoder_only:
        return
    times = f"{factor:g}"
    st.markdown(_("**What-if: every rotary base × {factor}.**", factor=times))
    if second_continuation(
        page.bundle,
        page.controls,
        steps,
        _("Continue with the base × {factor}", factor=times),
        "continue-rope-base",
        rotary_base_factor=factor,
    ):
        two_translations(
            (_("Answer as trained") if page.output_noun == "answer" else _("Continuation as trained"), with_text),
            (_("Base × {factor}", factor=times), page.translate(rotary_base_factor=factor, trace=False).translation),
            1.5,
        )

"""The Positional encoding page's part for a model with rotary positions (RoPE): the frequencies of each
base, the angle of every position and pair, the relative property on a query and a key of the text, and a
base what-if beside the positions switch."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from model.analysis import rotary
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.markup import md, two_translations
from ui.page.ondemand import second_continuation
from ui.page.start import Page
from ui.session.figures import shared
from ui.session.urlstate import Field
from viz.labels import at_position, display_piece, plotly_piece, reads_bytes
from viz.rotary import angle_heatmap, frequency_chart, relative_chart, score_grid, two_bases

if TYPE_CHECKING:
    import plotly.graph_objects as go

FACTORS = (0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0)  # base × these: the what-if's choices
SHOWN_POSITIONS = 64  # rows of the angle heatmap at least (the text's length when longer, up to MOST)
MOST = 256


def _factor(text: str) -> float:
    value = float(text)
    if value not in FACTORS:
        raise ValueError(f"expected one of {', '.join(f'{f:g}' for f in FACTORS)}")
    return value


BASE = Field("rbase", 1.0, _factor, lambda v: f"{v:g}")
SHIFT = Field("shift", 100, lambda t: int(t) if 0 <= int(t) <= 4096 else (_ for _ in ()).throw(ValueError("0-4096")))


def _key_field(length: int) -> Field:
    return Field("rkey", max(0, length - 4), lambda t: int(t) if 0 <= int(t) < length else _bad(length))


def base_text(base: float) -> str:
    """A rotary base as a person reads it: 10,000 and 1,000,000, not 10000 and 1e+06."""
    return f"{base:,.0f}" if float(base).is_integer() else f"{base:,g}"


def layer_list(layers: tuple[int, ...]) -> str:
    """Layers (from 0) as "L6, L12 and L18"."""
    names = [f"L{layer + 1}" for layer in layers]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _where(found: rotary.RotaryBase, layers: int) -> str:
    """Which layers turn by one base: "θ base 100,000 in every layer", "θ base 10,000 in its 15
    sliding-window layers (window 512)", "θ base 1,000,000 in its 3 full-attention layers (L6, L12 and L18)"."""
    if found.kind == "every layer":
        return f"θ base {base_text(found.base)} in every layer"
    count = len(found.layers)
    named = [f"window {found.window}"] if found.window else []
    if count <= 4:
        named.append(layer_list(found.layers))
    return (
        f"θ base {base_text(found.base)} in its {count} {found.kind if count > 1 else found.kind.removesuffix('s')}"
        + (f" ({', '.join(named)})" if named else "")
    )


def _bad(length: int) -> int:
    raise ValueError(f"expected a position from 0 to {length - 1}")


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
        f"the first {cfg.rotary_dims} of each head's {cfg.d_k} dimensions (partial rotary: the other "
        f"{cfg.d_k - cfg.rotary_dims} never turn)"
        if cfg.rotary_dims < cfg.d_k
        else f"all {cfg.d_k} dimensions of each head"
    )
    said = " and ".join(_where(b, cfg.n_decoder_layers or cfg.n_encoder_layers) for b in found)
    st.info(
        f"{name} adds **nothing** to its embeddings: it turns every query and key instead (**rotary position "
        f"embedding, RoPE**). After the projections, {turned} are taken in pairs (dim i with dim i + "
        f"{cfg.rotary_dims // 2}), and each pair is rotated by the angle position × θᵢ, with θᵢ = base^(−2i/"
        f"{cfg.rotary_dims}): {said}. A query and a key then meet at an angle that depends only on how far apart "
        "they stand. The experiment at the bottom switches the rotation off."
    )


def _frequencies(page: Page) -> tuple[float, list[rotary.RotaryBase], list[str]]:
    """The base what-if's slider and each pair's frequency under it; returns the factor chosen, the bases
    it gives, and their names."""
    cfg = page.bundle.config
    st.subheader("Each pair's frequency θᵢ")
    st.caption(
        "A what-if for this run: multiply every base by a factor (a larger base turns slower pairs still "
        "slower; Llama 3 and Qwen2.5 raised theirs to read longer texts). The continuation under it is at the "
        "bottom of the page, beside the switch that takes the rotation off."
    )
    factor = bind(
        "rbase",
        st.select_slider,
        label="Base × (what-if)",
        options=list(FACTORS),
        format_func=lambda f: f"× {f:g}" + (" (as trained)" if f == 1.0 else ""),
    )
    found = rotary.bases(cfg, factor)
    names = _names(found, factor)
    page.show(
        shared(
            frequency_chart,
            [b.frequencies for b in found],
            names,
            page.style,
            f"{page.bundle.name}: θᵢ of each pair, {cfg.rotary_dims // 2} pairs per head",
            cfg.rotary_dims,
            cfg.d_k,
        ),
        "Pair 0 turns by one radian per position (a full turn every 6.3 positions); each later pair turns "
        "slower, geometrically, down to "
        + ", ".join(
            f"one turn every {6.283 / b.frequencies[-1]:,.0f} positions (base {base_text(b.base * factor)})"
            for b in found
        )
        + ". Hover a point for its wavelength.",
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
    st.subheader("How the prompt's positions turn")
    figure = _angles_figure(page, found, _names(found, factor), prompt.tgt_pieces)
    page.draw(figure, key="prompt-angles")
    st.caption(
        "Each cell is the angle by which a pair of dims is turned at a position."
        + (" The outlined row is the prompt's last piece." if len(found) == 1 else "")
        + " Its queries and keys, turned, follow when the continuation is whole."
    )


def _names(found: list[rotary.RotaryBase], factor: float) -> list[str]:
    return [
        f"base {base_text(b.base * factor)}: {b.kind}" + (f", window {b.window}" if b.window else "") for b in found
    ]


def _angles_figure(page: Page, found: list[rotary.RotaryBase], names: list[str], pieces: list[str]) -> go.Figure:
    """The angle of every position and pair: one heatmap (the last piece's row outlined), or a panel per base."""
    shown = min(MOST, max(SHOWN_POSITIONS, len(pieces)))
    tables = [rotary.angles(b.frequencies, shown) for b in found]
    title = f"Rotation angle per position × pair (first {shown} positions)"
    if len(found) > 1:
        return shared(two_bases, tables, names, page.style, title)
    return shared(angle_heatmap, tables[0], page.style, title, len(pieces) - 1)


def _angles(page: Page, found: list[rotary.RotaryBase], names: list[str], pieces: list[str]) -> None:
    """The angle of every position and pair, under what it shows."""
    page.show(
        _angles_figure(page, found, names, pieces),
        "Each cell is the angle by which a pair of dims is turned at a position, after whole turns (a cyclic "
        "colour: 0 and 2π look alike). Left, the fast pairs spin like a clock's second hand; right, the slow "
        "ones barely move in a sentence, so they can tell far positions apart."
        + (" The outlined row is the text's last piece." if len(found) == 1 else "")
        + (
            " Each panel is one base: Gemma 3 turns its sliding-window layers by the smaller one."
            if len(found) > 1
            else ""
        ),
        key="rope-angles",
    )


def _relative(page: Page, trace: Trace, pieces: list[str], factor: float, found: list[rotary.RotaryBase]) -> None:
    """The relative property: the text's last piece as the query and a key piece picked, their score, and
    the same with both moved by k positions."""
    cfg, ctl = page.bundle.config, page.controls
    st.subheader("Why it is relative: a query and a key of your text, turned")
    length = len(pieces)
    query = length - 1
    if length < 2:
        st.caption("Type at least two pieces to compare a query with a key.")
        return
    key, shift = _key_and_shift(pieces)
    layer = min(ctl.layer, cfg.n_decoder_layers - 1)
    demo = rotary.relative_demo(cfg, trace, layer, ctl.head, query, key, shift, what_if=factor)
    a, b, c = st.columns(3)
    a.metric(f"Score at m = {query}, n = {key}", f"{demo.at_text:.4f}")
    b.metric(
        f"Both moved by k = {shift}: m = {query + shift}, n = {key + shift}",
        f"{demo.at_shifted:.4f}",
        delta=f"{demo.at_shifted - demo.at_text:+.1e}",
        delta_color="off",
    )
    c.metric("Without any rotation", f"{demo.unrotated:.4f}")
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
            label="Key piece n (the query is the last piece)",
            options=list(range(length - 1)),
            format_func=lambda i: at_position(display_piece(pieces[i], byte_level), i) if i < len(pieces) else str(i),
        )
    with right:
        shift = bind("shift", st.slider, label="Move both by k positions", min_value=0, max_value=4096, step=1)
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
                f"L{layer + 1} H{ctl.head + 1}: query “{plotly_piece(pieces[query], reads_bytes(pieces))}” and key "
                f"“{plotly_piece(pieces[key], reads_bytes(pieces))}” at every offset",
            ),
            "The same two vectors (this head's projections of those pieces, their rotation undone), turned to "
            "every pair of positions m, n"
            + (
                f" by L{layer + 1}'s own base, {base_text(cfg.rotary_base_of(layer) * factor)} (a "
                + ("sliding-window" if cfg.window(layer) else "full-attention")
                + " layer; pick a layer in the sidebar for the other base)"
                if two
                else ""
            )
            + ". The line puts the key at one position and the query at each offset "
            f"from it; the circles move both by k = {shift}: they sit on the line, because the score depends on "
            "m − n alone. That is what makes RoPE relative, while each vector still carries its own position.",
            key="rope-relative",
        )
    with right:
        page.show(
            shared(score_grid, demo.grid, style, "Score for the query at m and the key at n", query, key),
            "Every diagonal holds one distance m − n, and one colour. The text's own pair is outlined when it "
            "falls on the grid.",
            key="rope-grid",
        )


def what_if(page: Page, factor: float, steps: int, with_text: str) -> None:
    """The continuation with every base × `factor`, beside the one as trained (a button at a real size)."""
    if factor == 1.0 or not page.decoder_only:
        return
    st.markdown(f"**What-if: every rotary base × {factor:g}.**")
    if second_continuation(
        page.bundle,
        page.controls,
        steps,
        f"Continue with the base × {factor:g}",
        "continue-rope-base",
        rotary_base_factor=factor,
    ):
        two_translations(
            (f"{page.output_noun.capitalize()} as trained", with_text),
            (f"Base × {factor:g}", page.translate(rotary_base_factor=factor, trace=False).translation),
            1.5,
        )

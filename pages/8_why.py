"""Why this word: which source pieces made each output piece (attribution), what each decoder layer
would already write (logit lens), what an activation from another sentence changes (patching), and
what each head mostly does (roles)."""

from contextlib import contextmanager
from typing import Callable, Iterator

import streamlit as st

from model import AnatomyError
from model.analysis import METHODS
from model.analysis.attribution import BATCH, IG_STEPS
from model.analysis.forced import work
from model.engine import stages
from ui import engine, lengths, player
from ui.figures import shared
from ui.page import bind, md, page_value, set_value, start
from ui.urlstate import Field
from viz.explain import lens_heatmap, lens_table, patch_effect, patch_grid_map, roles_frame
from viz.focus import shaded_text
from viz.labels import display_piece
from viz.lengths import around
from viz.shapes import tensor_heatmap

DEFINITIONS = {
    "attention": "the last decoder layer's cross-attention, averaged over its heads",
    "rollout": "attention rollout: the last layer's cross-attention times the encoder's self-attention, "
               "layer after layer, each half attention and half the piece itself",
    "gradient": "input × gradient: each source piece's token embedding times the gradient of the output "
                "piece's log-probability with respect to it (red raises it, blue lowers it)",
    "integrated-gradients": "integrated gradients: input × the gradient averaged along the way from a zero "
                            "embedding to the real one (32 steps); a row sums to how much the sentence raises "
                            "that piece's log-probability over an empty one",
    "occlusion": "occlusion: how much the output piece's log-probability drops when that one source piece's "
                 "embedding is set to zero",
}
# Work (parameter x position products, model.analysis.forced.work) a part of the page may cost without
# being asked: under half a second on one core. On the shipped model, only integrated gradients' whole table
# for sentences of ten words or more is asked for; at opus-mt's size, every whole table but attention's and
# rollout's, and the patching grid.
EAGER_WORK = 3e10
METHOD = Field("method", "occlusion", lambda text: text if text in METHODS else (_ for _ in ()).throw(
    ValueError(f"expected one of {', '.join(METHODS)}")))
DONOR = Field("donor", "The small boy sees a white bird.", lambda text: text[:300])
PIECE_WIDGET = "w_why_piece"
# A grid cell below this is float rounding (an activation recorded in a pass of one row, the grid's passes have many)
UNCHANGED = 1e-4


def _hook_points(n_layers: int, norm_first: bool) -> dict[str, str]:
    """Source-side hook points worth patching, by what they are, in the order the model runs them. A
    post-LN encoder's last layer output is its memory (no final norm after it): one row, not two."""
    points = {"source embeddings": stages.embedding("sum")}
    points.update({f"encoder layer {layer + 1}": stages.layer_output("encoder", layer, norm_first)
                   for layer in range(n_layers - (0 if norm_first else 1))})
    points["encoder memory" if norm_first else f"encoder layer {n_layers} (memory)"] = stages.MEMORY
    return points


def _piece_picked() -> None:
    picked = st.session_state[PIECE_WIDGET]
    if picked is not None:
        set_value("step", picked + 1)


def _pick_piece(out_pieces: list[str], step: int, playing: bool) -> int:
    """The output pieces around the step as buttons (a click explains that piece) and a slider over
    all of them (`step=` in the URL); returns the piece on show, from 0."""
    if len(out_pieces) > 1:
        step = bind("step", st.slider, label="Output piece", min_value=1, max_value=len(out_pieces),
                    disabled=playing) - 1
    st.session_state[PIECE_WIDGET] = step
    st.pills("Output piece to explain: click one", list(range(*around(step, len(out_pieces)))), key=PIECE_WIDGET,
             on_change=_piece_picked, format_func=lambda i: md(display_piece(out_pieces[i])), disabled=playing,
             label_visibility="collapsed")
    return step


def _every_method(step: int) -> None:
    rows = {name: engine.attribution(bundle, ctl.sentence, out_ids, name, iv, pieces=(step,))[0] for name in METHODS}
    best = {name: int(abs(row).argmax()) for name, row in rows.items()}
    st.markdown(f"#### Output piece {step + 1}, **{md(display_piece(out_pieces[step]))}**: where it came from")
    st.markdown(shared(shaded_text, list(rows.values()), src_pieces, list(rows), style, signed=True),
                unsafe_allow_html=True)
    agree = len(set(best.values())) == 1
    st.caption(f"Each line is one method, shaded by its value over the line's largest (the methods measure in "
               f"different units; hover a word for the value). {'Blue' if style.presentation else 'Pink'} raises the "
               f"piece, {'orange' if style.presentation else 'blue'} lowers it. "
               + (f"Every method points first to **{md(display_piece(src_pieces[best['occlusion']]))}**."
                  if agree else "The methods disagree on the source piece that matters most: "
                  + ", ".join(f"{name} **{md(display_piece(src_pieces[at]))}**" for name, at in best.items()) + "."))


def _asked(cost: float, cached: bool, label: str, key: str, note: str) -> st.delta_generator.DeltaGenerator | bool:
    """Whether a costly part of the page is to be computed: True when it is cheap or cached; a
    progress bar to fill when the person has just asked for it with the button; False otherwise."""
    if cost <= EAGER_WORK or cached:
        return True
    if st.button(label, key=key):
        return st.progress(0.0, text="Computing ...")
    st.caption(note)
    return False


@contextmanager
def _filling(asked: st.delta_generator.DeltaGenerator | bool) -> Iterator[Callable[[float], None] | None]:
    """What to tell a computation's progress to: the progress bar `_asked` gave (gone afterwards), if any."""
    if isinstance(asked, bool):
        yield None
        return
    try:
        yield asked.progress
    finally:
        asked.empty()


def _table_work(method: str) -> float:
    positions = len(src_pieces) + len(out_ids)
    rows = {"attention": 1, "rollout": 1, "gradient": len(out_ids), "occlusion": len(src_pieces) + 1,
            "integrated-gradients": IG_STEPS * len(out_ids)}[method]
    return work(bundle, rows, positions, gradients=method in ("gradient", "integrated-gradients"))


def _whole_table(output: tuple[int, int], source: tuple[int, int]) -> None:
    page_value(METHOD)
    method = bind("method", st.radio, label="Every output piece by one method", options=list(METHODS),
                  horizontal=True)
    passes = -(-IG_STEPS * len(out_ids) // BATCH) if method == "integrated-gradients" else 1
    asked = _asked(_table_work(method), engine.attribution_cached(bundle, ctl.sentence, out_ids, method, iv),
                   f"Compute the whole table ({passes} batched pass{'es' if passes > 1 else ''})", "why-whole-table",
                   f"{method.capitalize()} over every output piece costs more than this page computes unasked; the "
                   "piece on show is above.")
    if asked is False:
        return
    with _filling(asked) as progress:
        scores = engine.attribution(bundle, ctl.sentence, out_ids, method, iv, progress=progress)
    page.show(shared(tensor_heatmap, scores, out_pieces, style, f"Attribution: {method}", "source piece",
                     src_pieces, output, source),
              f"Rows are the output pieces, columns the source pieces; a cell is {DEFINITIONS[method]}. "
              "Every output piece is scored as the model wrote it, teacher-forced on this translation.",
              key="attribution")


def _lens(step: int, output: tuple[int, int]) -> None:
    view = engine.lens(bundle, ctl.sentence, out_ids, iv)
    st.dataframe(lens_table(view.top_pieces_at(step), view.top_probs[:, step], out_pieces[step]))
    st.caption(f"Output piece {step + 1}: each decoder layer's output put through what the model does after its "
               "last layer (the output projection), and its first candidates with their probabilities; the piece "
               "the model wrote is checked.")
    page.show(shared(lens_heatmap, view.final, view.firsts, out_pieces, style, columns=output),
              "Every output piece: the colour is the probability each layer's lens gives the piece the model finally "
              "wrote, the text that layer's own first choice. With the causal mask on, the last row is the model "
              "itself; with it off, every row sees the whole output at once, as in training, and may disagree with "
              "what decoding chose.", key="lens")


def _patching(step: int, source: tuple[int, int]) -> None:
    page_value(DONOR)
    donor = bind("donor", st.text_input, label="Donor sentence (its activations replace your sentence's)")
    points = _hook_points(bundle.config.n_encoder_layers, bundle.config.norm_first)
    hooks = tuple(points.values())
    cost = work(bundle, len(hooks) * len(src_pieces), len(src_pieces) + step + 1)
    asked = _asked(cost, engine.patch_cells_cached(bundle, donor, ctl.sentence, out_ids, step, hooks, iv),
                   f"Compute the patching grid ({len(hooks)} batched passes)", "why-patch-grid",
                   "The grid patches every source position at every hook point: at this model's size, it is computed "
                   "when you ask.")
    if asked is False:
        return
    try:
        with _filling(asked) as progress:
            grid = engine.patch_cells(bundle, donor, ctl.sentence, out_ids, step, hooks, iv, progress=progress)
    except AnatomyError as exc:
        st.warning(md(str(exc)))
        return
    page.show(shared(patch_grid_map, grid, list(points), src_pieces, style,
                     f"Output piece {step + 1}, {display_piece(out_pieces[step])}: one position from the donor",
                     source),
              "A cell: how much the log-probability of the piece on show changes when your sentence's activation at "
              "that hook point (row) and source position (column) is the donor's. Positions both sentences have.",
              key="patch-grid")
    row, position = divmod(int(abs(grid).argmax()), grid.shape[1])
    if abs(grid[row, position]) < UNCHANGED:
        st.caption("No single position changes the piece: the donor is the same as your sentence there.")
        return
    where = list(points)[row]
    moved = engine.translation_patched(bundle, donor, ctl.sentence, points[where], (position,), iv)
    st.markdown(f"The biggest change ({grid[row, position]:+.2f}): the **{md(where)}** at position {position + 1} "
                f"(**{md(display_piece(src_pieces[position]))}**). Your sentence translated with that one activation "
                f"from the donor:")
    st.markdown(f"> {md(moved)}")
    own = engine.score(bundle, ctl.sentence, out_ids, iv)
    with st.expander("Your own patch: any hook point, a span of positions"):
        where = st.selectbox("Hook point", list(points), index=row, key="w_patch_point")
        both = grid.shape[1]
        span = st.slider("Source positions to patch (from 1)", 1, both, (1, both), key="w_patch_positions",
                         disabled=both < 2) if both > 1 else (1, 1)
        try:
            moved_scores = engine.patched(bundle, donor, ctl.sentence, out_ids, points[where],
                                          tuple(range(span[0] - 1, span[1])), iv)
        except AnatomyError as exc:
            st.warning(md(str(exc)))
            return
        page.show(shared(patch_effect, own, moved_scores, out_pieces, style,
                         f"Your translation's pieces, the {where} at positions {span[0]}-{span[1]} from the donor"),
                  "Teacher-forced on your translation: how likely the model still finds each piece once that "
                  "activation comes from the donor sentence. Patching your sentence with itself changes nothing.",
                  key="patch")


def body(step: int) -> None:
    """Everything that explains the output piece at `step` (0-based)."""
    step = _pick_piece(out_pieces, step, player.DECODING.playing())
    source = lengths.source_window(len(src_pieces))
    output = around(step, len(out_pieces))
    st.subheader("Which source pieces made it")
    _every_method(step)
    _whole_table(output, source)
    st.subheader("What each decoder layer would already write")
    _lens(step, output)
    st.subheader("Patching: activations from another sentence")
    _patching(step, source)


page = start("Why this word?")
ctl, style, bundle = page.controls, page.style, page.bundle

if not bundle.capabilities.translates:
    st.info(f"{md(bundle.name)} does not translate, so no output piece needs explaining (attribution, the logit "
            "lens and patching a translation do not apply): below are the roles its heads play on your sentence.")
else:
    result = page.result
    out_ids = tuple(result.output_ids)
    out_pieces, src_pieces = result.trace.out_pieces, result.trace.src_pieces
    iv = ctl.interventions()
    if not out_ids:
        st.info("The translation is empty: there is no output piece to explain.")
    else:
        set_value("step", min(ctl.step, len(out_ids) - 1) + 1)
        player.DECODING.controls(len(out_ids), "why")
        try:
            player.DECODING.run(body, len(out_ids))
        except AnatomyError as exc:
            st.error(md(str(exc)))

st.subheader("What each head mostly does")
st.dataframe(roles_frame(engine.roles(bundle, ctl.sentence, ctl.interventions(), ctl.beam_size)), hide_index=True,
             column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                            for c in ("previous", "same", "first", "last", "broad", "alignment")})
st.caption("Scores are averages over the head's queries: weight on the piece before (previous), on itself (same), "
           "on the first piece, on the last source piece (</s> or [SEP]), and how spread its weight is (broad, "
           "normalised entropy). A head is tagged with the highest of the first four when it reaches 0.5, else "
           "broad at 0.9 or more.")
page.finish(globals())

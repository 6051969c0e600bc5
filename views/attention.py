"""The Attention page as panels: what decoding step t read and made, the chosen head at the step, every head of the
chosen layer per attention block with their average and the head alone, the model view, the KV cache, shared
key/value heads, attention sinks and sliding windows. pages/2_attention.py draws them with the step slider, the
player and the pickers; `panels(scene)` is the whole page, paused at `step=`."""

from __future__ import annotations

import plotly.graph_objects as go

from i18n import _, later, n_, sentences
from model.analysis.cache import without_cache
from model.results import GenerationResult, Trace, TranslationResult
from views import kvcache, modelview, sinks, windows
from views.budget import EAGER_WORK
from views.controls import BLOCK_NAMES, BLOCKS, COLOUR, FOCUS, WINDOW
from views.fields import Field
from views.lengths import block_windows, source_span
from views.markdown import md
from views.modelview import block_name, key_pieces, live_heads, query_pieces, shown_layer, trace_of
from views.panels import Panel, words
from views.scene import Scene
from viz.attention import attention_heads, attention_map, rows_that_fit
from viz.labels import CONTAINER_PX, axis_labels, display_piece, on_one_line
from viz.lengths import PROJECTOR_ROWS, Span, around, rows_shown


def _block_code(text: str) -> str:
    """A `view=` of the URL: an attention block's code, or a ValueError that says so (when shown)."""
    if text not in BLOCKS:
        raise ValueError(later("expected one of {options}", options=", ".join(BLOCKS)))
    return text


VIEW = Field("view", "dec-cross", _block_code)  # the model view's attention block
FIELDS = [VIEW, WINDOW, COLOUR, FOCUS, kvcache.NO_CACHE]
NEEDS_RESULT = True


def shown_view(scene: Scene, wanted: str) -> str:
    """The model view's block: the one asked for, or the model's first when it lacks it (a decoder view kept from
    another model)."""
    blocks = scene.limits.blocks
    return wanted if wanted in blocks else next(iter(blocks))


def decoding_steps(scene: Scene) -> tuple[int, int]:
    """(steps, first): one decoding step per output piece; step t is decoder row `first + t`. A decoder-only model's
    rows are its prompt's pieces and then the new pieces fed back in (first: the prompt's last position); a
    translation's step t is row t."""
    trace = trace_of(scene)
    result = scene.result
    if scene.decoder_only and isinstance(result, TranslationResult):
        n_steps = len(result.output_ids)
        return n_steps, len(trace.tgt_pieces) - n_steps
    return len(trace.tgt_pieces), 0


def kept_step(scene: Scene, n_steps: int) -> int:
    """The `step=` asked for (from 0), brought inside this output."""
    return min(scene.controls.step, n_steps - 1)


def captions(scene: Scene) -> dict[str, str]:
    """What each attention block's rows and columns are, by block (a decoder-only model's rows: prompt and
    continuation)."""
    said = {
        "enc-self": _(
            "Rows are queries, columns are keys, both source pieces. Row i shows how much piece i "
            "took from every piece of the sentence (each row sums to 1)."
        ),
        "dec-self": _(
            "Rows are decoder positions (the piece fed in at that step), columns the pieces it may "
            "look back at. Everything right of the diagonal is 0: the causal mask hides it, and with the mask "
            "off those pieces did not exist yet when the step ran."
        ),
        "dec-cross": _(
            "Rows are decoder positions, columns are source pieces: where in the English sentence "
            "each step of the French output looked."
        ),
    }
    if scene.decoder_only:
        said["dec-self"] = sentences(
            _(
                "Rows are positions: the prompt's pieces, then each new piece fed back in; columns the pieces a row "
                "may look back at."
            ),
            _("Everything right of the diagonal is 0: the causal mask hides it.")
            if scene.controls.causal
            else _(
                "With the causal mask off, the prompt's rows also read the prompt's later pieces; a new "
                "piece's row cannot, as those pieces did not exist yet when its step ran."
            ),
            _("The outlined row is the step being produced; the rows above it read the prompt."),
        )
    return said


def model_note(scene: Scene) -> Panel | None:
    """What the page shows of a model without an encoder or a decoder (None for an encoder-decoder)."""
    name = scene.bundle.name
    if scene.encoder_only:
        said = _(
            "{name} is encoder-only: below is its self-attention, where every piece looks at every piece. Decoder "
            "masked self-attention and cross-attention do not apply: the model has no decoder.",
            name=name,
        )
        return words(scene.key("encoder-only"), said, "info")
    if not scene.decoder_only:
        return None
    decoder_only = _(
        "{name} is decoder-only: below is its masked self-attention alone, over the prompt and the continuation. "
        "It has no encoder and no cross-attention: there is no source sentence to read, only the text so far, "
        "which every step reads through self-attention.",
        name=name,
    )
    chat_note = _(
        "The prompt is your chat message wrapped by the chat template (its turn markers are pieces too), and the "
        "continuation is the answer."
    )
    return words(scene.key("decoder-only"), sentences(decoder_only, chat_note if scene.chat else ""), "info")


def prompt_panel(scene: Scene, prompt: Trace) -> Panel:
    """While the continuation or translation is written: the chosen head's self-attention over the prompt alone,
    its last pieces' rows (the first piece kept in view, where most heads put much of their weight); for an
    encoder-decoder, the encoder's over the sentence. Drawn directly, not kept among the shared figures."""
    encoder = bool(scene.limits.layers_of("encoder"))
    stack, pieces = ("encoder", prompt.src_pieces) if encoder else ("decoder", prompt.tgt_pieces)
    layer, head = shown_layer(scene, stack), scene.controls.head
    window = rows_shown(len(pieces) - 1, len(pieces), scene.style.presentation)
    said = {"layer": layer + 1, "head": head + 1}
    if encoder:
        heading = _("The sentence's self-attention")
        title = _("Encoder self-attention over the sentence · L{layer} H{head}", **said)
        caption = _(
            "The encoder reads the whole sentence in one pass before the decoder writes its first piece: rows "
            "and columns are the sentence's pieces. Every head, and the decoder's self- and cross-attention, "
            "follow when the translation is whole."
        )
    else:
        heading = _("The prompt's self-attention")
        title = _("Decoder self-attention over the prompt · L{layer} H{head}", **said)
        caption = _(
            "Read in one pass before the first new piece: rows are the prompt's pieces, columns the pieces each "
            "may look back at. Every head and the new pieces' rows follow when the continuation is whole."
        )
    pattern = prompt.pattern(stack, "self", layer)[head]
    figure = attention_map(
        pattern,
        pieces,
        pieces,
        scene.style,
        title,
        rows=window,
        columns=window,
        first=True,
        most_px=scene.style.picture_px,
    )
    return Panel(scene.key("prompt-heads"), figure, heading=heading, caption=caption)


def written_so_far(text: str, pieces: list[str]) -> str:
    """The output so far as text, or as its pieces when the text is white space alone (a line break, "↵")."""
    return text if text.strip() else "".join(display_piece(p) for p in pieces)


def step_words(scene: Scene, step: int) -> Panel:
    """What step t (`step`, from 0) read and produced, and the output so far."""
    trace = trace_of(scene)
    n_steps, first = decoding_steps(scene)
    row = first + step
    result = scene.result
    if scene.decoder_only and isinstance(result, TranslationResult):
        output = scene.bundle.tokenizer.decode(list(result.output_ids[: step + 1])).strip()
    else:
        output = "".join(
            display_piece(p) if not p.startswith("▁") else " " + display_piece(p) for p in trace.out_pieces[: step + 1]
        ).strip()
    so_far = md(on_one_line(written_so_far(output, trace.out_pieces[first : row + 1]))) or _("(nothing yet)")
    if scene.chat:
        said = _("Answer so far: **{text}**", text=so_far)
    elif scene.decoder_only:
        said = _("Continuation so far: **{text}**", text=so_far)
    else:
        said = _("Output so far: **{text}**", text=so_far)
    step_said = _(
        "Step **t = {t}** of {n} read “{read}” (decoder position {row}, counted from 0 like every position here) "
        "and produced “{made}”.",
        t=step + 1,
        n=n_steps,
        read=md(display_piece(trace.tgt_pieces[row])),
        row=row,
        made=md(display_piece(trace.out_pieces[row])),
    )
    return words(scene.key("step-said"), sentences(step_said, said))


def decoding_blocks(scene: Scene) -> list[str]:
    """The blocks the moving picture shows side by side: the decoder's self-attention, and its cross-attention."""
    return [block for block in scene.limits.blocks if block != "enc-self"]


def step_title(scene: Scene, block: str) -> str:
    """A moving chart's title: the block, the sidebar's layer and head, and whether that head is knocked out."""
    stack, kind = BLOCKS[block]
    layer, head = shown_layer(scene, stack), scene.controls.head
    at = {"block": block_name(block), "layer": layer + 1, "head": head + 1}
    if head in scene.controls.interventions().heads_off(stack, kind, layer):
        return _("{block} · L{layer} H{head} (knocked out)", **at)
    return _("{block} · L{layer} H{head}", **at)


def step_figure(scene: Scene, block: str, row: int, source: Span, colour: str) -> go.Figure:
    """The chosen head of one decoding block with decoder row `row` outlined, around that row."""
    trace = trace_of(scene)
    stack, kind = BLOCKS[block]
    keys = key_pieces(trace, block)
    windows = block_windows(block, source, around(row, len(trace.tgt_pieces)))
    most_px = scene.style.picture_px
    if most_px is not None:  # a projector's first picture: the rows whose every label fits, around the step
        fitting = rows_that_fit(axis_labels(keys), scene.style, most_px, PROJECTOR_ROWS)
        windows["rows"] = around(row, len(trace.tgt_pieces), fitting)
    return scene.figure(
        attention_map,
        trace.pattern(stack, kind, shown_layer(scene, stack))[scene.controls.head],
        query_pieces(trace, block),
        keys,
        scene.style,
        step_title(scene, block),
        row,
        colour=colour,
        first=block != "dec-cross",
        width_px=CONTAINER_PX / len(decoding_blocks(scene)),
        most_px=most_px,
        **windows,
    )


def step_caption(cross: bool, playing: bool) -> str:
    """What the moving picture shows: the step's row, in one chart or two (`cross`), outlined below when paused."""
    outlined = (
        _(
            "The outlined row is step t: what the piece fed in looks back at (left), and where in the English "
            "sentence it looks (right)."
        )
        if cross
        else _("The outlined row is step t: what the piece fed in looks back at.")
    )
    below = (
        _(
            "The layer and head are the sidebar's; every layer and head follow below, outlined at the step again "
            "when paused."
        )
        if playing
        else _("The layer and head are the sidebar's; every layer and head follow below.")
    )
    return sentences(outlined, below)


def step_panels(scene: Scene, step: int, source: Span, colour: str) -> list[Panel]:
    """Step t (`step`, from 0) paused: what it read and made, and the moving picture at its row, side by side."""
    row = decoding_steps(scene)[1] + step
    charts = decoding_blocks(scene)
    moving = [
        Panel(scene.key(f"step-{block}"), step_figure(scene, block, row, source, colour), row="step")
        for block in charts
    ]
    caption = Panel(scene.key("step-caption"), caption=step_caption(len(charts) > 1, False))
    return [step_words(scene, step), *moving, caption]


def mask_off_panels(scene: Scene) -> list[Panel]:
    """With the causal mask off, what the decoder plots still show and what changes."""
    if scene.controls.causal or scene.encoder_only:
        return []
    if scene.decoder_only:
        said = _(
            "The causal mask is off. The prompt is read in one pass, so its pieces now also look at the pieces "
            "after them (the prompt's rows fill in right of the diagonal). Each new piece's row is what its step "
            "computed in its own pass: it still reads only the pieces made so far, because later ones did not "
            "exist yet. The Masks and heads lab shows prompt and continuation read in one pass, where the future "
            "lights up everywhere."
        )
    else:
        said = _(
            "The causal mask is off. While decoding, step t still reads only the pieces made so far (later ones "
            "do not exist yet, so the right of the diagonal stays empty): each row below is what its step "
            "computed in its own pass. What changes is that those earlier pieces, recomputed at every step, now "
            "read each other both ways, so from decoder layer 2 on their keys and values differ from the masked "
            "run. The Masks and heads lab shows the whole output read in one pass, where the future lights up."
        )
    return [words(scene.key("mask-off"), said, "info")]


def layer_heading(scene: Scene, block: str) -> Panel:
    """A block's heading, its layer named, and when the sidebar's layer is past the stack's last, that it shows
    the last."""
    stack, _kind = BLOCKS[block]
    n_layers = scene.limits.layers_of(stack)
    layer = shown_layer(scene, stack)
    heading = _("{block} · layer L{layer}", block=block_name(block), layer=layer + 1)
    if layer == scene.controls.layer:
        last = ""
    elif stack == "encoder":
        last = n_(
            "The encoder has {n} layer: showing its last.", "The encoder has {n} layers: showing its last.", n_layers
        )
    else:
        last = n_(
            "The decoder has {n} layer: showing its last.", "The decoder has {n} layers: showing its last.", n_layers
        )
    return Panel(scene.key(f"layer-{block}"), heading=heading, caption=last)


def layer_panels(
    scene: Scene, block: str, step: int, source: Span, output: Span, colour: str, outlined: bool = True
) -> list[Panel]:
    """Every head of the sidebar's layer in one attention block, then their average and the sidebar's head side by
    side; a decoder block's `step` row outlined when `outlined` (playing, they hold still)."""
    trace = trace_of(scene)
    stack, kind = BLOCKS[block]
    layer = shown_layer(scene, stack)
    pattern = trace.pattern(stack, kind, layer)
    highlight = None if block == "enc-self" or not outlined else step
    off = scene.controls.interventions().heads_off(stack, kind, layer)
    window = {**block_windows(block, source, output), "first": block != "dec-cross"}
    heads = scene.figure(
        attention_heads,
        pattern,
        query_pieces(trace, block),
        key_pieces(trace, block),
        scene.style,
        _("{block}, L{layer}: every head", block=_(BLOCK_NAMES[block]), layer=layer + 1),
        highlight,
        off,
        colour=colour,
        **window,
    )
    every = Panel(scene.key(f"heads-{block}"), heads, caption=captions(scene)[block])
    return [layer_heading(scene, block), every, *_average_and_one(scene, block, highlight, window, colour)]


def _average_and_one(scene: Scene, block: str, highlight: int | None, window: dict, colour: str) -> list[Panel]:
    """Side by side: the average of the heads still on, and the sidebar's head alone."""
    trace = trace_of(scene)
    stack, kind = BLOCKS[block]
    layer, head = shown_layer(scene, stack), scene.controls.head
    pattern = trace.pattern(stack, kind, layer)
    off = scene.controls.interventions().heads_off(stack, kind, layer)
    live = live_heads(pattern.shape[0], off)
    drawn = query_pieces(trace, block), key_pieces(trace, block), scene.style
    half = {"colour": colour, "width_px": CONTAINER_PX / 2, **window}
    if off:
        average_title = n_("Average of the {n} head still on", "Average of the {n} heads still on", len(live))
        average_said = _(
            "The mean over heads: what the layer attends to as a whole. Knocked-out heads are left out: they "
            "still compute weights, but their output is zeroed."
        )
    else:
        average_title = n_("Average of the {n} head", "Average of the {n} heads", len(live))
        average_said = _("The mean over heads: what the layer attends to as a whole.")
    if head in off:
        one_title = _("Head H{head} alone (knocked out)", head=head + 1)
        one_said = _(
            "The head picked in the sidebar, with its weights: it still computes them, but its output is zeroed."
        )
    else:
        one_title = _("Head H{head} alone", head=head + 1)
        one_said = _("The head picked in the sidebar, with its weights.")
    average = scene.figure(attention_map, pattern[live].mean(axis=0), *drawn, average_title, highlight, **half)
    alone = scene.figure(attention_map, pattern[head], *drawn, one_title, highlight, **half)
    return [
        Panel(scene.key(f"avg-{block}"), average, caption=average_said, row=f"layer-{block}"),
        Panel(scene.key(f"one-{block}"), alone, caption=one_said, row=f"layer-{block}"),
    ]


def decoding_panels(scene: Scene, source: Span, colour: str) -> list[Panel]:
    """Under the step's controls, paused at `step=`: the step, its moving picture and the KV cache it left."""
    trace = trace_of(scene)
    step = kept_step(scene, decoding_steps(scene)[0])
    return [*step_panels(scene, step, source, colour), *kvcache.cache_panels(scene, step, trace.tgt_pieces)]


def without_cache_panels(scene: Scene) -> list[Panel]:
    """With `nocache=on`, a decoder-only model's decoding with and without the cache, measured, when that costs
    little (at most EAGER_WORK; the page waits for its button past that)."""
    result = scene.result
    if not scene.value(kvcache.NO_CACHE.key) or not isinstance(result, GenerationResult):
        return []
    prompt, steps = list(result.prompt_ids), len(result.output_ids)
    if kvcache.prefix_work(scene.bundle, len(prompt), steps) > EAGER_WORK:
        return []
    measured = without_cache(scene.bundle, prompt, steps, scene.controls.interventions())
    return kvcache.without_cache_panels(scene, measured, steps)


def _after_the_heads(scene: Scene) -> list[Panel]:
    """What follows the model view: the cache without and shared, attention sinks, sliding windows."""
    trace = trace_of(scene)
    panels = []
    if not scene.encoder_only:
        panels += without_cache_panels(scene) + kvcache.shared_heads_panels(scene, len(trace.tgt_pieces))
    stack = sinks.sink_stack(scene)
    panels += sinks.section_panels(scene, trace, stack, sinks.stack_pieces(trace, stack)) + sinks.what_if(scene)
    return panels + windows.panels(scene, trace.tgt_pieces)


def panels(scene: Scene) -> list[Panel]:
    """The whole page, paused at `step=`: the model's note, the step and its moving picture with the KV cache,
    every head of each block, the model view of `view=`, the cache, sinks and sliding windows."""
    trace = trace_of(scene)
    source = source_span(scene.value(WINDOW.key, WINDOW.default), len(trace.src_pieces))
    colour = scene.value(COLOUR.key, COLOUR.default)
    note = model_note(scene)
    shown = [] if note is None else [note]
    step = 0
    if not scene.encoder_only:
        n_steps, first = decoding_steps(scene)
        step = first + kept_step(scene, n_steps)
        shown += decoding_panels(scene, source, colour)
    output = around(step, len(trace.tgt_pieces))
    shown += mask_off_panels(scene)
    for block in scene.limits.blocks:
        shown += layer_panels(scene, block, step, source, output, colour)
    view = shown_view(scene, scene.value(VIEW.key, VIEW.default))
    focus = scene.value(FOCUS.key, FOCUS.default)
    shown += modelview.section(scene, view, step, source, output, colour, focus)
    return shown + _after_the_heads(scene)

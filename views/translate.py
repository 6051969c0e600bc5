"""The first page as panels (pages/1_translate.py): Translate (the output, each step's candidates, the pieces with
their ids, the beams), Continue for a decoder-only model (the same for its continuation of a prompt, or its answer
to a chat message), Sentence for an encoder-only model (its pieces, its embedding and its similarity to another)."""

from __future__ import annotations

import plotly.graph_objects as go

from i18n import _, later, listing, n_, sentences
from model import EncodeResult, TranslationResult, cosine
from model.results import GenerationResult
from views.controls import typed_prefix
from views.fields import Field
from views.markdown import md
from views.panels import Panel, words
from views.sampling import draw_panels, sampled_label
from views.scene import Scene
from viz.embedding import embedding_strips
from viz.labels import marker_note, visible_breaks
from viz.lengths import PROJECTOR_ROWS
from viz.translate import beams_frame, pieces_frame, step_candidates, steps_frame


def _second_sentence(text: str) -> str:
    if not text.strip() or len(text) > 2000:
        raise ValueError(later("expected a sentence of at most 2000 characters"))
    return text


COMPARE = Field("compare", "A little girl is looking at a bird.", _second_sentence)  # the Sentence page's second
FIELDS = [COMPARE]
NEEDS_RESULT = True
OUTPUT_SIZE = 2.2  # rem: the output, said large (ui.page.markup.big_text's default)


def _translation(scene: Scene) -> TranslationResult:
    """The page's translation (continuation, answer)."""
    if not isinstance(scene.result, TranslationResult):
        raise ValueError("the Translate page shows an output, and this result has none")
    return scene.result


def _prompt_ids(scene: Scene) -> list[int]:
    """The ids of the prompt a decoder-only model continued (a chat message: wrapped by the chat template)."""
    result = _translation(scene)
    if not isinstance(result, GenerationResult):
        raise ValueError("only a decoder-only model's continuation has a prompt")
    return list(result.prompt_ids)


def _encoding(scene: Scene) -> EncodeResult:
    """An encoder-only model's encoding of the sentence."""
    if not isinstance(scene.result, EncodeResult):
        raise ValueError("the Sentence page shows an encoding, and this result is none")
    return scene.result


# ---------------------------------------------------------------------------------------------
# Sentence: an encoder-only model


def sentence(scene: Scene) -> list[Panel]:
    """What an encoder-only model does with a sentence, up to the box of the second one: what it is, what it read,
    and its pieces with their ids."""
    result = _encoding(scene)
    said = _(
        "{name} is an encoder-only model ({family}): it reads a sentence and gives one vector per piece, which "
        "the other pages open up, but it has no decoder and does not translate. Averaged over the pieces, those "
        "vectors make one sentence embedding; sentences that mean similar things get embeddings pointing the "
        "same way.",
        name=scene.bundle.name,
        family=scene.bundle.family,
    )
    pieces = _(
        "The tokenizer splits the text into word pieces (## marks a piece that continues a word) between "
        "[CLS] and [SEP]; the encoder reads their ids."
    )
    trace = result.trace
    return [
        words(scene.key("encoder-only"), said, "info"),
        Panel(scene.key("read"), text=result.source, caption=_("The model read:"), large=1.6),
        Panel(scene.key("pieces-heading"), heading=_("Pieces"), caption=pieces),
        Panel(scene.key("source-pieces"), table=pieces_frame(trace.src_pieces, list(trace.src_ids))),
        Panel(scene.key("similarity-heading"), heading=_("Sentence embedding and similarity")),
    ]


def similarity(scene: Scene, other: EncodeResult) -> list[Panel]:
    """The sentence's embedding beside a second sentence's (`other`), and how alike the two are."""
    result = _encoding(scene)
    figure = scene.figure(
        embedding_strips,
        [result.embedding, other.embedding],
        [result.source, other.source],
        scene.style,
        _("Sentence embeddings ({n} dimensions)", n=result.embedding.shape[0]),
    )
    warnings = [words(scene.key(f"compare-warning-{i}"), md(said), "warning") for i, said in enumerate(other.warnings)]
    metric = Panel(
        scene.key("similarity"),
        text=_("Cosine similarity of the two sentence embeddings"),
        metric=f"{cosine(result.embedding, other.embedding):.3f}",
    )
    caption = _embeddings_caption(scene.bundle.pooling == "cls")
    return [*warnings, metric, Panel(scene.key("embeddings"), figure=figure, caption=caption)]


def _embeddings_caption(cls: bool) -> str:
    """What the embeddings' strips show, pooled from the first piece ([CLS], `cls`) or the mean of the pieces."""
    if cls:
        return _(
            "Each row is one sentence's embedding (the first piece, [CLS], scaled to length 1); red is positive, blue "
            "negative. The cosine similarity is the sum of the products of the two rows, column by column: 1 for the "
            "same direction, near 0 for unrelated sentences."
        )
    return _(
        "Each row is one sentence's embedding (the mean of its pieces’ final vectors, scaled to length 1); red is "
        "positive, blue negative. The cosine similarity is the sum of the products of the two rows, column by "
        "column: 1 for the same direction, near 0 for unrelated sentences."
    )


# ---------------------------------------------------------------------------------------------
# Translate and Continue: above the output


def decoder_only_note(scene: Scene) -> list[Panel]:
    """What a decoder-only model does with the text (and with a chat message), for the run's notes."""
    if not scene.decoder_only:
        return []
    decoder_only = _(
        "{name} is a decoder-only model ({family}): it has no encoder and no cross-attention, and it does not "
        "translate. It reads the prompt and continues it, one new piece per step; each step reads the prompt and "
        "every piece made so far through its masked self-attention.",
        name=scene.bundle.name,
        family=scene.bundle.family,
    )
    chat_note = _(
        "Here the prompt is your text as a user's chat message, wrapped by the checkpoint's chat template, and "
        "the continuation is the assistant's answer: the model ends it with its end-of-turn piece."
    )
    return [words(scene.key("decoder-only"), sentences(decoder_only, chat_note if scene.chat else ""), "info")]


def prefix_note(scene: Scene, typed: bool) -> list[Panel]:
    """What a T5 reads before the sentence: the prefix the person types (`typed`: the model names none of its
    own), or the checkpoint's own."""
    bundle = scene.bundle
    if typed:
        said = _(
            "{name} is a T5 checkpoint with no task prefix of its own: T5 models are told what to do in words "
            "before their input, and this one does not say which words. The page puts what you type here before "
            "the sentence (every page reads the two together), and the model reads both: the prefix is in the "
            "source pieces below.",
            name=md(bundle.name),
        )
        return [Panel(scene.key("typed-prefix"), caption=said)]
    if not bundle.task_prefix:
        return []
    said = _(
        "{name} has its own task prefix, “{prefix}”: the model reads it before the sentence, so it is in the "
        "source pieces below.",
        name=bundle.name,
        prefix=bundle.task_prefix,
    )
    return [words(scene.key("task-prefix"), said, "info")]


def output_label(scene: Scene) -> str:
    """What the output is called over it: answer, continuation or (French) translation, and how it was decoded."""
    if scene.chat:
        label = _("Answer")
    elif scene.decoder_only:
        label = _("Continuation")
    else:
        label = _("French translation") if scene.bundle.capabilities.trained_here else _("Translation")
    if scene.controls.beam_size > 1:
        return _("{output} (beam search, {k} beams)", output=label, k=scene.controls.beam_size)
    if scene.controls.sampling is not None:
        return sampled_label(label, scene.controls.sampling)
    return _("{output} (greedy)", output=label)


def output(scene: Scene, shown: int) -> Panel:
    """The output said large: all of it, or while the player runs, its first `shown` pieces."""
    result = _translation(scene)
    n_steps = len(result.steps)
    if shown < n_steps:
        label = _("{label}, step t = {t} of {n}", label=output_label(scene), t=shown, n=n_steps)
        text = scene.bundle.tokenizer.decode(result.output_ids[:shown]) + " …"
    else:
        label = output_label(scene)
        text = result.translation or _("(empty output)")
    return Panel(scene.key("output"), text=text, caption=label, large=OUTPUT_SIZE)


def candidates(scene: Scene, last: int) -> go.Figure:
    """Each step's most likely pieces up to step `last` (from 0), the last outlined until the output is whole; on a
    projector the last PROJECTOR_ROWS of them, so that the grid stays in the first screen as the steps grow."""
    steps = _translation(scene).steps
    first = max(0, last + 1 - PROJECTOR_ROWS) if scene.style.presentation else 0
    highlight = last - first if last + 1 < len(steps) else None
    title = None
    if first:
        title = _("Top candidates at decoding steps {a}–{b} of {n}", a=first + 1, b=last + 1, n=len(steps))
    return scene.figure(
        step_candidates, steps[first : last + 1], scene.style, title, highlight_row=highlight, first_step=first
    )


def steps_caption(scene: Scene, growing: bool) -> str:
    """What the candidates' grid shows: one step a row, the kept piece ticked, the step being produced outlined."""
    if scene.decoder_only:
        rows = _(
            "Each row is one decoding step: the five pieces the model found most likely to come next, coloured by "
            "probability; ✔ marks the piece that was kept."
        )
    else:
        rows = _(
            "Each row is one decoding step: the five pieces the model found most likely, coloured by probability; ✔ "
            "marks the piece that was kept."
        )
    beams = _(
        "Beam search keeps the pieces of the best whole output, so a kept piece can rank below the first, or below "
        "the five shown (then no ✔ appears in its row; its probability is in the table)."
    )
    outlined = _("The outlined row is the step being produced.")
    return sentences(rows, beams if scene.controls.beam_size > 1 else "", outlined if growing else "")


def so_far(noun: str, k: int, limit: int) -> str:
    """What a preview of the output while it is written shows (`noun`: what the model makes, a code)."""
    if noun == "answer":
        return _(
            "Answer so far: {k} of at most {limit} pieces, each step's five most likely pieces below", k=k, limit=limit
        )
    if noun == "continuation":
        return _(
            "Continuation so far: {k} of at most {limit} pieces, each step's five most likely pieces below",
            k=k,
            limit=limit,
        )
    return _(
        "Translation so far: {k} of at most {limit} pieces, each step's five most likely pieces below", k=k, limit=limit
    )


# ---------------------------------------------------------------------------------------------
# Translate and Continue: under the output


def grammar_reference(source: str) -> tuple[str | None, str]:
    """The corpus grammar's French for a sentence, or None and why it cannot read it."""
    try:
        from model.training.corpus import translate

        return translate(source), ""
    except ImportError:
        return None, _("the corpus grammar is not installed")
    except ValueError as exc:
        return None, str(exc)


def reference(scene: Scene) -> list[Panel]:
    """This project's models learn the corpus grammar's language: its translation of the sentence, and whether the
    model's output matches it (or why the grammar cannot read the sentence)."""
    if not scene.bundle.capabilities.trained_here:
        return []
    result = _translation(scene)
    expected, reason = grammar_reference(result.source)
    if expected is None:
        said = _(
            "This sentence is outside the language the model was trained on: the corpus grammar cannot read it "
            "({reason}). The model still answers, but its output is a guess.",
            reason=md(reason),
        )
        return [words(scene.key("reference"), said, "warning")]
    if expected == result.translation:
        verdict = _("✔ The model's output matches it.")
    else:
        verdict = _("✘ The model's output differs from it.")
    said = _("**Reference** (the corpus grammar's translation): {reference}", reference=md(expected))
    return [words(scene.key("reference"), "  \n".join((said, verdict)))]


def read(scene: Scene) -> list[Panel]:
    """The text as the model read it: a chat message wrapped by the chat template (its special pieces, a ↵ at
    each line break), else the prompt or the sentence; then the words never seen in training."""
    result = _translation(scene)
    if scene.chat:
        said = n_(
            "The model read (your message wrapped by the chat template, {n} piece; ↵ marks a line break, which the "
            "model reads as a piece of its own):",
            "The model read (your message wrapped by the chat template, {n} pieces; ↵ marks a line break, which the "
            "model reads as a piece of its own):",
            len(_prompt_ids(scene)),
        )
        shown = [
            Panel(scene.key("read-note"), caption=said),
            words(scene.key("read"), visible_breaks(result.source), "code"),
        ]
    else:
        said = _("The model read (its prompt):") if scene.decoder_only else _("The model read:")
        shown = [Panel(scene.key("read-note"), caption=said), words(scene.key("read"), result.source, "plain")]
    if result.unknown_words:
        flagged = listing(f"**{md(word)}**" for word in result.unknown_words)
        shown.append(words(scene.key("unknown-words"), _("Flagged, never seen in training: {words}", words=flagged)))
    return shown


def pieces_heading(scene: Scene) -> Panel:
    """The heading over the pieces' tables and how the text became pieces."""
    if not scene.decoder_only:
        said = _(
            "SentencePiece splits text into pieces; ▁ marks the start of a word. The encoder reads the source "
            "pieces; the decoder produced the output pieces one per step."
        )
        return Panel(scene.key("pieces-heading"), heading=_("Pieces"), caption=said)
    said = sentences(
        _("The tokenizer splits text into pieces."),
        marker_note(scene.bundle.tokenizer.pieces(_prompt_ids(scene))),
        _(
            "The model reads the prompt's pieces in one pass, then makes the new pieces one per step, each step "
            "reading every piece before it."
        ),
        _("The chat template's special pieces (the turn markers) are pieces of their own, one id each.")
        if scene.chat
        else "",
    )
    return Panel(scene.key("pieces-heading"), heading=_("Pieces"), caption=said)


def pieces(scene: Scene) -> list[Panel]:
    """The pieces the model read and those it made, with their ids, side by side: the source's and the output's,
    or a decoder-only model's prompt's and its new ones."""
    result = _translation(scene)
    out_ids = list(result.output_ids)
    made = pieces_frame(scene.bundle.tokenizer.pieces(out_ids), out_ids)
    if scene.decoder_only:
        prompt_ids = _prompt_ids(scene)
        read_first = pieces_frame(scene.bundle.tokenizer.pieces(prompt_ids), prompt_ids)
        read_said = _("**Wrapped prompt pieces** (read first)") if scene.chat else _("**Prompt pieces** (read first)")
        made_said = (
            _("**Answer pieces** (one per decoding step)")
            if scene.chat
            else _("**New pieces** (one per decoding step)")
        )
    else:
        trace = result.trace
        if trace is None:
            raise ValueError("the page's translation keeps its trace")
        read_first = pieces_frame(trace.src_pieces, list(trace.src_ids))
        made = pieces_frame(trace.out_pieces, out_ids)
        read_said = _("**Source pieces** (encoder input)")
        made_said = _("**Output pieces** (one per decoding step)")
    return [
        Panel(scene.key("pieces-read"), text=read_said, table=read_first, row=scene.key("pieces")),
        Panel(scene.key("pieces-made"), text=made_said, table=made, row=scene.key("pieces")),
    ]


def steps_table(scene: Scene) -> Panel:
    """Every step's candidates as a table (`heading`: the app's expander says it)."""
    return Panel(
        scene.key("steps-table"),
        table=steps_frame(_translation(scene).steps),
        heading=_("Every step's candidates as a table"),
    )


def beams(scene: Scene) -> list[Panel]:
    """The final beams, best first, when the output was found by beam search."""
    if scene.controls.beam_size <= 1:
        return []
    said = _(
        "Beams are ranked by score = log-probability / length^penalty, so longer outputs are not "
        "punished for every extra piece."
    )
    output = _("answer") if scene.chat else _("continuation") if scene.decoder_only else _("translation")
    return [
        Panel(scene.key("beams-heading"), heading=_("Final beams"), caption=said),
        Panel(scene.key("beams"), table=beams_frame(_translation(scene).beams, output)),
    ]


def log_prob(scene: Scene) -> Panel:
    """The output's log-probability."""
    if scene.chat:
        label = _("Log-probability of the answer")
    elif scene.decoder_only:
        label = _("Log-probability of the continuation")
    else:
        label = _("Log-probability of the output")
    return Panel(scene.key("log-prob"), text=label, metric=f"{_translation(scene).log_prob:.2f}")


def panels(scene: Scene) -> list[Panel]:
    """The page as drawn on a first run, the player at rest (the whole output) and the controls' boxes left out:
    Sentence for an encoder-only model (compared with the `compare=` sentence), else the output and how it was
    made."""
    if scene.encoder_only:
        other_text = scene.value(COMPARE.key, COMPARE.default)
        other = scene.bundle.encode_batch([other_text], scene.controls.interventions())[0]
        return sentence(scene) + similarity(scene, other)
    n_steps = len(_translation(scene).steps)
    steps = Panel(scene.key("steps"), figure=candidates(scene, n_steps - 1), caption=steps_caption(scene, False))
    above = decoder_only_note(scene) + prefix_note(scene, typed_prefix(scene.bundle))
    return [
        *above,
        output(scene, n_steps),
        steps,
        *draw_panels(scene, min(scene.controls.step, n_steps - 1)),
        *reference(scene),
        *read(scene),
        pieces_heading(scene),
        *pieces(scene),
        steps_table(scene),
        *beams(scene),
        log_prob(scene),
    ]

"""Translate: the translation, the pieces with their ids, every step's candidates, the beams.
For a decoder-only model (Continue): the same for its continuation of a prompt.
For an encoder-only model: the sentence, its pieces, its embedding and its similarity to another."""

import streamlit as st

from i18n import N_, _, later, listing, n_, sentences
from model import cosine
from model.results import Written
from ui.page import player
from ui.page.binding import bind, page_value
from ui.page.markup import big_text, table_height
from ui.page.notices import vocabulary
from ui.page.start import Page, start
from ui.page.stream import Preview
from ui.session.figures import shared
from views.controls import MAX_PREFIX, SUGGESTED_PREFIX, Field, typed_prefix
from views.markdown import md
from viz.embedding import embedding_strips
from viz.labels import marker_note, visible_breaks
from viz.translate import beams_frame, pieces_frame, step_candidates, steps_frame


def _second_sentence(text: str) -> str:
    if not text.strip() or len(text) > 2000:
        raise ValueError(later("expected a sentence of at most 2000 characters"))
    return text


def grammar_reference(source: str) -> tuple[str | None, str]:
    """The corpus grammar's French for a sentence, or None and why it cannot read it."""
    try:
        from model.training.corpus import translate

        return translate(source), ""
    except ImportError:
        return None, _("the corpus grammar is not installed")
    except ValueError as exc:
        return None, str(exc)


def sentence_page(page: Page) -> None:
    """What an encoder-only model does with a sentence: pieces, ids, and one vector for the whole."""
    result, trace = page.result, page.result.trace
    st.info(
        _(
            "{name} is an encoder-only model ({family}): it reads a sentence and gives one vector per piece, which "
            "the other pages open up, but it has no decoder and does not translate. Averaged over the pieces, those "
            "vectors make one sentence embedding; sentences that mean similar things get embeddings pointing the "
            "same way.",
            name=page.bundle.name,
            family=page.bundle.family,
        )
    )
    st.caption(_("The model read:"))
    big_text(result.source, 1.6)
    st.subheader(_("Pieces"))
    st.caption(
        _(
            "The tokenizer splits the text into word pieces (## marks a piece that continues a word) between "
            "[CLS] and [SEP]; the encoder reads their ids."
        )
    )
    st.dataframe(
        pieces_frame(trace.src_pieces, list(trace.src_ids)), hide_index=True, height=table_height(len(trace.src_ids))
    )
    st.subheader(_("Sentence embedding and similarity"))
    page_value(Field("compare", "A little girl is looking at a bird.", _second_sentence))
    other_text = bind("compare", st.text_input, label=_("A second sentence to compare with"), max_chars=2000)
    other = page.encode(other_text)
    for warning in other.warnings:
        st.warning(md(warning))
    similarity = cosine(result.embedding, other.embedding)
    st.metric(_("Cosine similarity of the two sentence embeddings"), f"{similarity:.3f}")
    page.show(
        shared(
            embedding_strips,
            [result.embedding, other.embedding],
            [result.source, other.source],
            page.style,
            _("Sentence embeddings ({n} dimensions)", n=result.embedding.shape[0]),
        ),
        _embeddings_caption(page.bundle.pooling == "cls"),
        key="embeddings",
    )
    page.finish(globals())


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


def task_prefix(page: Page) -> None:
    """What a T5 reads before the sentence: the checkpoint's own task prefix, or one the person types."""
    if typed_prefix(page.bundle):
        bind(
            "prefix",
            st.text_input,
            label=_("Task prefix, put before the sentence"),
            max_chars=MAX_PREFIX,
            placeholder=SUGGESTED_PREFIX,
            help=_("For example “{prefix}”. Clear it to give the model the sentence alone.", prefix=SUGGESTED_PREFIX),
        )
        st.caption(
            _(
                "{name} is a T5 checkpoint with no task prefix of its own: T5 models are told what to do in words "
                "before their input, and this one does not say which words. The page puts what you type here before "
                "the sentence (every page reads the two together), and the model reads both: the prefix is in the "
                "source pieces below.",
                name=md(page.bundle.name),
            )
        )
    elif page.bundle.task_prefix:
        st.info(
            _(
                "{name} has its own task prefix, “{prefix}”: the model reads it before the sentence, so it is in the "
                "source pieces below.",
                name=page.bundle.name,
                prefix=page.bundle.task_prefix,
            )
        )


def growing(page: Page, written: list[Written]) -> None:
    """The Continue page while its continuation is written: the text so far and every step's candidates."""
    said = {"k": len(written), "limit": written[-1].limit}
    if page.output_noun == "answer":
        st.caption(_("Answer so far: {k} of at most {limit} pieces, each step's five most likely pieces below", **said))
    elif page.output_noun == "continuation":
        st.caption(
            _("Continuation so far: {k} of at most {limit} pieces, each step's five most likely pieces below", **said)
        )
    else:
        st.caption(
            _("Translation so far: {k} of at most {limit} pieces, each step's five most likely pieces below", **said)
        )
    big_text(written[-1].text + " …")
    st.dataframe(steps_frame([w.step for w in written]), hide_index=True)


page = start(
    N_("Translate"), encoder_title=N_("Sentence"), decoder_title=N_("Continue"), preview=Preview(pieces=growing)
)
if page.encoder_only:
    sentence_page(page)
    st.stop()
result, trace, ctl = page.result, page.result.trace, page.controls
continues, chat = page.decoder_only, page.chat  # chat: the result is the answer to the wrapped chat message
if continues:
    with page.notes:
        decoder_only = _(
            "{name} is a decoder-only model ({family}): it has no encoder and no cross-attention, and it does not "
            "translate. It reads the prompt and continues it, one new piece per step; each step reads the prompt and "
            "every piece made so far through its masked self-attention.",
            name=page.bundle.name,
            family=page.bundle.family,
        )
        chat_note = _(
            "Here the prompt is your text as a user's chat message, wrapped by the checkpoint's chat template, and "
            "the continuation is the assistant's answer: the model ends it with its end-of-turn piece."
        )
        st.info(sentences(decoder_only, chat_note if chat else ""))
else:
    task_prefix(page)

n_steps = len(result.steps)
if continues:
    label = _("Answer") if chat else _("Continuation")
else:
    label = _("French translation") if page.bundle.capabilities.trained_here else _("Translation")
if ctl.beam_size > 1:
    label = _("{output} (beam search, {k} beams)", output=label, k=ctl.beam_size)
else:
    label = _("{output} (greedy)", output=label)
player.DECODING.controls(n_steps, "translate", whole_at_rest=True)


def decoding(step: int) -> None:
    """The output and every step's candidates; while the player runs, up to step t only."""
    shown = step + 1 if player.DECODING.engaged() else n_steps
    if shown < n_steps:
        st.caption(_("{label}, step t = {t} of {n}", label=label, t=shown, n=n_steps))
        big_text(page.bundle.tokenizer.decode(result.output_ids[:shown]) + " …")
    else:
        st.caption(label)
        big_text(result.translation or _("(empty output)"))

    def candidates(last: int):  # the steps up to `last` (from 0), the last outlined until the output is whole
        return shared(
            step_candidates, result.steps[: last + 1], page.style, highlight_row=last if last + 1 < n_steps else None
        )

    player.DECODING.steady_chart(
        page,
        "steps",
        candidates,
        shown - 1,
        caption=_steps_caption(shown < n_steps),
    )


def _steps_caption(growing: bool) -> str:
    """What the candidates' grid shows: one step a row, the kept piece ticked, the step being produced outlined."""
    rows = (
        _(
            "Each row is one decoding step: the five pieces the model found most likely to come next, coloured by "
            "probability; ✔ marks the piece that was kept."
        )
        if continues
        else _(
            "Each row is one decoding step: the five pieces the model found most likely, coloured by probability; ✔ "
            "marks the piece that was kept."
        )
    )
    beams = _(
        "Beam search keeps the pieces of the best whole output, so a kept piece can rank below the first, or below "
        "the five shown (then no ✔ appears in its row; its probability is in the table)."
    )
    outlined = _("The outlined row is the step being produced.")
    return sentences(rows, beams if ctl.beam_size > 1 else "", outlined if growing else "")


player.DECODING.run(decoding, n_steps, page)
if page.bundle.capabilities.trained_here:  # this project's models learn the corpus grammar's language
    reference, reason = grammar_reference(result.source)
    if reference is None:
        st.warning(
            _(
                "This sentence is outside the language the model was trained on: the corpus grammar cannot read it "
                "({reason}). The model still answers, but its output is a guess.",
                reason=md(reason),
            )
        )
    else:
        match = reference == result.translation
        verdict = _("✔ The model's output matches it.") if match else _("✘ The model's output differs from it.")
        said = _("**Reference** (the corpus grammar's translation): {reference}", reference=md(reference))
        st.markdown("  \n".join((said, verdict)))
if chat:  # the wrapped text as the model reads it: its special pieces, and a ↵ at each line break
    st.caption(
        n_(
            "The model read (your message wrapped by the chat template, {n} piece; ↵ marks a line break, which the "
            "model reads as a piece of its own):",
            "The model read (your message wrapped by the chat template, {n} pieces; ↵ marks a line break, which the "
            "model reads as a piece of its own):",
            len(result.prompt_ids),
        )
    )
    st.code(visible_breaks(result.source), language=None)
else:
    st.caption(_("The model read (its prompt):") if continues else _("The model read:"))
    st.text(result.source)

if result.unknown_words:
    words = listing(f"**{md(w)}**" for w in result.unknown_words)
    st.markdown(_("Flagged, never seen in training: {words}", words=words))
if page.bundle.capabilities.trained_here:  # the corpus lexicon is this project's own models' vocabulary
    with st.expander(_("What vocabulary does the model know?")):
        vocabulary(page.bundle)

st.subheader(_("Pieces"))
out_ids = list(result.output_ids)
if continues:
    prompt_ids = list(result.prompt_ids)
    prompt_pieces = page.bundle.tokenizer.pieces(prompt_ids)
    st.caption(
        sentences(
            _("The tokenizer splits text into pieces."),
            marker_note(prompt_pieces),
            _(
                "The model reads the prompt's pieces in one pass, then makes the new pieces one per step, each step "
                "reading every piece before it."
            ),
            _("The chat template's special pieces (the turn markers) are pieces of their own, one id each.")
            if chat
            else "",
        )
    )
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Wrapped prompt pieces** (read first)") if chat else _("**Prompt pieces** (read first)"))
        st.dataframe(pieces_frame(prompt_pieces, prompt_ids), hide_index=True, height=table_height(len(prompt_ids)))
    with right:
        st.markdown(
            _("**Answer pieces** (one per decoding step)") if chat else _("**New pieces** (one per decoding step)")
        )
        st.dataframe(
            pieces_frame(page.bundle.tokenizer.pieces(out_ids), out_ids),
            hide_index=True,
            height=table_height(len(out_ids)),
        )
else:
    st.caption(
        _(
            "SentencePiece splits text into pieces; ▁ marks the start of a word. The encoder reads the source "
            "pieces; the decoder produced the output pieces one per step."
        )
    )
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Source pieces** (encoder input)"))
        st.dataframe(
            pieces_frame(trace.src_pieces, list(trace.src_ids)),
            hide_index=True,
            height=table_height(len(trace.src_ids)),
        )
    with right:
        st.markdown(_("**Output pieces** (one per decoding step)"))
        st.dataframe(pieces_frame(trace.out_pieces, out_ids), hide_index=True, height=table_height(len(out_ids)))

with st.expander(_("Every step's candidates as a table")):
    chosen = _("p(chosen)")  # the column steps_frame names so
    st.dataframe(
        steps_frame(result.steps),
        hide_index=True,
        column_config={chosen: st.column_config.ProgressColumn(chosen, min_value=0.0, max_value=1.0, format="%.3f")},
    )

if ctl.beam_size > 1:
    st.subheader(_("Final beams"))
    st.caption(
        _(
            "Beams are ranked by score = log-probability / length^penalty, so longer outputs are not "
            "punished for every extra piece."
        )
    )
    output = _("answer") if chat else _("continuation") if continues else _("translation")
    st.dataframe(beams_frame(result.beams, output), hide_index=True)
if chat:
    st.metric(_("Log-probability of the answer"), f"{result.log_prob:.2f}")
elif continues:
    st.metric(_("Log-probability of the continuation"), f"{result.log_prob:.2f}")
else:
    st.metric(_("Log-probability of the output"), f"{result.log_prob:.2f}")
page.finish(globals())

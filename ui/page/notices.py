"""What a page shows under its title besides the switch banner: the text box again for phones, the note
that the text is read as a chat message, and for a sentence outside the shipped model's language the
sentences it reads and its vocabulary."""

from __future__ import annotations

from typing import Any

import streamlit as st

from i18n import N_, _, number, sentences
from model import Bundle, EncodeResult, TranslationResult
from ui.page.binding import bind, set_sentence
from ui.page.sidebar import CHAT_HELP, CHAT_LABEL
from views.controls import chat_offered
from views.markdown import md
from viz.labels import on_one_line


class Notes:
    """Where a run's notes go (`with notes:`): in place, or on a projector folded into one "Notes on this run"
    line, made at the first note so that a run without notes shows none."""

    def __init__(self, folded: bool) -> None:
        self.slot: Any = st.empty() if folded else None
        self.box: Any = None if folded else st.container()

    def __enter__(self) -> None:
        if self.box is None:
            self.box = self.slot.container().expander(_("Notes on this run"), icon=":material/info:")
        self.box.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.box.__exit__(*exc)


def top_sentence(bundle: Bundle) -> None:
    """The sentence box again at the top of the page, shown on phones only (APP_CSS), where the sidebar
    that holds it is hidden behind an icon."""
    decoder_only = bundle.capabilities.decoder_only
    with st.container(key="top-sentence"):
        bind(
            "sentence",
            st.text_input,
            widget="top_sentence",
            label=_("Text to continue, on a phone") if decoder_only else _("English sentence, on a phone"),
            label_visibility="collapsed",
            placeholder=_("Text to continue") if decoder_only else _("English sentence"),
            max_chars=2000,
        )
        if chat_offered(bundle):
            bind("chat", st.checkbox, widget="top_chat", label=_(CHAT_LABEL), help=_(CHAT_HELP))


def chat_note(bundle: Bundle, result: TranslationResult | EncodeResult | None = None) -> None:
    """Under the title of every page, while the text is a chat message: what the model reads and explains, and
    the answer when the page has it (`result`)."""
    answer = (  # on one line: a line break inside the bold would leave its ** as they are
        _("Its answer: **{answer}**", answer=md(on_one_line(result.translation)) or _("(empty)"))
        if isinstance(result, TranslationResult)
        else ""
    )
    said = _(
        "**{label}:** your text is a user's message, wrapped by {model}'s chat template (its special pieces and line "
        "breaks included), and the model writes the assistant's answer: every page reads the wrapped text and "
        "explains the answer.",
        label=_(CHAT_LABEL),
        model=md(bundle.name),
    )
    st.caption(
        sentences(said, answer),
        help=sentences(
            _(CHAT_HELP), _("Untick “{label}” in the sidebar to continue the bare text.", label=_(CHAT_LABEL))
        ),
    )


def offer_sentences(bundle: Bundle, sentence: str, unknown: list[str]) -> None:
    """For a sentence outside this project's model's language: sentences it reads well, one click away, and
    its vocabulary."""
    try:
        from model.training.corpus.suggestions import reads, similar_sentences
    except ImportError:
        return
    if not unknown and reads(sentence):
        return
    offers = similar_sentences(sentence, bundle.known_words)
    with st.container(horizontal=True, vertical_alignment="center", key="offers"):
        st.markdown(_("**Try one it reads:**"))
        for index, offer in enumerate(offers):
            st.button(offer, key=f"offer-{index}", on_click=set_sentence, args=(offer,))
        vocabulary_in(
            st.popover(_("Its vocabulary"), icon=":material/menu_book:", key=VOCABULARY_KEYS[0], on_change="rerun"),
            bundle,
        )


# The corpus lexicon's categories (model.training.corpus.lexicon_by_category's keys), said where they are shown
CATEGORIES = {
    "nouns": N_("Nouns"),
    "verbs": N_("Verbs"),
    "adjectives": N_("Adjectives"),
    "pronouns": N_("Pronouns"),
    "determiners": N_("Determiners"),
    "numbers": N_("Numbers"),
    "prepositions": N_("Prepositions"),
    "adverbs": N_("Adverbs"),
    "conjunctions": N_("Conjunctions"),
}


# The keys of the closed boxes that hold the vocabulary: the offers' popover, the Translate page's expander
VOCABULARY_KEYS = ("vocabulary-offered", "vocabulary-known")


def vocabulary_in(box: Any, bundle: Bundle) -> None:
    """The vocabulary, in a popover or expander made with a key and on_change="rerun": written only while it is
    open. Its tables are most of a Translate run's own work otherwise (12% of the server's time at 20 sessions,
    bench/bench_load.py), for a box that is almost always closed; opening it reruns the page, which then fills it."""
    if box.open:
        with box:
            vocabulary(bundle)


def vocabulary(bundle: Bundle) -> None:
    """The words this project's model knows: the corpus lexicon by category, and the words of its training."""
    try:
        from model.training.corpus import lexicon_by_category

        categories = lexicon_by_category()
    except ImportError:
        categories = {}
    if categories:
        st.write(_("The corpus the model was trained on uses these English words (with their French):"))
        cols = st.columns(3)
        for index, (category, pairs) in enumerate(categories.items()):
            with cols[index % 3]:
                name = CATEGORIES.get(category)
                shown = _(name) if name else category.capitalize()
                st.markdown(_("**{category}** ({n})", category=shown, n=number(len(pairs))))
                st.dataframe(
                    {_("English"): [en for en, _fr in pairs], _("French"): [fr for _en, fr in pairs]},
                    hide_index=True,
                    height=200,
                )
    known = sorted(bundle.known_words)
    if known:
        st.write(_("Words seen in the training sentences ({n}):", n=number(len(known))))
        st.text(", ".join(known))
    elif not categories:
        st.write(_("This checkpoint does not list its vocabulary."))


def hidden_until_the_reveal(key: str) -> None:
    """In place of a picture that answers the room's open question (ui.room.presenter.asking): a line that says why
    it is not there."""
    with st.container(key=f"hidden-{key}"):
        st.info(
            _("Hidden until the reveal: this picture answers the question the room is voting on."),
            icon=":material/visibility_off:",
        )

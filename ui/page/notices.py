"""What a page shows under its title besides the switch banner: the text box again for phones, the note
that the text is read as a chat message, and for a sentence outside the shipped model's language the
sentences it reads and its vocabulary."""

from __future__ import annotations

from typing import Any

import streamlit as st

from model import Bundle, EncodeResult, TranslationResult
from ui.page.binding import bind, set_sentence
from ui.page.markup import md
from ui.page.sidebar import CHAT_HELP, CHAT_LABEL, chat_offered
from viz.labels import on_one_line


class Notes:
    """Where a run's notes go (`with notes:`): in place, or on a projector folded into one "Notes on this run"
    line, made at the first note so that a run without notes shows none."""

    def __init__(self, folded: bool) -> None:
        self.slot: Any = st.empty() if folded else None
        self.box: Any = None if folded else st.container()

    def __enter__(self) -> None:
        if self.box is None:
            self.box = self.slot.container().expander("Notes on this run", icon=":material/info:")
        self.box.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.box.__exit__(*exc)


def top_sentence(bundle: Bundle) -> None:
    """The sentence box again at the top of the page, shown on phones only (APP_CSS), where the sidebar
    that holds it is hidden behind an icon."""
    with st.container(key="top-sentence"):
        bind(
            "sentence",
            st.text_input,
            widget="top_sentence",
            label=("Text to continue" if bundle.capabilities.decoder_only else "English sentence") + ", on a phone",
            label_visibility="collapsed",
            placeholder="Text to continue" if bundle.capabilities.decoder_only else "English sentence",
            max_chars=2000,
        )
        if chat_offered(bundle):
            bind("chat", st.checkbox, widget="top_chat", label=CHAT_LABEL, help=CHAT_HELP)


def chat_note(bundle: Bundle, result: TranslationResult | EncodeResult | None = None) -> None:
    """Under the title of every page, while the text is a chat message: what the model reads and explains, and
    the answer when the page has it (`result`)."""
    answer = (  # on one line: a line break inside the bold would leave its ** as they are
        f" Its answer: **{md(on_one_line(result.translation)) or '(empty)'}**"
        if isinstance(result, TranslationResult)
        else ""
    )
    st.caption(
        f"**{CHAT_LABEL}:** your text is a user's message, wrapped by {md(bundle.name)}'s chat template (its "
        "special pieces and line breaks included), and the model writes the assistant's answer: every page reads "
        f"the wrapped text and explains the answer.{answer}",
        help=CHAT_HELP + f" Untick “{CHAT_LABEL}” in the sidebar to continue the bare text.",
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
        st.markdown("**Try one it reads:**")
        for index, offer in enumerate(offers):
            st.button(offer, key=f"offer-{index}", on_click=set_sentence, args=(offer,))
        with st.popover("Its vocabulary", icon=":material/menu_book:"):
            vocabulary(bundle)


def vocabulary(bundle: Bundle) -> None:
    """The words this project's model knows: the corpus lexicon by category, and the words of its training."""
    try:
        from model.training.corpus import lexicon_by_category

        categories = lexicon_by_category()
    except ImportError:
        categories = {}
    if categories:
        st.write("The corpus the model was trained on uses these English words (with their French):")
        cols = st.columns(3)
        for index, (category, pairs) in enumerate(categories.items()):
            with cols[index % 3]:
                st.markdown(f"**{category.capitalize()}** ({len(pairs)})")
                st.dataframe(
                    {"English": [en for en, _ in pairs], "French": [fr for _, fr in pairs]},
                    hide_index=True,
                    height=200,
                )
    known = sorted(bundle.known_words)
    if known:
        st.write(f"Words seen in the training sentences ({len(known)}):")
        st.text(", ".join(known))
    elif not categories:
        st.write("This checkpoint does not list its vocabulary.")

"""The shared sidebar: the model picker, the text (or chat message) to read, decoding, layer and head,
the switches (ui/page/switches.py), the display settings and the room's switch; and the controls they set,
read for the page's run."""

from __future__ import annotations

import random

import streamlit as st

from i18n import LANGUAGES, N_, _, from_locale, later, n_, sentences, set_language
from model import Bundle, CheckpointError
from model.checkpoints.catalog import DEFAULT
from model.engine.draws import MOST_SEED, MOST_TOP_K, TEMPERATURES
from ui.page.binding import NOTES, RAW, bind, not_applicable, register, set_sentence, set_value, stored_values
from ui.page.markup import CLOSE_SIDEBAR_JS
from ui.page.switches import NO_DECODER, switch_controls
from ui.room import presenter
from ui.session import engine
from views.controls import (
    CHAT,
    DECODINGS,
    LANGUAGE,
    MOST_NEW_PIECES,
    NEW_KEY,
    PREFIX,
    Controls,
    Limits,
    all_heads,
    chat_offered,
    examples_for,
    new_pieces_field,
    reads_chat,
    shared_fields,
    switched_text,
    typed_prefix,
)
from views.fields import Field
from views.markdown import md
from views.models import menu_models

LEAST_TOP_P = 0.001  # the top-p box's least value (the address may ask for less, above 0)
MOST_SEED_DRAWN = 1_000_000  # "Sample again" draws seeds short enough to read and say


def _random_sentence(chat: bool = False) -> str:
    """A sentence of the corpus the shipped model was trained on; a chat model's: one of its example questions."""
    if chat:
        return random.choice(examples_for(True))
    try:
        from model.training.corpus import random_sentence
    except ImportError:
        return random.choice(examples_for(False))
    return random_sentence(random.randrange(1_000_000_000))


def _pick_example() -> None:
    choice = st.session_state.get("w_example")
    if choice:
        stored_values()["sentence"] = choice
    st.session_state["w_example"] = None


FIRST_PAGE = "pages/1_translate.py"


def first_page_titles(bundle: Bundle | None) -> dict[str, str] | None:
    """The first page's menu title for a model that does not translate (None: the menu's own titles), in English:
    ui.session.nav.menu says it in the run's language."""
    if bundle is None:
        return None
    if bundle.capabilities.encoder_only:
        return {FIRST_PAGE: N_("Sentence")}
    return {FIRST_PAGE: N_("Continue")} if bundle.capabilities.decoder_only else None


# The chat control's label and help, said with _() where they are shown (here and ui/page/notices.py)
CHAT_LABEL = N_("As a chat message")


CHAT_HELP = N_(
    "This instruct checkpoint has a chat template: your text becomes a user's message, wrapped as the model was "
    "tuned to read it, and the model writes the assistant's answer. Every page reads the wrapped text and explains "
    "the answer; off, the model continues the bare text."
)


def _model_field(names: dict[str, str]) -> Field:
    def parse(text: str) -> str:
        if text not in names:
            raise ValueError(
                later("no model named {name} here; known: {known}", name=repr(text), known=", ".join(names))
            )
        return text

    return Field("model", DEFAULT, parse)


def choose_language() -> None:
    """The interface's language, at the top of the sidebar (each named in its own words), spoken from here on in
    this run: every word the page draws after it is in that language. A first visit without lang= in the URL
    speaks the browser's language."""
    st.session_state[RAW].setdefault(LANGUAGE.key, from_locale(st.context.locale))
    st.session_state[NOTES].extend(register([LANGUAGE]))
    with st.sidebar:
        bind(
            LANGUAGE.key,
            st.radio,
            label="Language · 语言",
            options=list(LANGUAGES),
            format_func=LANGUAGES.__getitem__,
            horizontal=True,
            label_visibility="collapsed",
        )
    set_language(stored_values()[LANGUAGE.key])


def choose_model() -> Bundle | None:
    """The language switch and the model picker, first in the sidebar; the chosen model, or None after showing
    why it failed (in the language chosen)."""
    choose_language()
    names = menu_models()
    st.session_state[NOTES].extend(register([_model_field(names)]))
    if stored_values()["model"] not in names:  # a folder that went away since this session chose it
        stored_values()["model"] = DEFAULT
    with st.sidebar:
        st.markdown(_("### Model"))
        name = bind(
            "model",
            st.selectbox,
            label=_("Model"),
            options=list(names),
            label_visibility="collapsed",
            help=_(
                "The shipped English->French model, the packaged all-MiniLM-L6-v2 encoder when installed, "
                "and every checkpoint folder under models/ or in $ANATOMY_MODELS."
            ),
        )
    try:
        return engine.get_bundle(engine.model_path(name))
    except CheckpointError as exc:
        st.error(md(str(exc)))
        return None


TEXT_KIND = "_anatomy_reads_chat"  # whether the model of the session's last run read a chat message


def fit_to_model(limits: Limits, chat: bool = False) -> None:
    """Bring stored layer, head and knocked-out heads inside the model (after a model change), and, after a change
    between a model that reads a chat message (`chat`) and one that does not, the other kind's first example, left
    as it was, to this kind's (a text given in the URL or typed, even that example, stays on a first run)."""
    values = stored_values()
    if st.session_state.get(TEXT_KIND, chat) != chat:
        values["sentence"] = switched_text(values["sentence"], chat)
    st.session_state[TEXT_KIND] = chat
    values["layer"] = min(values["layer"], limits.n_layers)
    values["head"] = min(values["head"], limits.n_heads)
    valid = set(all_heads(limits))
    values["ablate"] = tuple(h for h in values["ablate"] if h in valid)


def sidebar(limits: Limits, bundle: Bundle, prefix: str | None) -> None:
    """The shared controls, in the sidebar of every page."""
    with st.sidebar:
        _text_controls(bundle, prefix)
        _decoding_controls(bundle)
        _layer_and_head(limits)
        switch_controls(bundle, limits)
        _display_controls(bundle, limits)
        st.iframe(CLOSE_SIDEBAR_JS, height=1)


def _text_controls(bundle: Bundle, prefix: str | None) -> None:
    """The text to read (a sentence, a prompt, a chat message), its task prefix, examples and a random one."""
    decoder_only = bundle.capabilities.decoder_only
    if decoder_only:
        st.markdown(_("### Prompt"))
        bind(
            "sentence",
            st.text_input,
            label=_("Text to continue"),
            max_chars=2000,
            help=_("Type the beginning of a text and press Enter: the model continues it."),
        )
        if chat_offered(bundle):
            bind("chat", st.checkbox, label=_(CHAT_LABEL), help=_(CHAT_HELP))
    else:
        st.markdown(_("### Sentence"))
        bind(
            "sentence",
            st.text_input,
            label=_("English sentence"),
            max_chars=2000,
            help=_("Type any English sentence and press Enter. Case and final punctuation do not matter."),
        )
    if prefix is not None:
        st.caption(
            _("Read after the task prefix “{prefix}”", prefix=md(prefix))
            if prefix
            else _("Read without a task prefix"),
            help=_("This T5 checkpoint has no task prefix of its own; set one on the Translate page."),
        )
    chat = chat_offered(bundle)
    st.selectbox(
        _("Examples"),
        examples_for(chat),
        index=None,
        key="w_example",
        on_change=_pick_example,
        placeholder=_("Pick an example question") if chat else _("Pick an example sentence"),
    )
    st.button(
        _("Random question") if chat else _("Random sentence"),
        icon=":material/casino:",
        on_click=lambda: set_sentence(_random_sentence(chat)),
        help=_("Ask one of the example questions.")
        if chat
        else _("Draw a sentence from the corpus generator the default model was trained on."),
    )


def _decoding_controls(bundle: Bundle) -> None:
    """Greedy or beam search, and the beam's size."""
    encoder_only = bundle.capabilities.encoder_only
    st.markdown(_("### Decoding"))
    if encoder_only:
        not_applicable(
            N_("Decoding"),
            sentences(_(NO_DECODER), _("Nothing is decoded, so greedy or beam search does not apply.")),
        )
    else:
        mode = bind(
            "decode",
            st.radio,
            label=_("Decoding"),
            options=list(DECODINGS),
            horizontal=True,
            format_func=lambda m: _(DECODING_NAMES[m]),
            label_visibility="collapsed",
        )
        if mode == "beam":
            bind("beam", st.slider, label=_("Beam size"), min_value=2, max_value=16)
        _sampling_controls(drawn=mode == "sample")
        if bundle.capabilities.decoder_only:
            bind(
                NEW_KEY,
                st.number_input,
                label=_("New pieces at most"),
                min_value=1,
                max_value=MOST_NEW_PIECES,
                step=10,
                help=_(
                    "How many pieces the model may add before it is stopped; it stops sooner when it writes its "
                    "end piece. A long answer is written piece by piece, every page following it."
                ),
            )


DECODING_NAMES = {"greedy": N_("Greedy"), "beam": N_("Beam search"), "sample": N_("Sample")}


def _sampling_controls(drawn: bool) -> None:
    """Temperature, top-k, top-p and the seed of a sampled answer: greyed out unless the answer is sampled."""
    off = not drawn
    bind(
        "temperature",
        st.slider,
        label=_("Temperature"),
        min_value=TEMPERATURES[0],
        max_value=TEMPERATURES[1],
        step=0.05,
        disabled=off,
        help=_(
            "The scores are divided by the temperature before the softmax: below 1 the likely pieces grow more "
            "likely, above 1 the distribution flattens. Near 0 sampling is greedy decoding."
        ),
    )
    left, right = st.columns(2)
    with left:
        bind(
            "topk",
            st.number_input,
            label=_("Top-k"),
            min_value=0,
            max_value=MOST_TOP_K,
            step=1,
            disabled=off,
            help=_("Only the k most likely pieces may be drawn; 0 keeps them all."),
        )
    with right:
        bind(
            "topp",
            st.number_input,
            to_widget=lambda p: max(p, LEAST_TOP_P),
            label=_("Top-p"),
            min_value=LEAST_TOP_P,
            max_value=1.0,
            step=0.05,
            format="%.3f",
            disabled=off,
            help=_("Only the most likely pieces whose probabilities add up to p may be drawn; 1 keeps them all."),
        )
    bind(
        "seed",
        st.number_input,
        label=_("Seed"),
        min_value=0,
        max_value=MOST_SEED - 1,
        step=1,
        disabled=off,
        help=_("One seed gives one answer, on every run and in every session: the address keeps it."),
    )
    st.button(_("Sample again"), icon=":material/casino:", on_click=_new_seed, disabled=off, key="sample-again")


def _new_seed() -> None:
    """A new seed, written to the address so that a copied link shows the same answer."""
    set_value("seed", random.randrange(MOST_SEED_DRAWN))


def _layer_and_head(limits: Limits) -> None:
    """The layer and the head every page draws."""
    st.markdown(_("### Layer and head"))
    left, right = st.columns(2)
    with left:
        bind(
            "layer",
            st.selectbox,
            label=_("Layer"),
            options=list(range(1, limits.n_layers + 1)),
            format_func=lambda n: f"L{n}",
        )
    with right:
        bind(
            "head",
            st.selectbox,
            label=_("Head"),
            options=list(range(1, limits.n_heads + 1)),
            format_func=lambda n: f"H{n}",
        )


def _display_controls(bundle: Bundle, limits: Limits) -> None:
    """Presentation mode, the charts' download format, and what the loaded model is."""
    encoder_only = bundle.capabilities.encoder_only
    decoder_only = bundle.capabilities.decoder_only
    st.markdown(_("### Display"))
    bind("present", st.toggle, label=_("Presentation mode"), help=_("Large fonts and a high-contrast scale."))
    bind(
        "export",
        st.radio,
        label=_("Chart download format"),
        options=["png", "svg"],
        horizontal=True,
        format_func=lambda f: _("PNG (3x)") if f == "png" else "SVG",
        help=_("What the camera button in each chart's toolbar saves."),
    )
    shape = (
        n_("encoder-only, {n} layer", "encoder-only, {n} layers", limits.n_encoder_layers)
        if encoder_only
        else n_("decoder-only, {n} layer", "decoder-only, {n} layers", limits.n_decoder_layers)
        if decoder_only
        else _("{encoder}+{decoder} layers", encoder=limits.n_encoder_layers, decoder=limits.n_decoder_layers)
    )
    st.caption(
        n_(
            "Model {name} ({family}) · id {id} · {shape} × {n} head",
            "Model {name} ({family}) · id {id} · {shape} × {n} heads",
            limits.n_heads,
            name=md(bundle.name),
            family=md(bundle.family),
            id=bundle.checkpoint_id,
            shape=shape,
        )
    )


def read_controls(bundle: Bundle, limits: Limits) -> tuple[Controls, presenter.Presenting | None]:
    """The shared controls this model has (registered from the URL), drawn in the sidebar, and read; and the
    room this page is shared with, if any."""
    chat = chat_offered(bundle)
    st.session_state[NOTES].extend(register(shared_fields(limits, chat)))
    prefix = None
    if typed_prefix(bundle):
        st.session_state[NOTES].extend(register([PREFIX]))
        prefix = stored_values()[PREFIX.key]
    if chat:  # an instruct checkpoint: its text is a chat message unless turned off
        st.session_state[NOTES].extend(register([CHAT]))
    if bundle.capabilities.decoder_only:
        st.session_state[NOTES].extend(register([new_pieces_field(bundle)]))
    fit_to_model(limits, chat)
    sidebar(limits, bundle, prefix)
    presenting = presenter.begin(st.session_state[NOTES])
    # a blank sentence gets no prefix either: the engine then refuses the empty text with its own message
    controls = Controls.from_values(
        stored_values(),
        prefix=prefix if prefix and stored_values()["sentence"].strip() else "",
        chat=_chat_on(bundle),
        continues=bundle.capabilities.decoder_only,
    )
    return controls, presenting


def _chat_on(bundle: Bundle) -> bool:
    """Whether this run reads the text as a chat message: the stored control, for a model that offers it, when
    its chat template wraps the text (else a note says why the plain prompt is read instead)."""
    chat, why_not = reads_chat(bundle, stored_values())
    if why_not:
        st.session_state[NOTES].append(why_not)
    return chat

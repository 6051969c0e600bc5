"""What every page does first: load the model, show the shared sidebar controls, translate once."""

from __future__ import annotations

import html
import random
import re
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from model import AnatomyError, Bundle, CheckpointError, EncodeResult, InputError, TranslationResult
from model.checkpoints.catalog import DEFAULT
from ui.page.ondemand import without_the_mask
from ui.room import presenter
from ui.session import engine, turns
from ui.session.cache import holds_more_than
from ui.session.nav import menu
from ui.session.urlstate import (
    CHAT,
    EXAMPLES,
    PREFIX,
    PRESENT,
    Controls,
    Field,
    Limits,
    all_heads,
    changed_switches,
    head_label,
    read_fields,
    shared_fields,
    trained_switches,
    write_fields,
)
from viz.export import page_html, toolbar_config
from viz.style import Style

__all__ = [
    "LIVE_FRAGMENT",
    "Page",
    "bind",
    "big_text",
    "chat_offered",
    "md",
    "switches_banner",
    "table_height",
    "vocabulary",
    "not_applicable",
    "page_value",
    "release",
    "set_value",
    "start",
    "stored",
    "two_translations",
]

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>$])")


def md(text: str) -> str:
    """Text made literal inside Streamlit markdown: HTML escaped, markdown punctuation backslashed."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


VALUES, RAW, NOTES, FIELDS = "_anatomy_values", "_anatomy_url", "_anatomy_notes", "_anatomy_fields"
# True while this run leaves a fragment that reruns by itself (a playing player, ui/page/player.py): that
# fragment reads the page's names, so the page keeps them (see Page.finish).
LIVE_FRAGMENT = "_anatomy_live_fragment"

APP_CSS = """<style>
/* the first screen is for the page: less empty header above the title */
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; }
/* a player's arrow-key buttons work through their keyboard shortcuts alone (ui/page/player.py) */
[class*="st-key-arrows-"] { display: none; }
/* the sentence box at the top of the page is for phones, where the sidebar is hidden; so is the model
   view's legend, which replaces the captions written on its tiles there */
[class*="st-key-top-sentence"], .st-key-model-view-legend { display: none; }
@media (max-width: 640px) {
  [class*="st-key-top-sentence"], .st-key-model-view-legend { display: block; }
  .st-key-model-view g.annotation { display: none; }
  /* a figure of panels side by side keeps the width its colour bars need, and scrolls sideways alone */
  .stElementContainer:has(.js-plotly-plot .subplot.x2y2) { overflow-x: auto; }
  .stElementContainer:has(.js-plotly-plot .subplot.x2y2) .stPlotlyChart { min-width: 760px; }
  /* a number written in every cell cannot fit a phone's narrow cells */
  .js-plotly-plot .heatmaplayer text, .js-plotly-plot g.textpoint text { display: none; }
}
</style>"""

PRESENTATION_CSS = """<style>
html { font-size: 20px; }
[data-testid="stCaptionContainer"] { color: #222 !important; }
/* a projector's first screen is for the picture: a small header, the page as wide as the window */
[data-testid="stHeader"] { height: 2.6rem; min-height: 2.6rem; background: transparent; }
[data-testid="stMainBlockContainer"] { padding: 2.7rem 1.2rem 3rem 1.2rem; max-width: 100%; }
h1 { font-size: 1.8rem !important; padding: 0 0 0.3rem 0 !important; }
</style>"""


# On a phone the sidebar covers the page: after Enter in one of its boxes, close it so the result shows.
# The listener is put in the page itself (not in this component's frame, which each run replaces), once.
CLOSE_SIDEBAR_JS = """<script>
const doc = window.parent.document;
if (!doc.getElementById("anatomy-sidebar-closer")) {
  const script = doc.createElement("script");
  script.id = "anatomy-sidebar-closer";
  script.textContent = `document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || window.innerWidth > 640) return;
    if (!event.target.closest || !event.target.closest('[data-testid="stSidebar"] input')) return;
    setTimeout(() => document.querySelector('[data-testid="stSidebarCollapseButton"] button')?.click(), 300);
  }, true);`;
  doc.head.appendChild(script);
}
</script>"""


def _random_sentence() -> str:
    try:
        from model.training.corpus import random_sentence
    except ImportError:
        return random.choice(EXAMPLES)
    return random_sentence(random.randrange(1_000_000_000))


def _values() -> dict[str, Any]:
    return st.session_state[VALUES]


def _register(fields: list[Field]) -> list[str]:
    """Give each field its value from the URL the first time this session sees it; return notes."""
    known: dict[str, Field] = st.session_state.setdefault(FIELDS, {})
    new = [f for f in fields if f.key not in known]
    if not new:
        return []
    values, notes = read_fields(new, st.session_state[RAW])
    _values().update(values)
    known.update({f.key: f for f in new})
    return notes


def _write_url() -> None:
    known: dict[str, Field] = st.session_state[FIELDS]
    wanted = write_fields(list(known.values()), _values())
    for key, value in wanted.items():
        if st.query_params.get(key) != value:
            st.query_params[key] = value


def _copy_from_widget(key: str, from_widget: Callable[[Any], Any], wkey: str) -> None:
    _values()[key] = from_widget(st.session_state[wkey])


def bind(
    key: str,
    render: Callable[..., Any],
    to_widget: Callable[[Any], Any] = lambda v: v,
    from_widget: Callable[[Any], Any] = lambda v: v,
    widget: str | None = None,
    **kwargs: Any,
) -> Any:
    """Render a widget whose value lives in the session store (so every page shares it) and the URL;
    `widget` names a second widget of the same control (its own widget key)."""
    wkey = f"w_{widget or key}"
    # Always seed the widget from the store: a widget on another page (or a page reached
    # through the menu) is a new widget for Streamlit, and its on_change has already copied
    # any change the person made into the store before this run started.
    st.session_state[wkey] = to_widget(_values()[key])
    render(key=wkey, on_change=_copy_from_widget, args=(key, from_widget, wkey), **kwargs)
    _values()[key] = from_widget(st.session_state[wkey])
    _write_url()
    return _values()[key]


def page_value(spec: Field) -> Any:
    """Register a page's own control (restored from the URL) and return its current value."""
    for note in _register([spec]):
        st.warning(md(note))
    return _values()[spec.key]


def stored(key: str) -> Any:
    """The current value of a stored control (it may have changed since this run's Controls were read)."""
    return _values()[key]


def set_value(key: str, value: Any) -> None:
    """Change a stored control (e.g. from a chart click); the widget follows on this run."""
    _values()[key] = value


def _set_sentence(text: str) -> None:
    _values()["sentence"] = text


def _pick_example() -> None:
    choice = st.session_state.get("w_example")
    if choice:
        _values()["sentence"] = choice
    st.session_state["w_example"] = None


NO_DECODER = "This model is encoder-only: it has no decoder."
FIRST_PAGE = "pages/1_translate.py"


def _first_title(bundle: Bundle | None) -> dict[str, str] | None:
    """The first page's menu title for a model that does not translate (None: the menu's own titles)."""
    if bundle is None:
        return None
    if bundle.capabilities.encoder_only:
        return {FIRST_PAGE: "Sentence"}
    return {FIRST_PAGE: "Continue"} if bundle.capabilities.decoder_only else None


def typed_prefix(bundle: Bundle) -> bool:
    """True for a model told its task in words whose checkpoint names none (flan-t5): the person types
    the prefix, which the pages put before the sentence."""
    return bundle.capabilities.task_prefix and bundle.capabilities.translates and not bundle.task_prefix


def chat_offered(bundle: Bundle) -> bool:
    """True for a decoder-only model with a chat template (an instruct checkpoint): its text can be read as a
    user's chat message, the shared control `chat` (on unless turned off)."""
    return bundle.capabilities.decoder_only and bundle.chat is not None


CHAT_LABEL = "As a chat message"
CHAT_HELP = (
    "This instruct checkpoint has a chat template: your text becomes a user's message, wrapped as the model was "
    "tuned to read it, and the model writes the assistant's answer. Every page reads the wrapped text and explains "
    "the answer; off, the model continues the bare text."
)


def not_applicable(label: str, reason: str) -> None:
    """A control that does not apply to the loaded model: shown greyed out, with the reason."""
    st.toggle(label, value=False, disabled=True, help=reason, key=f"na_{label}")
    st.caption(md(reason))


def _model_field(names: dict[str, str]) -> Field:
    def parse(text: str) -> str:
        if text not in names:
            raise ValueError(f"no model named {text!r} here; known: {', '.join(names)}")
        return text

    return Field("model", DEFAULT, parse)


def _choose_model() -> Bundle | None:
    """The model picker, first in the sidebar; the chosen model, or None after showing why it failed."""
    names = engine.models()
    st.session_state[NOTES].extend(_register([_model_field(names)]))
    if _values()["model"] not in names:  # a folder that went away since this session chose it
        _values()["model"] = DEFAULT
    with st.sidebar:
        st.markdown("### Model")
        name = bind(
            "model",
            st.selectbox,
            label="Model",
            options=list(names),
            label_visibility="collapsed",
            help="The shipped English->French model, the packaged all-MiniLM-L6-v2 encoder when installed, "
            "and every checkpoint folder under models/ or in $ANATOMY_MODELS.",
        )
    try:
        return engine.get_bundle(engine.model_path(name))
    except CheckpointError as exc:
        st.error(md(str(exc)))
        return None


def _fit(limits: Limits) -> None:
    """Bring stored layer, head and knocked-out heads inside the model (after a model change)."""
    values = _values()
    values["layer"] = min(values["layer"], limits.n_layers)
    values["head"] = min(values["head"], limits.n_heads)
    valid = set(all_heads(limits))
    values["ablate"] = tuple(h for h in values["ablate"] if h in valid)


def _sidebar(limits: Limits, bundle: Bundle, prefix: str | None) -> None:
    encoder_only = bundle.capabilities.encoder_only
    decoder_only = bundle.capabilities.decoder_only
    heads = all_heads(limits)
    by_label = {head_label(h): h for h in heads}
    cfg = bundle.config
    with st.sidebar:
        if decoder_only:
            st.markdown("### Prompt")
            bind(
                "sentence",
                st.text_input,
                label="Text to continue",
                max_chars=2000,
                help="Type the beginning of a text and press Enter: the model continues it.",
            )
            if chat_offered(bundle):
                bind("chat", st.checkbox, label=CHAT_LABEL, help=CHAT_HELP)
        else:
            st.markdown("### Sentence")
            bind(
                "sentence",
                st.text_input,
                label="English sentence",
                max_chars=2000,
                help="Type any English sentence and press Enter. Case and final punctuation do not matter.",
            )
        if prefix is not None:
            st.caption(
                f"Read after the task prefix “{md(prefix)}”" if prefix else "Read without a task prefix",
                help="This T5 checkpoint has no task prefix of its own; set one on the Translate page.",
            )
        st.selectbox(
            "Examples",
            EXAMPLES,
            index=None,
            key="w_example",
            on_change=_pick_example,
            placeholder="Pick an example sentence",
        )
        st.button(
            "Random sentence",
            icon=":material/casino:",
            on_click=lambda: _set_sentence(_random_sentence()),
            help="Draw a sentence from the corpus generator the default model was trained on.",
        )
        st.markdown("### Decoding")
        if encoder_only:
            not_applicable("Decoding", f"{NO_DECODER} Nothing is decoded, so greedy or beam search does not apply.")
        else:
            mode = bind(
                "decode",
                st.radio,
                label="Decoding",
                options=["greedy", "beam"],
                horizontal=True,
                format_func=lambda m: "Greedy" if m == "greedy" else "Beam search",
                label_visibility="collapsed",
            )
            if mode == "beam":
                bind("beam", st.slider, label="Beam size", min_value=2, max_value=16)
        st.markdown("### Layer and head")
        left, right = st.columns(2)
        with left:
            bind(
                "layer",
                st.selectbox,
                label="Layer",
                options=list(range(1, limits.n_layers + 1)),
                format_func=lambda n: f"L{n}",
            )
        with right:
            bind(
                "head",
                st.selectbox,
                label="Head",
                options=list(range(1, limits.n_heads + 1)),
                format_func=lambda n: f"H{n}",
            )
        st.markdown("### Switches")
        applies = _applies(bundle)
        if not applies("causal"):
            not_applicable(
                "Causal mask",
                f"{NO_DECODER} Its encoder reads every piece at once, so there is no causal mask to switch.",
            )
        else:
            bind(
                "causal", st.toggle, label="Causal mask", help="Decoder self-attention may not look at later positions."
            )
        if decoder_only:
            bind(
                "padding",
                st.toggle,
                label="Padding mask",
                help="No query looks at padding positions. A decoder-only model has no source sentence to pad, "
                "and one prompt has no padding at all: padding appears only when prompts share a batch "
                "(the Masks and heads lab), after each text, where the causal mask already hides it.",
            )
            st.caption("No source sentence to pad: it acts only on a batch of prompts (Masks and heads lab).")
        else:
            bind("padding", st.toggle, label="Padding mask", help="No query looks at <pad> positions.")
        bind("pe", st.toggle, label="Positional encoding", help=_positional_help(cfg.positional))
        if cfg.positional in _POSITIONAL_NOTES:
            st.caption(_POSITIONAL_NOTES[cfg.positional])
        if applies("scale"):
            bind(
                "scale",
                st.toggle,
                label="Scale scores by 1/√d_k",
                help="Divide every query-key dot product by √d_k before the softmax (off: the raw QKᵀ).",
            )
        else:
            not_applicable(
                "Scale scores by 1/√d_k",
                f"{bundle.name} never divides its scores by √d_k (T5 folds that scale into the "
                "initialisation of its query weights), so there is no scaling to switch off.",
            )
        if applies("embscale"):
            bind(
                "embscale",
                st.toggle,
                label="Scale embeddings by √d_model",
                help="Multiply token embeddings by √d_model before the positions are added.",
            )
        else:
            not_applicable(
                "Scale embeddings by √d_model",
                f"{bundle.name} never scales its token embeddings"
                + (
                    ": it adds token, position and token-type vectors and normalizes the sum with a LayerNorm instead."
                    if bundle.config.embed_norm
                    else "."
                ),
            )
        bind(
            "fill",
            st.radio,
            label="Masked scores set to",
            options=["-inf", "-1e9"],
            horizontal=True,
            format_func=lambda v: "−∞" if v == "-inf" else "−10⁹",
            help="What a mask writes into the scores it hides before the softmax: −∞ gives exactly 0 weight; "
            "−10⁹ gives 0 in every row that keeps a real key, and a uniform row where every key is masked.",
        )
        bind(
            "ablate",
            st.multiselect,
            label="Knock out heads",
            options=list(by_label),
            to_widget=lambda hs: [head_label(h) for h in hs],
            from_widget=lambda labels: tuple(sorted(by_label[x] for x in labels)),
            placeholder="Choose heads to zero",
            help="A knocked-out head's output is set to zero in every step.",
        )
        st.markdown("### Display")
        bind("present", st.toggle, label="Presentation mode", help="Large fonts and a high-contrast scale.")
        bind(
            "export",
            st.radio,
            label="Chart download format",
            options=["png", "svg"],
            horizontal=True,
            format_func=lambda f: "PNG (3x)" if f == "png" else "SVG",
            help="What the camera button in each chart's toolbar saves.",
        )
        shape = (
            f"encoder-only, {limits.n_encoder_layers} layers"
            if encoder_only
            else f"decoder-only, {limits.n_decoder_layers} layers"
            if decoder_only
            else f"{limits.n_encoder_layers}+{limits.n_decoder_layers} layers"
        )
        st.caption(
            f"Model {md(bundle.name)} ({md(bundle.family)}) · id {bundle.checkpoint_id} · "
            f"{shape} × {limits.n_heads} heads"
        )
        st.iframe(CLOSE_SIDEBAR_JS, height=1)


_POSITIONAL_NOTES = {
    "learned": "Off: the learned position table is not added.",
    "relative": "Off: no relative-position bias on the scores (nothing positional is added to the embeddings).",
}


def _positional_help(positional: str) -> str:
    """What the positional switch turns off in this model."""
    if positional == "relative":
        return (
            "Off: the relative-position bias is dropped. This model adds nothing positional to its embeddings; "
            "every self-attention score gets a learned bias for the distance between query and key instead."
        )
    if positional == "learned":
        return "Off: the learned position table (one trained vector per position) is no longer added to the embeddings."
    return "Add position information (the sinusoid table) to the embeddings."


def _or_stop(call: Callable[[], Any]) -> Any:
    """The call's result; an error the person caused is shown and stops the page instead."""
    try:
        return call()
    except AnatomyError as exc:
        st.error(md(str(exc)))
        st.stop()
        raise  # unreachable: st.stop raises


@dataclass
class Page:
    """One rerun of one page: the model, the controls, the main result and the figures shown."""

    title: str
    bundle: Bundle
    limits: Limits
    controls: Controls
    style: Style
    result: TranslationResult | EncodeResult | None = None
    figures: list[tuple[str, go.Figure]] = field(default_factory=list)
    room: presenter.Presenting | None = None  # the room this page is shared with (ui/room/presenter.py), if any

    @property
    def plotly_config(self) -> dict:
        """Toolbar settings: PNG at 3x scale or SVG, as chosen in the sidebar."""
        name = re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")
        return toolbar_config(self.controls.export, filename=f"anatomy-{name}")

    def show(
        self, fig: go.Figure, caption: str = "", key: str | None = None, on_select: Any = "ignore", **kwargs: Any
    ) -> Any:
        """Draw a figure (export settings applied) and keep it for the page's HTML download."""
        self.figures.append((caption or (fig.layout.title.text or ""), fig))
        event = st.plotly_chart(fig, config=self.plotly_config, theme=None, key=key, on_select=on_select, **kwargs)
        if caption:
            st.caption(caption)
        return event

    @property
    def encoder_only(self) -> bool:
        """True for a model without a decoder (BERT): pages show the encoder's side only."""
        return self.bundle.capabilities.encoder_only

    @property
    def decoder_only(self) -> bool:
        """True for a model without an encoder (GPT-2): it continues the text (a GenerationResult) and
        has decoder self-attention alone, no source and no cross-attention."""
        return self.bundle.capabilities.decoder_only

    @property
    def chat(self) -> bool:
        """True when the text is read as a chat message (an instruct decoder-only model, `chat=on`): the
        result is the model's answer to the wrapped prompt."""
        return self.controls.chat

    def translate(self, *, trace: bool = True, **changes: Any) -> TranslationResult:
        """Translate the sentence under the controls' switches, optionally changed (without a trace when
        the page reads only the text and the steps); a decoder-only model continues it instead (a
        GenerationResult; with a chat message, its answer); errors stop the page."""
        iv = self.controls.interventions(**changes)
        ctl = self.controls
        return _or_stop(lambda: engine.translate(self.bundle, ctl.sentence, iv, ctl.beam_size, trace, chat=ctl.chat))

    def encode(self, sentence: str | None = None, **changes: Any) -> EncodeResult:
        """Run the encoder alone on the sentence (or another) under the switches; errors stop the page."""
        iv = self.controls.interventions(**changes)
        return _or_stop(lambda: engine.encode(self.bundle, sentence or self.controls.sentence, iv))

    def run(self, **changes: Any) -> TranslationResult | EncodeResult:
        """What the model does with the sentence: a translation (a decoder-only model's continuation), or for
        an encoder-only model its encoding."""
        return self.encode(**changes) if self.encoder_only else self.translate(**changes)

    def finish(self, namespace: dict[str, Any]) -> None:
        """Offer every figure of the page as one self-contained HTML file, then release the run's data
        from the page's namespace (`globals()` of the page script)."""
        if self.figures:
            figures, title, fmt = list(self.figures), f"Transformer Anatomy: {self.title}", self.controls.export
            intro = f"{self._text_label}: {self.controls.sentence}"
            st.divider()
            st.download_button(
                "Download this page's charts as HTML (works offline)",
                data=lambda: page_html(title, figures, intro, fmt),
                file_name=f"anatomy-{re.sub(r'[^a-z0-9]+', '-', self.title.lower())}.html",
                mime="text/html",
                icon=":material/download:",
                on_click="ignore",
            )
        presenter.publish(self.room, self._view)
        if not st.session_state.get(LIVE_FRAGMENT):
            release(namespace)
        turns.end_turn()

    def publish_frame(self, start: int, end: int, mark: int) -> None:
        """A playing fragment drew a frame (Player.run): publish the page as it shows now, the figures the fragment
        drew in the page's full run (self.figures[start:end]) replaced by this frame's (self.figures[mark:]),
        which are then let go of, so that a play does not pile up figures."""
        frame = self.figures[mark:]
        del self.figures[mark:]
        if self.room is not None:
            shown = self.figures[:start] + frame + self.figures[end:]
            presenter.publish(self.room, lambda: self._view(shown))

    @property
    def output_noun(self) -> str:
        """What the model makes of the text, in words: "answer" (to a chat message), "continuation" or
        "translation"."""
        return "answer" if self.chat else "continuation" if self.decoder_only else "translation"

    @property
    def _text_label(self) -> str:
        """What the typed text is: a sentence, a prompt, or a chat message."""
        return "Chat message" if self.chat else "Prompt" if self.decoder_only else "Sentence"

    def _view(self, figures: list[tuple[str, go.Figure]] | None = None) -> bytes:
        """What this run showed, for the room's phones: the sentence, the result, the controls, the figures."""
        texts = [(self._text_label, self.controls.sentence)]
        if isinstance(self.result, TranslationResult):
            texts.append((self.output_noun.capitalize(), self.result.translation))
        said = changed_switches(_values(), _applies(self.bundle))
        controls = presenter.controls_line(_values(), said)
        code = self.room.code if self.room else ""
        shown = self.figures if figures is None else figures
        return presenter.view_document(self.title, texts, controls, presenter.explore_link(code), shown)


RELEASED_ABOVE = 64 * 1024  # bytes: a page name holding more than this is dropped at the end of a run


def release(namespace: dict[str, Any]) -> None:
    """Drop every name of a page script that holds more than RELEASED_ABOVE bytes (its Page, results,
    traces, arrays, figures); its imports, functions, classes and small values stay.

    A session keeps the namespace of its last page run alive for as long as the tab is open (and
    15 s after): every function the page defined refers to it, and Streamlit keeps that run's
    widget labels (format_func) and callbacks and the URL fields. Without this, each open tab
    pinned its own copy of a result the shared cache had evicted or never kept (four tabs with
    pasted paragraphs: 996 MiB, tests/test_memory_long.py). So a label function or callback of a page must not read a
    dropped name: Streamlit may call it after the run (give it the small values it needs).
    """
    for name in [
        n for n, value in namespace.items() if not n.startswith("__") and holds_more_than(value, RELEASED_ABOVE)
    ]:
        del namespace[name]


def start(
    title: str, needs_result: bool = True, encoder_title: str | None = None, decoder_title: str | None = None
) -> Page:
    """Set up a page: config, model, sidebar controls, URL state, and the main translation (for an
    encoder-only model, the encoding, and `encoder_title` replaces the heading; for a decoder-only
    model, the continuation, and `decoder_title` replaces it)."""
    # No page icon: a material icon would be fetched from a font CDN as the favicon (breaks offline).
    st.set_page_config(
        page_title=f"{title} · Transformer Anatomy",
        layout="wide",
        initial_sidebar_state="collapsed" if _presenting() else "auto",
    )
    st.session_state[LIVE_FRAGMENT] = False
    with st.sidebar:
        nav = st.container()  # the menu, first in the sidebar: titled once the model is known
    if VALUES not in st.session_state:
        st.session_state[VALUES] = {}
        st.session_state[RAW] = {k: st.query_params[k] for k in st.query_params}
        st.session_state[NOTES] = []
    bundle = _choose_model()
    with nav:  # shown even when the model fails to load
        menu(_first_title(bundle))
    if bundle is None:
        st.title(title)
        st.stop()
        raise RuntimeError("unreachable: st.stop raises")
    cfg = bundle.config
    limits = Limits(cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.n_heads, cfg.max_len, cfg.cross_attention)
    st.session_state[NOTES].extend(_register(shared_fields(limits)))
    prefix = None
    if typed_prefix(bundle):
        st.session_state[NOTES].extend(_register([PREFIX]))
        prefix = _values()[PREFIX.key]
    if chat_offered(bundle):  # an instruct checkpoint: its text is a chat message unless turned off
        st.session_state[NOTES].extend(_register([CHAT]))
    _fit(limits)
    _sidebar(limits, bundle, prefix)
    presenting = presenter.begin(st.session_state[NOTES])
    # a blank sentence gets no prefix either: the engine then refuses the empty text with its own message
    controls = Controls.from_values(
        _values(), prefix=prefix if prefix and _values()["sentence"].strip() else "", chat=_chat_on(bundle)
    )
    _take_turn(bundle, controls.sentence if needs_result else "", controls.chat)
    style = Style(presentation=controls.presentation)
    st.html(APP_CSS + (PRESENTATION_CSS if controls.presentation else ""))
    renamed = (
        encoder_title
        if bundle.capabilities.encoder_only
        else decoder_title
        if bundle.capabilities.decoder_only
        else None
    )
    if renamed and renamed != title:
        title = renamed
        st.set_page_config(page_title=f"{title} · Transformer Anatomy")  # the browser tab says it too
    st.title(title)
    if presenting:
        presenter.panel(presenting)
    presenter.back_link(presenting)
    _top_sentence(bundle)
    switches_banner(bundle)
    chat_spot = st.container() if controls.chat else None  # the chat note, with the answer once it is made
    for note in st.session_state[NOTES]:
        st.warning(md(note))
    st.session_state[NOTES] = []
    page = Page(title, bundle, limits, controls, style, room=presenting)
    if needs_result:
        asked = without_the_mask(bundle, controls)
        if asked is False:
            st.stop()
        page.result = page.run()
        if not isinstance(asked, bool):
            asked.empty()
        for warning in page.result.warnings:
            st.warning(md(warning))
        if bundle.capabilities.trained_here:
            _offer_sentences(bundle, _values()["sentence"], page.result.unknown_words)
    if chat_spot is not None:
        with chat_spot:
            chat_note(bundle, page.result)
    return page


def _applies(bundle: Bundle) -> Callable[[str], bool]:
    """Which switches change this model (T5 never scales its scores, BERT has no causal mask, ...)."""
    cfg = bundle.config
    missing = {
        "causal": bundle.capabilities.encoder_only,
        "scale": not cfg.scale_scores,
        "embscale": not cfg.scale_embeddings,
    }
    return lambda key: not missing.get(key, False)


def _reset_switches() -> None:
    _values().update(trained_switches())


def switches_banner(bundle: Bundle) -> None:
    """Under the title of every page: what is switched away from the model as trained, and one button back."""
    said = changed_switches(_values(), _applies(bundle))
    if not said:
        return
    text = "; ".join(said)
    with st.container(horizontal=True, vertical_alignment="center", wrap=False, key="switches-banner"):
        st.warning(
            f"**Not the model as trained:** {md(text[0].upper() + text[1:])}. Every page shows the model this way "
            "until the switches are reset.",
            icon=":material/tune:",
        )
        st.button("Reset switches", icon=":material/restart_alt:", key="reset-switches", on_click=_reset_switches)


def _offer_sentences(bundle: Bundle, sentence: str, unknown: list[str]) -> None:
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
            st.button(offer, key=f"offer-{index}", on_click=_set_sentence, args=(offer,))
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


def table_height(rows: int, most: int = 600) -> int:
    """Pixels for a dataframe to show `rows` rows whole, below a header (and scroll past `most`)."""
    return min(38 + 35 * rows + 2, most)


def _top_sentence(bundle: Bundle) -> None:
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


def _chat_on(bundle: Bundle) -> bool:
    """Whether this run reads the text as a chat message: the stored control, for a model that offers it, when
    its chat template wraps the text (else a note says why the plain prompt is read instead)."""
    if not chat_offered(bundle) or not _values()[CHAT.key]:
        return False
    sentence = _values()["sentence"]
    if sentence.strip():
        try:
            bundle.chat_prompt(sentence)
        except InputError as exc:
            st.session_state[NOTES].append(f"{exc} Every page reads the plain prompt instead.")
            return False
    return True


def chat_note(bundle: Bundle, result: TranslationResult | EncodeResult | None = None) -> None:
    """Under the title of every page, while the text is a chat message: what the model reads and explains, and
    the answer when the page has it (`result`)."""
    answer = f" Its answer: **{md(result.translation) or '(empty)'}**" if isinstance(result, TranslationResult) else ""
    st.caption(
        f"**{CHAT_LABEL}:** your text is a user's message, wrapped by {md(bundle.name)}'s chat template (its "
        "special pieces and line breaks included), and the model writes the assistant's answer: every page reads "
        f"the wrapped text and explains the answer.{answer}",
        help=CHAT_HELP + f" Untick “{CHAT_LABEL}” in the sidebar to continue the bare text.",
    )


def _presenting() -> bool:
    """Presentation mode, before the controls are read: the stored switch, or on a first visit the URL's."""
    values = st.session_state.get(VALUES)
    if values is not None and PRESENT.key in values:
        return bool(values[PRESENT.key])
    return bool(read_fields([PRESENT], st.query_params)[0][PRESENT.key])


def _take_turn(bundle: Bundle, sentence: str, chat: bool = False) -> None:
    """Wait, if the sentence is long (with `chat`, the wrapped chat message), until no other page run works on
    a long text (ui/session/turns.py)."""
    try:
        if not sentence:
            pieces = 0
        else:
            pieces = len(bundle.read_input(sentence, chat=True) if chat else bundle.encode_source(sentence)[1])
    except AnatomyError:  # the page's own run shows what is wrong with it
        pieces = 0
    long = pieces > turns.LONG_PIECES
    waiting = (
        st.spinner(
            f"Another long text ({turns.LONG_PIECES}+ pieces) is being read on this server; yours is next ...",
            show_time=True,
        )
        if long and turns.busy()
        else nullcontext()
    )
    with waiting:
        turns.take_turn(long)


def two_translations(left: tuple[str, str], right: tuple[str, str], size_rem: float = 1.3) -> None:
    """Two (caption, translation) pairs side by side: the experiment's before and after."""
    for column, (caption, text) in zip(st.columns(2), (left, right), strict=True):
        with column:
            if caption:
                st.caption(caption)
            big_text(text or "(empty)", size_rem)


def big_text(text: str, size_rem: float = 2.2) -> None:
    """Show text large; it is HTML-escaped, so typed text can never become markup."""
    safe = html.escape(" ".join(text.split())) or "&nbsp;"
    st.markdown(
        f"<div style='font-size:{size_rem}rem;font-weight:600;line-height:1.25;margin:0.2rem 0 0.8rem 0'>{safe}</div>",
        unsafe_allow_html=True,
    )

"""What every page does first: load the model, show the shared sidebar controls, run the model once;
and the Page a page script draws with."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from i18n import N_, _, language
from model import AnatomyError, Bundle, EncodeResult, TranslationResult
from ui.page import stream, talk, talk_editor
from ui.page.binding import NOTES, RAW, VALUES, stored_values
from ui.page.markup import busy_note, page_css
from ui.page.notices import Notes, chat_note, offer_sentences, top_sentence
from ui.page.ondemand import without_the_mask
from ui.page.panels import draw as panels_drawn
from ui.page.sidebar import choose_model, first_page_titles, read_controls
from ui.page.switches import applies, switches_banner
from ui.room import presenter
from ui.session import engine, turns
from ui.session.cache import holds_more_than
from ui.session.figures import shared
from ui.session.nav import menu
from views.controls import PRESENT, Controls, Limits, changed_switches
from views.fields import read_fields
from views.markdown import md
from views.panels import Panel
from views.scene import Scene
from viz.export import page_html, toolbar_config
from viz.margins import fit_margins
from viz.style import Style, keeps_its_width

# True while this run leaves a fragment that reruns by itself (a playing player, ui/page/player.py): that
# fragment reads the page's names, so the page keeps them (see Page.finish).
LIVE_FRAGMENT = "_anatomy_live_fragment"


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

    title: str  # in English (the download's file name, the stream log's, the room's view says it): see `heading`
    bundle: Bundle
    limits: Limits
    controls: Controls
    style: Style
    result: TranslationResult | EncodeResult | None = None
    figures: list[tuple[str, go.Figure]] = field(default_factory=list)
    room: presenter.Presenting | None = None  # the room this page is shared with (ui/room/presenter.py), if any
    held: list[str] = field(default_factory=list)  # words `lead` keeps for after the next chart
    first_drawn: bool = False  # the run has drawn its first chart (a talk lets chromium paint it alone)
    # where the run's notes go (the chat note, warnings, what the model lacks)
    notes: Notes = field(default_factory=lambda: Notes(folded=False))
    # the outputs the room's phones are told, (label, words), when a page has more than its one result (Compare's)
    outputs: list[tuple[str, str]] = field(default_factory=list)

    @property
    def heading(self) -> str:
        """The page's title, in the run's language."""
        return _(self.title)

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
        event = self.draw(fig, key, on_select, **kwargs)
        if caption:
            st.caption(caption)
        self._say_held()
        return event

    def _say_held(self) -> None:
        """The words `lead` held back, now."""
        for text in self.held:
            st.markdown(text)
        self.held.clear()

    def draw(self, fig: go.Figure, key: str | None = None, on_select: Any = "ignore", **kwargs: Any) -> Any:
        """Draw a figure with the page's export settings, without keeping it for the page's HTML download (a
        picture shown while a continuation is written, or a step's figure under the one `show` keeps)."""
        fit_margins(fig)  # a figure drawn outside a scene; a scene's has its margins already, and keeps them
        wide = keeps_its_width(fig) and key is not None
        with st.container(key=f"wide-{key}") if wide else nullcontext():  # a phone scrolls it sideways alone
            event = st.plotly_chart(fig, config=self.plotly_config, theme=None, key=key, on_select=on_select, **kwargs)
        if not self.first_drawn:
            self.first_drawn = True
            talk.let_it_paint()
        return event

    def lead(self, text: str) -> None:
        """Words that lead to the next chart: above it, or in presentation mode below it, where they leave a
        projector's first screen to the picture (the lecturer says them)."""
        if self.controls.presentation:
            self.held.append(text)
        else:
            st.markdown(text)

    @property
    def scene(self) -> Scene:
        """What this run's views (views/) draw from: the model, the controls, the result and every stored control."""
        return Scene(self.bundle, self.controls, self.result, dict(stored_values()), draw=shared)

    def panels(self, panels: Iterable[Panel]) -> dict[str, Any]:
        """Draw a view's panels in order (ui/page/panels.py); each figure's selection event by key."""
        return panels_drawn(self, panels)

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
        return _or_stop(lambda: engine.translate(self.bundle, ctl.sentence, iv, ctl.options(), trace, chat=ctl.chat))

    def encode(self, sentence: str | None = None, **changes: Any) -> EncodeResult:
        """Run the encoder alone on the sentence (or another) under the switches; errors stop the page."""
        iv = self.controls.interventions(**changes)
        return _or_stop(lambda: engine.encode(self.bundle, sentence or self.controls.sentence, iv))

    def run(self, **changes: Any) -> TranslationResult | EncodeResult:
        """What the model does with the sentence: a translation (a decoder-only model's continuation), or for
        an encoder-only model its encoding."""
        return self.encode(**changes) if self.encoder_only else self.translate(**changes)

    def run_written(self, preview: stream.Preview | None = None) -> TranslationResult | EncodeResult:
        """`run`, drawn while it is written when the continuation takes long (ui/page/stream.py, `preview`
        drawing what the prompt alone gives meanwhile); errors stop the page."""
        if stream.streams(self.bundle, self.controls):
            return _or_stop(lambda: stream.streamed(self, preview))
        return self.run()

    def finish(self, namespace: dict[str, Any]) -> None:
        """Offer every figure of the page as one self-contained HTML file, then release the run's data
        from the page's namespace (`globals()` of the page script). Words `lead` held for a chart that never
        came are said first."""
        self._say_held()
        if self.figures:
            figures, fmt, lang = list(self.figures), self.controls.export, language()
            title = _("Transformer Anatomy: {title}", title=self.heading)
            intro = self._intro
            st.divider()
            st.download_button(
                _("Download this page's charts as HTML (works offline)"),
                data=lambda: page_html(title, figures, intro, fmt, lang),  # made on the click, after the run
                file_name=f"anatomy-{re.sub(r'[^a-z0-9]+', '-', self.title.lower())}.html",
                mime="text/html",
                icon=":material/download:",
                on_click="ignore",
            )
        presenter.publish(self.room, self._view)
        talk.prepare_next()
        stream.log("finished", page=self.title)
        if not st.session_state.get(LIVE_FRAGMENT):
            release(namespace)
        turns.end_turn()
        stream.end_of_run()  # last: until the run's end, the run before's leftovers stay hidden

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
        """What the model makes of the text, a code the code compares (the words shown are their own messages):
        "answer" (to a chat message), "continuation" or "translation" (views.scene.Scene.output_noun)."""
        return self.scene.output_noun

    @property
    def doing(self) -> str:
        """What the page's run does, in a few words for the busy sign (ui.page.markup.busy_note), in the run's
        language."""
        if self.encoder_only:
            return _("Reading the sentence and drawing the page …")
        return _(_DOING[self.output_noun])

    @property
    def _text_label(self) -> str:
        """What the typed text is: a sentence, a prompt, or a chat message (in English: the room's view says it,
        ui.room.presenter.TEXT_LABELS)."""
        return N_("Chat message") if self.chat else N_("Prompt") if self.decoder_only else N_("Sentence")

    @property
    def _intro(self) -> str:
        """The typed text, named, in the run's language: the first line of the page's HTML download."""
        text = self.controls.sentence
        if self.chat:
            return _("Chat message: {text}", text=text)
        return _("Prompt: {text}", text=text) if self.decoder_only else _("Sentence: {text}", text=text)

    def _view(self, figures: list[tuple[str, go.Figure]] | None = None) -> bytes:
        """What this run showed, for the room's phones: the sentence, the result, the controls, the figures."""
        texts = [(self._text_label, self.controls.sentence)]
        if self.outputs:
            texts += self.outputs
        elif isinstance(self.result, TranslationResult):
            texts.append((self.output_noun.capitalize(), self.result.translation))
        said = changed_switches(stored_values(), applies(self.bundle))
        controls = presenter.controls_line(stored_values(), said)
        code = self.room.code if self.room else ""
        shown = self.figures if figures is None else figures
        explore = presenter.explore_link(code)
        return presenter.view_document(self.title, texts, controls, explore, shown, talk.line())


# What the busy sign says a run does, for each thing the model makes (Page.output_noun's codes)
_DOING = {
    "answer": N_("Writing the answer and drawing the page …"),
    "continuation": N_("Continuing the text and drawing the page …"),
    "translation": N_("Translating the sentence and drawing the page …"),
}
RELEASED_ABOVE = 64 * 1024  # bytes: a page name holding more than this is dropped at the end of a run


def release(namespace: dict[str, Any]) -> None:
    """Drop every name of a page script that holds more than RELEASED_ABOVE bytes (its Page, results,
    traces, arrays, figures); its imports, functions, classes and small values stay.

    A session keeps the namespace of its last page run alive for as long as the tab is open (and
    15 s after): every function the page defined refers to it, and Streamlit keeps that run's
    widget labels (format_func) and callbacks and the URL fields. Without this, each open tab
    pinned its own copy of a result the shared cache had evicted or never kept (four tabs with
    pasted paragraphs: 996 MiB, tests/app/test_memory_long.py). So a label function or callback of a page must not
    read a dropped name: Streamlit may call it after the run (give it the small values it needs).
    """
    for name in [
        n for n, value in namespace.items() if not n.startswith("__") and holds_more_than(value, RELEASED_ABOVE)
    ]:
        del namespace[name]


def start(
    title: str,
    needs_result: bool = True,
    encoder_title: str | None = None,
    decoder_title: str | None = None,
    preview: stream.Preview | None = None,
) -> Page:
    """Set up a page: config, model, sidebar controls, URL state, and the main translation (for an
    encoder-only model, the encoding, and `encoder_title` replaces the heading; for a decoder-only
    model, the continuation, and `decoder_title` replaces it; a costly continuation is drawn while it
    is written, `preview` drawing what the prompt alone gives meanwhile: ui/page/stream.py)."""
    stream.log("run", page=title)
    bundle, tab = _model_first(title)
    cfg = bundle.config
    limits = Limits(cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.n_heads, cfg.max_len, cfg.cross_attention)
    controls, presenting = read_controls(bundle, limits)
    talk_editor.section(title)
    _take_turn(bundle, controls.sentence if needs_result else "", controls.chat)
    style = Style(presentation=controls.presentation)
    st.html(page_css(controls.presentation, controls.language))
    talk.bar(changed_switches(stored_values(), applies(bundle)))
    renamed = (
        encoder_title
        if bundle.capabilities.encoder_only
        else decoder_title
        if bundle.capabilities.decoder_only
        else None
    )
    title = renamed or title  # English, the page's name (Page.title); shown in the run's language
    if _tab_title(title) != tab:  # renamed, or the language chosen in the sidebar is not the one before it
        st.set_page_config(page_title=_tab_title(title))  # the browser tab says it too
    st.title(_(title))
    if presenting:
        presenter.panel(presenting, expanded=talk.first_view())
    presenter.back_link(presenting)
    top_sentence(bundle)
    if talk.giving() is None:  # in a talk, the bar says what is switched (the next view resets it anyway)
        switches_banner(bundle)
    # On a projector the run's notes fold into one line, so that the first screen is the picture's
    notes = Notes(folded=controls.presentation)
    chat_spot = None  # the chat note, with the answer once it is made
    if controls.chat:
        with notes:
            chat_spot = st.empty()
            with chat_spot.container():  # said at once: a long continuation draws the rest while it is written
                chat_note(bundle)
    if st.session_state[NOTES]:
        with notes:
            for note in st.session_state[NOTES]:
                st.warning(md(note))
    st.session_state[NOTES] = []
    page = Page(title, bundle, limits, controls, style, room=presenting, notes=notes)
    busy_note(page.doing if needs_result else _("Drawing the page …"))
    if needs_result:
        _run_once(page, preview)
    if chat_spot is not None and page.result is not None:
        with chat_spot.container():
            chat_note(bundle, page.result)
    return page


def _tab_title(title: str) -> str:
    """What the browser's tab says of a page (its English `title`), in the run's language."""
    return f"{_(title)} · Transformer Anatomy"


def _model_first(title: str) -> tuple[Bundle, str]:
    """The page's config, the session's store on its first run, the menu and the chosen model (a model that
    fails to load stops the page under its title, after saying why); and what the tab was titled, in the language
    spoken before the sidebar's language switch."""
    tab = _tab_title(title)
    # No page icon: a material icon would be fetched from a font CDN as the favicon (breaks offline).
    st.set_page_config(
        page_title=tab,
        layout="wide",
        initial_sidebar_state="collapsed" if _presenting() else "auto",
    )
    st.session_state[LIVE_FRAGMENT] = False
    st.session_state.pop(stream.STREAMED_SLOT, None)  # a run stopped before its end leaves its slot to no one
    with st.sidebar:
        nav = st.container()  # the menu, first in the sidebar: titled once the model is known
    if VALUES not in st.session_state:
        st.session_state[VALUES] = {}
        st.session_state[RAW] = {k: st.query_params[k] for k in st.query_params}
        st.session_state[NOTES] = []
    talk.begin()  # a talk's address, or a press that moves it to another view (which stops this run)
    bundle = choose_model()
    with nav:  # shown even when the model fails to load
        menu(first_page_titles(bundle))
    if bundle is None:
        st.title(_(title))
        st.stop()
        raise RuntimeError("unreachable: st.stop raises")
    return bundle, tab


def _run_once(page: Page, preview: stream.Preview | None) -> None:
    """The page's main result, with its warnings (and, for a sentence the shipped model cannot read, sentences
    it can): after a button when the switches make it costly, drawn while it is written when it takes long."""
    asked = without_the_mask(page.bundle, page.controls)
    if asked is False:
        st.stop()
    page.result = page.run_written(preview)
    if not isinstance(asked, bool):
        asked.empty()
    if page.result.warnings:
        with page.notes:
            for warning in page.result.warnings:
                st.warning(md(warning))
    if page.bundle.capabilities.trained_here:
        offer_sentences(page.bundle, stored_values()["sentence"], page.result.unknown_words)


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
            _(
                "Another long text ({n}+ pieces) is being read on this server; yours is next ...",
                n=turns.LONG_PIECES,
            ),
            show_time=True,
        )
        if long and turns.busy()
        else nullcontext()
    )
    with waiting:
        turns.take_turn(long)

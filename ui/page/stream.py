"""A continuation or a translation drawn while it is written: at a real size each new piece reads every weight,
so a page does not wait for it in silence. The decoding runs in a thread of its own; for greedy decoding the page
draws what the prompt alone gives as soon as it is read (the page's `Preview`: a decoder-only model's prompt
after the first step, an encoder-decoder's sentence once encoded) and says which piece is being written; for
beam search it says which step the search is at and how its best beam ends. When the result is whole, it
clears all of that and draws itself from the finished result, which the shared results cache keeps as it
does any other (a revisit or another session draws at once). A session asking for it while it is written
follows the same decoding (ui/session/live.py).

A rerun (a control changed, a new prompt) stops this run's drawing at its next Streamlit call, and the
decoding at its next piece when no other session follows it: a page never shows a mix of two runs."""

from __future__ import annotations

import json
import os
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import streamlit as st

from i18n import N_, _, n_
from model import Bundle, Trace, TranslationResult
from model.results import Listener, Written
from ui.page.markup import HIDE_OLD_PAGE, STREAMED, STREAMING
from ui.page.ondemand import EAGER_WORK, continuation_work, prompt_and_steps
from ui.session import engine, fair, footprint, live
from ui.session.cached import iv_key
from views.markdown import md
from viz.labels import display_piece, on_one_line

if TYPE_CHECKING:
    from views.controls import Controls

# A file each page run and each stream append their events to, with their times (time.time()), when set:
# what bench/first_picture.py reads to tell the server's part of the waiting from the browser's
LOG_ENV = "ANATOMY_STREAM_LOG"

# A continuation whose decoding costs more than this (ondemand's units) is drawn while it is written; a
# small model's whole page is quicker than a stream's set-up, so it is drawn at once as before.
# $ANATOMY_STREAM_WORK overrides it ("inf": never, as bench/first_picture.py --at-once measures)
BEST_SHOWN = 80  # characters of the best beam's text the line shows, its end
STREAM_WORK = float(os.environ.get("ANATOMY_STREAM_WORK", "") or EAGER_WORK / 10)


@dataclass(frozen=True)
class Preview:
    """What a page draws before its continuation is whole, each given the page's Page (ui/page/start.py, which
    imports this module): `prompt` the parts the prompt's trace alone gives (its self-attention, its shapes),
    `pieces` what grows with the pieces written so far (the Continue page's text and candidates), drawn again
    over itself with more. Either may be None: every page gets the line that names the piece being written."""

    prompt: Callable[[Any, Trace], None] | None = None
    pieces: Callable[[Any, list[Written]], None] | None = None


class BeamStep(NamedTuple):
    """A step of beam search, as its listener heard it."""

    step: int
    limit: int
    best: str


class Running(Protocol):
    """What a stream reads of the page run (a Page)."""

    bundle: Bundle
    controls: Controls

    @property
    def output_noun(self) -> str: ...


def log(event: str, **fields: object) -> None:
    """Append an event of this page run to $ANATOMY_STREAM_LOG, when it is set."""
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"event": event, "t": time.time(), **fields}) + "\n")


def streams(bundle: Bundle, controls: Controls) -> bool:
    """Whether this run's continuation or translation is drawn while it is written: a decoder-only model's
    continuation or an encoder-decoder's translation not in the cache yet, costly enough to be worth it (beam
    search tells only its steps: its line says how far it is)."""
    if not (bundle.capabilities.decoder_only or bundle.capabilities.translates):
        return False
    read = prompt_and_steps(bundle, controls)
    if read is None or continuation_work(bundle, read[1]) < STREAM_WORK:
        return False
    iv = controls.interventions()
    return not engine.in_cache(bundle, controls.sentence, iv, controls.options(), chat=controls.chat)


STREAMED_SLOT = "_anatomy_streamed_slot"  # where this run's stream left its mark (ui.page.markup STREAMED)


def end_of_run() -> None:
    """The run's end: take away the mark a stream left. Left there, it went on hiding every element a later
    fragment run marks stale (a playing step map's slot under the new one: Play's frames jumped down the page)."""
    slot = st.session_state.pop(STREAMED_SLOT, None)
    if slot is not None:
        slot.empty()


@dataclass
class _Line:
    """The stream's line in its slot, written again only when what it says changes: a waiting decoding tells its
    place every fair.WAIT_STEP, mostly the same place, and thirty waiting pages each sending it four times a second
    were a share of the server's time under a lab's load. The mark that hides the run before's leftovers is a slot of
    its own above it, written once (ui.page.markup.HIDE_OLD_PAGE: the page under a new prompt's first picture is
    never the previous prompt's), so that a piece's line is one element sent, not three."""

    slot: Any
    said: str = ""

    def say(self, text: str) -> None:
        if text != self.said:
            self.slot.caption(text)
            self.said = text


# What the stream's line says, for each thing the model makes (Page.output_noun's codes): said in the page's
# thread, in its language (the decoding's thread only hands its news over)
_READING = {
    "answer": N_("Reading the prompt, then writing the answer piece by piece …"),
    "continuation": N_("Reading the prompt, then writing the continuation piece by piece …"),
    "translation": N_("Reading the prompt, then writing the translation piece by piece …"),
}
_WRITING = {
    "answer": N_("Writing the answer: piece {k} of at most {limit}, “{piece}”"),
    "continuation": N_("Writing the continuation: piece {k} of at most {limit}, “{piece}”"),
    "translation": N_("Writing the translation: piece {k} of at most {limit}, “{piece}”"),
}
_SEARCHING = {
    "answer": N_(
        "Searching {beams} beams for the answer: step {step} of at most {limit}; the best so far ends “{best}”"
    ),
    "continuation": N_(
        "Searching {beams} beams for the continuation: step {step} of at most {limit}; the best so far ends “{best}”"
    ),
    "translation": N_(
        "Searching {beams} beams for the translation: step {step} of at most {limit}; the best so far ends “{best}”"
    ),
}


def beam_line(step: int, limit: int, best: str, beams: int, noun: str) -> str:
    """What the line under the title says while beam search looks for the continuation (`noun`: what the model
    makes, a code of Page.output_noun)."""
    shown = on_one_line(best if len(best) <= BEST_SHOWN else "…" + best[-BEST_SHOWN:])
    return _(_SEARCHING[noun], beams=beams, step=step + 1, limit=limit, best=md(shown))


def waiting_line(ahead: int, noun: str) -> str:
    """What the line under the title says while the decoding waits for its turn (ui/session/fair.py): how many
    decodings are before it in line (`noun`: what the model makes, a code of Page.output_noun)."""
    if noun == "answer":
        return n_(
            "Waiting for the model: {n} answer is ahead of yours (each writes a piece in turn)",
            "Waiting for the model: {n} answers are ahead of yours (each writes a piece in turn)",
            ahead,
        )
    if noun == "translation":
        return n_(
            "Waiting for the model: {n} translation is ahead of yours (each writes a piece in turn)",
            "Waiting for the model: {n} translations are ahead of yours (each writes a piece in turn)",
            ahead,
        )
    return n_(
        "Waiting for the model: {n} continuation is ahead of yours (each writes a piece in turn)",
        "Waiting for the model: {n} continuations are ahead of yours (each writes a piece in turn)",
        ahead,
    )


def written_line(written: Written, noun: str) -> str:
    """What the line under the title says while a piece is written."""
    return _(_WRITING[noun], k=written.step.position + 1, limit=written.limit, piece=display_piece(written.step.chosen))


def streamed(page: Running, preview: Preview | None) -> TranslationResult:
    """The continuation of the page's text under its controls, drawn while it is written (see the module's
    docstring); the finished result, or the decoding's error raised here. A session asking for the same one
    while another's is written follows that decoding (ui/session/live.py)."""
    bundle, controls, noun = page.bundle, page.controls, page.output_noun
    iv = controls.interventions()

    def decode(tell: live.Tell) -> None:
        try:
            nbytes = footprint.decoding_bytes(bundle, controls.sentence, controls.options(), controls.chat)
        except Exception:  # the decoding itself says what is wrong with its text
            nbytes = 0
        with fair.in_line(tell, nbytes) as next_turn:  # the pieces of decodings asked at once take turns
            outcome = _decoded(tell, next_turn)
        tell(live.DONE, outcome)

    def _decoded(tell: live.Tell, next_turn: Callable[[], None]) -> object:
        def piece(written: Written) -> None:
            log("piece heard", index=written.step.position, cpu=time.thread_time())
            tell("piece", written)
            next_turn()

        def prompt_read(trace: Trace) -> None:
            log("prompt heard", cpu=time.thread_time())
            tell("prompt", trace)

        def beam(step: int, limit: int, best: str) -> None:
            log("beam step", index=step)
            tell("beam", BeamStep(step, limit, best))
            next_turn()

        log("decoding", cpu=time.thread_time())
        listener = Listener(prompt=prompt_read, piece=piece, beam=beam)
        try:
            return engine.translate(
                bundle, controls.sentence, iv, controls.options(), chat=controls.chat, listener=listener
            )
        except BaseException as exc:
            return exc

    mark, line, growing, prompt = st.empty(), _Line(st.empty()), st.empty(), st.empty()
    mark.html(f"<span class='{STREAMING}'></span>{HIDE_OLD_PAGE}")
    line.say(_(_READING[noun]))
    # the same key as the results cache's (ui/session/engine.py): one decoding for every session asking for it
    key = (bundle.checkpoint_id, controls.sentence, iv_key(iv), controls.options(), controls.chat)
    with live.following(key, decode) as events:  # on leaving early, the decoding stops when no one follows it
        outcome = _follow(events, (line, growing, prompt), page, preview)
    for slot in (line.slot, growing, prompt):
        slot.empty()
    # the line goes; the mark stays, marked done, so that the old page stays hidden until the run ends
    mark.html(f"<span class='{STREAMED}'></span>{HIDE_OLD_PAGE}")
    st.session_state[STREAMED_SLOT] = mark  # Page.finish empties it: after the run, the mark must hide nothing
    log("continuation done")
    if isinstance(outcome, BaseException):
        raise outcome
    assert isinstance(outcome, TranslationResult)
    return outcome


def _follow(
    events: queue.Queue[live.News], slots: tuple[_Line, Any, Any], page: Running, preview: Preview | None
) -> object:
    """Draw the decoding's news into `slots` (the line, the growing parts, the prompt's parts: each in an st.empty,
    so that a drawing replaces the one before) until it is done, and return its outcome (the result or the
    error): the prompt's parts once, then the line and the growing parts with every piece written so far, once
    for all the pieces that came while the page drew (a slow drawing never falls behind the decoding)."""
    line, growing, prompt = slots
    written: list[Written] = []
    while True:
        news = [events.get()]
        while not events.empty():
            news.append(events.get_nowait())
        pieces = [value for kind, value in news if kind == "piece" and isinstance(value, Written)]
        for kind, value in news:
            if kind == "prompt" and preview is not None and preview.prompt is not None:
                with prompt.container():
                    preview.prompt(page, value)  # type: ignore[arg-type]
                log("prompt drawn")
        if pieces:
            written += pieces
            line.say(written_line(written[-1], page.output_noun))
            if preview is not None and preview.pieces is not None:
                with growing.container():
                    preview.pieces(page, written)
            log("pieces drawn", index=written[-1].step.position)
        latest = [(kind, value) for kind, value in news if kind in ("piece", "beam", live.WAITING)]
        if latest and latest[-1][0] == live.WAITING and isinstance(latest[-1][1], int):
            line.say(waiting_line(latest[-1][1], page.output_noun))
        searched = [value for kind, value in news if isinstance(value, BeamStep)]
        if searched:
            last = searched[-1]
            line.say(beam_line(last.step, last.limit, last.best, page.controls.beam_size, page.output_noun))
        if news[-1][0] == live.DONE:
            return news[-1][1]

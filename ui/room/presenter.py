"""The presenter's side of a room (ui/room/store.py keeps it, ui/room/server.py serves it): the switch in the
sidebar (or `share=on` in any page's URL), the audience link and its QR code under the title, publishing what
the page showed at the end of each run, and a question to the room with its live tally and the reveal.

The presenter's URL carries `room=` and `key=`, so a reload, a second tab or another page continues the same
room; the audience link (/room/<code>) carries no key. A room or key that does not match is refused with a
note and shares nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import plotly.graph_objects as go
import segno
import streamlit as st

import i18n
from i18n import N_, _, n_, sentences
from model import AnatomyError
from ui.room import store
from views.controls import BLOCK_NAMES
from views.talks import TALK_PLACE
from viz.lengths import COLOUR_MODES
from viz.style import keeps_its_width

SESSION = "_anatomy_room"  # this session's room: {"code", "key", "published", "question"}
WIDGET = "w_share_room"
PUBLIC_URL_ENV = "ANATOMY_PUBLIC_URL"  # the address phones reach, when the presenter's own is not it
ROOM_PARAMS = ("share", "room", "key")
BACK = "follow"  # in "Explore this on your own" links: the room a follower stepped out of, to go back to
FOLLOWED = "_anatomy_followed"  # this session's room to go back to (from the URL's `follow=`), or None
HEARTBEAT_SECONDS = 3
ON = ("on", "1", "true", "yes")

# A figure's JSON, written once per figure object (figures are shared and never changed after drawing).
_FIGURE_JSON: dict[int, tuple[weakref.ref[go.Figure], str]] = {}


@dataclass
class Offer:
    """A question a page can ask the room: its text, the options and how to read the model's answer
    (called only when asked: it may run the model)."""

    text: str
    options: list[str]
    answer: Callable[[], tuple[int, str]]  # (option index, how the model's answer was read)


@dataclass
class Presenting:
    """This run's room: the code and key, and the containers the page's question goes in."""

    code: str
    key: str
    slot: Any = None  # a Streamlit container under the title
    offers: list[Offer] = field(default_factory=list)


def _session() -> dict[str, Any] | None:
    return st.session_state.get(SESSION)


def _open_room() -> None:
    code, key = store.create()
    st.session_state[SESSION] = {"code": code, "key": key, "published": "", "question": None}


def _close_room() -> None:
    room = _session()
    if room:
        with contextlib.suppress(store.RoomError, OSError):
            store.end(room["code"], room["key"])
    st.session_state[SESSION] = None
    for name in ROOM_PARAMS:
        if name in st.query_params:
            del st.query_params[name]


def _switched() -> None:
    if st.session_state[WIDGET]:
        _open_room()
    else:
        _close_room()


def begin(notes: list[str]) -> Presenting | None:
    """Read the room from the session (or, on its first run, the URL), draw the sidebar switch, keep the
    room in the URL; notes for a room the URL names but cannot open. None when not sharing."""
    if SESSION not in st.session_state:
        st.session_state[SESSION] = None
        code, key = st.query_params.get("room", ""), st.query_params.get("key", "")
        if code or key:
            if store.is_presenter(code, key):
                st.session_state[SESSION] = {"code": code, "key": key, "published": "", "question": None}
            else:
                notes.append(
                    _(
                        "This link's room {code!r} does not open with its key (or no longer exists): nothing is "
                        "shared. Switch on “Share with the room” to open a new room.",
                        code=code[:20],
                    )
                )
                for name in ROOM_PARAMS:
                    if name in st.query_params:
                        del st.query_params[name]
        elif st.query_params.get("share", "").strip().lower() in ON:
            _open_room()
    if FOLLOWED not in st.session_state:
        back = st.query_params.get(BACK, "")
        st.session_state[FOLLOWED] = back if store.exists(back) else None
    if st.session_state[FOLLOWED] and st.query_params.get(BACK) != st.session_state[FOLLOWED]:
        st.query_params[BACK] = st.session_state[FOLLOWED]  # a reload keeps the way back
    room = _session()
    with st.sidebar:
        st.markdown(_("### Room"))
        st.session_state[WIDGET] = room is not None
        st.toggle(
            _("Share with the room"),
            key=WIDGET,
            on_change=_switched,
            help=_(
                "Phones that open the room's link see this screen: the page, the sentence, the result and the "
                "charts, as you change them. They cause no model runs."
            ),
        )
    room = _session()
    if room is None:
        return None
    wanted = {"share": "on", "room": room["code"], "key": room["key"]}
    for name, value in wanted.items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value
    return Presenting(room["code"], room["key"])


def back_link(room: Presenting | None) -> None:
    """For a follower who stepped out of a room to explore on their own: the way back to the room's view."""
    followed = st.session_state.get(FOLLOWED)
    if followed and room is None:
        words = _escape(_("← Back to the room {code}", code=followed))
        link = f"<a class='anatomy-room-back' href='{_escape(audience_url(followed))}' target='_self'>{words}</a>"
        st.markdown(_("{link} (you are exploring on your own)", link=link), unsafe_allow_html=True)


def audience_url(code: str) -> str:
    """The link phones open: $ANATOMY_PUBLIC_URL, else the address this page was opened at, then /room/<code>,
    and `?lang=` when this run speaks another language than English (the phones then speak it too)."""
    base = os.environ.get(PUBLIC_URL_ENV, "").strip().rstrip("/")
    if not base:
        parts = urlsplit(st.context.url or "")
        base = f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""
    spoken = i18n.language()
    return f"{base}/room/{code}" + ("" if spoken == i18n.DEFAULT else "?" + urlencode({"lang": spoken}))


def qr_image(url: str, size_px: int = 320) -> str:
    """An <img> of the link's QR code (SVG, drawn by segno), alt text "QR code" (in the run's language)."""
    uri = segno.make(url, error="m").svg_data_uri(scale=8, border=2)
    alt = _escape(_("QR code"))
    return (
        f'<img src="{uri}" alt="{alt}" width="{size_px}" height="{size_px}" '
        'style="image-rendering:pixelated;max-width:100%;height:auto;background:#fff">'
    )


def panel(room: Presenting, expanded: bool = True) -> None:
    """Under the title: the audience link as text and as a QR code big enough to scan across a hall (folded into
    its one line unless `expanded`: a talk's views after its first, where the picture needs the first screen)."""
    url = audience_url(room.code)
    label = _("Room {code}: phones follow this screen", code=room.code)
    with st.expander(label, expanded=expanded, icon=":material/groups:"):
        left, right = st.columns([1, 2], vertical_alignment="center")
        with left:
            st.html(f'<div class="anatomy-room-qr">{qr_image(url)}</div>')
        with right:
            st.markdown(_("**Scan the code or open this link to follow the talk:**"))
            st.markdown(
                f"<div class='anatomy-room-link' style='font-size:1.5rem;font-weight:600;overflow-wrap:anywhere'>"
                f"{_escape(url)}</div>",
                unsafe_allow_html=True,
            )
            st.caption(
                _(
                    "The link carries no key: phones see what this page shows and cannot move it. Keep this page's "
                    "own address to yourself; it holds the presenter's key."
                )
            )
            _heartbeat(room.code, room.key, i18n.language())
        room.slot = st.container()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


@st.fragment(run_every=HEARTBEAT_SECONDS)
def _heartbeat(code: str, key: str, language: str) -> None:
    """Every few seconds while the page is open: mark the presenter present and show the open question's tally,
    in the page's `language` (a fragment's own rerun starts without the page's start, which sets it)."""
    i18n.set_language(language)
    try:
        store.touch(code, key)
    except (store.RoomError, OSError):
        st.caption(_("This room is closed."))
        return
    room = _session()
    asked = room and room.get("question")
    if not asked:
        return
    try:
        counts = store.tally(code, asked)
        question = store.state(code)["question"]
    except store.RoomError:
        return
    if question["open"]:
        tally = _tally_text(question, counts)
        st.markdown(
            n_("**Live tally** ({n} vote): {tally}", "**Live tally** ({n} votes): {tally}", sum(counts), tally=tally)
        )


def _tally_text(question: dict[str, Any], counts: list[int]) -> str:
    return " · ".join(f"{option} {count}" for option, count in zip(question["options"], counts, strict=True))


def asking(room: Presenting | None) -> bool:
    """True while this presenter's question to the room is open (asked, not revealed yet): the page hides the
    pictures that answer it, on its screen and so on every phone, until the reveal."""
    qid = (_session() or {}).get("question")
    if room is None or not qid:
        return False
    try:
        current = store.state(room.code)["question"]
    except (store.RoomError, OSError):
        return False
    return bool(current and current["id"] == qid and current["open"])


def offer(room: Presenting | None, made: Callable[[], Offer | None], why_not: str = "") -> None:
    """A page's question for the room, drawn under the room's link: ask it, watch the tally, reveal the model's
    answer. `made` builds it from the view on screen (None: `why_not` says why there is none, a `later` message
    or one already said)."""
    if room is None or room.slot is None:
        return
    with room.slot:
        session = _session() or {}
        asked = session.get("question")
        current = None
        if asked:
            try:
                current = store.state(room.code)["question"]
            except (store.RoomError, OSError):
                current = None
        if current and current["id"] == asked:
            _asked(room, current)
            return
        question = made()
        if question is None:
            if why_not:
                st.caption(str(why_not))
            return
        st.markdown(_("**Predict, then reveal:** {question}", question=question.text))
        if st.button(_("Ask the room"), icon=":material/how_to_vote:", key="room-ask"):
            try:
                answer, note = question.answer()
                asked = store.Question(question.text, tuple(question.options), answer, note)
                qid = store.ask(room.code, room.key, asked)
            except (store.RoomError, AnatomyError) as exc:
                st.error(str(exc))
                return
            session["question"] = qid
            st.rerun()


def _asked(room: Presenting, question: dict[str, Any]) -> None:
    st.markdown(_("**Asked:** {question}", question=question["text"]))
    if question["open"]:
        if st.button(_("Reveal the model's answer"), icon=":material/visibility:", key="room-reveal"):
            store.reveal(room.code, room.key, question["id"])
            st.rerun()
        return
    counts = question["tally"]
    answer = _("The model's answer: **{answer}**.", answer=question["options"][question["answer"]])
    room_said = n_(
        "The room ({n} vote): {tally}",
        "The room ({n} votes): {tally}",
        sum(counts),
        tally=_tally_text(question, counts),
    )
    st.success(f"{sentences(answer, question.get('note', ''))}  \n{room_said}")
    if st.button(_("Ask another question"), key="room-next"):
        session = _session()
        if session:
            session["question"] = None
        st.rerun()


def _figure_json(fig: go.Figure) -> str:
    """The figure as plotly.js reads it, written once per figure object."""
    kept = _FIGURE_JSON.get(id(fig))
    if kept is not None and kept[0]() is fig:
        return kept[1]
    text = fig.to_json()
    _FIGURE_JSON[id(fig)] = (weakref.ref(fig), text)
    weakref.finalize(fig, _FIGURE_JSON.pop, id(fig), None)
    return text


# The labels of the texts a page's view shows (ui/page/start.py, Page._view): marked here, said by view_document.
TEXT_LABELS = (N_("Sentence"), N_("Prompt"), N_("Chat message"), N_("Translation"), N_("Continuation"), N_("Answer"))


def _said(marked: str) -> str:
    """A message marked with N_ where it is written (a page's title, a text's label), in this run's language;
    text already said in it passes unchanged."""
    return i18n._(marked)


def view_document(
    title: str,
    texts: list[tuple[str, str]],
    controls: str,
    explore: str,
    figures: list[tuple[str, go.Figure]],
    talk: str = "",
) -> bytes:
    """What the presenter's screen shows, as one JSON document in this run's language (its code in "lang": the
    phones speak it unless their link says otherwise): each figure's JSON as drawn, once, and whether a phone
    draws it wide and scrolls it (viz.style.keeps_its_width, the rule the presenter's page follows); `talk`, while
    a talk is given, where it stands ("4 / 12 · title", ui/page/talk.py)."""
    labelled = [(_said(label), value) for label, value in texts]
    shown = {"page": _said(title), "lang": i18n.language(), "texts": labelled, "controls": controls, "talk": talk}
    head = json.dumps(shown | {"explore": explore})
    charts = ",".join(
        f'{{"caption":{json.dumps(caption)},"wide":{json.dumps(keeps_its_width(fig))},"figure":{_figure_json(fig)}}}'
        for caption, fig in figures
    )
    return (head[:-1] + f',"figures":[{charts}]}}').encode()


def explore_link(code: str) -> str:
    """This page's address without the presenter's parameters: a follower's own session of the same view, which
    says how to go back to room `code`."""
    path = urlsplit(st.context.url or "").path or "/"
    dropped = (*ROOM_PARAMS, BACK, *TALK_PLACE)  # a follower's own session gives no talk
    query = {k: st.query_params[k] for k in st.query_params if k not in dropped} | {BACK: code}
    return path + "?" + urlencode(query)


def publish(room: Presenting | None, document: Callable[[], bytes]) -> None:
    """Publish the run's view to the room when it differs from the last one published."""
    session = _session()
    if room is None or not session:
        return
    data = document()
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if digest == session.get("published"):
        return
    try:
        store.publish(room.code, room.key, data, i18n.language())
    except (store.RoomError, OSError) as exc:
        st.warning(_("The room could not be updated: {error}", error=exc))
        return
    session["published"] = digest


def controls_line(values: dict[str, Any], said: list[str]) -> str:
    """The presenter's controls in one line of words, in this run's language: layer, head, step, decoding, the
    page's own controls (a block by its name, the window as the pieces it shows, a colour scale other than the
    automatic one) and what is switched off (`said`, already in words)."""
    parts = [
        _("layer {n}", n=values.get("layer", 1)),
        _("head {n}", n=values.get("head", 1)),
        _("step {n}", n=values.get("step", 1)),
    ]
    if values.get("decode") == "beam":
        parts.append(_("beam search ({n})", n=values.get("beam")))
    if values.get("decode") == "sample":
        parts.append(_("sampled (T = {t}, seed {seed})", t=values.get("temperature"), seed=values.get("seed")))
    for name, named in _NAMED_CONTROLS.items():
        words = named(values[name]) if name in values else ""
        if words:
            parts.append(words)
    return " · ".join(parts + said)


def _window_words(span: Any) -> str:
    if isinstance(span, tuple) and len(span) == 2:
        return _("pieces {first}–{last}", first=span[0], last=span[1] - 1)
    return ""


def _colour_words(code: Any) -> str:
    if code == "auto" or code not in COLOUR_MODES:
        return ""
    return _("colour: {scale}", scale=i18n._(COLOUR_MODES[code]))


def _block_words(code: Any) -> str:
    return i18n._(BLOCK_NAMES[code]) if code in BLOCK_NAMES else str(code)


# The controls a page may add to the line, each said in words from its value (empty: nothing worth saying).
_NAMED_CONTROLS: dict[str, Callable[[Any], str]] = {
    "window": _window_words,
    "colour": _colour_words,
    "method": lambda value: _("attribution by {method}", method=value),
    "view": _block_words,
    "block": _block_words,
}

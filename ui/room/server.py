"""The audience's side of a room, as Starlette routes served beside Streamlit in the same process
(serve.py hands them to `st.App`): the phone page, the room's files, a push of each change by server-sent
events, and votes. No route runs a model or a Streamlit script: a follower costs a socket and the bytes of
each view, which the presenter's run wrote once (ui/room/store.py) and which ride in the event (the same bytes for
every follower) when they are small, so a phone fetches nothing.

    GET  /room/<code>[?lang=zh]            the audience page (ui/room/follow.html), its words in every language
    GET  /room-files/<code>/<file>         state.json, view-<n>.json (gzip-compressed when the phone accepts it)
    GET  /room-events/<code>               text/event-stream: the room's state (and its view, "gz": gzip in base64)
                                           on connect and on every change
    POST /room-vote/<code>                 {"question", "option", "voter", "lang"} -> {"message"} or {"error"}
    GET  /room-assets/plotly.min.js        plotly.js as the plotly package ships it
    GET  /room-stats                       this process's followers and model results computed (bench_follow)

The phone runs no Streamlit, so its words are said here, with the app's catalog (i18n): the page carries them in
every language and speaks `lang=` from its link, else the room's (the presenter's, kept in the room's state),
else the phone browser's; a vote's answer comes in the language the phone sends.

Behind nginx (deploy/nginx.conf.in) the files under /room-files/ are served by nginx itself from the shared
rooms folder; the events and votes reach any replica, since every replica reads the same folder.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gzip
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

import i18n
from i18n import _, n_
from ui.room import store

HERE = Path(__file__).resolve().parent
FILE_NAME = re.compile(r"^(state\.json|view-\d{1,9}\.json)$")
WATCH_SECONDS = 0.1  # how often a process looks at a followed room's state (one look per room, not per follower)
KEEPALIVE_SECONDS = 15.0
QUEUE_LENGTH = 8  # events a slow follower may lag behind before it is dropped (its browser reconnects)
# A change is pushed this long after it is seen: the presenter's run that made it has then sent its own page
# (Streamlit sends a session's messages from this same event loop, which the push to every follower holds).
SETTLE_SECONDS = 0.1
INLINE_BYTES = 200_000  # a compressed view up to this size rides in the event itself (base64), so no fetch follows


def _event(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


@dataclass
class _Channel:
    """One followed room in this process: its followers' queues and the task watching its files."""

    code: str
    queues: set[asyncio.Queue[bytes]] = field(default_factory=set)
    last: bytes = b""
    seen: Any = None  # what identified the room's state when `last` was made
    task: asyncio.Task[None] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # set when this process changed the room
    inline: tuple[str, str] = ("", "")  # (view file, its compressed bytes in base64): encoded once per view


class Hub:
    """Every room followed through this process; one watcher per room pushes each change to all its followers:
    the event (the room's state, and the view itself when it is small) is written once, as bytes, and the same
    bytes go to every follower. A change made in this process wakes the watcher at once; one made by another
    process (a replica behind nginx) is seen at the watcher's next look, WATCH_SECONDS later at most."""

    def __init__(self) -> None:
        self.channels: dict[str, _Channel] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        store.on_change(self._changed)

    def _changed(self, code: str) -> None:
        """From any thread: this process changed room `code`."""
        channel, loop = self.channels.get(code), self.loop
        if channel is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(channel.wake.set)

    def _snapshot(self, channel: _Channel) -> tuple[Any, bytes]:
        """(what identifies the room's state now, the event that says it)."""
        code = channel.code
        try:
            mtime = (store.public_dir(code) / "state.json").stat().st_mtime_ns
            now = store.state(code)
        except FileNotFoundError:
            return None, b""
        present = store.presenter_present(code)
        payload = now | {"present": present, "sent": time.time()}
        view = now.get("view")
        if view and channel.inline[0] != view:
            try:
                data = store.view_gz(code, view)
            except FileNotFoundError:
                data = b""
            channel.inline = (view, base64.b64encode(data).decode() if 0 < len(data) <= INLINE_BYTES else "")
        if view and channel.inline[1]:
            payload["gz"] = channel.inline[1]  # the view itself, gzip-compressed: the phone fetches nothing
        return (mtime, present), _event(payload)

    async def _watch(self, channel: _Channel) -> None:
        while channel.queues:
            channel.wake.clear()
            now, event = await anyio.to_thread.run_sync(self._snapshot, channel)
            if now != channel.seen and event and channel.last:
                await asyncio.sleep(SETTLE_SECONDS)
                now, event = await anyio.to_thread.run_sync(self._snapshot, channel)  # a later change, if any
            if now != channel.seen and event:
                channel.seen, channel.last = now, event
                for queue in list(channel.queues):
                    try:
                        queue.put_nowait(event)
                    except asyncio.QueueFull:  # too slow: drop it, its EventSource reconnects and gets `last`
                        channel.queues.discard(queue)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(channel.wake.wait(), WATCH_SECONDS)
        self.channels.pop(channel.code, None)

    async def follow(self, code: str) -> AsyncIterator[bytes]:
        """The room's events for one follower: its state now, then every change, keep-alives between."""
        self.loop = asyncio.get_running_loop()
        channel = self.channels.get(code)
        if channel is None:
            channel = self.channels[code] = _Channel(code)
        if not channel.last:  # a new channel (or one whose first look is still under way)
            channel.seen, channel.last = await anyio.to_thread.run_sync(self._snapshot, channel)
        queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUE_LENGTH)
        channel.queues.add(queue)
        if channel.task is None or channel.task.done():
            channel.task = asyncio.create_task(self._watch(channel))
        try:
            yield b"retry: 1000\n\n" + channel.last
            while queue in channel.queues:
                try:
                    yield await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield b": keep-alive\n\n"
        finally:
            channel.queues.discard(queue)

    def followers(self) -> int:
        """Followers connected to this process now."""
        return sum(len(c.queues) for c in self.channels.values())


HUB = Hub()


HTML_LANG = {"en": "en", "zh": "zh-Hans"}  # an i18n code -> the <html lang> tag of the phone's page
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")  # follow.html's {{word}}: the page's words, said before any script runs


def _gone(code: str, language: str) -> HTMLResponse:
    with i18n.speaking(language):
        title = _("No such room")
        text = _(
            "There is no room {code!r} on this server: check the link, or ask the presenter for a new one.",
            code=code[:20],
        )
    return HTMLResponse(
        f"<!doctype html><html lang='{HTML_LANG[language]}'><meta name=viewport content='width=device-width'>"
        f"<title>{_escape(title)}</title><p style='font:18px sans-serif;margin:2rem'>{_escape(text)}</p>",
        status_code=404,
    )


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("'", "&#39;")
        .replace('"', "&quot;")
    )


def _phone_words() -> dict[str, str]:
    """The phone page's own words in this run's language; follow.html fills their {fields} (the presenter's words,
    the page's title, texts and question, come with the view, in the presenter's language)."""
    return {
        "html_lang": HTML_LANG[i18n.language()],
        "page_title": _("Following the talk · Transformer Anatomy"),
        "following_wait": _("following …"),
        "following": _("following {code}"),
        "connecting": _("connecting …"),
        "reconnecting": _("reconnecting …"),
        "waiting": _("Waiting for the presenter's screen …"),
        "here": _("presenter is here"),
        "left": _("the presenter has left: this is their last view"),
        "not_yet": _("the presenter has not shared a view yet"),
        "explore": _("Explore this on your own (your own session) →"),
        "tab_title": _("{page} · following {code}"),
        "tap": _("tap to enlarge"),
        "zoomed": _("Chart, enlarged"),
        "close": _("Close"),
        "revealed": _("{question} The model's answer: {answer}."),
        # the count stays a {n} field, which the phone fills: the language's form for one vote and for several
        "vote_one": n_("{n} vote", "{n} votes", 1, n="{n}"),
        "vote_many": n_("{n} vote", "{n} votes", 2, n="{n}"),
        "answer_tag": _("the model's answer"),
        "yours": _("yours"),
        "vote_lost": _("Your vote did not reach the room: try again."),
    }


def phone_words(language: str) -> dict[str, str]:
    """The phone page's words in `language` (an i18n code; anything else is English)."""
    with i18n.speaking(language):
        return _phone_words()


def _accepted(request: Request) -> str:
    """The language the phone's browser asks for first (its Accept-Language header)."""
    first = request.headers.get("accept-language", "").split(",")[0].split(";")[0].strip()
    return i18n.from_locale(first)


def _room_language(code: str) -> str:
    """The language the room's presenter published the view in ("" before any view)."""
    try:
        spoken = store.state(code).get("lang", "")
    except (OSError, ValueError):
        return ""
    return spoken if spoken in i18n.LANGUAGES else ""


@cache
def _page() -> str:
    return (HERE / "follow.html").read_text()


@cache
def _rendered(shown: str, fixed: str, room: str) -> str:
    """follow.html with its words in `shown`, and every language's words for its script (`fixed`: the language
    its link asked for, `room`: the presenter's, "" when none)."""
    words = {code: phone_words(code) for code in i18n.LANGUAGES}
    phone = {"fixed": fixed or None, "room": room or None, "words": words}
    script = json.dumps(phone, ensure_ascii=False).replace("</", "<\\/")

    def fill(match: re.Match[str]) -> str:
        return script if match[1] == "phone" else _escape(words[shown][match[1]])

    return PLACEHOLDER.sub(fill, _page())


async def audience_page(request: Request) -> Response:
    """The phone's page of a room, in the language of its link's `lang=`, else the room's, else the browser's."""
    code = request.path_params["code"]
    asked = request.query_params.get("lang", "")
    fixed = asked if asked in i18n.LANGUAGES else ""
    if not store.exists(code):
        return _gone(code, fixed or _accepted(request))
    room = _room_language(code)
    page = _rendered(fixed or room or _accepted(request), fixed, room)
    return HTMLResponse(page, headers={"Cache-Control": "no-cache"})


_VIEWS: dict[Path, bytes] = {}  # views read so far (immutable files): the last few
KEPT_IN_MEMORY = 64


async def _view_bytes(path: Path) -> bytes:
    data = _VIEWS.get(path)
    if data is None:
        data = await anyio.Path(path).read_bytes()
        while len(_VIEWS) >= KEPT_IN_MEMORY:
            _VIEWS.pop(next(iter(_VIEWS)))
        _VIEWS[path] = data
    return data


async def room_file(request: Request) -> Response:
    """A room's state or one of its views, compressed when the phone accepts it (views never change)."""
    code, name = request.path_params["code"], request.path_params["name"]
    if not store.valid_code(code) or not FILE_NAME.match(name):
        return JSONResponse({"error": "No such file."}, status_code=404)
    path = store.public_dir(code) / name
    zipped = path.with_name(name + ".gz")
    headers = {
        "Cache-Control": "no-cache" if name == "state.json" else "public, max-age=31536000, immutable",
        "Vary": "Accept-Encoding",
        "Content-Type": "application/json",
    }
    gzipped = "gzip" in request.headers.get("accept-encoding", "")
    try:
        if name == "state.json":
            data = await anyio.Path(path).read_bytes()
        else:  # a view never changes: read once per process, whatever the number of followers
            data = await _view_bytes(zipped if gzipped else path)
            if gzipped:
                headers["Content-Encoding"] = "gzip"
    except FileNotFoundError:
        return JSONResponse({"error": "No such file (a newer view replaced it)."}, status_code=404)
    return Response(data, headers=headers)


async def room_events(request: Request) -> Response:
    """Server-sent events: the room's state now and at every change."""
    code = request.path_params["code"]
    if not store.exists(code):
        return JSONResponse({"error": f"There is no room {code[:20]!r} on this server."}, status_code=404)
    return StreamingResponse(
        HUB.follow(code),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


_REFUSALS = {"There is no room": 404, "no longer asked": 409, "revealed": 409, "already voted": 409}


async def room_vote(request: Request) -> Response:
    """One phone's answer to the room's question: {"message"}, or {"error"} and nothing changed, in the language
    the phone sends ("lang", an i18n code; English without it)."""
    code = request.path_params["code"]
    try:
        body = json.loads(await request.body())
        if not isinstance(body, dict):
            raise ValueError("not an object")
        question, option, voter = body.get("question"), body.get("option"), body.get("voter")
    except ValueError:
        return JSONResponse({"error": _('A vote is JSON: {"question": id, "option": n, "voter": id}.')}, 400)
    spoken = body.get("lang")
    with i18n.speaking(spoken if isinstance(spoken, str) else i18n.DEFAULT):
        if not isinstance(question, str):
            return JSONResponse({"error": _("A vote names its question.")}, 400)
        try:
            message = await anyio.to_thread.run_sync(store.vote, code, question, voter, option)
        except store.RoomError as exc:
            with i18n.speaking(i18n.DEFAULT):  # the refusal's kind, read from its English words
                english = str(exc)
            status = next((s for words, s in _REFUSALS.items() if words in english), 400)
            return JSONResponse({"error": str(exc)}, status)
        return JSONResponse({"message": str(message)})


@cache
def _plotly_js() -> tuple[bytes, bytes]:
    import plotly

    data = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    return data, gzip.compress(data, mtime=0)


async def plotly_js(request: Request) -> Response:
    """plotly.js from the plotly package (no CDN: a lecture hall may be offline)."""
    plain, zipped = await anyio.to_thread.run_sync(_plotly_js)
    headers = {"Cache-Control": "public, max-age=86400", "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(zipped, media_type="text/javascript", headers=headers | {"Content-Encoding": "gzip"})
    return Response(plain, media_type="text/javascript", headers=headers)


async def room_stats(warming_up: Callable[[], bool], request: Request) -> Response:
    """For the benchmark: followers connected to this process, the model results it computed so far, and whether
    its start-up warm-up (which computes one) is still running."""
    from ui.session.cache import RESULTS

    stats = {"followers": HUB.followers(), "model_runs": RESULTS.stats().misses, "warming_up": warming_up()}
    return JSONResponse(stats)


def routes(warming_up: Callable[[], bool] = lambda: False) -> list[BaseRoute]:
    """The audience's routes, for st.App(routes=...); `warming_up` says whether the server's start-up warm-up
    (ui/page/warmup.py, above the room in the layers) is still running."""
    return [
        Route("/room/{code}", audience_page),
        Route("/room-files/{code}/{name}", room_file),
        Route("/room-events/{code}", room_events),
        Route("/room-vote/{code}", room_vote, methods=["POST"]),
        Route("/room-assets/plotly.min.js", plotly_js),
        Route("/room-stats", partial(room_stats, warming_up)),
    ]


with contextlib.suppress(OSError):  # make the folder at start, so nginx can serve it before the first room
    store.root()

"""A browser-less Streamlit session: Streamlit's own websocket protocol, as the browser speaks it.

Each run sends a `rerun_script` BackMsg with a page and a query string (every control of this
app lives in the URL) and collects the page's elements until `script_finished`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

# Element kinds whose content is the page's answer; widgets and layout blocks are left out.
CONTENT = ("markdown", "heading", "alert", "plotly_chart", "exception", "code", "text", "metric")


@dataclass
class PageRun:
    """What one rerun of a page showed, in order, and how long it took."""

    elements: list[tuple[str, str]] = field(default_factory=list)  # (kind, content)
    seconds: float = 0.0
    # every delta as it came: (seconds after the rerun was sent, its place on the page, (kind, content) or None for
    # a block or an element with no content of CONTENT's kinds); a place written again replaces what was under it
    deltas: list[tuple[float, tuple[int, ...], tuple[str, str] | None]] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        """Tracebacks and error boxes the page showed."""
        return [
            content
            for kind, content in self.elements
            if kind == "exception" or (kind == "alert" and content.startswith("error:"))
        ]

    @property
    def charts(self) -> list[str]:
        """The plotly figure specs (JSON), in order."""
        return [content for kind, content in self.elements if kind == "plotly_chart"]


def _content(element) -> tuple[str, str] | None:
    kind = element.WhichOneof("type")
    if kind not in CONTENT:
        return None
    if kind == "plotly_chart":
        return kind, element.plotly_chart.spec
    if kind == "alert":
        return kind, f"{element.alert.Format.Name(element.alert.format).lower()}: {element.alert.body}"
    if kind == "exception":
        return kind, f"{element.exception.type}: {element.exception.message}"
    if kind == "heading":
        return kind, element.heading.body
    body = getattr(element, kind)
    return kind, getattr(body, "body", str(body))


class Session:
    """One websocket connection = one Streamlit session with its own session state.

    `cookie` is sent with the handshake (a proxy's route cookie); `resume` is the id of an earlier
    session to reconnect to, as a browser does after a dropped connection (Streamlit passes it in
    the third subprotocol entry; the second is an XSRF token this app does not need); `origin` is
    the page's origin a browser would send."""

    def __init__(
        self,
        url: str,
        timeout: float = 120.0,
        cookie: str | None = None,
        resume: str | None = None,
        origin: str | None = None,
        connect_to: tuple[str, int] | None = None,
    ) -> None:
        self.ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.timeout = timeout
        self.cookie, self.resume, self.origin = cookie, resume, origin
        self.connect_to = connect_to  # (host, port) to dial instead of the URL's (whose name is sent as Host)
        self.connection = None
        self.session_id: str | None = resume
        self.tried: list[str] = []  # the replicas a proxy tried, in order (its X-Anatomy-Replica header)
        self.replica: str | None = None  # the one that answered

    async def __aenter__(self) -> Session:
        protocols = ["streamlit"] + (["no-xsrf", self.resume] if self.resume else [])
        headers = {"Cookie": self.cookie} if self.cookie else None
        dial = {"host": self.connect_to[0], "port": self.connect_to[1], "proxy": None} if self.connect_to else {}
        self.connection = await websockets.connect(
            self.ws_url, subprotocols=protocols, max_size=None, additional_headers=headers, origin=self.origin, **dial
        )
        header = self.connection.response.headers.get("X-Anatomy-Replica")
        self.tried = [address.strip() for address in header.split(",")] if header else []
        self.replica = self.tried[-1] if self.tried else None
        return self

    async def __aexit__(self, *exc) -> None:
        await self.connection.close()

    async def run(self, page: str, query: str) -> PageRun:
        """Rerun `page` (its URL path) with `query` as the URL's query string."""
        message = BackMsg()
        message.rerun_script.query_string = query
        message.rerun_script.page_name = page
        started = time.perf_counter()
        await self.connection.send(message.SerializeToString())
        result = PageRun()
        while True:
            data = await asyncio.wait_for(self.connection.recv(), self.timeout)
            forward = ForwardMsg()
            forward.ParseFromString(data)
            kind = forward.WhichOneof("type")
            if kind == "new_session":
                self.session_id = forward.new_session.initialize.session_id
            elif kind == "delta":
                element = forward.delta.WhichOneof("type") == "new_element"
                content = _content(forward.delta.new_element) if element else None
                if content:
                    result.elements.append(content)
                result.deltas.append((time.perf_counter() - started, tuple(forward.metadata.delta_path), content))
            elif kind == "script_finished":
                if forward.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    result.elements.clear()  # the page asked for a rerun: its next run is the answer
                    result.deltas.clear()
                    continue
                result.seconds = time.perf_counter() - started
                return result

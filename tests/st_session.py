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

    @property
    def errors(self) -> list[str]:
        """Tracebacks and error boxes the page showed."""
        return [content for kind, content in self.elements
                if kind == "exception" or (kind == "alert" and content.startswith("error:"))]

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
    """One websocket connection = one Streamlit session with its own session state."""

    def __init__(self, url: str, timeout: float = 120.0) -> None:
        self.ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.timeout = timeout
        self.connection = None

    async def __aenter__(self) -> "Session":
        self.connection = await websockets.connect(self.ws_url, subprotocols=["streamlit"], max_size=None)
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
            if kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                content = _content(forward.delta.new_element)
                if content:
                    result.elements.append(content)
            elif kind == "script_finished":
                if forward.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    result.elements.clear()  # the page asked for a rerun: its next run is the answer
                    continue
                result.seconds = time.perf_counter() - started
                return result

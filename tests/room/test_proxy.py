"""Replicas behind nginx (deploy/room.py, what ./scripts/serve_room.sh runs), on loopback: every
session stays on the replica that holds it, both replicas serve, and when one replica dies its
sessions reconnect to the other while nothing else breaks."""

from __future__ import annotations

import asyncio
import urllib.request
from urllib.parse import urlencode

import pytest
from st_session import Session
from websockets.exceptions import ConnectionClosed

from deploy.room import running_room
from model.engine.tokenizer import normalize_source

pytestmark = pytest.mark.slow
SENTENCES = [
    "The cat eats the apple.",
    "My sisters will see the old house.",
    "The boys did not close the blue door.",
    "She gives the new book to the teacher.",
    "Do you love the red car?",
    "This man buys the newspaper.",
    "Your daughter sells phones in the train.",
    "Good children do not leave every week.",
    "This red bird will walk with the boys.",
    "Seven sons will not sing long songs in eight old parks.",
]


def replica_of(url: str, cookie: str) -> str:
    """The replica nginx's consistent hash sends this route cookie to."""
    request = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": cookie})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.headers["X-Anatomy-Replica"]


def seats(url: str, count: int = len(SENTENCES)) -> list[str]:
    """`count` fixed route cookies, half of them on each replica: the replicas' ports are free ones, so
    which replica a given cookie lands on changes from run to run, and ten fixed cookies can all land
    on one."""
    by_replica: dict[str, list[str]] = {}
    for index in range(20 * count):
        cookie = f"anatomy_route=seat-{index}"
        by_replica.setdefault(replica_of(url, cookie), []).append(cookie)
    first, second = by_replica.values()
    half = count // 2
    return first[:half] + second[: count - half]


def shows_sentence(run, index: int) -> bool:
    """Whether the Translate page says the model read sentence `index` ("The model read: ...")."""
    return ("text", normalize_source(SENTENCES[index]).text) in run.elements


def query(index: int) -> str:
    return urlencode({"sentence": SENTENCES[index], "head": str(1 + index % 4)})


@pytest.fixture(scope="module")
def room():
    with running_room(replicas=2) as running:
        yield running


def test_a_browser_on_another_machine_is_let_in(room):
    """Streamlit accepts a websocket whose Origin matches the Host it sees: the proxy must pass the
    Host on with its port (a name that is not localhost, as a room's laptop would be called)."""
    port = room.url.rsplit(":", 1)[1]

    async def visit():
        async with Session(
            f"http://anatomy-room.test:{port}",
            origin=f"http://anatomy-room.test:{port}",
            connect_to=("127.0.0.1", int(port)),
        ) as session:
            return await session.run("translate", query(0))

    run = asyncio.run(visit())
    assert not run.errors and shows_sentence(run, 0)


def test_nginx_hands_out_a_route_cookie_and_names_the_replica(room):
    with urllib.request.urlopen(f"{room.url}/_stcore/health", timeout=10) as reply:
        cookies = reply.headers.get_all("Set-Cookie")
        replica = reply.headers["X-Anatomy-Replica"]
    [route] = [c for c in cookies if c.startswith("anatomy_route=")]
    assert "HttpOnly" in route and len(route.split(";")[0]) > len("anatomy_route=") + 8
    assert replica in {r.address for r in room.replicas}


async def _reconnected(url: str, index: int, seat: str) -> dict:
    """Run the page with the session's controls, drop the connection, reconnect to the same session
    with no controls at all, and run it again; then a brand-new session the same way."""
    async with Session(url, cookie=seat) as first:
        before = await first.run("translate", query(index))
        session_id, replica = first.session_id, first.replica
    async with Session(url, cookie=seat, resume=session_id) as again:
        after = await again.run("translate", "")
        same_session = again.session_id == session_id
        replica_again = again.replica
    async with Session(url, cookie=seat) as fresh:
        newcomer = await fresh.run("translate", "")
    return {
        "before": before,
        "after": after,
        "newcomer": newcomer,
        "replica": replica,
        "replica_again": replica_again,
        "same_session": same_session,
    }


def test_ten_sessions_keep_their_state_across_a_reconnect_on_both_replicas(room):
    async def everyone():
        return await asyncio.gather(*(_reconnected(room.url, i, seat) for i, seat in enumerate(seats(room.url))))

    results = asyncio.run(everyone())
    for index, result in enumerate(results):
        assert not result["before"].errors and not result["after"].errors, index
        assert result["replica_again"] == result["replica"], "the route cookie brought it back to its replica"
        assert result["same_session"]
        assert result["after"].elements == result["before"].elements, "its first run's controls are still there"
        assert result["newcomer"].elements != result["before"].elements, "a new session starts from the defaults"
        assert shows_sentence(result["before"], index)
    served = {result["replica"] for result in results}
    assert served == {r.address for r in room.replicas}, "both replicas serve some of the sessions"


def test_when_a_replica_dies_its_sessions_reconnect_to_the_other_and_nothing_else_breaks():
    async def scenario(room):
        cookies = seats(room.url)
        sessions = [await Session(room.url, cookie=cookie).__aenter__() for cookie in cookies]
        try:
            first = [await s.run("translate", query(i)) for i, s in enumerate(sessions)]
            assert not any(run.errors for run in first)
            victim = room.replicas[0]
            on_victim = {i for i, s in enumerate(sessions) if s.replica == victim.address}
            assert on_victim and len(on_victim) < 10
            victim.process.kill()
            victim.process.wait()
            outcomes = {}
            for i, session in enumerate(sessions):
                try:
                    outcomes[i] = ("kept", await session.run("translate", ""))
                except (ConnectionClosed, OSError):
                    # what a browser does: reconnect; the route cookie's replica is gone, nginx sends
                    # it on to the live one, where it starts a new session
                    async with Session(room.url, cookie=cookies[i]) as again:
                        outcomes[i] = ("reconnected", await again.run("translate", query(i)), again.replica)
            async with Session(room.url) as newcomer:
                new_run = await newcomer.run("translate", query(0))
                new_replica = newcomer.replica
            return first, on_victim, outcomes, new_run, new_replica, victim
        finally:
            for session in sessions:
                await session.connection.close()

    with running_room(replicas=2) as room:
        first, on_victim, outcomes, new_run, new_replica, victim = asyncio.run(scenario(room))
        survivor = next(r.address for r in room.replicas if r is not victim)
    for i, outcome in outcomes.items():
        if i in on_victim:
            assert outcome[0] == "reconnected", i
            assert outcome[2] == survivor and not outcome[1].errors  # nginx may first have tried the dead one
            assert outcome[1].elements == first[i].elements, "the same page, rebuilt on the live replica"
        else:
            assert outcome[0] == "kept", i
            assert outcome[1].elements == first[i].elements and not outcome[1].errors
    assert new_replica == survivor and not new_run.errors

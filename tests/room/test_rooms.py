"""Rooms (ui/room/store.py) and their audience routes (ui/room/server.py), without Streamlit: unguessable codes and
keys, a forged key moves nobody, one vote per phone, clear refusals that change nothing; and, in AppTest, the
way back to the room for a follower who stepped out to explore."""

from __future__ import annotations

import base64
import gzip
import json
import os
import threading
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from streamlit.testing.v1 import AppTest

from ui.room import server, store


@pytest.fixture(autouse=True)
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(store.ROOMS_ENV, str(tmp_path))
    return tmp_path


@pytest.fixture
def client():
    with TestClient(Starlette(routes=server.routes())) as test_client:
        yield test_client


def test_codes_and_keys_are_unguessable_and_the_audience_never_sees_the_key(folder):
    made = [store.create() for _ in range(20)]
    codes, keys = {c for c, _ in made}, {k for _, k in made}
    assert len(codes) == len(keys) == 20
    assert all(store.valid_code(c) and len(c) * 5 >= 80 for c in codes)  # base32: 5 bits a letter
    assert all(len(k) >= 22 for k in keys)  # token_urlsafe(16): 128 bits
    code, key = made[0]
    served = "".join(p.read_text(errors="ignore") for p in (folder / "public").rglob("*") if p.is_file())
    assert key not in served and store._hash(key) not in served


def test_a_forged_key_moves_nobody():
    code, key = store.create()
    store.publish(code, key, b'{"page":"A","figures":[]}')
    with pytest.raises(store.RoomError, match="only its presenter"):
        store.publish(code, key[:-1] + ("A" if key[-1] != "A" else "B"), b'{"page":"forged"}')
    with pytest.raises(store.RoomError, match="only its presenter"):
        store.ask(code, "", store.Question("q", ("a", "b"), 0))
    assert store.state(code)["version"] == 1
    other, _ = store.create()
    assert not store.is_presenter(other, key)


def test_a_view_is_published_once_plain_and_compressed_and_old_ones_go():
    code, key = store.create()
    for n in range(1, 8):
        assert store.publish(code, key, json.dumps({"n": n}).encode()) == n
    state = store.state(code)
    assert state["view"] == "view-7.json" and not state["ended"]
    folder = store.public_dir(code)
    assert json.loads(gzip.decompress((folder / "view-7.json.gz").read_bytes())) == {"n": 7}
    assert not (folder / "view-1.json").exists() and (folder / "view-4.json").exists()


def test_votes_count_once_per_phone_change_until_the_reveal_and_bad_ones_are_refused():
    code, key = store.create()
    qid = store.ask(code, key, store.Question("Which?", ("le", "chat", "dort"), 1, "because"))
    assert "answer" not in store.state(code)["question"]  # the answer stays private until the reveal
    assert store.vote(code, qid, "phone-0001", 0).startswith("Counted")
    assert store.vote(code, qid, "phone-0001", 2).startswith("Changed")
    refusals = [
        ("aaaaaaaaaaaaaaaa", qid, "phone-0002", 0, "no room"),
        (code, "nope", "phone-0002", 0, "no longer asked"),
        (code, qid, "phone-0002", 3, "no option 4"),
        (code, qid, "phone-0002", -1, "no option 0"),
        (code, qid, "phone-0002", "1", "by number"),
        (code, qid, "x", 1, "phone's id"),
        (code, qid, "phone-0001", 2, "already voted"),
    ]
    for room, question, voter, option, words in refusals:
        with pytest.raises(store.RoomError, match=words):
            store.vote(room, question, voter, option)
    assert store.tally(code, qid) == [0, 0, 1]
    revealed = store.reveal(code, key, qid)
    assert revealed["answer"] == 1 and revealed["tally"] == [0, 0, 1] and not revealed["open"]
    with pytest.raises(store.RoomError, match="revealed"):
        store.vote(code, qid, "phone-0003", 0)
    assert store.tally(code, qid) == [0, 0, 1]


def test_votes_cast_at_once_are_each_counted_once():
    code, key = store.create()
    qid = store.ask(code, key, store.Question("Which?", ("a", "b", "c"), 0))
    errors = []

    def cast(index: int) -> None:
        try:
            store.vote(code, qid, f"phone-{index:05d}", index % 3)
        except store.RoomError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=cast, args=(i,)) for i in range(300)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and sum(store.tally(code, qid)) == 300 and store.tally(code, qid) == [100, 100, 100]


def test_the_routes_serve_the_page_the_views_and_refuse_bad_votes(client):
    code, key = store.create()
    store.publish(code, key, b'{"page":"Attention","figures":[]}')
    assert client.get(f"/room/{code}").status_code == 200
    assert "No such room" in client.get("/room/aaaaaaaaaaaaaaaa").text
    view = client.get(f"/room-files/{code}/view-1.json", headers={"Accept-Encoding": "gzip"})
    assert view.headers["content-encoding"] == "gzip" and view.json()["page"] == "Attention"
    assert "immutable" in view.headers["cache-control"]
    assert client.get(f"/room-files/{code}/../private").status_code == 404
    assert client.get(f"/room-files/{code}/room.json").status_code == 404
    qid = store.ask(code, key, store.Question("Which?", ("a", "b"), 0))
    vote = lambda body: client.post(f"/room-vote/{code}", content=body)  # noqa: E731
    assert vote(json.dumps({"question": qid, "option": 1, "voter": "phone-0001"})).json()["message"]
    assert vote(json.dumps({"question": qid, "option": 1, "voter": "phone-0001"})).status_code == 409
    assert vote(json.dumps({"question": qid, "option": 5, "voter": "phone-0002"})).status_code == 400
    assert vote("not json").status_code == 400
    assert client.post(
        "/room-vote/aaaaaaaaaaaaaaaa", content=json.dumps({"question": qid, "option": 0})
    ).status_code in (
        400,
        404,
    )
    assert store.tally(code, qid) == [0, 1]


def test_the_events_say_the_state_and_whether_the_presenter_is_there(client):
    code, key = store.create()
    store.publish(code, key, b'{"page":"Attention","figures":[]}')
    with client.stream("GET", f"/room-events/{code}") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                state = json.loads(line[6:])
                break
    assert state["view"] == "view-1.json" and state["present"] is True and state["room"] == code
    store.end(code, key)
    assert store.state(code)["ended"] and not store.presenter_present(code)


def test_an_event_carries_a_small_view_itself_and_a_change_in_this_process_is_pushed_at_once(client, monkeypatch):
    monkeypatch.setattr(server, "WATCH_SECONDS", 5.0)  # the watcher's own looks come too late to count
    code, key = store.create()
    store.publish(code, key, b'{"page":"Attention","figures":[1]}')
    with client.stream("GET", f"/room-events/{code}") as stream:
        lines = stream.iter_lines()
        states = []
        for line in lines:
            if line.startswith("data: "):
                states.append(json.loads(line[6:]))
                if len(states) == 1:  # the state on connect; then a change, made in this process
                    started = time.monotonic()
                    store.publish(code, key, b'{"page":"Why this word?","figures":[2]}')
                else:
                    break
        waited = time.monotonic() - started
    assert [s["view"] for s in states] == ["view-1.json", "view-2.json"]
    assert json.loads(gzip.decompress(base64.b64decode(states[1]["gz"])))["page"] == "Why this word?"
    assert waited < 1.0, "the watcher waited for its next look"


def test_a_follower_who_steps_out_to_explore_finds_the_way_back_to_the_room(folder, tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))
    page = str(Path(__file__).resolve().parents[2] / "pages" / "2_attention.py")
    presenter = AppTest.from_file(page, default_timeout=120)
    presenter.query_params["share"] = "on"
    presenter.query_params["sentence"] = "The cat eats the apple."
    presenter.run()
    code = presenter.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    explore = json.loads((store.public_dir(code) / store.state(code)["view"]).read_bytes())["explore"]
    query = dict(parse_qsl(urlsplit(explore).query))
    assert query["follow"] == code and "key" not in query and "room" not in query
    assert query["sentence"] == "The cat eats the apple."

    def back(params: dict[str, str]) -> list[str]:
        follower = AppTest.from_file(page, default_timeout=120)
        for name, value in params.items():
            follower.query_params[name] = value
        follower.run()
        return [m.value for m in follower.markdown if "anatomy-room-back" in m.value]

    shown = back(query)
    assert len(shown) == 1 and f"/room/{code}'" in shown[0] and "Back to the room" in shown[0]
    assert back(query | {"follow": "aaaaaaaaaaaaaaaa"}) == [], "no way back to a room that does not exist"


def test_a_room_idle_for_longer_than_the_limit_is_gone_with_its_views_and_votes(folder, monkeypatch):
    old, old_key = store.create()
    store.publish(old, old_key, b'{"page":"A","figures":[]}')
    store.vote(old, store.ask(old, old_key, store.Question("q", ("a", "b"), 0)), "phone-0001", 1)
    recent, recent_key = store.create()
    hours_ago = time.time() - 7 * 3600
    for path in [*(folder / "private" / old).rglob("*"), *(folder / "public" / old).rglob("*")]:
        os.utime(path, (hours_ago, hours_ago))
    assert not store.exists(old) and store.exists(recent), "7 hours without the presenter: the room is over"
    assert not store.is_presenter(old, old_key)
    monkeypatch.setenv(store.IDLE_ENV, "8")
    assert store.exists(old)
    monkeypatch.delenv(store.IDLE_ENV)
    assert store.sweep(time.time() - 2 * 3600) == []  # two hours ago it had been idle for 5 hours only
    newest, _ = store.create()  # opening a room sweeps the idle ones
    assert not (folder / "private" / old).exists() and not (folder / "public" / old).exists()
    assert store.exists(recent) and store.exists(newest)
    store.touch(recent, recent_key)


def _published_titles(code: str) -> list[str]:
    """The titles of the figures the room's phones see now."""
    view = json.loads(gzip.decompress(store.view_gz(code, store.state(code)["view"])))
    return [str(figure["figure"]["layout"].get("title", {}).get("text", "")) for figure in view["figures"]]


def _param(app: AppTest, key: str) -> str:
    value = app.query_params[key]
    return value[0] if isinstance(value, list) else value


def _cross_titles(titles: list[str]) -> list[str]:
    return [title for title in titles if "cross-attention" in title.lower()]


def test_an_open_question_hides_the_pictures_that_answer_it_until_the_reveal(tiny_checkpoint, monkeypatch):
    """Asked where a cross-attention head looks, the room sees no cross-attention picture, on the presenter's
    screen or in the view the phones read, until the presenter reveals the model's answer; the rest stays."""
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))
    page = str(Path(__file__).resolve().parents[2] / "pages" / "2_attention.py")
    app = AppTest.from_file(page, default_timeout=120)
    app.query_params.update({"share": "on", "sentence": "The cat eats the apple.", "view": "dec-cross"})
    app.run()
    assert not app.exception, app.exception
    code = _param(app, "room")
    before = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in app.get("plotly_chart")]
    assert _cross_titles(before) and _cross_titles(_published_titles(code))
    app.button(key="room-ask").click().run()
    assert not app.exception, app.exception
    assert store.state(code)["question"]["open"]
    asked = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in app.get("plotly_chart")]
    assert asked and not _cross_titles(asked), "the presenter's screen gives the answer away"
    assert not _cross_titles(_published_titles(code)), "the phones' view gives the answer away"
    assert len(asked) < len(before) and "Hidden until the reveal" in " ".join(i.value for i in app.info)
    app.button(key="room-reveal").click().run()
    assert not app.exception, app.exception
    revealed = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in app.get("plotly_chart")]
    assert _cross_titles(revealed) == _cross_titles(before) and _cross_titles(_published_titles(code))


def test_on_the_why_page_attribution_waits_for_the_reveal(tiny_checkpoint, monkeypatch):
    """Asked which source piece made the model write a piece, the room sees no attribution nor patching (which name
    it) until the reveal; the logit lens, which does not, stays."""
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))
    page = str(Path(__file__).resolve().parents[2] / "pages" / "8_why.py")
    app = AppTest.from_file(page, default_timeout=120)
    app.query_params.update({"share": "on", "sentence": "The cat eats the apple."})
    app.run()
    assert not app.exception, app.exception

    def attribution_shown() -> bool:
        return any("<span title=" in m.value for m in app.markdown)

    def lens_shown() -> bool:
        return any("Logit lens" in str(json.loads(c.proto.spec)["layout"]) for c in app.get("plotly_chart"))

    assert attribution_shown() and lens_shown()
    app.button(key="room-ask").click().run()
    assert not app.exception, app.exception
    assert not attribution_shown() and lens_shown()
    assert "Hidden until the reveal" in " ".join(i.value for i in app.info)
    app.button(key="room-reveal").click().run()
    assert attribution_shown()

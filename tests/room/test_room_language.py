"""The room in the audience's language: the phone page (ui/room/server.py, ui/room/follow.html) says its own words
in the language its link asks for (lang=), else the room's (the presenter's), else the phone browser's, English
by default; a vote's answer comes in the phone's language; the presenter's heartbeat, a fragment that reruns
without the page's start, keeps the page's language; a presenter speaking Chinese hands out a link with lang=zh."""

from __future__ import annotations

import json
import re
from pathlib import Path

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots
from streamlit.testing.v1 import AppTest
from test_rooms import client, folder  # noqa: F401 - the rooms' folder and the phones' routes, as pytest fixtures

from i18n import speaking
from ui.room import presenter, store


def _phone(html: str) -> dict:
    """The words follow.html's script reads (the JSON the server put in the page)."""
    found = re.search(r"const PHONE = (\{.*?\});\n", html)
    assert found, "the page carries its words"
    return json.loads(found[1])


def test_the_phone_page_speaks_english_by_default_and_chinese_for_lang_zh(client):  # noqa: F811
    code, key = store.create()
    english = client.get(f"/room/{code}").text
    assert '<html lang="en">' in english and "Waiting for the presenter's screen …" in english
    assert "<title>Following the talk · Transformer Anatomy</title>" in english
    assert "{{" not in english, "every placeholder is filled"
    phone = _phone(english)
    assert phone["fixed"] is None and phone["room"] is None
    assert phone["words"]["en"]["following"] == "following {code}"
    assert phone["words"]["en"]["vote_one"] == "{n} vote" and phone["words"]["en"]["vote_many"] == "{n} votes"

    chinese = client.get(f"/room/{code}?lang=zh").text
    assert '<html lang="zh-Hans">' in chinese and "正在等待主讲人的屏幕……" in chinese
    assert "Waiting for the presenter" not in chinese.split("<script>")[0], "the page's HTML is in Chinese"
    phone = _phone(chinese)
    assert phone["fixed"] == "zh"
    words = phone["words"]["zh"]
    assert words["following"] == "跟随房间 {code}" and words["here"] == "主讲人在线"
    assert words["vote_one"] == words["vote_many"] == "{n} 票"
    assert all(re.search(r"[\u4e00-\u9fff]", text) for name, text in words.items() if name != "html_lang"), words
    assert set(words) == set(phone["words"]["en"]), "every word is said in every language"
    assert "{{" not in chinese and "</script>" in chinese


def test_without_lang_the_phone_speaks_the_rooms_language_else_the_browsers(client):  # noqa: F811
    code, key = store.create()
    browser_zh = client.get(f"/room/{code}", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}).text
    assert "正在等待主讲人的屏幕" in browser_zh and _phone(browser_zh)["room"] is None
    store.publish(code, key, b'{"page":"A","lang":"zh","figures":[]}', "zh")
    assert store.state(code)["lang"] == "zh"
    page = client.get(f"/room/{code}", headers={"Accept-Language": "en-GB"}).text
    assert "正在等待主讲人的屏幕" in page and _phone(page)["room"] == "zh"
    fixed = client.get(f"/room/{code}?lang=en", headers={"Accept-Language": "zh-CN"}).text
    assert "Waiting for the presenter's screen" in fixed and _phone(fixed)["fixed"] == "en", "the link's lang= first"


def test_a_missing_room_and_the_votes_answer_in_the_phones_language(client):  # noqa: F811
    assert "没有这个房间" in client.get("/room/aaaaaaaaaaaaaaaa?lang=zh").text
    assert "No such room" in client.get("/room/aaaaaaaaaaaaaaaa").text
    code, key = store.create()
    qid = store.ask(code, key, store.Question("Which?", ("le", "chat"), 1))
    vote = lambda **body: client.post(f"/room-vote/{code}", content=json.dumps(body))  # noqa: E731
    counted = vote(question=qid, option=1, voter="phone-0001", lang="zh")
    assert counted.status_code == 200 and counted.json()["message"] == "已计票：chat。"
    again = vote(question=qid, option=1, voter="phone-0001", lang="zh")
    assert again.status_code == 409 and "已经投给了" in again.json()["error"], "a refusal keeps its status"
    wrong = vote(question=qid, option=5, voter="phone-0002", lang="zh")
    assert wrong.status_code == 400 and wrong.json()["error"] == "没有选项 6：请在 1 到 2 中选一个。"
    english = vote(question=qid, option=0, voter="phone-0003")
    assert english.json()["message"] == "Counted: le."
    assert store.tally(code, qid) == [1, 1]


def test_the_rooms_refusals_say_themselves_in_the_language_that_shows_them():
    code, key = store.create()
    with pytest.raises(store.RoomError) as refused:
        store.publish(code, "forged-key", b"{}")
    assert "only its presenter can move it" in str(refused.value)
    with speaking("zh"):
        assert str(refused.value) == f"这个密钥打不开房间 {code}：只有它的主讲人才能操控它。"


def test_the_view_document_and_the_controls_line_speak_the_presenters_language():
    with speaking("zh"):
        document = json.loads(presenter.view_document("Attention", [("Sentence", "The cat.")], "", "/x", []))
        line = presenter.controls_line({"layer": 2, "head": 3, "step": 4, "decode": "beam", "beam": 5}, [])
    assert document["lang"] == "zh" and document["texts"] == [["句子", "The cat."]]
    assert line == "第 2 层 · 第 3 个头 · 第 4 步 · 束搜索（5）"
    english = json.loads(presenter.view_document("Attention", [("Sentence", "The cat.")], "", "/x", []))
    assert english["lang"] == "en" and english["page"] == "Attention" and english["texts"] == [["Sentence", "The cat."]]
    assert presenter.controls_line({"step": 2}, []) == "layer 1 · head 1 · step 2"
    # a page's own controls in words, not as the URL writes them ("window 0-39 · colour auto · view dec-cross")
    page = {"step": 2, "window": (0, 40), "colour": "auto", "view": "dec-cross", "method": "occlusion"}
    assert presenter.controls_line(page, []) == (
        "layer 1 · head 1 · step 2 · pieces 0–39 · attribution by occlusion · decoder cross-attention"
    )
    assert presenter.controls_line({"colour": "log"}, []).endswith(" · colour: log₁₀ weight")
    with speaking("zh"):
        assert "解码器交叉注意力" in presenter.controls_line(page, [])


def _heartbeat_page(code: str, key: str, qid: str, language: str) -> None:
    """A run in English (no page start) that draws the room's heartbeat for a page in `language`."""
    import streamlit as st

    from ui.room import presenter

    st.session_state[presenter.SESSION] = {"code": code, "key": key, "published": "", "question": qid}
    presenter._heartbeat(code, key, language)
    st.markdown(presenter.audience_url(code))


def test_the_heartbeat_says_the_tally_in_the_pages_language():
    code, key = store.create()
    qid = store.ask(code, key, store.Question("Which?", ("le", "chat"), 1))
    store.vote(code, qid, "phone-0001", 1)
    store.vote(code, qid, "phone-0002", 1)
    chinese = AppTest.from_function(_heartbeat_page, args=(code, key, qid, "zh"), default_timeout=60)
    chinese.run()
    said = [m.value for m in chinese.markdown]
    assert "**实时计票**（2 票）：le 0 · chat 2" in said, said
    english = AppTest.from_function(_heartbeat_page, args=(code, key, qid, "en"), default_timeout=60)
    english.run()
    said = [m.value for m in english.markdown]
    assert "**Live tally** (2 votes): le 0 · chat 2" in said, said
    assert any(s.endswith(f"/room/{code}") for s in said), "an English presenter's link has no lang="
    store.vote(code, qid, "phone-0003", 0)
    one = AppTest.from_function(
        _heartbeat_page, args=(code, key, store.ask(code, key, store.Question("?", ("a", "b"), 0)), "en")
    )
    one.run()
    assert any("(0 votes)" in m.value for m in one.markdown)


def test_a_presenter_speaking_chinese_shares_a_chinese_room(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))
    page = str(Path(__file__).resolve().parents[2] / "pages" / "2_attention.py")
    app = AppTest.from_file(page, default_timeout=120)
    app.query_params["share"] = "on"
    app.query_params["lang"] = "zh"
    app.query_params["sentence"] = "The cat eats the apple."
    app.run()
    assert not app.exception, app.exception
    code = app.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    assert any(t.label == "共享到房间" for t in app.toggle)
    links = [m.value for m in app.markdown if "anatomy-room-link" in m.value]
    assert len(links) == 1 and f"/room/{code}?lang=zh</div>" in links[0], "the follow link carries lang=zh"
    assert any(e.label == f"房间 {code}：手机跟随这个屏幕" for e in app.expander)
    state = store.state(code)
    assert state["lang"] == "zh"
    view = json.loads((store.public_dir(code) / state["view"]).read_bytes())
    assert view["lang"] == "zh" and view["texts"][0] == ["句子", "The cat eats the apple."]
    assert view["controls"].startswith("第 1 层 · 第 1 个头 · 第 1 步")


def test_the_view_document_says_which_charts_a_phone_draws_wide():
    """follow.html widens a chart as the view says: the presenter's own rule (viz.style.keeps_its_width)."""
    figures = [("one map", go.Figure()), ("two panels", make_subplots(rows=1, cols=2))]
    document = json.loads(presenter.view_document("Attention", [], "", "/x", figures))
    assert [chart["wide"] for chart in document["figures"]] == [False, True]

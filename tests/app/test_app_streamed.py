"""A continuation or a translation drawn while it is written (ui/page/stream.py), as a person sees the page: the
same finished page as without the stream, the result in the shared cache afterwards (a second run does not
stream), and a decoding error shown as the page's own message; on tiny decoders and a tiny Marian, with the cost
above which a page streams set to nothing."""

from __future__ import annotations

import re
import threading
import time

import pytest
from hf_fixtures import make_marian_dir
from test_app import assert_clean, charts, run
from test_app_decoder_only import PROMPT, big
from test_app_models import GPT2, gpt2_folder

from model import InputError, load_bundle
from ui.page import stream
from ui.session import engine
from ui.session.cache import RESULTS
from views.controls import Controls, Limits, shared_fields

PAGES = [
    "pages/1_translate.py",
    "pages/2_attention.py",
    "pages/3_positional_encoding.py",
    "pages/4_tensor_shapes.py",
    "pages/8_why.py",
]


MARIAN = "tiny-marian"
SENTENCE = "The girl sees the red house near the river."


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {GPT2: gpt2_folder(root), MARIAN: make_marian_dir(root / MARIAN)}


@pytest.fixture(autouse=True)
def models_env(folders, monkeypatch):
    monkeypatch.setenv("ANATOMY_MODELS", ":".join(str(p) for p in folders.values()))


def _page(path: str, monkeypatch, streamed: bool, sentence: str = PROMPT, model: str = GPT2):
    monkeypatch.setattr(stream, "STREAM_WORK", 0.0 if streamed else float("inf"))
    RESULTS.clear()
    return run(path, {"model": model, "sentence": sentence})


@pytest.mark.parametrize("model", [GPT2, MARIAN])
@pytest.mark.parametrize("path", PAGES)
def test_a_streamed_page_ends_as_the_page_drawn_at_once(path, model, monkeypatch):
    calls = []
    real = stream.streamed
    monkeypatch.setattr(stream, "streamed", lambda page, preview: calls.append(1) or real(page, preview))
    text = PROMPT if model == GPT2 else SENTENCE
    streamed = _page(path, monkeypatch, True, text, model)
    assert_clean(streamed)
    assert calls, "the page streamed its continuation"
    at_once = _page(path, monkeypatch, False, text, model)
    assert [c["layout"].get("title") for c in charts(streamed)] == [c["layout"].get("title") for c in charts(at_once)]
    assert [m.value for m in streamed.markdown] == [m.value for m in at_once.markdown]
    if path.endswith("1_translate.py"):
        assert big(streamed) == big(at_once)


def test_beam_search_says_how_far_it_is_and_ends_as_the_page_drawn_at_once(monkeypatch):
    lines: list[str] = []
    real = stream.beam_line
    monkeypatch.setattr(stream, "beam_line", lambda *args: lines.append(real(*args)) or lines[-1])
    beams = {"model": GPT2, "sentence": PROMPT, "decode": "beam", "beam": "3"}
    monkeypatch.setattr(stream, "STREAM_WORK", 0.0)
    RESULTS.clear()
    streamed = run("pages/1_translate.py", beams)
    assert_clean(streamed)
    # the steps that came while the page drew are said at once, by the last of them
    said = re.compile(r"Searching 3 beams for the continuation: step \d+ of at most \d+; the best so far ends “")
    assert lines and all(said.match(line) for line in lines), lines
    monkeypatch.setattr(stream, "STREAM_WORK", float("inf"))
    RESULTS.clear()
    at_once = run("pages/1_translate.py", beams)
    assert [m.value for m in streamed.markdown] == [m.value for m in at_once.markdown]
    assert big(streamed) == big(at_once)


def test_the_attention_page_draws_the_prompts_sinks_while_the_continuation_is_written(folders, monkeypatch):
    from ui.parts import sinks

    heard, real = [], sinks.prompt_shares
    monkeypatch.setattr(
        sinks, "prompt_shares", lambda page, prompt, *stack: heard.append(prompt) or real(page, prompt, *stack)
    )
    at = _page("pages/2_attention.py", monkeypatch, True)
    assert_clean(at)
    [prompt] = heard  # from the prompt's own pass, once, before the continuation was whole
    assert len(prompt.tgt_pieces) == len(load_bundle(str(folders[GPT2])).read_input(PROMPT))


def test_a_translation_draws_the_encoders_views_first_and_then_grows(folders, monkeypatch):
    """An encoder-decoder's Attention page draws the encoder's self-attention over the sentence (heard once, with
    no decoder rows) before the translation is whole; its Translate page draws the translation as it grows."""
    from ui.parts import sinks

    heard, real = [], sinks.prompt_shares
    monkeypatch.setattr(
        sinks, "prompt_shares", lambda page, prompt, *stack: heard.append((prompt, stack)) or real(page, prompt, *stack)
    )
    at = _page("pages/2_attention.py", monkeypatch, True, SENTENCE, MARIAN)
    assert_clean(at)
    [(prompt, stack)] = heard
    bundle = load_bundle(str(folders[MARIAN]))
    assert stack == ("encoder",) and prompt.tgt_pieces == [] and prompt.src_ids == tuple(bundle.read_input(SENTENCE))
    whole = bundle.translate(SENTENCE).trace
    for layer in range(bundle.config.n_encoder_layers):  # the encoder's own pass, as in the finished trace
        assert (prompt.pattern("encoder", "self", layer) == whole.pattern("encoder", "self", layer)).all()

    grown: list[list[str]] = []
    monkeypatch.setattr(stream, "written_line", lambda written, noun: grown.append(written.text) or written.text)
    at = _page("pages/1_translate.py", monkeypatch, True, SENTENCE, MARIAN)
    assert_clean(at)
    assert grown and grown[-1] == bundle.translate(SENTENCE).translation


def test_a_rotary_models_positional_page_turns_the_prompt_while_the_continuation_is_written(tmp_path, monkeypatch):
    from hf_fixtures import make_decoder_dir

    from ui.parts import rotary

    folder = make_decoder_dir(tmp_path / "tiny-llama", "llama", seed=1)
    monkeypatch.setenv("ANATOMY_MODELS", str(folder))
    heard, real = [], rotary.prompt_view
    monkeypatch.setattr(rotary, "prompt_view", lambda page, prompt: heard.append(prompt) or real(page, prompt))
    monkeypatch.setattr(stream, "STREAM_WORK", 0.0)
    RESULTS.clear()
    at = run("pages/3_positional_encoding.py", {"model": "tiny-llama", "sentence": PROMPT})
    assert_clean(at)
    [prompt] = heard  # drawn once, from the prompt's own pass, before the continuation was whole
    assert len(prompt.tgt_pieces) == len(load_bundle(str(folder)).read_input(PROMPT))
    assert "Rotation angle per position × pair" in str([c["layout"].get("title") for c in charts(at)])


def test_the_streamed_result_is_kept_for_the_next_run_which_draws_at_once(monkeypatch):
    calls = []
    real = stream.streamed
    monkeypatch.setattr(stream, "streamed", lambda page, preview: calls.append(1) or real(page, preview))
    first = _page("pages/1_translate.py", monkeypatch, True)
    again = first.run()
    assert_clean(again)
    assert len(calls) == 1, "the second run found the continuation in the shared cache"
    assert big(again) == big(first)


def test_an_error_of_the_decoding_is_the_pages_own_message(monkeypatch):
    def refuse(*args, **kwargs):
        raise InputError("No continuation today.")

    monkeypatch.setattr(engine, "translate", refuse)
    at = _page("pages/1_translate.py", monkeypatch, True)
    assert not at.exception
    assert [e.value for e in at.error] == ["No continuation today\\."]


class _Run:
    """What a stream reads of a page run, outside Streamlit (its calls do nothing there)."""

    def __init__(self, bundle, controls):
        self.bundle, self.controls, self.output_noun = bundle, controls, "continuation"


def test_a_run_that_stops_mid_way_stops_the_decoding_and_keeps_nothing(folders):
    bundle = load_bundle(folders[GPT2])
    controls = Controls.from_values({**{f.key: f.default for f in shared_fields(_limits(bundle))}, "sentence": PROMPT})
    RESULTS.clear()
    heard: list[int] = []

    def stop_at_two(page, written):
        heard.append(len(written))
        if len(written) >= 2:
            raise KeyboardInterrupt  # as a rerun's exception stops a page run at its next Streamlit call

    with pytest.raises(KeyboardInterrupt):
        stream.streamed(_Run(bundle, controls), stream.Preview(pieces=stop_at_two))
    deadline = time.monotonic() + 30
    while any(t.name == "continuation" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(t.name == "continuation" for t in threading.enumerate()), "the decoding stopped"
    assert not engine.in_cache(bundle, PROMPT, controls.interventions(), chat=False), "no half result is kept"
    full = bundle.generate(PROMPT)
    assert len(full.output_ids) > 2 and heard[-1] < len(full.output_ids)


def _limits(bundle):
    cfg = bundle.config
    return Limits(cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.n_heads, cfg.max_len, cfg.cross_attention)


def test_a_translations_positional_page_draws_its_table_while_the_translation_is_written(monkeypatch):
    """The table of positions needs no run: drawn from the stream's prompt news, then again on the finished page."""
    from ui.parts import positions

    drawn, real = [], positions.table_figure
    monkeypatch.setattr(positions, "table_figure", lambda page: drawn.append(page.result) or real(page))
    at = _page("pages/3_positional_encoding.py", monkeypatch, True, SENTENCE, MARIAN)
    assert_clean(at)
    assert len(drawn) == 2 and drawn[0] is None and drawn[1] is not None  # before the result, then with it

"""Today's decoders opened up on the five tiny families (AppTest): rotary positions on the Positional
encoding page, shared key/value heads and the KV cache on the Attention page, attention sinks and
Gemma 3's sliding windows; each page names what it shows."""

from __future__ import annotations

import pytest
from hf_fixtures import DECODER_FAMILIES, GEMMA_WINDOW
from test_app import assert_clean, run
from test_app_decoders import SENTENCE, _name, folders, models_env  # noqa: F401
from test_app_models import texts


def _charts(at) -> list[str]:
    return [c.proto.spec for c in at.get("plotly_chart")]


@pytest.mark.parametrize("family", DECODER_FAMILIES)
def test_positional_page_shows_rope(family):
    at = run("pages/3_positional_encoding.py", {"model": _name(family), "sentence": SENTENCE})
    assert_clean(at)
    said = texts(at)
    assert "RoPE" in said and "rotary" in said


@pytest.mark.parametrize("family", DECODER_FAMILIES)
def test_attention_page_names_the_cache_the_shared_heads_and_sinks(family):
    at = run("pages/2_attention.py", {"model": _name(family), "sentence": SENTENCE, "step": "3"})
    assert_clean(at)
    said = texts(at)
    assert "cache" in said and "sink" in said
    if family != "gpt_neox":
        assert any(word in said for word in ("grouped", "GQA", "MQA", "shared"))
    assert "past_key_values" in said
    assert "The KV cache after step t = 3" in [h.value for h in at.subheader]


def test_gemma_names_its_window_in_the_sinks_the_cache_and_the_band():
    """Past Gemma 3's window (4 pieces in the tiny model) the page says which queries cannot see the first piece,
    what transformers' cache keeps of a sliding layer, and where the band begins."""
    at = run("pages/2_attention.py", {"model": _name("gemma3_text"), "sentence": SENTENCE})
    assert_clean(at)
    said = texts(at)
    assert f"a query at position {GEMMA_WINDOW} or later cannot see the first piece at all" in said
    assert f"transformers' cache keeps just their last {GEMMA_WINDOW - 1} positions" in said
    assert f"from query {GEMMA_WINDOW} on the first piece is out of the sliding layers' reach" in said

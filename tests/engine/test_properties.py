"""Property-based: whatever text arrives, translate either refuses it plainly or returns a
well-formed trace."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import DecodeOptions, InputError

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=300) | st.text(max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sentence=TEXT)
def test_any_unicode_gives_a_plain_refusal_or_a_well_formed_trace(tiny_bundle, sentence):
    try:
        result = tiny_bundle.translate(sentence, options=DecodeOptions(max_len=8))
    except InputError as exc:
        assert "Type an English sentence" in str(exc)
        return
    trace, cfg = result.trace, tiny_bundle.config
    assert "⁇" not in "".join(trace.src_pieces)
    assert len(trace.src_pieces) == len(trace.src_ids) <= cfg.max_len
    for stack, kind, queries, keys in (
        ("encoder", "self", trace.src_pieces, trace.src_pieces),
        ("decoder", "self", trace.tgt_pieces, trace.tgt_pieces),
        ("decoder", "cross", trace.tgt_pieces, trace.src_pieces),
    ):
        for layer in range(trace.n_layers(stack)):
            pattern = trace.pattern(stack, kind, layer)
            assert pattern.shape == (cfg.n_heads, len(queries), len(keys))
            np.testing.assert_allclose(pattern.sum(-1), 1.0, atol=1e-5)
    assert all(np.isfinite(trace.tensor(name)).all() for name, _ in trace.stages if "masked" not in name)

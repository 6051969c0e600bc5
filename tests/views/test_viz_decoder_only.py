"""The pure helpers the decoder-only pages use: byte-level BPE labels, the weight a pattern puts on later
pieces, the change of real rows between two patterns, the beams and knock-out tables' wording; and the
controls' blocks of a model without cross-attention."""

from __future__ import annotations

import numpy as np
import pytest

from model.results import Beam
from views.controls import Controls, Limits, all_heads, parse_head_code, shared_fields
from views.fields import read_fields
from viz.labels import display_piece, marker_note, running_text
from viz.masks import future_weight, knockout_chart, knockout_frame, largest_change
from viz.style import Style
from viz.translate import beams_frame


def test_byte_level_pieces_read_as_words():
    assert display_piece("Ġbird") == "bird" and display_piece("Ġ") == "␣" and display_piece("Ċ") == "↵"
    assert display_piece("▁oiseau") == "oiseau" and display_piece("##ing") == "##ing"
    assert running_text(["The", "Ġs", "m", "all", "Ġgirl"]) == ["The", " s", "m", "all", " girl"]
    assert running_text(["▁Le", "▁chat", "s"]) == ["Le", " chat", "s"]
    assert running_text(["the", "##re", "cat"]) == ["the", "re", " cat"]
    assert "Ġ" in marker_note(["The", "Ġcat"]) and "▁" in marker_note(["▁Le"]) and "##" in marker_note(["##s"])
    assert marker_note(["a", "b"]) == ""


def test_future_weight_is_zero_under_a_causal_mask_and_counts_later_keys():
    causal = np.tril(np.ones((3, 3)))
    causal = np.stack([causal / causal.sum(-1, keepdims=True)] * 2)
    assert future_weight(causal) == 0.0
    uniform = np.full((2, 3, 3), 1 / 3)
    assert future_weight(uniform) == pytest.approx((2 / 3 + 1 / 3 + 0) / 3)
    with pytest.raises(ValueError):
        future_weight(np.ones((2, 3, 4)))


def test_largest_change_reads_the_first_rows_only():
    before = np.zeros((2, 4, 4))
    after = before.copy()
    after[1, 3, 0] = 0.5  # a padding row
    assert largest_change(before, after, 3) == 0.0
    assert largest_change(before, after, 4) == 0.5
    with pytest.raises(ValueError):
        largest_change(before, np.zeros((2, 3, 3)), 2)


def test_tables_name_a_continuation():
    beams = [Beam("a b", ["a", "b"], -1.0, -0.5, True)]
    assert list(beams_frame(beams, "continuation").columns)[:2] == ["rank", "continuation"]
    assert "translation" in beams_frame(beams).columns
    rows = [
        {
            "head": ("decoder", "self", 0, 0),
            "log_prob": -3.0,
            "translation": "x",
            "base_translation": "y",
            "base_log_prob": -1.0,
        }
    ]
    frame = knockout_frame(rows, {("decoder", "self", 0, 0): "decoder self L1 H1"}, "continuation")
    assert frame["continuation changed"].tolist() == [True]
    assert "continuation with the head knocked out" in frame.columns
    assert knockout_chart(frame, Style(), output="continuation").data


def test_a_decoder_only_model_has_no_cross_attention_heads_to_pick():
    limits = Limits(n_encoder_layers=0, n_decoder_layers=2, n_heads=3, max_len=64, cross_attention=False)
    assert list(limits.blocks) == ["dec-self"]
    assert {kind for _, kind, _, _ in all_heads(limits)} == {"self"} and len(all_heads(limits)) == 6
    with pytest.raises(ValueError):
        parse_head_code("dec-cross-1-1", limits)
    values, notes = read_fields(shared_fields(limits), {"ablate": "dec-self-2-3,dec-cross-1-1"})
    assert notes and values["ablate"] == ()
    full = Limits(n_encoder_layers=2, n_decoder_layers=2, n_heads=3, max_len=64)
    assert list(full.blocks) == ["enc-self", "dec-self", "dec-cross"]


def test_a_typed_prefix_goes_before_the_sentence():
    values, _ = read_fields(shared_fields(Limits(1, 1, 1, 8)), {"sentence": "I see a bird."})
    assert Controls.from_values(values).sentence == "I see a bird."
    controls = Controls.from_values(values, prefix="summarize: ")
    assert controls.sentence == "summarize: I see a bird." and controls.prefix == "summarize: "

"""views.controls: controls <-> URL query parameters, validated against the model (no streamlit run)."""

from __future__ import annotations

import pytest

from model import Sampling
from views.controls import EXAMPLES, Controls, Limits, all_heads, head_code, head_label, parse_head_code, shared_fields
from views.fields import read_fields, write_fields

LIMITS = Limits(n_encoder_layers=3, n_decoder_layers=2, n_heads=4, max_len=96)


def test_defaults_round_trip_through_the_url():
    fields = shared_fields(LIMITS)
    values, notes = read_fields(fields, {})
    assert notes == []
    assert read_fields(fields, write_fields(fields, values)) == (values, [])


def test_every_value_round_trips():
    fields = shared_fields(LIMITS)
    params = {
        "sentence": "I see <b>a</b> bird & co",
        "decode": "beam",
        "beam": "16",
        "layer": "3",
        "head": "4",
        "causal": "off",
        "padding": "off",
        "pe": "off",
        "scale": "off",
        "embscale": "off",
        "fill": "-1e9",
        "ablate": "enc-self-3-4,dec-cross-2-1",
        "step": "7",
        "present": "on",
        "export": "svg",
    }
    values, notes = read_fields(fields, params)
    assert notes == []
    sampling_defaults = {"temperature": "1", "topk": "0", "topp": "1", "seed": "0"}
    assert write_fields(fields, values) == {**params, **sampling_defaults, "ablate": "dec-cross-2-1,enc-self-3-4"}
    controls = Controls.from_values(values)
    assert (controls.beam_size, controls.layer, controls.head, controls.step) == (16, 2, 3, 6)
    iv = controls.interventions()
    assert not iv.causal_mask and not iv.padding_mask and not iv.positional_encoding
    assert not iv.scale_scores and not iv.scale_embeddings and iv.mask_value == "-1e9"
    assert iv.ablate == {("encoder", "self", 2, 3), ("decoder", "cross", 1, 0)}
    assert controls.options().beam_size == 16


@pytest.mark.parametrize(
    "key, raw",
    [
        ("layer", "4"),
        ("layer", "0"),
        ("head", "two"),
        ("beam", "1"),
        ("beam", "99"),
        ("causal", "maybe"),
        ("decode", "random"),
        ("temperature", "0"),
        ("temperature", "5.5"),
        ("temperature", "nan"),
        ("temperature", "warm"),
        ("topk", "-1"),
        ("topk", "1001"),
        ("topp", "0"),
        ("topp", "1.2"),
        ("seed", "-5"),
        ("seed", "1.5"),
        ("ablate", "dec-cross-3-1"),
        ("scale", "half"),
        ("embscale", "2"),
        ("fill", "-inf5"),
        ("fill", "0"),
        ("ablate", "enc-cross-1-1"),
        ("step", "-2"),
        ("export", "gif"),
        ("sentence", "   "),
        ("sentence", "x" * 2001),
    ],
)
def test_bad_values_fall_back_to_the_default_with_a_note(key, raw):
    fields = shared_fields(LIMITS)
    defaults, _ = read_fields(fields, {})
    values, notes = read_fields(fields, {key: raw})
    assert values == defaults
    assert len(notes) == 1 and notes[0].startswith(f"URL parameter {key}=")


def test_a_sampled_answer_is_read_from_the_url_and_written_back():
    fields = shared_fields(LIMITS)
    params = {"decode": "sample", "temperature": "0.7", "topk": "40", "topp": "0.9", "seed": "123456"}
    values, notes = read_fields(fields, params)
    assert notes == []
    sampling = Controls.from_values(values).options().sampling
    assert sampling == Sampling(temperature=0.7, top_k=40, top_p=0.9, seed=123456)
    written = write_fields(fields, values)
    assert {key: written[key] for key in params} == params
    greedy = Controls.from_values(read_fields(fields, {**params, "decode": "greedy"})[0])
    assert greedy.options().sampling is None and greedy.options().beam_size == 1  # the values stay, unused


def test_a_notes_default_reads_as_a_quoted_value():
    """A default that is a sentence, or the word "default", is quoted, not run into the note's own words
    ("using the default The small girl sees a white bird.." once)."""
    fields = shared_fields(LIMITS)
    _values, [note] = read_fields(fields, {"sentence": "x" * 5000})
    assert note.endswith(f"using the default, “{EXAMPLES[0]}”.")
    _values, [note] = read_fields(fields, {"decode": "sideways"})
    assert note.endswith("using the default, “greedy”.")


def test_head_labels_and_codes():
    heads = all_heads(LIMITS)
    assert len(heads) == (3 + 2 * 2) * 4
    assert head_label(("decoder", "cross", 0, 1)) == "decoder cross L1 H2"
    for head in heads:
        assert parse_head_code(head_code(head), LIMITS) == head
    with pytest.raises(ValueError):
        parse_head_code("dec-self-3-1", LIMITS)  # the decoder has 2 layers


def test_greedy_ignores_the_beam_size():
    values, _ = read_fields(shared_fields(LIMITS), {"decode": "greedy", "beam": "8"})
    assert Controls.from_values(values).beam_size == 1

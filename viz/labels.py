"""Display labels for SentencePiece, WordPiece and byte-level BPE pieces: readable, distinct, and safe
inside plotly text."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from i18n import _
from model.engine.byte_pieces import BYTE_PIECE, BYTE_STAND_INS

WORD_START = "▁"
BYTE_SPACE = "Ġ"  # byte-level BPE (GPT-2): the space before a word, as its byte's stand-in character
BYTE_NEWLINE = "Ċ"  # byte-level BPE: a line break
BYTE_TAB = "ĉ"  # byte-level BPE: a tab
SPACE_SIGN = "␣"
NEWLINE_SIGN = "↵"
TAB_SIGN = "⇥"
_BLANK_SIGNS = {"\n": NEWLINE_SIGN, "\t": TAB_SIGN}  # any other blank character: SPACE_SIGN
BYTES_OPEN, BYTES_CLOSE = "⟨", "⟩"  # around bytes that spell no character on their own: ⟨E2 80⟩
POSITION_DIGITS = "₀₁₂₃₄₅₆₇₈₉"  # a repeated piece's position, written after it: le₂
_AFTER_DIGITS = "\u2009"  # a thin space between a piece that itself ends in those digits and its position
_UNSPELLED = re.compile(r"[\udc80-\udcff]+|[\x00-\x08\x0b-\x1f\x7f]+")  # bytes no character, control characters


_C1_STAND_INS = frozenset(ch for ch, b in BYTE_STAND_INS.items() if 0x7F <= b <= 0xA0 or b == 0xAD)


def _bytes_of(piece: str) -> bytes | None:
    """The bytes a byte-level BPE piece writes; None when a character of it is none of the stand-ins."""
    if not all(ch in BYTE_STAND_INS for ch in piece):
        return None
    return bytes(BYTE_STAND_INS[ch] for ch in piece)


def _spells_text(data: bytes) -> bool:
    """Whether `data` is UTF-8 text on its own: whole characters only."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _part_of_text(data: bytes) -> bool:
    """Bytes cut from UTF-8 text: valid but for a character's last bytes at the start, its first at the end."""
    head = len(data) - len(data.lstrip(bytes(range(0x80, 0xC0))))
    try:
        data[min(head, 3) :].decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data"
    return True


def _byte_marks(piece: str) -> bool:
    """Whether a piece carries a mark of byte-level BPE that no word of text has: Ġ before it, Ċ (a line
    break) or ĉ (a tab), bytes that spell characters outside ASCII ("Ã©": é), or part of a character's bytes
    among which a stand-in of a byte 0x7F-0xA0 ("âĢ": e2 80)."""
    data = _bytes_of(piece)
    if data is None:
        return False
    if piece.startswith(BYTE_SPACE) or BYTE_NEWLINE in piece or BYTE_TAB in piece:
        return True
    if data.isascii():
        return False
    if _spells_text(data):
        return True
    return _part_of_text(data) and any(ch in _C1_STAND_INS for ch in piece)


def _special(piece: str) -> bool:
    """A special piece or a stand-in for one ("<s>", "<|endoftext|>", "<id 9: not in the tokenizer>")."""
    return len(piece) > 2 and piece.startswith("<") and piece.endswith(">")


def reads_bytes(pieces: Iterable[str]) -> bool:
    """Whether these pieces (of one vocabulary) are byte-level BPE's (GPT-2, SmolLM2, Qwen): all of them written
    in its byte alphabet, specials aside, and one at least with a mark of it (`_byte_marks`). A lone "Ã" or "é"
    reads either way: the pieces around it decide."""
    listed = [p for p in pieces if not _special(p)]
    return all(_bytes_of(p) is not None for p in listed) and any(_byte_marks(p) for p in listed)


def _mark_bytes(run: re.Match) -> str:
    """Bytes that are no character on their own, or control characters, as hex: ⟨F0 9F 98⟩."""
    data = run.group().encode("utf-8", errors="surrogateescape")
    return BYTES_OPEN + " ".join(f"{b:02X}" for b in data) + BYTES_CLOSE


def spelled(data: bytes) -> str:
    """Bytes as the text they spell, bytes that spell no character (part of one) marked as bytes: ⟨E2 80⟩."""
    return _UNSPELLED.sub(_mark_bytes, data.decode("utf-8", errors="surrogateescape"))


def display_piece(piece: str, byte_level: bool | None = None) -> str:
    """A piece as a person reads it: the word-start marker dropped (SentencePiece's ▁, byte-level BPE's Ġ), a
    piece of spaces or line breaks made visible (␣, ↵), a byte-level piece's bytes read as the text they spell
    ("âĢĵ" is "–"), and bytes that are only part of a character marked as bytes ("âĢ" is ⟨E2 80⟩, SentencePiece's
    "<0xF0>" is ⟨F0⟩). `byte_level`: whether the piece's vocabulary is byte-level BPE (`reads_bytes` of its
    pieces); None: as the piece alone says."""
    fallback = BYTE_PIECE.fullmatch(piece)
    data = _bytes_of(piece) if byte_level or (byte_level is None and reads_bytes([piece])) else None
    if fallback is not None:
        text = spelled(bytes([int(fallback.group(1), 16)]))
    elif data is not None:
        text = spelled(data)
    else:
        text = piece.replace(WORD_START, " ")
    if not text.strip():  # spaces alone (a word-start marker alone too), line breaks, tabs: each one shown
        return "".join(_BLANK_SIGNS.get(ch, SPACE_SIGN) for ch in text) or SPACE_SIGN
    return text.removeprefix(" ").replace("\n", NEWLINE_SIGN).replace("\t", TAB_SIGN)


def plotly_piece(piece: str, byte_level: bool | None = None) -> str:
    """A piece as `display_piece` shows it, escaped for a plotly title, label or hover text ("</s>" stays)."""
    return escape_plotly(display_piece(piece, byte_level))


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
    """One sentence on how these pieces mark words, for a caption ('' when they mark nothing), in the language of
    this run."""
    marker = _marker(pieces)
    if marker == WORD_START:
        return _("▁ marks the start of a word.")
    if marker == BYTE_SPACE:
        return _(
            "The tokenizer works on bytes (byte-level BPE): Ġ stands for the space before a word, and a letter "
            "outside ASCII may take two pieces (a piece holding only some of a character's bytes shows them in "
            "hex: {example}).",
            example=f"{BYTES_OPEN}E2 80{BYTES_CLOSE}",
        )
    if any(p.startswith("##") for p in pieces):
        return _("## marks a piece that continues a word.")
    return ""


def running_text(pieces: list[str]) -> list[str]:
    """Each piece as it reads in running text: with a leading space where it starts a word.
    SentencePiece marks word starts with "▁", byte-level BPE (GPT-2) with "Ġ"; WordPiece (BERT) marks
    continuations with "##"."""
    marker, byte_level = _marker(pieces), reads_bytes(pieces)
    texts = []
    for i, piece in enumerate(pieces):
        if marker:
            starts, text = piece.startswith(marker), display_piece(piece, byte_level)
        else:
            starts, text = not piece.startswith("##"), piece.removeprefix("##") or piece
        texts.append(" " + text if starts and i > 0 else text)
    return texts


def escape_plotly(text: str) -> str:
    """Escape text for plotly, which reads a subset of HTML in labels, titles and hover text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def at_position(text: str, position: int) -> str:
    """`text` with its position written after it in subscript digits ("le₂", "2₁₄"): short, and never read as
    part of a number beside digit pieces as "14 2" was (142). A thin space parts a text that itself ends in
    such digits from them, so that a label always says its one position."""
    digits = "".join(POSITION_DIGITS[int(d)] for d in str(position))
    return text + (_AFTER_DIGITS if text[-1:] in POSITION_DIGITS else "") + digits


def distinct_labels(pieces: list[str], byte_level: bool | None = None) -> list[str]:
    """Display text per position (`display_piece`, `byte_level` as it says; None: `reads_bytes` of `pieces`);
    a text that repeats, or that equals another's label, gets its position after it ("le₀ chat le₂ </s>")."""
    read_bytes = reads_bytes(pieces) if byte_level is None else byte_level
    texts = [display_piece(p, read_bytes) for p in pieces]
    labels = list(texts)
    while True:  # two numbered labels never clash: each loop numbers one label or more, until none clash
        counts = Counter(labels)
        clashing = [i for i, label in enumerate(labels) if counts[label] > 1 and label == texts[i]]
        if not clashing:
            return labels
        for i in clashing:
            labels[i] = at_position(texts[i], i)


def axis_labels(pieces: list[str], byte_level: bool | None = None) -> list[str]:
    """Distinct display labels (`distinct_labels`) escaped for plotly axes and hover text."""
    return [escape_plotly(label) for label in distinct_labels(pieces, byte_level)]


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
    _positions, shown = thin_ticks(labels, axis_px, font_px)
    return dict(
        type="category", tickmode="array", tickvals=shown, ticktext=shown, showgrid=False, zeroline=False, **extra
    )

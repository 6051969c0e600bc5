"""How tokenizers write bytes as pieces: byte-level BPE's stand-in characters (GPT-2, SmolLM2, Qwen),
SentencePiece's byte fallback (Gemma, Llama 2), and a UTF-8 character cut short. Plain data, no torch: the
engine's vocabularies and viz's labels read the same alphabet."""

from __future__ import annotations

import codecs
import re

BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # SentencePiece's byte fallback: one byte as a piece (Gemma, Llama 2)


def _byte_stand_ins() -> dict[str, int]:
    """Byte-level BPE's stand-in character for each byte (GPT-2's bytes_to_unicode), back to the byte: the
    printable Latin-1 bytes stand for themselves, the others are moved to U+0100 and on."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = [b for b in range(256) if b not in kept]
    return {chr(b): b for b in kept} | {chr(256 + i): b for i, b in enumerate(moved)}


BYTE_STAND_INS = _byte_stand_ins()  # a byte-level piece's characters -> the bytes it writes


def unfinished_bytes(data: bytes) -> int:
    """How many bytes at the end of `data` begin a UTF-8 character without finishing it (0 to 3): b"a\\xf0\\x9f"
    ends with the first two of 😀's four bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    decoder.decode(data[-3:], final=False)
    pending, _ = decoder.getstate()
    return len(pending)

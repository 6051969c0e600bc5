"""Typed text made literal inside markdown (Streamlit's, and the words of a panel)."""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>$])")


def md(text: str) -> str:
    """Text made literal inside Streamlit markdown: HTML escaped, markdown punctuation backslashed."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))

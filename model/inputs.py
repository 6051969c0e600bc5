"""Typed text -> what the model reads: the canonical text, its source ids cut to the model's length,
and the warnings a person should see (a cut, pieces the vocabulary lacks, words never trained on)."""

from __future__ import annotations

import json
import unicodedata
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from i18n import later, later_n

from .engine.config import ModelConfig
from .engine.tokenizer import normalize_source
from .engine.vocabulary import Vocabulary
from .errors import InputError

if TYPE_CHECKING:
    import jinja2


def read_source(tokenizer: Vocabulary, config: ModelConfig, sentence: str) -> tuple[str, list[int], list[str]]:
    """The text the model reads, its source ids (the family's specials included, cut to the
    model's length) and warnings."""
    normalized = normalize_source(sentence, canonical=tokenizer.canonical_input)
    warnings = list(normalized.warnings)
    ids = tokenizer.encode_source(normalized.text)
    limit = config.max_len
    if len(ids) > limit:  # keep the closing special (EOS or [SEP])
        warnings.append(
            later(
                "The sentence was cut to its first {kept} of {total} pieces "
                "(the model reads at most {limit} positions).",
                kept=limit - 1,
                total=len(ids) - 1,
                limit=limit,
            )
        )
        ids = ids[: limit - 1] + ids[-1:]
    unk = tokenizer.specials.unk
    if unk in ids:
        count = ids.count(unk)
        warnings.append(
            later_n(
                "The model's vocabulary has no piece for {n} part of the text: it reads it as {unk}.",
                "The model's vocabulary has no piece for {n} parts of the text: it reads them as {unk}.",
                count,
                unk=tokenizer.pieces([unk])[0],
            )
        )
    return normalized.text, ids, warnings


def unknown_words(known_words: frozenset[str], source: str, warnings: list[str]) -> list[str]:
    """The words of `source` the model never saw in training (none when it does not say which it
    saw); a warning naming them is added to `warnings`."""
    words = _words(source)  # "cat," is the known word "cat"; "don't" and "🐱" are unknown words
    unknown = [w for w in dict.fromkeys(words) if known_words and w not in known_words]
    if unknown:
        # i18n: {words} are the typed words, as typed, joined by ", "
        warnings.append(
            later("Never seen in training: {words}. The model can only guess at these words.", words=", ".join(unknown))
        )
    return unknown


def _words(text: str) -> list[str]:
    """The space-separated words of `text` with punctuation stripped from their ends."""
    words = []
    for token in text.split():
        start, end = 0, len(token)
        while start < end and unicodedata.category(token[start]).startswith("P"):
            start += 1
        while end > start and unicodedata.category(token[end - 1]).startswith("P"):
            end -= 1
        if start < end:
            words.append(token[start:end])
    return words


def render_chat(source: str, tokens: dict[str, str], text: str) -> str:
    """`text` as one user message wrapped by a chat template (Jinja), rendered as transformers'
    apply_chat_template renders it: a sandbox with trim_blocks and lstrip_blocks, loop controls,
    raise_exception, strftime_now and a tojson that keeps non-ASCII, the special tokens as variables,
    and the prompt for the assistant's turn after the message (add_generation_prompt). InputError
    when the template does not render."""
    try:
        return _chat_template(source).render(
            messages=[{"role": "user", "content": text}], add_generation_prompt=True, **tokens
        )
    except Exception as exc:  # a template can fail in many ways (its own raise_exception, a missing variable)
        raise InputError(
            later(
                "This checkpoint's chat template could not wrap the text ({problem}); the plain prompt still works.",
                problem=f"{type(exc).__name__}: {exc}",
            )
        ) from None


@lru_cache(maxsize=8)
def _chat_template(source: str) -> jinja2.Template:
    """A chat template compiled once (3 ms; a page reads its prompt several times): a compiled template renders
    from many threads at once, each render with its own variables."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    environment.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: (
        json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    )
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = lambda format: datetime.now().strftime(format)
    return environment.from_string(source)


def cannot_translate(name: str, family: str, decoder: bool) -> InputError:
    """The error for translating with a model that has no encoder (`decoder`) or no decoder."""
    if decoder:
        return InputError(
            later(
                "{name} is a decoder-only model ({family}): it continues a text but has no encoder to read a "
                "sentence to translate. Use generate() instead.",
                name=name,
                family=family,
            )
        )
    return InputError(
        later(
            "{name} is an encoder-only model ({family}): it reads a sentence but has no decoder, so it cannot "
            "translate. Use encode() instead.",
            name=name,
            family=family,
        )
    )


def cannot_continue(name: str, kind: str, translates: bool) -> InputError:
    """The error for continuing a text with a model that is not decoder-only (it `translates`, or encodes)."""
    if translates:
        return InputError(
            later(
                "{name} is not a decoder-only model ({kind}); it translates: use translate() instead.",
                name=name,
                kind=kind,
            )
        )
    return InputError(
        later(
            "{name} is not a decoder-only model ({kind}); it has no decoder: use encode() instead.",
            name=name,
            kind=kind,
        )
    )


def prompt_cut(kept: int, total: int, limit: int) -> str:
    """The warning for a prompt cut to `kept` of its `total` pieces, to leave room for the continuation."""
    return later(
        "The text was cut to its first {kept} of {total} pieces, to leave room for the continuation (the model "
        "reads at most {limit} positions).",
        kept=kept,
        total=total,
        limit=limit,
    )


def output_cut(limit: int) -> str:
    """The warning for an output the length limit ended before the model did."""
    return later_n(
        "The output was cut at {n} piece before the model ended it.",
        "The output was cut at {n} pieces before the model ended it.",
        limit,
    )


def output_ended(limit: int) -> str:
    """The warning for an output whose last piece the generation config made its end, at the length limit."""
    return later_n(
        "The output reached its limit of {n} piece, where this checkpoint's generation config makes the last "
        "piece end it.",
        "The output reached its limit of {n} pieces, where this checkpoint's generation config makes the last "
        "piece end it.",
        limit,
    )


def continuation_cut(limit: int) -> str:
    """The warning for a continuation that stopped at its limit of new pieces."""
    return later_n(
        "The continuation stopped at its limit of {n} new piece.",
        "The continuation stopped at its limit of {n} new pieces.",
        limit,
    )

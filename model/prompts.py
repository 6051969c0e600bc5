"""What a decoder-only model reads: the prompt as typed, or a user's chat message wrapped by the checkpoint's chat
template, as ids cut so that the continuation fits. `PromptReader` is a part of `Generator` (generation.py)."""

from __future__ import annotations

from i18n import later

from .checkpoints.record import ChatTemplate
from .engine.config import ModelConfig
from .engine.interventions import DecodeOptions
from .engine.tokenizer import normalize_source
from .engine.vocabulary import Vocabulary
from .errors import InputError
from .inputs import prompt_cut, render_chat

DEFAULT_NEW_PIECES = 20  # a continuation's length when neither the caller nor the checkpoint says


class PromptReader:
    """Reading a prompt, for a Generator: what it needs of one is declared here."""

    tokenizer: Vocabulary
    config: ModelConfig
    chat: ChatTemplate | None  # an instruct checkpoint's chat template

    @property
    def name(self) -> str:
        """The model's display name (the Bundle's)."""
        raise NotImplementedError

    def _template(self) -> ChatTemplate:
        if self.chat is None:
            raise InputError(later("{name} has no chat template: continue the plain prompt instead.", name=self.name))
        return self.chat

    def chat_prompt(self, text: str) -> str:
        """`text` as a user's message wrapped by this instruct checkpoint's chat template, ready for the
        assistant's answer; InputError without a template, or when it does not render."""
        template = self._template()
        return render_chat(template.source, template.tokens, text)

    def _read_prompt(self, text: str, options: DecodeOptions, chat: bool = False) -> tuple[str, list[int], list[str]]:
        """The text a decoder-only model continues (with `chat`, wrapped by the chat template), its ids
        (cut so that the continuation fits) and warnings."""
        normalized = normalize_source(text, canonical=self.tokenizer.canonical_input)
        warnings = list(normalized.warnings)
        if chat:  # the wrapped text is read as the template wrote it, its newlines and specials included
            wrapped = self.chat_prompt(normalized.text)
            normalized, ids = type(normalized)(wrapped, normalized.warnings), self._template().encode(wrapped)
        else:
            ids = self.tokenizer.encode_source(normalized.text)
        if not ids:
            raise InputError(later("The text has no pieces for the model to read: type a few words."))
        room = self.config.max_len - min(options.max_len or DEFAULT_NEW_PIECES, self.config.max_len - 1)
        if len(ids) > room:
            warnings.append(prompt_cut(room, len(ids), self.config.max_len))
            ids = ids[:room]
        return normalized.text, ids, warnings

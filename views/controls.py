"""The controls as plain values, and their round trip through URL query parameters (no streamlit): what a page
and a notebook (views.show) read alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import i18n
from i18n import DEFAULT as DEFAULT_LANGUAGE
from i18n import LANGUAGES, N_, Later, _, later, listing, n_
from model import Bundle, DecodeOptions, InputError, Interventions, Sampling
from model.engine import stages
from model.engine.draws import MOST_SEED, MOST_TOP_K, TEMPERATURES
from views.fields import (
    Field,
    choice,
    dump_span,
    int_in,
    number_in,
    on_off_field,
    span,
    whole,
)
from viz.lengths import COLOUR_MODES, DETAIL

Head = tuple[str, str, int, int]
# An attention block's code in the URL and the pickers: "enc-self", "dec-self", "dec-cross".
BLOCKS: dict[str, tuple[str, str]] = {f"{stack[:3]}-{kind}": (stack, kind) for stack, kind in stages.BLOCKS}
# Each block's name, said in the run's language where it is shown (i18n._(BLOCK_NAMES[code])).
BLOCK_NAMES = {
    "enc-self": N_("encoder self-attention"),
    "dec-self": N_("decoder masked self-attention"),
    "dec-cross": N_("decoder cross-attention"),
}
# What a head code of a block the model lacks is told (a note on a bad URL value, said when shown).
_NO_BLOCK = {
    "enc-self": N_("no encoder self-attention in this model"),
    "dec-self": N_("no decoder masked self-attention in this model"),
    "dec-cross": N_("no decoder cross-attention in this model"),
}
EXAMPLES = [
    "The small girl sees a white bird.",
    "The cat eats the apple.",
    "My sisters will see the old house.",
    "The boys did not close the blue door.",
    "She gives the new book to the teacher.",
    "Do you love the red car?",
    "Five boys often closed these blue windows but they will see their library.",
]
# An instruct model's examples (a decoder-only model with a chat template): questions it is asked as a user, the
# first with a short true answer (SmolLM2-135M-Instruct answers "The capital of France is Paris."), then ones whose
# answers run longer. English for both interfaces: the small chat models this app opens answer English best.
CHAT_EXAMPLES = [
    "What is the capital of France?",
    "What is 2 + 3?",
    "Name the largest planet in our solar system.",
    "Write a short poem about the sea.",
    "Give me three tips for sleeping well.",
    "Why is the sky blue?",
    "Explain what a neural network is in two sentences.",
]
MAX_SENTENCE = 2000


def examples_for(chat: bool) -> list[str]:
    """The examples a model is offered: questions for one that reads a chat message, else the EN→FR corpus's."""
    return CHAT_EXAMPLES if chat else EXAMPLES


def switched_text(text: str, chat: bool) -> str:
    """The text after a model change: the other kind's first example, left as it was, becomes this kind's first
    (a chat model is not asked to continue "The small girl sees a white bird."); any other text stays."""
    other = examples_for(not chat)[0]
    return examples_for(chat)[0] if text == other else text


@dataclass(frozen=True)
class Limits:
    """What the loaded model allows the controls to pick."""

    n_encoder_layers: int
    n_decoder_layers: int
    n_heads: int
    max_len: int
    cross_attention: bool = True  # False for a decoder alone (GPT-2): its decoder layers have no cross-attention

    @property
    def n_layers(self) -> int:
        """Largest layer count of the two stacks (the layer picker's range)."""
        return max(self.n_encoder_layers, self.n_decoder_layers)

    def layers_of(self, stack: str) -> int:
        """Number of layers of 'encoder' or 'decoder'."""
        return self.n_encoder_layers if stack == "encoder" else self.n_decoder_layers

    @property
    def blocks(self) -> dict[str, tuple[str, str]]:
        """The attention blocks the model has, code -> (stack, kind), in reading order: an encoder-only
        model has its self-attention alone, a decoder-only model its decoder self-attention alone."""
        return {
            code: (stack, kind)
            for code, (stack, kind) in BLOCKS.items()
            if self.layers_of(stack) and (kind != "cross" or self.cross_attention)
        }


def head_label(head: Head) -> str:
    """Human label of a head, 1-based, in the language of this run: ('decoder', 'cross', 0, 1) ->
    'decoder cross L1 H2'."""
    stack, kind, layer, index = head
    if kind == "cross":
        return _("decoder cross L{layer} H{head}", layer=layer + 1, head=index + 1)
    if stack == "decoder":
        return _("decoder self L{layer} H{head}", layer=layer + 1, head=index + 1)
    return _("encoder self L{layer} H{head}", layer=layer + 1, head=index + 1)


def head_code(head: Head) -> str:
    """URL form of a head, 1-based: ('decoder', 'cross', 0, 1) -> 'dec-cross-1-2'."""
    stack, kind, layer, index = head
    block = next(code for code, pair in BLOCKS.items() if pair == (stack, kind))
    return f"{block}-{layer + 1}-{index + 1}"


def all_heads(limits: Limits) -> list[Head]:
    """Every attention head of the model in reading order."""
    return [
        (stack, kind, layer, head)
        for stack, kind in limits.blocks.values()
        for layer in range(limits.layers_of(stack))
        for head in range(limits.n_heads)
    ]


def parse_head_code(code: str, limits: Limits) -> Head:
    """'dec-cross-1-2' -> ('decoder', 'cross', 0, 1), checked against the model."""
    block, _dash, numbers = code.strip().rpartition("-")
    block, _dash, layer_text = block.rpartition("-")
    if block not in BLOCKS:
        raise ValueError(later("unknown head {code}", code=repr(code)))
    if block not in limits.blocks:
        raise ValueError(Later(_NO_BLOCK[block], {}))  # said when shown, as later() is
    stack, kind = BLOCKS[block]
    layer, head = whole(layer_text) - 1, whole(numbers) - 1
    if not (0 <= layer < limits.layers_of(stack) and 0 <= head < limits.n_heads):
        raise ValueError(later("no head {code} in this model", code=repr(code)))
    return stack, kind, layer, head


def _sentence(text: str) -> str:
    if not text.strip():
        raise ValueError(later("empty sentence"))
    if len(text) > MAX_SENTENCE:
        raise ValueError(later("longer than {n} characters", n=MAX_SENTENCE))
    return text


DECODINGS = ("greedy", "beam", "sample")
# how a sampled answer is drawn (`decode=sample`): model.engine.sampling's ranges, the seed the URL's own
SAMPLING_FIELDS = (
    Field("temperature", 1.0, number_in(*TEMPERATURES), lambda value: f"{value:g}"),
    Field("topk", 0, int_in(0, MOST_TOP_K)),
    Field("topp", 1.0, number_in(0.0, 1.0, above_low=True), lambda value: f"{value:g}"),
    Field("seed", 0, int_in(0, MOST_SEED - 1)),
)
PRESENT = on_off_field("present", False)  # presentation mode: large type, and laid out for a projector
# The interface's language (`lang=zh`); with none in the URL, a first visit takes the browser's (ui.page.start).
LANGUAGE = Field("lang", DEFAULT_LANGUAGE, choice(*LANGUAGES))


def shared_fields(limits: Limits, chat: bool = False) -> list[Field]:
    """The controls every page shares, with ranges taken from the model; `chat`: the model reads a chat message
    (`chat_offered`), whose first text is a question."""
    heads = lambda text: tuple(sorted({parse_head_code(c, limits) for c in text.split(",") if c.strip()}))  # noqa: E731
    return [
        Field("sentence", examples_for(chat)[0], _sentence),
        Field("decode", "greedy", choice(*DECODINGS)),
        Field("beam", 4, int_in(2, 16)),
        *SAMPLING_FIELDS,
        Field("layer", 1, int_in(1, limits.n_layers)),
        Field("head", 1, int_in(1, limits.n_heads)),
        on_off_field("causal", True),
        on_off_field("padding", True),
        on_off_field("pe", True),
        on_off_field("scale", True),
        on_off_field("embscale", True),
        Field("fill", "-inf", choice("-inf", "-1e9")),
        Field("ablate", (), heads, lambda value: ",".join(head_code(h) for h in value)),
        Field("step", 1, int_in(1, limits.max_len)),
        PRESENT,
        Field("export", "png", choice("png", "svg")),
    ]


# The switches that change the model itself, at their values as trained, and what the pages say of each
# when it is not (the banner of ui/page/switches.py; changed_switches says them in the run's language); `ablate`
# (knocked-out heads) is the last switch.
SWITCHES: tuple[tuple[str, Any, str], ...] = (
    ("causal", True, N_("the causal mask is off")),
    ("padding", True, N_("the padding mask is off")),
    ("pe", True, N_("positional encoding is off")),
    ("scale", True, N_("scores are not scaled by 1/√d_k")),
    ("embscale", True, N_("embeddings are not scaled by √d_model")),
    ("fill", "-inf", N_("masked scores are set to −10⁹, not −∞")),
)


def changed_switches(values: Mapping[str, Any], applies: Callable[[str], bool] = lambda key: True) -> list[str]:
    """What is switched away from the model as trained, one phrase each in the language of this run (only the
    switches that apply to the model: `applies(key)`); knocked-out heads are named, the first four of them."""
    said = [i18n._(text) for key, default, text in SWITCHES if applies(key) and values.get(key, default) != default]
    heads = tuple(values.get("ablate", ()))
    if heads:
        names = listing([head_label(h) for h in heads[:4]] + (["…"] if len(heads) > 4 else []))
        said.append(
            n_("{n} head is knocked out ({names})", "{n} heads are knocked out ({names})", len(heads), names=names)
        )
    return said


def trained_switches() -> dict[str, Any]:
    """Every switch at its value as trained (no head knocked out)."""
    return {key: default for key, default, _said in SWITCHES} | {"ablate": ()}


# A task prefix typed for a T5 checkpoint that has none of its own (flan-t5): the page puts it before the sentence.
SUGGESTED_PREFIX = "translate English to French: "
MAX_PREFIX = 200


def _prefix(text: str) -> str:
    if len(text) > MAX_PREFIX:
        raise ValueError(later("longer than {n} characters", n=MAX_PREFIX))
    return text


PREFIX = Field("prefix", SUGGESTED_PREFIX, _prefix)

# An instruct checkpoint's text read as a user's chat message, wrapped by its chat template (`chat=on` in the
# URL): every page then reads the wrapped prompt and explains the answer. It is on unless turned off, and a
# control of every page for a decoder-only model with a chat template only (ui.page.start registers it then).
CHAT = on_off_field("chat", True)

# Controls of the pages that draw attention at any length (Attention, Masks lab): the window of
# source pieces the detailed heatmaps show, their colour mode, and the query piece read as text.
WINDOW = Field("window", (0, DETAIL), span, dump_span)
COLOUR = Field("colour", "auto", choice(*COLOUR_MODES))
FOCUS = Field("focus", 0, int_in(0, 100_000))


@dataclass(frozen=True)
class Controls:
    """The shared controls of one rerun, as plain values (layers, heads and steps 0-based)."""

    sentence: str  # the text the pages give the model: `prefix`, then the typed sentence
    beam_size: int
    layer: int
    head: int
    causal: bool
    padding: bool
    positional: bool
    scale_scores: bool
    scale_embeddings: bool
    mask_value: str
    ablate: tuple[Head, ...]
    step: int
    presentation: bool
    export: str
    prefix: str = ""  # a task prefix the person typed for a T5 without one of its own ('' otherwise)
    # the sentence is a user's chat message, wrapped by the checkpoint's chat template before the model reads
    # it (an instruct decoder-only model; False for every other model)
    chat: bool = False
    language: str = DEFAULT_LANGUAGE  # the interface's: a code of i18n.LANGUAGES
    new_pieces: int | None = None  # how many pieces a decoder-only model may add (`new=`); None: its own number
    sampling: Sampling | None = None  # how each piece is drawn (`decode=sample`); None: greedy or beams

    @classmethod
    def from_values(
        cls, values: Mapping[str, Any], prefix: str = "", chat: bool = False, continues: bool = False
    ) -> Controls:
        """Build from the store of URL-keyed values; `prefix` goes before the typed sentence; `chat`: the
        sentence is read as a chat message (the caller knows whether the model has a chat template);
        `continues`: the model is a decoder alone, whose new pieces `new=` counts (a translation's length is
        the model's to decide, whatever a decoder opened before left in the store)."""
        return cls(
            sentence=prefix + values["sentence"],
            prefix=prefix,
            chat=chat,
            beam_size=values["beam"] if values["decode"] == "beam" else 1,
            sampling=sampling_of(values),
            layer=values["layer"] - 1,
            head=values["head"] - 1,
            causal=values["causal"],
            padding=values["padding"],
            positional=values["pe"],
            scale_scores=values["scale"],
            scale_embeddings=values["embscale"],
            mask_value=values["fill"],
            ablate=tuple(values["ablate"]),
            step=values["step"] - 1,
            presentation=values["present"],
            export=values["export"],
            language=values.get(LANGUAGE.key, DEFAULT_LANGUAGE),
            new_pieces=values.get(NEW_KEY) if continues else None,
        )

    def interventions(self, **changes: Any) -> Interventions:
        """The engine switches these controls ask for (optionally changed)."""
        chosen = Interventions(
            causal_mask=self.causal,
            padding_mask=self.padding,
            positional_encoding=self.positional,
            scale_scores=self.scale_scores,
            scale_embeddings=self.scale_embeddings,
            mask_value=self.mask_value,
            ablate=frozenset(self.ablate),
        )
        return replace(chosen, **changes)

    def options(self) -> DecodeOptions:
        """Decoding options these controls ask for."""
        return DecodeOptions(beam_size=self.beam_size, max_len=self.new_pieces, sampling=self.sampling)


def sampling_of(values: Mapping[str, Any]) -> Sampling | None:
    """How the URL's values draw a sampled answer, or None when they decode greedily or with beams."""
    if values.get("decode") != "sample":
        return None
    return Sampling(
        temperature=values.get("temperature", 1.0),
        top_k=values.get("topk", 0),
        top_p=values.get("topp", 1.0),
        seed=values.get("seed", 0),
    )


def typed_prefix(bundle: Bundle) -> bool:
    """True for a model told its task in words whose checkpoint names none (flan-t5): the person types
    the prefix, which the pages put before the sentence."""
    return bundle.capabilities.task_prefix and bundle.capabilities.translates and not bundle.task_prefix


NEW_KEY = "new"
MOST_NEW_PIECES = 200  # the most pieces a continuation or an answer may add (`new=`)


def new_pieces_field(bundle: Bundle) -> Field:
    """`new=`, a decoder-only model's control: how many pieces its continuation or answer may add (it ends sooner
    at its end piece), from 1 to MOST_NEW_PIECES; by default the checkpoint's own number."""
    return Field(NEW_KEY, min(bundle.default_new, MOST_NEW_PIECES), int_in(1, MOST_NEW_PIECES))


def chat_offered(bundle: Bundle) -> bool:
    """True for a decoder-only model with a chat template (an instruct checkpoint): its text can be read as a
    user's chat message, the shared control `chat` (on unless turned off)."""
    return bundle.capabilities.decoder_only and bundle.chat is not None


def reads_chat(bundle: Bundle, values: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the text is read as a chat message (the `chat` control, for a model that offers it), and, when its
    chat template cannot wrap the text, why the plain prompt is read instead (in the run's language)."""
    if not chat_offered(bundle) or not values.get(CHAT.key, CHAT.default):
        return False, ""
    sentence = values["sentence"]
    if sentence.strip():
        try:
            bundle.chat_prompt(sentence)
        except InputError as exc:
            return False, _("{reason} Every page reads the plain prompt instead.", reason=exc)
    return True, ""

"""The Attention page's attention sinks as panels: the share of attention on the first piece per layer × head, the
residual stream's size, a paragraph with this model's figures, and the what-if that hides the first piece from
every later query (ui/parts/sinks.py draws them, with the what-if's button)."""

from __future__ import annotations

import numpy as np

from i18n import N_, _, listing, n_, number, sentences
from model import EncodeResult, TranslationResult, cosine
from model.analysis.sinks import QUIET, SINK, Sinks, sinks, summary
from model.results import Trace
from views.budget import EAGER_WORK, continuation_work
from views.markdown import md
from views.panels import Panel, words
from views.runs import main_result
from views.scene import Scene
from viz.labels import display_piece
from viz.sinks import residual_norms, sink_shares

# The prompt's picture, by the stack whose self-attention it is: said with _(NAME[stack])
_PROMPT_TITLE = {
    "encoder": N_("Share of each encoder head's attention on the sentence's first piece"),
    "decoder": N_("Share of each head's attention on the prompt's first piece"),
}
_AVERAGED = {
    "encoder": N_("Averaged over the sentence's queries after the first; heads at {sink} or more carry their figure."),
    "decoder": N_("Averaged over the prompt's queries after the first; heads at {sink} or more carry their figure."),
}


def sink_stack(scene: Scene) -> str:
    """The stack whose self-attention the sink charts read: the encoder's when the model has one."""
    return "encoder" if scene.limits.layers_of("encoder") else "decoder"


def stack_pieces(trace: Trace, stack: str) -> list[str]:
    """The pieces a stack's self-attention reads: the sentence's for the encoder, the decoder's rows otherwise."""
    return trace.src_pieces if stack == "encoder" else trace.tgt_pieces


def _found(scene: Scene, trace: Trace, stack: str) -> Sinks:
    """The sink figures of a stack's self-attention (a decoder's sliding windows counted)."""
    cfg = scene.bundle.config
    return sinks(trace, stack, cfg.norm_first, cfg.windows if stack == "decoder" else ())


def section_panels(scene: Scene, trace: Trace, stack: str, pieces: list[str]) -> list[Panel]:
    """Sink shares per layer × head, the residual norms per position, and a paragraph with this model's figures
    (the what-if that follows them is what_if_panels')."""
    found = _found(scene, trace, stack)
    shares = scene.figure(sink_shares, found.shares, scene.style, _sinks_title(scene.bundle.name, stack), SINK)
    shares_said = _(
        "A cell is the weight a head gives the first piece, averaged over every query after it that can see it "
        "(the first query can only see itself). Heads at {sink} or more carry their figure and are tagged "
        "“sink” in the model view above; the last column is each layer's mean over its heads.",
        sink=SINK,
    )
    norms_title = _("Size of the residual stream at each position")
    norms = scene.figure(residual_norms, found.norms, pieces, scene.style, norms_title)
    norms_said = _(
        "Rows: the embeddings, then each layer's output; columns: positions. The colour is log₁₀ of the "
        "vector's length, so a position far larger than the others stands out without blanking them."
    )
    heading = _("Attention sinks: why so many heads look at the first piece")
    panels = [
        Panel(scene.key("sink-shares"), shares, heading=heading, caption=shares_said),
        Panel(scene.key("sink-norms"), norms, caption=norms_said),
        words(scene.key("sink-why"), _why(scene, found, pieces)),
    ]
    for other in _other_stacks(trace, stack):
        panels.append(_other_stack_panel(scene, trace, other))
    return panels


def _other_stack_panel(scene: Scene, trace: Trace, stack: str) -> Panel:
    """The other stack's self-attention (an encoder-decoder's decoder) as the first one is drawn: each head's share
    on its first piece, and what they add up to in a sentence."""
    found = _found(scene, trace, stack)
    pieces = stack_pieces(trace, stack)
    figure = scene.figure(sink_shares, found.shares, scene.style, _sinks_title(scene.bundle.name, stack), SINK)
    said = _shares_said(found, display_piece(pieces[0]) if pieces else "", stack)
    return Panel(scene.key(f"sink-{stack}"), figure, caption=said)


def _why(scene: Scene, found: Sinks, pieces: list[str]) -> str:
    """Why a sink forms, and this model's figures on this text, in a paragraph."""
    first = display_piece(pieces[0]) if pieces else ""
    return sentences(
        _(
            "**Why.** A softmax row must sum to 1, so a head that has nothing useful to read on a piece still has "
            "to put its weight somewhere. Many models learn to park it on the first piece, which every later "
            "piece can see: a sink whose value adds little."
        ),
        _shares_said(found, first, "text", name=md(scene.bundle.name)),
        by_layer(found, scene.bundle.config.windows),
        _("Streaming LLMs keep the first pieces in the cache for this reason (Xiao et al., 2023)."),
    )


def _sinks_title(name: str, stack: str) -> str:
    """The sink chart's title: the model and the stack whose self-attention it shows."""
    if stack == "encoder":
        return _("{name}, encoder self-attention: share of each head's attention on the first piece", name=name)
    return _("{name}, decoder self-attention: share of each head's attention on the first piece", name=name)


def prompt_panel(scene: Scene, prompt: Trace, stack: str = "decoder") -> Panel:
    """While the continuation or translation is written: each head's share of attention on the first piece over
    the prompt alone (the `stack` "encoder": over the sentence), drawn directly (not kept among shared figures)."""
    encoder = stack == "encoder"
    found = sinks(prompt, stack, scene.bundle.config.norm_first, () if encoder else scene.bundle.config.windows)
    pieces = prompt.src_pieces if encoder else prompt.tgt_pieces
    figure = sink_shares(found.shares, scene.style, _(_PROMPT_TITLE[stack]), SINK)
    first = display_piece(pieces[0]) if pieces else ""
    said = _shares_said(found, first, "sentence" if encoder else "prompt")
    return Panel(scene.key("prompt-sinks"), figure, caption=sentences(_(_AVERAGED[stack], sink=SINK), said))


def _shares_said(found: Sinks, first: str, whose: str, name: str = "") -> str:
    """What a stack's heads put on its first piece, in a sentence: the mean share and the heads at SINK or more.

    `whose` says whose heads on which text: "text" (the model `name`'s heads on this text), "prompt" (on the
    prompt), "sentence" (the encoder's on the sentence), or a stack, "encoder" or "decoder": the caption of the
    second stack's chart.
    """
    said = {
        "mean": f"{found.mean_share:.0%}",
        "first": md(first),
        "heads": found.sink_heads,
        "total": found.shares.size,
        "sink": f"{SINK:.0%}",
    }
    if whose == "text":
        return _(
            "On this text, {name}'s heads put **{mean}** of their attention on “{first}” on average, and "
            "**{heads} of {total}** heads put at least {sink} there.",
            name=name,
            **said,
        )
    if whose == "prompt":
        return _(
            "On the prompt, its heads put **{mean}** of their attention on “{first}” on average, and "
            "**{heads} of {total}** heads put at least {sink} there.",
            **said,
        )
    if whose == "sentence":
        return _(
            "On the sentence, the encoder's heads put **{mean}** of their attention on “{first}” on average, and "
            "**{heads} of {total}** heads put at least {sink} there.",
            **said,
        )
    if whose == "encoder":
        return _(
            "In the encoder's self-attention, the heads put **{mean}** of their attention on “{first}” on average, "
            "and **{heads} of {total}** heads put at least {sink} there.",
            **said,
        )
    return _(
        "In the decoder's self-attention, the heads put **{mean}** of their attention on “{first}” on average, "
        "and **{heads} of {total}** heads put at least {sink} there.",
        **said,
    )


def _other_stacks(trace: Trace, stack: str) -> list[str]:
    """The self-attention stacks of the model besides `stack` (an encoder-decoder's decoder, beside its encoder)."""
    return [other for other in ("encoder", "decoder") if other != stack and trace.n_layers(other)]


def _one_and_last(names: list[str], last: str) -> str:
    """Names one after another, the last after "and" (`last` "and") or "or" (`last` "or")."""
    if len(names) == 1:
        return names[0]
    if last == "or":
        return _("{names} or {last}", names=listing(names[:-1]), last=names[-1])
    return _("{names} and {last}", names=listing(names[:-1]), last=names[-1])


def _layers(runs: tuple[tuple[int, int], ...]) -> str:
    """Runs of layers (from 0) as "L1–L3, L11 and L12"."""
    return _one_and_last([f"L{a + 1}" if a == b else f"L{a + 1}–L{b + 1}" for a, b in runs], "and")


def _times(ratio: float) -> str:
    """A ratio as "3.5×", or "1,234×" from ten on (in Chinese "3.5 倍")."""
    # i18n: a ratio: how many times the median of the others (in Chinese 倍)
    return _("{times}×", times=number(ratio, 0 if ratio >= 10 else 1))


def by_layer(found: Sinks, windows: tuple[int, ...] = ()) -> str:
    """The sink figures layer by layer, in sentences quoting the chart: the weakest and strongest layers, the
    later layers' range, the layers that barely use the first piece, the residual vector's size, and which
    queries a sliding window kept from the first piece."""
    shares = found.layer_shares
    if len(shares) == 0:
        return ""
    if len(shares) == 1:
        text = _("Its one layer puts **{share}** there.", share=f"{shares[0]:.0%}")
    else:
        text = _later_layers(found)
    ratios = found.norm_ratios
    if np.isfinite(ratios).all() and ratios.size > 1:
        text = sentences(text, _residual_said(ratios, summary(found).peak_ratio))
    if found.windowed and windows:
        cut = sorted({windows[layer] for layer in found.windowed})
        text = sentences(
            text,
            n_(
                "In the {n} sliding-window layer a query at position {positions} or later cannot see the first piece "
                "at all: their shares count the queries that can.",
                "In the {n} sliding-window layers a query at position {positions} or later cannot see the first "
                "piece at all: their shares count the queries that can.",
                len(found.windowed),
                positions=_one_and_last([str(c) for c in cut], "or"),
            ),
        )
    if float(np.nan_to_num(shares, nan=0.0).max()) < SINK:
        text = sentences(
            text,
            _(
                "Little of a sink here: no layer puts {sink} of its attention on the first piece, as the large "
                "trained models (SmolLM2, Gemma 3, GPT-2, Qwen) do in most of theirs.",
                sink=f"{SINK:.0%}",
            ),
        )
    return text


def _later_layers(found: Sinks) -> str:
    """The share layer by layer: the weakest and strongest layers, the later layers' range, the quiet ones."""
    said, shares = summary(found), found.layer_shares
    low, high = said.later_range
    figures = {
        "weak_share": f"{shares[said.weakest]:.0%}",
        "weak": said.weakest + 1,
        "strong_share": f"{shares[said.strongest]:.0%}",
        "strong": said.strongest + 1,
        "first": said.later[0] + 1,
        "last": said.later[1] + 1,
        "range": f"{low:.0%}–{high:.0%}",
    }
    # when every later layer is quiet their range says so already: only the quiet layers before them are named
    before = said.quiet
    if high < QUIET:
        before = tuple((a, min(b, said.later[0] - 1)) for a, b in said.quiet if a < said.later[0])
    if not before:
        return _(
            "By layer (the chart's last column) the share runs from **{weak_share}** in L{weak} to "
            "**{strong_share}** in L{strong}; the later layers, L{first}–L{last}, put **{range}** there.",
            **figures,
        )
    quiet = {"quiet": _layers(before), "under": f"{QUIET:.0%}"}
    if len(before) == 1 and before[0][0] == before[0][1]:
        return _(
            "By layer (the chart's last column) the share runs from **{weak_share}** in L{weak} to "
            "**{strong_share}** in L{strong}; the later layers, L{first}–L{last}, put **{range}** there, while "
            "{quiet} stays under {under}.",
            **figures,
            **quiet,
        )
    return _(
        "By layer (the chart's last column) the share runs from **{weak_share}** in L{weak} to "
        "**{strong_share}** in L{strong}; the later layers, L{first}–L{last}, put **{range}** there, while "
        "{quiet} stay under {under}.",
        **figures,
        **quiet,
    )


def _residual_said(ratios: np.ndarray, peak: int) -> str:
    """How far the first position's residual vector outgrows the others' (`peak`: where most; 0 the embeddings)."""
    said = {"peak": _times(ratios[peak]), "end": _times(ratios[-1]), "layer": peak}
    if peak == 0:
        return _(
            "The first position's residual vector is **{peak}** the median of the others in the embeddings, and "
            "**{end}** after the last layer.",
            **said,
        )
    if peak != len(ratios) - 1:
        return _(
            "The first position's residual vector is **{peak}** the median of the others after L{layer}, and "
            "**{end}** after the last layer.",
            **said,
        )
    return _(
        "The first position's residual vector is **{peak}** the median of the others after L{layer}, the last layer.",
        **said,
    )


def what_if_heading(scene: Scene) -> Panel:
    """The what-if's words above it: hide the first piece from every later query."""
    return words(scene.key("hide-first"), _("**What-if: hide the first piece from every later query.**"))


def what_if_label(scene: Scene) -> str:
    """The what-if's button, where the second run waits for one: continue the text, or translate, again."""
    if scene.decoder_only:
        return _("Continue with the first piece hidden")
    return _("Translate with the first piece hidden")


def cosine_panels(scene: Scene, with_it: EncodeResult, without: EncodeResult) -> list[Panel]:
    """An encoder's what-if: how alike its sentence embeddings are with and without the first piece visible."""
    label = _("Cosine similarity of the sentence embeddings with and without the first piece visible")
    similarity = f"{cosine(with_it.embedding, without.embedding):.3f}"
    return [Panel(scene.key("hide-first-cosine"), text=label, metric=similarity)]


def hidden_panels(scene: Scene, read: str, hidden: str) -> list[Panel]:
    """A decoder's what-if: the output as the model reads and with the first piece hidden, side by side, and
    whether it changed."""
    read_as, hidden_as = _hidden_names(scene)
    if hidden != read:
        said = _(
            "The heads that parked their weight on the first piece must now spread it over the other pieces: the "
            "text changes."
        )
    else:
        said = _(
            "The heads that parked their weight on the first piece must now spread it over the other pieces: here "
            "the text stays the same."
        )
    return [
        _output(scene, "hide-first-read", read, read_as),
        _output(scene, "hide-first-hidden", hidden, hidden_as),
        Panel(scene.key("hide-first-said"), caption=said),
    ]


def _output(scene: Scene, key: str, text: str, named: str) -> Panel:
    """One of the what-if's two outputs, said large under its caption, beside the other."""
    return Panel(scene.key(key), text=text or _("(empty)"), caption=named, row="hide-first", large=1.3)


def _hidden_names(scene: Scene) -> tuple[str, str]:
    """The captions of the what-if's two outputs: as the model reads, and with the first piece hidden."""
    if scene.chat:
        return _("Answer as the model reads"), _("Answer without a sink")
    if scene.decoder_only:
        return _("Continuation as the model reads"), _("Continuation without a sink")
    return _("Translation as the model reads"), _("Translation without a sink")


def what_if(scene: Scene) -> list[Panel]:
    """The what-if as the page shows it on its first run, the button not pressed: an encoder's embeddings
    compared at once; a decoder's second output when decoding it is cheap (at most EAGER_WORK), else its words
    alone (the page waits for its button there)."""
    bundle, controls = scene.bundle, scene.controls
    if scene.encoder_only:
        with_it = main_result(bundle, controls)
        without = main_result(bundle, controls, hide_first=True)
        if isinstance(with_it, EncodeResult) and isinstance(without, EncodeResult):
            return [what_if_heading(scene), *cosine_panels(scene, with_it, without)]
    result = scene.result
    if not isinstance(result, TranslationResult) or continuation_work(bundle, len(result.output_ids)) > EAGER_WORK:
        return [what_if_heading(scene)]
    hidden = main_result(bundle, controls, trace=False, hide_first=True)
    if not isinstance(hidden, TranslationResult):
        return [what_if_heading(scene)]
    return [what_if_heading(scene), *hidden_panels(scene, result.translation, hidden.translation)]

"""The Why this word? page as panels: what the output is (a translation, a continuation or an answer), then for the
output piece on show its attribution by every method (views/attribution.py), what each decoder layer would already
write (views/lens.py), which heads wrote it and the routes to it (views/shares.py) and what a donor's activations
change (views/patching.py), and last what each head mostly does. `panels(scene)` is the page as its first run
draws it, nothing cached and no button clicked, its costly results computed directly with the model.analysis
functions the app caches (ui/session/explanations.py)."""

from __future__ import annotations

import pandas as pd

from i18n import _, later, n_
from model import Bundle, EncodeResult, Interventions, TranslationResult
from model.analysis.roles import trace_roles
from model.results import GenerationResult
from views import attribution, lens, patching, shares
from views.attention import VIEW
from views.attribution import METHOD
from views.controls import WINDOW
from views.explained import Explained, explained
from views.fields import Field
from views.lengths import source_span
from views.markdown import md
from views.panels import Panel, words
from views.patching import DONOR
from views.scene import Scene
from viz.explain import roles_frame, roles_summary
from viz.labels import distinct_labels
from viz.lengths import around

# The page's own controls: the whole table's method, the donor, the source window, the routes' threshold, and the
# attention kind of the head whose writes are shown (the Attention page's)
FIELDS: list[Field] = [METHOD, DONOR, WINDOW, shares.THRESHOLD, VIEW]
NEEDS_RESULT = True  # the page runs its output itself (written piece by piece when costly); a notebook needs it too


def warnings(scene: Scene) -> list[Panel]:
    """What the model said of the text (pieces it does not know, a text cut to fit)."""
    said = scene.result.warnings if scene.result is not None else []
    return [words(scene.key(f"why-warning-{at}"), md(warning), "warning") for at, warning in enumerate(said)]


def no_output(scene: Scene) -> Panel:
    """An encoder alone writes nothing to explain: only the roles of its heads follow."""
    return words(
        scene.key("why-no-output"),
        _(
            "{model} does not translate, so no output piece needs explaining (attribution, the logit lens and "
            "patching a translation do not apply): below are the roles its heads play on your sentence.",
            model=md(scene.bundle.name),
        ),
        "info",
    )


def opening(why: Explained) -> list[Panel]:
    """A chat message and its answer, or a prompt and its continuation, as the model read and wrote them; an empty
    output said to have nothing to explain."""
    result, ctl = why.scene.result, why.ctl
    shown = []
    if ctl.chat and isinstance(result, GenerationResult):
        answer = md(result.continuation) or _("(empty)")
        # i18n: the typed message and the model's answer follow their labels (in Chinese, inside “”)
        said = _("**Chat message** {message}  \n**Answer** {answer}", message=md(ctl.sentence), answer=answer)
        caption = n_(
            "The prompt's pieces below are the message as the model read it, wrapped by the chat template: "
            "{n} piece, its turn markers and line breaks (↵) included.",
            "The prompt's pieces below are the message as the model read it, wrapped by the chat template: "
            "{n} pieces, its turn markers and line breaks (↵) included.",
            len(why.src_pieces),
        )
        shown += [words(why.key("why-chat"), said), Panel(why.key("why-chat-pieces"), caption=caption)]
    elif why.decoder_only and isinstance(result, GenerationResult):
        written = md(result.continuation) or _("(empty)")
        # i18n: the typed prompt and the model's continuation follow their labels (in Chinese, inside “”)
        said = _(
            "**Prompt** {prompt}  \n**Continuation** {continuation}", prompt=md(result.prompt), continuation=written
        )
        shown.append(words(why.key("why-prompt"), said))
    if not why.out_ids:
        empty = _(
            "The {output} is empty: there is no {label} to explain.", output=why.words.output, label=why.words.a_piece
        )
        shown.append(words(why.key("why-empty"), empty, "info"))
    return shown


def head_roles(bundle: Bundle, result: TranslationResult | EncodeResult, iv: Interventions) -> pd.DataFrame:
    """`model.analysis.roles.trace_roles` on the page's output's own trace (what the app caches)."""
    if result.trace is None:
        raise ValueError(later("head roles read the result's trace, and this one was made without"))
    return trace_roles(result.trace, iv.causal_mask, bundle.config.windows)  # a window hides the first piece


def roles(scene: Scene, frame: pd.DataFrame) -> list[Panel]:
    """What each head mostly does (`head_roles`): how many heads each role tags, the table and how it is scored."""
    summary = Panel(
        scene.key("why-roles-summary"), text=md(roles_summary(frame)), heading=_("What each head mostly does")
    )
    if scene.decoder_only:
        caption = _(
            "Scores are averages over the head's queries (the prompt's positions, then the new pieces'): weight "
            "on the piece before (previous), on itself (same), on the first piece, and how spread its weight is "
            "(broad, normalised entropy). A head is tagged with the highest of the first three when it reaches "
            "0.5, else broad at 0.9 or more. {model} has no encoder and no cross-attention, so only the "
            "decoder's self-attention has heads here: no encoder heads, no sink on a source's last piece "
            "(“last”), and no alignment with a gold word alignment, which scores the cross-attention heads of a "
            "translation model against the source words each French word comes from.",
            model=md(scene.bundle.name),
        )
    else:
        caption = _(
            "Scores are averages over the head's queries: weight on the piece before (previous), on itself "
            "(same), on the first piece, on the last source piece (</s> or [SEP]), and how spread its weight is "
            "(broad, normalised entropy). A head is tagged with the highest of the first four when it reaches "
            "0.5, else broad at 0.9 or more."
        )
    return [summary, Panel(scene.key("why-roles"), table=roles_frame(frame), caption=caption)]


def piece_chips(out_pieces: list[str]) -> list[str]:
    """The output pieces' chips as the picker writes them, one per piece: a piece that repeats carries its
    position ("a₅", "a₁₁"), so that each chip names (and Streamlit maps back to) its own piece."""
    return [md(label) for label in distinct_labels(out_pieces)]


def explanation(why: Explained, step: int) -> list[Panel]:
    """Everything that explains the output piece at `step` (0-based), as the page first shows it: attribution,
    the lens and patching, computed directly."""
    scene = why.scene
    source = source_span(scene.value(WINDOW.key, WINDOW.default), len(why.src_pieces))
    output = around(step, len(why.out_ids))
    return [
        *attribution.panels(why, step, output, source, scene.value(METHOD.key, METHOD.default)),
        *lens.panels(why, step, output),
        *shares.panels(why, step, scene.value(shares.THRESHOLD.key, shares.THRESHOLD.default)),
        *patching.panels(why, step, source, scene.value(DONOR.key, DONOR.default)),
    ]


def panels(scene: Scene) -> list[Panel]:
    """The page for the scene's text, in the page's order: what the model wrote, the piece on show (`step=`)
    explained, and the heads' roles."""
    if scene.result is None:
        raise ValueError("the Why this word? page explains the model's own output: its scene needs the result")
    shown = warnings(scene)
    if scene.encoder_only:
        shown.append(no_output(scene))
    else:
        why = explained(scene)
        shown += opening(why)
        if why.out_ids:
            shown += explanation(why, min(scene.controls.step, len(why.out_ids) - 1))
    return shown + roles(scene, head_roles(scene.bundle, scene.result, scene.controls.interventions()))

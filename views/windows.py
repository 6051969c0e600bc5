"""Gemma 3's sliding windows as panels: a sliding-window layer's mask beside a full-attention layer's over the text,
and how long a text must be for the band to show (ui/parts/windows.py draws them)."""

from __future__ import annotations

from i18n import _, sentences
from model import AnatomyError
from model.analysis.cache import window_masks
from views.controls import MAX_SENTENCE
from views.panels import Panel
from views.scene import Scene
from viz.windows import window_masks as window_figure

ESTIMATE_FROM = 200  # characters: a shorter text says little about how many characters a piece takes


def panels(scene: Scene, pieces: list[str]) -> list[Panel]:
    """A sliding-window layer's mask beside a full-attention layer's, over the text `pieces` (nothing for a model
    without sliding windows)."""
    masks = window_masks(scene.bundle.config, len(pieces))
    if len(masks) < 2:
        return []
    (slide, window, sliding), (full, _full_window, whole) = masks
    names = [
        _("L{layer}: sliding-window layer (window {window})", layer=slide + 1, window=window),
        _("L{layer}: full-attention layer", layer=full + 1),
    ]
    title = _("{name}: which keys each query may read", name=scene.bundle.name)
    figure = scene.figure(window_figure, [sliding, whole], names, pieces, scene.style, title, window)
    caption = _caption(scene, pieces, window)
    return [Panel(scene.key("windows"), figure, heading=_("Sliding windows"), caption=caption)]


def _caption(scene: Scene, pieces: list[str], window: int) -> str:
    """What the two masks show, and how long a text must be for the band to show."""
    cfg = scene.bundle.config
    bands = _(
        "Blue: a key the query may read; grey: hidden. {sliding} of {layers} layers read only the last {window} "
        "pieces (a band along the diagonal), the others everything before the query (a triangle): the band caps "
        "what their cache must keep at {kept} past positions however long the text.",
        sliding=sum(1 for i in range(cfg.n_decoder_layers) if cfg.window(i)),
        layers=cfg.n_decoder_layers,
        window=window,
        kept=window - 1,
    )
    if len(pieces) > window:
        return sentences(
            bands,
            _(
                "Your text has {n} pieces, longer than the window: the band shows, and from query {window} on the "
                "first piece is out of the sliding layers' reach.",
                n=len(pieces),
                window=window,
            ),
        )
    within = _(
        "Your text has {n} pieces, within the window: type more than {window} to see the band.",
        n=len(pieces),
        window=window,
    )
    return sentences(bands, within, _text_box(scene, len(pieces)))


def _digits_apart(scene: Scene) -> bool:
    """Whether the model's tokenizer reads each digit as a piece of its own (Gemma's, SmolLM2's do)."""
    digits = "31415926"
    try:
        return len(scene.bundle.tokenizer.encode_source(digits)) >= len(digits)
    except AnatomyError:  # a tokenizer that refuses the text says nothing either way
        return False


def _text_box(scene: Scene, pieces: int) -> str:
    """How long a text the box takes, in characters and (from a text long enough to tell) in pieces, and whether
    a table of digits would pass the window."""
    typed = len(scene.controls.sentence)
    read = len(getattr(scene.result, "prompt_ids", ())) or pieces  # the text's own pieces, not the continuation's
    per_piece = typed / max(read, 1)
    said = {"most": f"{MAX_SENTENCE:,}", "per": f"{per_piece:.1f}", "about": f"{MAX_SENTENCE / per_piece:,.0f}"}
    digits = _digits_apart(scene)
    if typed >= ESTIMATE_FROM and digits:
        return _(
            "The text box takes at most {most} characters; at this text's {per} characters a piece that is about "
            "{about} pieces, and the model reads every digit as a piece of its own, so a table of figures (a few "
            "years of monthly rainfall, say) passes the window.",
            **said,
        )
    if typed >= ESTIMATE_FROM:
        return _(
            "The text box takes at most {most} characters; at this text's {per} characters a piece that is about "
            "{about} pieces.",
            **said,
        )
    if digits:
        return _(
            "The text box takes at most {most} characters, and the model reads every digit as a piece of its own, "
            "so a table of figures (a few years of monthly rainfall, say) passes the window.",
            **said,
        )
    return _("The text box takes at most {most} characters.", **said)

"""The Why this word? page's "Which heads wrote it", as panels: the piece's logit split into every head's and
feed-forward block's share (direct logit attribution, `model.analysis.shares`) as a layers × heads heatmap and the
ten largest as bars, what the chosen head writes (the pieces it most raises and lowers), and the routes the
information took to the piece (`model.analysis.routes`), above a threshold in the URL. The app computes through
its cache and binds the clicks (ui/parts/shares.py); `panels` computes directly, as a notebook gets the page."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from i18n import _, listing, n_, sentences
from model.analysis.routes import THRESHOLD as ROUTES_THRESHOLD
from model.analysis.routes import routes
from model.analysis.shares import BIAS, EMBEDDINGS, LogitShares, logit_shares
from model.results import Routes, Trace
from views.attention import VIEW
from views.controls import Head, head_label
from views.explained import Explained
from views.fields import Field, number_in
from views.panels import Panel
from viz.labels import plotly_piece
from viz.routes import routes_chart
from viz.shares import shares_heatmap, top_bars, writes_bars

# The routes' threshold, as the slider offers it
THRESHOLD = Field("threshold", ROUTES_THRESHOLD, number_in(0.01, 0.5), lambda value: f"{value:g}")
TOP = 10  # the parts drawn as bars
BLOCK_CODES = {"self": "dec-self", "cross": "dec-cross"}


@dataclass(frozen=True)
class SharesView:
    """One output piece's logit split into shares (`model.analysis.shares.logit_contributions`' Series), and the
    model's own logit: what the app caches."""

    shares: pd.Series
    logit: float

    @classmethod
    def of(cls, found: LogitShares) -> SharesView:
        """The shares and the logit of a split (its parts stay with it)."""
        return cls(found.shares, found.logit)

    def heads(self, kind: str, layers: int, heads: int) -> np.ndarray:
        """(layers, heads): the shares of one attention kind's heads."""
        grid = np.zeros((layers, heads))
        for label, value in self.shares.items():
            if isinstance(label, tuple) and label[1] == kind:
                grid[label[2], label[3]] = value
        return grid

    def ffn(self, layers: int) -> np.ndarray:
        """(layers,): the feed-forward blocks' shares."""
        return np.array([self.shares[("decoder", "ffn", layer)] for layer in range(layers)])

    def largest(self, top: int = TOP) -> pd.Series:
        """The `top` shares largest in size, largest first."""
        return self.shares.reindex(self.shares.abs().sort_values(ascending=False).index[:top])


def trace_of(why: Explained) -> Trace | None:
    """The recorded pass the section reads: the output's own trace, else (with the causal mask on: no trace is read
    without it) one teacher-forced pass for all three parts."""
    if why.own_trace is not None or not why.iv.causal_mask:
        return why.own_trace
    return why.bundle.teacher_forced(why.ctl.sentence, list(why.out_ids), why.iv, why.ctl.chat)


def logit_shares_of(why: Explained, step: int, trace: Trace | None) -> LogitShares:
    """Output piece `step`'s logit split into shares, with the parts whose writes the section shows, computed
    directly."""
    ctl = why.ctl
    return logit_shares(why.bundle, ctl.sentence, why.out_ids, step, why.iv, ctl.chat, trace)


def routes_of(why: Explained, step: int, threshold: float, trace: Trace | None) -> Routes:
    """The routes to output piece `step`, computed directly."""
    ctl = why.ctl
    return routes(why.bundle, ctl.sentence, why.out_ids, step, why.iv, ctl.chat, threshold, trace)


def kinds(why: Explained) -> list[str]:
    """The decoder's attention kinds: self-attention, and an encoder-decoder's cross-attention."""
    return ["self", "cross"] if why.bundle.config.cross_attention else ["self"]


def chosen_head(why: Explained) -> Head:
    """The head whose writes are shown: the sidebar's layer and head, in the decoder block the `view=` names (a
    decoder alone's self-attention)."""
    code = why.scene.value(VIEW.key, VIEW.default)
    kind = "cross" if code == "dec-cross" and "cross" in kinds(why) else "self"
    layers = why.bundle.config.n_decoder_layers
    return ("decoder", kind, min(why.ctl.layer, layers - 1), why.ctl.head)


def part_label(label: Hashable) -> str:
    """A part of the stream as the bars name it, in the run's language."""
    if label == EMBEDDINGS:
        return _("embeddings")
    if label == BIAS:
        return _("biases")
    assert isinstance(label, tuple)
    if label[1] == "ffn":
        return _("feed-forward L{layer}", layer=label[2] + 1)
    return head_label(label)


def _titled(why: Explained, step: int) -> str:
    """Output piece `step` as a figure's title writes it."""
    return plotly_piece(why.out_pieces[step], why.byte_level)


def _heading_caption(why: Explained, step: int, view: SharesView) -> str:
    cfg, piece = why.bundle.config, why.shown(why.out_pieces[step])
    said = [
        _(
            "The logit of {shown} ({logit:.2f}) is a sum: what each head, each feed-forward block, the embeddings "
            "and the biases wrote into the residual stream at the position that predicts it, each carried through "
            "the norms after it, their scales frozen at that position, and the output projection.",
            shown=f"**{piece}**",
            logit=view.logit,
        )
    ]
    if not cfg.norm_first:
        said.append(
            _(
                "In this post-LN model every layer's norms sit on the stream: they are frozen the same way, so a share "
                "is what a part wrote directly. Knocking the part out changes those norms too, and what the later "
                "layers read: its effect on the logit can be much smaller than its share."
            )
        )
    else:
        said.append(
            _(
                "A share is what a part wrote directly; knocking it out also changes what the later layers read, so "
                "its effect on the logit can differ."
            )
        )
    if cfg.sandwich_norm:
        said.append(_("The norms on each sublayer's output (Gemma's) are frozen the same way."))
    if cfg.cross_attention:
        said.append(
            _(
                "The encoder reaches the decoder only through cross-attention: its work is in the "
                "cross-attention heads' shares."
            )
        )
    return sentences(*said)


def heatmap(why: Explained, step: int, view: SharesView) -> Panel:
    """Every head's share as layers × heads, each attention kind a panel, the feed-forward blocks beside."""
    cfg = why.bundle.config
    names = {"self": _("self-attention heads"), "cross": _("cross-attention heads")}
    blocks = [(names[kind], view.heads(kind, cfg.n_decoder_layers, cfg.n_heads)) for kind in kinds(why)]
    off = [
        (kinds(why).index(kind), layer, head)
        for stack, kind, layer, head in why.iv.ablate
        if stack == "decoder" and kind in kinds(why)
    ]
    stack, kind, layer, head = chosen_head(why)
    figure = why.figure(
        shares_heatmap,
        blocks,
        view.ffn(cfg.n_decoder_layers),
        why.style,
        _("feed-forward"),
        off=off,
        selected=(kinds(why).index(kind), layer, head),
        title=_("Each part's share of the logit of {shown}", shown=_titled(why, step)),
    )
    caption = _heading_caption(why, step, view)
    if off:
        knocked = listing([head_label(h) for h in sorted(why.iv.ablate) if h[0] == "decoder"])
        caption = sentences(
            caption,
            n_(
                "{heads} is knocked out: its share is 0 (×).",
                "{heads} are knocked out: their shares are 0 (×).",
                len(off),
                heads=knocked,
            ),
        )
    return Panel(why.key("why-shares"), figure, heading=_("Which heads wrote it"), caption=caption)


def largest(why: Explained, view: SharesView) -> Panel:
    """The ten largest shares in size, as bars."""
    top = view.largest()
    figure = why.figure(
        top_bars,
        [part_label(label) for label in top.index],
        top.to_numpy(),
        why.style,
        _("share of the logit"),
        title=_("The ten largest shares"),
    )
    caption = _(
        "The ten largest shares, raising the logit (right) or lowering it (left); all of them, the "
        "embeddings and the biases included, add up to the logit."
    )
    return Panel(why.key("why-shares-top"), figure, caption=caption, row=why.key("why-shares-row"))


def writes(why: Explained, head: Head, frame: pd.DataFrame) -> Panel:
    """The pieces the chosen head's output most raises and most lowers at that position."""
    half = len(frame) // 2
    pairs = list(zip(frame["piece"], frame["change"], strict=True))
    title = _("What {head} writes", head=head_label(head))
    figure = why.figure(writes_bars, pairs[:half], pairs[half:], why.style, title=title)
    caption = _(
        "What {head} writes at this position, carried through the norms after it (frozen) and the output "
        "projection: the pieces whose logits it raises most and lowers most. Click a head in the heatmap or an "
        "edge of the routes to choose another.",
        head=head_label(head),
    )
    return Panel(why.key("why-writes"), figure, caption=caption, row=why.key("why-shares-row"))


def decoder_pieces(why: Explained) -> list[str]:
    """The pieces the decoder reads, one per position: the start piece (or a decoder alone's prompt), then the
    output but its last piece."""
    if why.decoder_only:
        return [*why.src_pieces, *why.out_pieces[:-1]]
    return [*why.bundle.tokenizer.pieces([why.bundle.specials.bos]), *why.out_pieces[:-1]]


def route_panel(why: Explained, step: int, found: Routes) -> Panel:
    """The routes graph, with what it leaves out."""
    sources = why.src_pieces if why.bundle.config.cross_attention else []
    _stack, kind, layer, head = chosen_head(why)
    figure = why.figure(
        routes_chart,
        found,
        decoder_pieces(why),
        sources,
        why.style,
        selected=(kind, layer, head),
        title=_("The routes to {shown}", shown=_titled(why, step)),
    )
    said = [
        _(
            "How the information reached {shown}, layer by layer from the embeddings (bottom): an edge is kept when "
            "it carries at least {share:.0%} of what is written into the position it enters (its norm over the sum "
            "of the norms of every part), built backwards from the position that predicts the piece. Attention "
            "edges join positions; click one to choose its strongest head.",
            shown=f"**{why.shown(why.out_pieces[step])}**",
            share=found.threshold,
        )
    ]
    if found.hidden:
        said.append(
            n_(
                "The routes reach {n} more position than the graph draws: it keeps the {most} with the strongest "
                "edges, the first among them.",
                "The routes reach {n} more positions than the graph draws: it keeps the {most} with the strongest "
                "edges, the first among them.",
                found.hidden,
                most=len(found.positions),
            )
        )
    return Panel(why.key("why-routes"), figure, caption=sentences(*said))


def routes_heading(why: Explained) -> Panel:
    """The routes' heading (the threshold's slider sits under it)."""
    return Panel(why.key("why-routes-heading"), heading=_("The routes to the piece"))


def panels(why: Explained, step: int, threshold: float = ROUTES_THRESHOLD) -> list[Panel]:
    """The section as the page shows it, computed directly from one recorded pass (`trace_of`)."""
    trace = trace_of(why)
    found = logit_shares_of(why, step, trace)
    view = SharesView.of(found)
    head = chosen_head(why)
    return [
        heatmap(why, step, view),
        largest(why, view),
        writes(why, head, found.writes(why.bundle, head)),
        routes_heading(why),
        route_panel(why, step, routes_of(why, step, threshold, trace)),
    ]

"""Cached shares and routes of one output piece (the Why this word? page's "Which heads wrote it" section): the
logit split into every part's share, with the parts that say what a head writes, and the routes to the piece."""

from __future__ import annotations

from model import Bundle, Interventions, Trace
from model.analysis.routes import routes as routes_to
from model.analysis.shares import LogitShares
from model.analysis.shares import logit_shares as split_logit
from model.results import Routes
from ui.session.cached import IvKey, cached, interventions_of, iv_key


@cached
def _logit_shares(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    output_ids: tuple[int, ...],
    key: IvKey,
    piece: int,
    chat: bool,
    trace: Trace | None = None,
) -> LogitShares:
    return split_logit(_bundle, sentence, output_ids, piece, interventions_of(key), chat, trace)


def logit_shares(
    bundle: Bundle,
    sentence: str,
    output_ids: tuple[int, ...],
    iv: Interventions,
    piece: int,
    trace: Trace | None = None,
    chat: bool = False,
) -> LogitShares:
    """Output piece `piece`'s logit split into every part's share (`model.analysis.shares`), with the parts whose
    writes the page shows, cached; `trace`, the output's own, saves it a pass."""
    key = iv_key(iv)
    return _logit_shares(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), key, piece, chat, trace=trace)


@cached
def _routes(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    output_ids: tuple[int, ...],
    key: IvKey,
    piece: int,
    threshold: float,
    chat: bool,
    trace: Trace | None = None,
) -> Routes:
    return routes_to(_bundle, sentence, output_ids, piece, interventions_of(key), chat, threshold, trace)


def routes(
    bundle: Bundle,
    sentence: str,
    output_ids: tuple[int, ...],
    iv: Interventions,
    piece: int,
    threshold: float,
    trace: Trace | None = None,
    chat: bool = False,
) -> Routes:
    """The routes to output piece `piece` above `threshold` (`model.analysis.routes`), cached."""
    key = iv_key(iv)
    return _routes(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), key, piece, threshold, chat, trace=trace)

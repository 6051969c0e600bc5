"""The Attention page's parts about keys and values, drawn from views/kvcache.py: shared key/value heads
(grouped-query attention) and what they save, the KV cache growing under the play button, and the switch and
button that decode without the cache."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from i18n import _
from model.results import GenerationResult
from ui.page.binding import bind, page_value
from ui.page.markup import table_height
from ui.page.ondemand import asked
from ui.page.panels import draw_one
from ui.page.start import Page
from ui.session import experiments
from views import kvcache
from views.kvcache import LENGTHS as LENGTHS
from views.kvcache import NO_CACHE as NO_CACHE
from views.kvcache import kind_of_sharing as kind_of_sharing


def shared_heads(page: Page, positions: int) -> None:
    """n_q / n_kv and the cache's bytes at the text's length, 4k and 32k pieces, against one key/value head
    per query head."""
    for panel in kvcache.shared_heads_panels(page.scene, positions):
        rows = len(panel.table) if isinstance(panel.table, pd.DataFrame) else 0
        draw_one(page, panel, height=table_height(rows))


def cache_at_step(page: Page, step: int, pieces: list[str]) -> None:
    """Under the play button: each layer's cached keys and values after step `step` (from 0), the rows
    the step added outlined, their shape and bytes, and the bytes by step."""
    page.panels(kvcache.cache_panels(page.scene, step, pieces))


def prefix_work(page: Page, prompt: int, steps: int) -> float:
    """What decoding `steps` pieces twice costs, once re-reading every prefix (in EAGER_WORK's units)."""
    return kvcache.prefix_work(page.bundle, prompt, steps)


def without_cache(page: Page) -> None:
    """The "without the cache" switch: pieces computed per step and the time measured, both ways."""
    result = page.result
    if not page.decoder_only or not isinstance(result, GenerationResult):
        return
    steps = len(result.output_ids)
    page_value(NO_CACHE)
    if not bind("nocache", st.toggle, label=_("Without the KV cache: re-read every prefix at every step")):
        return
    prompt = tuple(result.prompt_ids)
    iv = page.controls.interventions()
    go = asked(
        prefix_work(page, len(prompt), steps),
        experiments.without_cache_held(page.bundle, prompt, steps, iv),
        _("Decode again without the cache, and time both"),
        "without-cache",
        _("Re-reading every prefix costs seconds at this model's size: the button decodes both ways and times them."),
    )
    if go is False:
        return
    measured = experiments.decoded_without_cache(page.bundle, prompt, steps, iv)
    if not isinstance(go, bool):
        go.empty()
    page.panels(kvcache.without_cache_panels(page.scene, measured, steps))

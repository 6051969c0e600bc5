"""What a page computes unasked: the work it may spend without a button (parameter x position products,
model.analysis.forced.work), what decoding a continuation costs in those units, and what is left beside it.
The app's buttons (ui/page/ondemand.py) and a notebook's panels decide with the same numbers."""

from __future__ import annotations

from model import Bundle

# Work (parameter x position products, model.analysis.forced.work) a part of a page may cost without
# being asked: under half a second on one core. On the shipped model, only integrated gradients' whole table
# for sentences of ten words or more is asked for; at opus-mt's size, every whole table but attention's and
# rollout's, and the patching grid.
EAGER_WORK = 3e10
# A decoding step feeds one row yet reads every weight of the decoder and the output projection, which on
# one core costs as much work as this many products per weight (measured at gpt2's size: 29 ms a step, where
# EAGER_WORK is half a second)
STEP_WORK = 14


def continuation_work(bundle: Bundle, steps: int) -> float:
    """What decoding `steps` pieces one at a time costs, in the units of EAGER_WORK."""
    model = bundle.model
    head = model.tgt_embed.token.weight if model.generator is None else model.generator.weight
    read = sum(p.numel() for p in model.decoder.parameters()) + head.numel()  # what every step reads
    return float(steps) * read * STEP_WORK


def spare_work(bundle: Bundle, steps: int, eager: float = EAGER_WORK) -> float:
    """What a page that shows a continuation of `steps` pieces (or a translation) may compute unasked beside
    it: `eager` (EAGER_WORK) less what decoding it costs. A real-size model's decoding takes the whole of it
    (SmolLM2-135M's 20 pieces, gpt2's: about a second), so there everything else waits for a button and a
    new sentence costs its decoding alone; on a small model nearly all of it is left."""
    return max(0.0, eager - continuation_work(bundle, steps))

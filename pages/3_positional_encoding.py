"""Positional encoding: the table, its frequencies, similarities, sizes, and the switch-off experiment;
for a relative-position model (T5) the bias each head adds to the scores, by pieces and by distance; for a
rotary model how it turns its queries and keys. What each part shows: views/positional.py."""

from i18n import N_, _
from ui.page.ondemand import second_continuation
from ui.page.start import start
from ui.page.stream import Preview
from ui.parts import lengths, positions
from ui.parts.rotary import section as rotary_section
from ui.parts.rotary import what_if as rotary_what_if
from ui.session import explanations
from views import positional

page = start(N_("Positional encoding"), preview=Preview(prompt=positions.prompt_view))
scene, ctl, bundle = page.scene, page.controls, page.bundle
kind = positional.kind_of(bundle.config)
# the run with the positions as trained: the page's own result when the sidebar leaves them on (a long text's
# trace may be too large for the results cache to keep, and would be computed again at every call)
with_pe = page.result if ctl.positional and page.result is not None else page.run(positional_encoding=True)
trace = with_pe.trace

page.lead(positional.lead())
if kind == "relative":
    source = positions.relative(page, trace)
elif kind == "rotary":
    rope_factor = rotary_section(page, trace, positional.typed_pieces(scene))
else:
    positions.absolute(page)

page.panels([positional.experiment_heading(scene)])
if page.encoder_only:
    without_pe = page.run(positional_encoding=False)
    page.panels([positional.similarity_panel(scene, with_pe, without_pe)])
elif not page.decoder_only:
    without_pe = page.run(positional_encoding=False)
    page.panels(positional.outputs_panels(scene, with_pe.translation, without_pe.translation))
elif second_continuation(
    bundle,
    ctl,
    len(with_pe.output_ids),
    _("Continue without {what}", what=positional.what_off(scene)),
    "continue-without-positions",
    positional_encoding=False,
):
    # its attention without positions is read from the continuation with them (below): of its own
    # continuation without them, only the text is shown
    without_text = page.translate(positional_encoding=False, trace=False).translation
    page.panels(positional.outputs_panels(scene, with_pe.translation, without_text))
if kind == "rotary":
    rotary_what_if(page, rope_factor, len(with_pe.output_ids), with_pe.translation)

if page.decoder_only:  # the same pieces read without positions: its own continuation would differ
    # this layer's weights alone: the pass without positions stops at this layer
    off = explanations.teacher_forced_at(
        bundle,
        ctl.sentence,
        with_pe.output_ids,
        positional.positionless_stage(scene, trace),
        ctl.interventions(positional_encoding=False),
        chat=ctl.chat,
    )[0]
    page.panels([positional.experiment_panel(scene, with_pe, off)])
else:
    stack, layer = positional.experiment_layer(scene, trace)
    off = without_pe.trace.pattern(stack, "self", layer)
    if kind != "relative":  # T5's part drew the window slider already
        source = lengths.source_window(len(positional.pieces_of(scene, page.result.trace)))
    page.panels([positional.experiment_panel(scene, with_pe, off, source)])
page.finish(globals())

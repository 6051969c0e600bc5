"""What a loaded model has and can do, read off its checkpoint in one place, so that the rest of
the app asks (`bundle.capabilities.decoder`) instead of comparing kind or family strings."""

from __future__ import annotations

from dataclasses import dataclass

from .families import FAMILIES
from .record import OURS, Checkpoint


@dataclass(frozen=True)
class Capabilities:
    """The parts a model has and what it produces."""

    encoder: bool  # reads a source sentence through an encoder stack
    decoder: bool  # produces pieces one at a time through a decoder stack
    cross_attention: bool  # its decoder reads the encoder's output: it translates
    # this project's own model: a training log, snapshots, the recipe comparison, and the corpus (its lexicon, its
    # grammar's reference translation)
    trained_here: bool
    # told its task in words before its input (T5: "translate English to French: "), whether or not its checkpoint
    # names the words
    task_prefix: bool = False

    @property
    def translates(self) -> bool:
        """Sentence in, translation out: an encoder-decoder."""
        return self.cross_attention

    @property
    def encoder_only(self) -> bool:
        """Reads a sentence and gives its states and an embedding, produces no pieces (BERT)."""
        return self.encoder and not self.decoder

    @property
    def decoder_only(self) -> bool:
        """Continues a text through a decoder alone, with no encoder (GPT-2)."""
        return self.decoder and not self.encoder

    @property
    def kind(self) -> str:
        """ "encoder-decoder", "encoder" or "decoder": what the pages print."""
        return "encoder-decoder" if self.cross_attention else ("encoder" if self.encoder else "decoder")


def capabilities(checkpoint: Checkpoint) -> Capabilities:
    """The capabilities of a loaded checkpoint, from its config's stacks and its family."""
    cfg = checkpoint.config
    family = FAMILIES.get(checkpoint.family)
    return Capabilities(
        encoder=cfg.n_encoder_layers > 0,
        decoder=cfg.n_decoder_layers > 0,
        cross_attention=cfg.cross_attention,
        trained_here=checkpoint.family == OURS,
        task_prefix=family is not None and hasattr(family, "task_prefix"),
    )

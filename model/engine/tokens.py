"""Special token ids (this project's fixed ones, and a checkpoint's own), and padding."""

from __future__ import annotations

from dataclasses import dataclass

import torch

PAD_ID = 0
UNK_ID = 1
BOS_ID = 2
EOS_ID = 3
SPECIAL_PIECES = {PAD_ID: "<pad>", UNK_ID: "<unk>", BOS_ID: "<s>", EOS_ID: "</s>"}


@dataclass(frozen=True)
class SpecialIds:
    """The ids decoding and padding need; each vocabulary carries its own."""

    pad: int = PAD_ID
    unk: int = UNK_ID
    bos: int = BOS_ID  # the decoder's first input (Marian starts from its pad id)
    eos: int = EOS_ID
    also_end: tuple[int, ...] = ()  # more ids that end decoding (an instruct model's end of turn: Gemma-it's 106)
    banned: tuple[int, ...] = ()  # never produced (Marian's generation config bans <pad>)
    force_eos_at_end: bool = False  # the last step allowed must end the output (Marian's forced_eos_token_id)

    @property
    def ends(self) -> tuple[int, ...]:
        """Every id that ends decoding: EOS first, then the others a generation config lists."""
        return (self.eos, *(i for i in dict.fromkeys(self.also_end) if i != self.eos))


PROJECT_SPECIALS = SpecialIds()


def pad_rows(rows: list[list[int]], device: torch.device | str | None = None, pad_id: int = PAD_ID) -> torch.Tensor:
    """(B, longest) tensor of id rows, padded on the right with `pad_id`."""
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [pad_id] * (width - len(r)) for r in rows], device=device)

"""What a sampled answer asks for and what each of its draws was: plain values, torch-free (results and pictures
read them without torch); the drawing itself is sampling.py's."""

from __future__ import annotations

from dataclasses import dataclass

from i18n import later

from ..errors import InputError

TEMPERATURES = (0.05, 5.0)  # the least and the most temperature asked for
MOST_TOP_K = 1000
MOST_SEED = 2**53  # a seed survives a round trip through JSON and a browser's numbers
SHOWN_PIECES = 20  # the candidates a draw keeps for its picture, the drawn piece added when it ranks below


@dataclass(frozen=True)
class Sampling:
    """How a sampled answer is drawn: the temperature the scores are divided by, the pieces top-k keeps (0: all),
    the probability top-p keeps (1: all), and the seed of the run's own generator."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        low, high = TEMPERATURES
        if not _number(self.temperature) or not low <= self.temperature <= high:
            raise InputError(
                later(
                    "Temperature must be a number from {low} to {high}, got {value}",
                    low=low,
                    high=high,
                    value=repr(self.temperature),
                )
            )
        if not _whole(self.top_k) or not 0 <= self.top_k <= MOST_TOP_K:
            raise InputError(
                later(
                    "Top-k must be a whole number from 0 (no cut) to {most}, got {value}",
                    most=MOST_TOP_K,
                    value=repr(self.top_k),
                )
            )
        if not _number(self.top_p) or not 0.0 < self.top_p <= 1.0:
            raise InputError(later("Top-p must be above 0 and at most 1, got {value}", value=repr(self.top_p)))
        if not _whole(self.seed) or not 0 <= self.seed < MOST_SEED:
            raise InputError(
                later(
                    "The seed must be a whole number from 0 to {most}, got {value}",
                    most=MOST_SEED - 1,
                    value=repr(self.seed),
                )
            )


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Draw:
    """One sampled step, what its picture needs: the uniform number drawn, the drawn piece's rank (from 0) in
    the ranking, how many pieces top-k and then top-p kept, and the first SHOWN_PIECES of the ranking (the drawn
    piece added when it ranks below them) with the model's probability, the tempered one and the one drawn
    from (0 for a piece cut); and the probability after temperature of the pieces kept."""

    uniform: float
    rank: int
    after_top_k: int
    kept: int
    kept_mass: float  # of the probability after temperature
    ids: tuple[int, ...]
    model: tuple[float, ...]
    tempered: tuple[float, ...]
    sampled: tuple[float, ...]

    @property
    def ranks(self) -> tuple[int, ...]:
        """The rank of each of `ids`: the first ones in order, then the drawn piece's when it ranks below them."""
        if self.rank < SHOWN_PIECES:
            return tuple(range(len(self.ids)))
        return (*range(len(self.ids) - 1), self.rank)

    @property
    def piece(self) -> int:
        """The id drawn."""
        return self.ids[self.ranks.index(self.rank)]

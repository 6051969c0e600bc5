"""How a weight matrix sits in memory, which decides how fast a decoding step reads it.

A decoding step multiplies each decoder matrix W (out, in) by one vector: y = x Wᵀ. On the CPU
(MKL, one thread) the speed of that product depends on W's layout. Measured at opus-mt size with
the weights out of the cache: a matrix at least as tall as it is wide (the 59k-row output
projection, 2048 x 512, 1536 x 512) streams about twice as fast with its transpose contiguous
(the output projection: 4.4 ms against 11 ms); a wide one (512 x 2048) is faster row-major. A
matrix stored transposed keeps its Parameter, name, shape and values: only its strides change,
so loading, saving and training see the same weights.
"""

from __future__ import annotations

import torch


def store_for_one_row(weight: torch.Tensor) -> None:
    """Lay out `weight` (out, in) for products with one row at a time: its transpose contiguous
    when out >= in, else left as it is."""
    rows, columns = weight.shape
    if rows >= columns and not weight.t().is_contiguous():
        weight.data = weight.data.t().contiguous().t()

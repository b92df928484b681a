"""Numeric helpers for values read from maps: float conversion without spurious
warnings, and a sort-based unique that does not import ``numpy.ma``."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["floats", "sorted_unique", "range_rows"]


def floats(values: Any, dtype: Any = np.float64) -> np.ndarray:
    """Floats read from a map as ``dtype``, without a warning for a signalling NaN.

    Converting a signalling NaN (which a damaged map can hold) raises the
    "invalid" floating-point flag, which numpy reports as a RuntimeWarning;
    the result is a quiet NaN either way, and callers check finiteness.
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(values).astype(dtype)


def sorted_unique(values: Any) -> np.ndarray:
    """The distinct values of an integer array, sorted and flattened: ``np.unique(values)``.

    numpy 2.3 and later import ``numpy.ma`` on the first plain ``np.unique``
    call (to test for a masked array): time and memory that every export,
    render and decompile process would pay for this sort.
    """
    ordered = np.sort(np.ravel(values))
    first = np.empty(len(ordered), bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def range_rows(first: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ranges ``first[i] .. first[i] + count[i]``, concatenated: ``(owner, index)``,
    for every row the range it belongs to and the row.  No checks: callers validate the
    ranges and size the total first (:func:`sourcebsp.resources.expand_ranges` does both)."""
    first = np.asarray(first, np.int64)
    count = np.asarray(count, np.int64)
    owner = np.repeat(np.arange(len(count)), count)
    starts = np.cumsum(count) - count
    return owner, first[owner] + (np.arange(int(count.sum())) - starts[owner])

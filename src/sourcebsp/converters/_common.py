"""What the converters share: opening maps, progress steps, units, Source's axes to glTF's and
rotations as quaternions.  ``Units`` and ``unit_scale`` are public in :mod:`sourcebsp.converters`."""
from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Callable, Iterator, Literal

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from ..protocols import MapReader, MapSource

Units = Literal["hammer", "meters"]
Progress = Callable[[str], None]

#: One Hammer unit is one inch.
METERS_PER_UNIT = 0.0254
UNIT_SCALE = {"hammer": 1.0, "meters": METERS_PER_UNIT}

# Source is Z-up (x forward, y left, z up); glTF is Y-up with +Z towards the
# viewer.  (x, y, z) -> (x, z, -y) is a proper rotation (-90 degrees about X),
# so windings and handedness are kept.
Z_UP_TO_Y_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def unit_scale(units: str) -> float:
    """Exported units per Hammer unit: 1 for ``"hammer"``, 0.0254 for ``"meters"``; ValueError otherwise."""
    try:
        return UNIT_SCALE[units]
    except KeyError:
        raise ValueError(f"units must be 'hammer' or 'meters', not {units!r}") from None


def to_y_up(points: np.ndarray, scale: float = 1.0, *, rows: np.ndarray | None = None,
            dtype: DTypeLike = np.float64) -> np.ndarray:
    """Source Z-up points ``(N, 3)`` to Y-up ``(x, z, -y)``, scaled.

    Computed in float64 one column at a time, each number rounded once to
    ``dtype``; ``rows`` picks the points to convert without first copying the
    whole selection (no ``(N, 3)`` float64 temporaries).
    """
    points = np.asarray(points)
    out = np.empty((len(points) if rows is None else len(rows), 3), dtype)
    for column, (source, sign) in enumerate(((0, 1.0), (2, 1.0), (1, -1.0))):
        values = points[:, source] if rows is None else points[rows, source]
        out[:, column] = values.astype(np.float64) * (sign * scale)
    return out


@contextlib.contextmanager
def opened(bsp_or_path: MapSource) -> Iterator[MapReader]:
    """A map: the one given, or the one at a path in the container its first bytes call for
    (:func:`sourcebsp.opening.open`), closed afterwards."""
    if isinstance(bsp_or_path, (str, os.PathLike)):
        from .. import opening

        with opening.open(bsp_or_path) as bsp:
            yield bsp
    else:
        yield bsp_or_path


def report(progress: Progress | None, step: str) -> None:
    """Tell ``progress`` (when given) that ``step`` is done."""
    if progress is not None:
        progress(step)


def quaternions(matrices: np.ndarray) -> np.ndarray:
    """Unit quaternions ``(x, y, z, w)`` of rotation matrices ``(N, 3, 3)``."""
    m = np.asarray(matrices, np.float64).reshape(-1, 3, 3)
    t = np.trace(m, axis1=1, axis2=2)
    # Four candidate forms; each is stable where its denominator is largest.
    cand = np.stack([
        np.stack([m[:, 2, 1] - m[:, 1, 2], m[:, 0, 2] - m[:, 2, 0], m[:, 1, 0] - m[:, 0, 1], 1 + t], 1),
        np.stack([1 + m[:, 0, 0] - m[:, 1, 1] - m[:, 2, 2], m[:, 0, 1] + m[:, 1, 0],
                  m[:, 0, 2] + m[:, 2, 0], m[:, 2, 1] - m[:, 1, 2]], 1),
        np.stack([m[:, 0, 1] + m[:, 1, 0], 1 + m[:, 1, 1] - m[:, 0, 0] - m[:, 2, 2],
                  m[:, 1, 2] + m[:, 2, 1], m[:, 0, 2] - m[:, 2, 0]], 1),
        np.stack([m[:, 0, 2] + m[:, 2, 0], m[:, 1, 2] + m[:, 2, 1],
                  1 + m[:, 2, 2] - m[:, 0, 0] - m[:, 1, 1], m[:, 1, 0] - m[:, 0, 1]], 1),
    ], 1)
    diag = np.stack([t, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]], 1)
    q: np.ndarray = cand[np.arange(len(m)), np.argmax(diag, 1)]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q * np.where(q[:, 3:4] < 0, -1.0, 1.0)

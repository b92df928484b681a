"""What the converters share: opening maps, units, axes, optional imports."""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator, Literal

import numpy as np

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
    try:
        return UNIT_SCALE[units]
    except KeyError:
        raise ValueError(f"units must be 'hammer' or 'meters', not {units!r}") from None


def to_y_up(points: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Source Z-up points ``(N, 3)`` to Y-up, scaled."""
    p = np.asarray(points, np.float64)
    return np.stack([p[:, 0], p[:, 2], -p[:, 1]], axis=1) * scale


def format_many(values: Any, decimals: int = 6) -> list[str]:
    """Every number of ``values`` as Hammer writes it, in one pass.

    ``16``, ``0.25``, ``-4.5``: fixed point with up to ``decimals`` decimals and
    no trailing zeros, never in exponent form, never ``-0``; NaN and infinities
    are written as ``0``.

    Whole numbers (most of a decompiled map's coordinates) are printed with
    ``%d``, which for a whole float gives exactly the digits ``%.6f`` gives
    before its point; the rest with ``%.6f`` and their trailing zeros stripped.
    """
    flat = np.asarray(values, np.float64).ravel()
    count = len(flat)
    if not count:
        return []
    flat = np.where(np.isfinite(flat), flat, 0.0)
    whole = flat == np.trunc(flat)
    whole_count = int(np.count_nonzero(whole))
    if whole_count == count:
        return ("%d\n" * count % tuple(flat.tolist())).split()
    rest = flat if whole_count == 0 else flat[~whole]
    text = (f"%.{decimals}f\n" * len(rest)) % tuple(rest.tolist())
    parts = [t.rstrip("0").rstrip(".") for t in text.split()] if decimals > 0 else text.split()
    # Only a negative number that rounds to zero can print as "-0".
    for i in np.flatnonzero((rest < 0) & (rest > -(10.0 ** -decimals))).tolist():
        if parts[i] == "-0":
            parts[i] = "0"
    if whole_count == 0:
        return parts
    merged = np.empty(count, object)
    merged[whole] = ("%d\n" * whole_count % tuple(flat[whole].tolist())).split()
    merged[~whole] = parts
    return merged.tolist()


def require(module: str, what: str) -> Any:
    """Import an optional dependency, or raise ImportError naming the extra to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{what} needs the {module.split('.')[0]!r} package: "
                          f"pip install 'sourcebsp[export]'") from exc


@contextlib.contextmanager
def opened(bsp_or_path: Any) -> Iterator[Any]:
    """A BspFile: the one given, or the map at a path (closed afterwards)."""
    if isinstance(bsp_or_path, (str, os.PathLike)):
        from .. import open_bsp

        with open_bsp(bsp_or_path) as bsp:
            yield bsp
    else:
        yield bsp_or_path


def report(progress: Progress | None, step: str) -> None:
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

"""Overlay and miscellaneous fixed-size lumps: overlays, water overlays,
overlay fades, overlay system levels, cubemaps, map flags.

bspfile.h structs: ``doverlay_t``, ``dwateroverlay_t``, ``doverlayfade_t``,
``doverlaysystemlevel_t``, ``dcubemapsample_t``, ``dflagslump_t``; the Strata
Source (v25) and Dota 2 beta forms of ``doverlay_t``.  The records are declared in
:mod:`sourcebsp.codecs.records` (without numpy); here are the render order helpers.
"""
from __future__ import annotations

import numpy as np


# ---- render order (doverlay_t / dwateroverlay_t m_nFaceCountAndRenderOrder) -------
# bspfile.h: OVERLAY_RENDER_ORDER_NUM_BITS 2; the face count takes the low 14 bits
# (OVERLAY_NUM_RENDER_ORDERS = 1 << 2, OVERLAY_RENDER_ORDER_MASK = 0xC000).
OVERLAY_RENDER_ORDER_NUM_BITS = 2
OVERLAY_NUM_RENDER_ORDERS = 1 << OVERLAY_RENDER_ORDER_NUM_BITS
OVERLAY_FACE_COUNT_BITS = 16 - OVERLAY_RENDER_ORDER_NUM_BITS
OVERLAY_FACE_COUNT_MASK = (1 << OVERLAY_FACE_COUNT_BITS) - 1  # 0x3FFF
OVERLAY_RENDER_ORDER_MASK = 0xFFFF & ~OVERLAY_FACE_COUNT_MASK  # 0xC000


def _packed_field(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values)
    if values.dtype.names is not None:
        values = values["face_count_and_render_order"]
    return values.astype(np.uint16)


def split_render_order(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split ``face_count_and_render_order`` into (face count, render order).

    ``values`` is the packed field, or an overlay / water overlay array.  The
    face count is the low 14 bits (how many of ``faces`` are used), the render
    order the top 2 bits (0-3: overlays of a higher order draw on top).
    """
    packed = _packed_field(values)
    return packed & OVERLAY_FACE_COUNT_MASK, packed >> OVERLAY_FACE_COUNT_BITS


def join_render_order(face_count: np.ndarray, render_order: np.ndarray) -> np.ndarray:
    """Pack face counts and render orders into ``face_count_and_render_order`` (uint16).

    Raises
    ------
    ValueError
        A face count outside 0..16383 or a render order outside 0..3.
    """
    count = np.asarray(face_count, np.int64)
    order = np.asarray(render_order, np.int64)
    if count.size and (count.min() < 0 or count.max() > OVERLAY_FACE_COUNT_MASK):
        raise ValueError(f"overlay face counts must lie in 0..{OVERLAY_FACE_COUNT_MASK}")
    if order.size and (order.min() < 0 or order.max() >= OVERLAY_NUM_RENDER_ORDERS):
        raise ValueError(f"overlay render orders must lie in 0..{OVERLAY_NUM_RENDER_ORDERS - 1}")
    return ((order << OVERLAY_FACE_COUNT_BITS) | count).astype(np.uint16)

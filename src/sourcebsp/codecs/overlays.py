"""Overlay and miscellaneous fixed-size lumps: overlays, water overlays,
overlay fades, overlay system levels, cubemaps, map flags.

bspfile.h structs: ``doverlay_t``, ``dwateroverlay_t``, ``doverlayfade_t``,
``doverlaysystemlevel_t``, ``dcubemapsample_t``, ``dflagslump_t``; the Strata
Source (v25) and Dota 2 beta forms of ``doverlay_t``.
"""
from __future__ import annotations

import numpy as np

from ..lump_ids import LumpId
from .base import Layouts, vec3


def _overlay(max_faces: int, wide: bool, tail: tuple[str, ...] = ()) -> np.dtype:
    head = (
        [("id", "<i4"), ("texinfo", "<i4"), ("face_count_and_render_order", "<u2"), ("padding", "<u2")]
        if wide
        else [
            ("id", "<i4"),  # int nId
            ("texinfo", "<i2"),  # short nTexInfo
            # unsigned short m_nFaceCountAndRenderOrder: low 14 bits faces, top 2 render order
            ("face_count_and_render_order", "<u2"),
        ]
    )
    return np.dtype(
        head
        + [
            ("faces", "<i4", (max_faces,)),  # int aFaces[OVERLAY_BSP_FACE_COUNT]
            ("u", "<f4", (2,)),  # float flU[2]
            ("v", "<f4", (2,)),  # float flV[2]
            ("uv_points", "<f4", (4, 3)),  # Vector vecUVPoints[4]
            vec3("origin"),  # Vector vecOrigin
            vec3("basis_normal"),  # Vector vecBasisNormal
        ]
        + [(name, "<i4") for name in tail]
    )


OVERLAY = _overlay(64, wide=False)  # doverlay_t: 352 bytes
WATEROVERLAY = _overlay(256, wide=False)  # dwateroverlay_t: 1120 bytes
OVERLAY_V25 = _overlay(64, wide=True)  # Strata lump version 1: 356 bytes
WATEROVERLAY_V25 = _overlay(256, wide=True)  # 1124 bytes
# Dota 2 betas (BSP 22, 23): doverlay_t and an int of unknown meaning after it (BSPSource's
# DOverlayDota2: 356 bytes).  Its water overlays are the mainline ones.
OVERLAY_DOTA2 = _overlay(64, wide=False, tail=("unknown",))

OVERLAY_FADE = np.dtype(
    [
        ("fade_dist_min_sq", "<f4"),  # float flFadeDistMinSq
        ("fade_dist_max_sq", "<f4"),  # float flFadeDistMaxSq
    ]
)  # 8 bytes
OVERLAY_SYSTEM_LEVEL = np.dtype(
    [
        ("min_cpu_level", "u1"),  # unsigned char nMinCPULevel
        ("max_cpu_level", "u1"),  # unsigned char nMaxCPULevel
        ("min_gpu_level", "u1"),  # unsigned char nMinGPULevel
        ("max_gpu_level", "u1"),  # unsigned char nMaxGPULevel
    ]
)  # 4 bytes

CUBEMAP = np.dtype(
    [
        ("origin", "<i4", (3,)),  # int origin[3]
        ("size", "<i4"),  # int size (0 = default)
    ]
)  # 16 bytes

MAP_FLAGS = np.dtype([("level_flags", "<u4")])  # dflagslump_t: uint32 m_LevelFlags (LVLFLAGS_*)

LAYOUTS: Layouts = {
    LumpId.OVERLAYS: {0: OVERLAY},
    LumpId.WATEROVERLAYS: {0: WATEROVERLAY},
    LumpId.OVERLAY_FADES: {0: OVERLAY_FADE},
    LumpId.OVERLAY_SYSTEM_LEVELS: {0: OVERLAY_SYSTEM_LEVEL},
    LumpId.CUBEMAPS: {0: CUBEMAP},
    LumpId.MAP_FLAGS: {0: MAP_FLAGS},
}
LAYOUTS_DOTA2: Layouts = {LumpId.OVERLAYS: {0: OVERLAY_DOTA2}}
LAYOUTS_V25: Layouts = {
    LumpId.OVERLAYS: {0: OVERLAY, 1: OVERLAY_V25},
    LumpId.WATEROVERLAYS: {0: WATEROVERLAY, 1: WATEROVERLAY_V25},
}


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

"""Overlay and miscellaneous fixed-size lumps: overlays, water overlays,
overlay fades, overlay system levels, cubemaps, map flags.

bspfile.h structs: ``doverlay_t``, ``dwateroverlay_t``, ``doverlayfade_t``,
``doverlaysystemlevel_t``, ``dcubemapsample_t``, ``dflagslump_t``.
"""
from __future__ import annotations

import numpy as np

from ..lump_ids import LumpId
from .base import vec3


def _overlay(max_faces: int, wide: bool) -> np.dtype:
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
    )


OVERLAY = _overlay(64, wide=False)  # doverlay_t: 352 bytes
WATEROVERLAY = _overlay(256, wide=False)  # dwateroverlay_t: 1120 bytes
OVERLAY_V25 = _overlay(64, wide=True)  # Strata lump version 1: 356 bytes
WATEROVERLAY_V25 = _overlay(256, wide=True)  # 1124 bytes

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

LAYOUTS = {
    LumpId.OVERLAYS: {0: OVERLAY},
    LumpId.WATEROVERLAYS: {0: WATEROVERLAY},
    LumpId.OVERLAY_FADES: {0: OVERLAY_FADE},
    LumpId.OVERLAY_SYSTEM_LEVELS: {0: OVERLAY_SYSTEM_LEVEL},
    LumpId.CUBEMAPS: {0: CUBEMAP},
    LumpId.MAP_FLAGS: {0: MAP_FLAGS},
}
LAYOUTS_V25 = {
    LumpId.OVERLAYS: {0: OVERLAY, 1: OVERLAY_V25},
    LumpId.WATEROVERLAYS: {0: WATEROVERLAY, 1: WATEROVERLAY_V25},
}

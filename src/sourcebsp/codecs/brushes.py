"""Brush lumps: brushes and brush sides.

bspfile.h structs: ``dbrush_t``, ``dbrushside_t`` (the ``short bevel`` of
BSP 19 and older became ``byte bevel; byte thin`` in BSP 20), and the Strata
Source (v25) brush side with 32-bit indices.
"""
from __future__ import annotations

from ..lump_ids import LumpId
from .base import Layouts, Record

BRUSH = Record(
    [
        ("firstside", "<i4"),  # int firstside
        ("numsides", "<i4"),  # int numsides
        ("contents", "<i4"),  # int contents (CONTENTS_* of bspflags.h)
    ]
)  # 12 bytes

BRUSHSIDE = Record(
    [
        ("planenum", "<u2"),  # unsigned short planenum (facing out of the brush)
        ("texinfo", "<i2"),  # short texinfo
        ("dispinfo", "<i2"),  # short dispinfo
        ("bevel", "u1"),  # byte bevel (side is a bevel plane)
        ("thin", "u1"),  # byte thin
    ]
)  # 8 bytes
BRUSHSIDE_V19 = Record(
    [
        ("planenum", "<u2"),
        ("texinfo", "<i2"),
        ("dispinfo", "<i2"),
        ("bevel", "<i2"),  # short bevel
    ]
)  # 8 bytes
BRUSHSIDE_V25 = Record(
    [
        ("planenum", "<u4"),
        ("texinfo", "<i4"),
        ("dispinfo", "<i4"),
        ("bevel", "i1"),
        ("thin", "i1"),
        ("padding", "<i2"),
    ]
)  # 16 bytes

LAYOUTS: Layouts = {
    LumpId.BRUSHES: {0: BRUSH},
    LumpId.BRUSHSIDES: {0: BRUSHSIDE},
}
LAYOUTS_V19: Layouts = {LumpId.BRUSHSIDES: {0: BRUSHSIDE_V19}}
LAYOUTS_V25: Layouts = {LumpId.BRUSHSIDES: {0: BRUSHSIDE, 1: BRUSHSIDE_V25}}
LAYOUTS_VINDICTUS: Layouts = {LumpId.BRUSHSIDES: {0: BRUSHSIDE_V25}}  # Strata's 16-byte dbrushside_t, years earlier

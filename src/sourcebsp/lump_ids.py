"""Lump indices of the Source BSP directory (``bspfile.h`` ``LUMP_*``).

Some slots were renamed between engine branches; the enum uses the Source SDK
2013 names and :func:`lump_name` gives the name a given BSP version uses.
"""
from __future__ import annotations

import enum

__all__ = ["LumpId", "NUM_LUMPS", "lump_name"]

NUM_LUMPS = 64


class LumpId(enum.IntEnum):
    ENTITIES = 0
    PLANES = 1
    TEXDATA = 2
    VERTEXES = 3
    VISIBILITY = 4
    NODES = 5
    TEXINFO = 6
    FACES = 7
    LIGHTING = 8
    OCCLUSION = 9
    LEAFS = 10
    FACEIDS = 11
    EDGES = 12
    SURFEDGES = 13
    MODELS = 14
    WORLDLIGHTS = 15
    LEAFFACES = 16
    LEAFBRUSHES = 17
    BRUSHES = 18
    BRUSHSIDES = 19
    AREAS = 20
    AREAPORTALS = 21
    PROPCOLLISION = 22  # v17-v19: PORTALS; unused in v20
    PROPHULLS = 23  # v17-v19: CLUSTERS
    PROPHULLVERTS = 24  # v17-v19: PORTALVERTS
    PROPTRIS = 25  # v17-v19: CLUSTERPORTALS
    DISPINFO = 26
    ORIGINALFACES = 27
    PHYSDISP = 28
    PHYSCOLLIDE = 29
    VERTNORMALS = 30
    VERTNORMALINDICES = 31
    DISP_LIGHTMAP_ALPHAS = 32
    DISP_VERTS = 33
    DISP_LIGHTMAP_SAMPLE_POSITIONS = 34
    GAME_LUMP = 35
    LEAFWATERDATA = 36
    PRIMITIVES = 37
    PRIMVERTS = 38
    PRIMINDICES = 39
    PAKFILE = 40
    CLIPPORTALVERTS = 41
    CUBEMAPS = 42
    TEXDATA_STRING_DATA = 43
    TEXDATA_STRING_TABLE = 44
    OVERLAYS = 45
    LEAFMINDISTTOWATER = 46
    FACE_MACRO_TEXTURE_INFO = 47
    DISP_TRIS = 48
    PROP_BLOB = 49  # v19 and older: PHYSCOLLIDESURFACE
    WATEROVERLAYS = 50
    LEAF_AMBIENT_INDEX_HDR = 51  # v19 and older: LIGHTMAPPAGES
    LEAF_AMBIENT_INDEX = 52  # v19 and older: LIGHTMAPPAGEINFOS
    LIGHTING_HDR = 53
    WORLDLIGHTS_HDR = 54
    LEAF_AMBIENT_LIGHTING_HDR = 55
    LEAF_AMBIENT_LIGHTING = 56
    XZIPPAKFILE = 57
    FACES_HDR = 58
    MAP_FLAGS = 59
    OVERLAY_FADES = 60
    OVERLAY_SYSTEM_LEVELS = 61
    PHYSLEVEL = 62
    DISP_MULTIBLEND = 63


# Names older engine branches gave to slots that were later reused.
_OLD_NAMES = {
    LumpId.PROPCOLLISION: "PORTALS",
    LumpId.PROPHULLS: "CLUSTERS",
    LumpId.PROPHULLVERTS: "PORTALVERTS",
    LumpId.PROPTRIS: "CLUSTERPORTALS",
    LumpId.PROP_BLOB: "PHYSCOLLIDESURFACE",
    LumpId.LEAF_AMBIENT_INDEX_HDR: "LIGHTMAPPAGES",
    LumpId.LEAF_AMBIENT_INDEX: "LIGHTMAPPAGEINFOS",
}


# Slot -> name, for the names asked for on every lump decoded (an enum lookup costs more).
_NAMES = {int(lump_id): lump_id.name for lump_id in LumpId}
_NAMES_BEFORE_20 = {**_NAMES, **{int(lump_id): name for lump_id, name in _OLD_NAMES.items()}}


def lump_name(lump: int, bsp_version: int = 20) -> str:
    """The name of directory slot ``lump`` in a map of ``bsp_version``."""
    try:
        return (_NAMES_BEFORE_20 if bsp_version < 20 else _NAMES)[lump]
    except (KeyError, TypeError):
        return LumpId(lump).name  # raises the enum's ValueError for a slot that does not exist

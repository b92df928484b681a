"""The compile limits of a map (``MAX_MAP_*`` of the Source SDK 2013 ``public/bspfile.h``).

vbsp refuses to write more than these; engines of the same generation size
their tables by them.  Counted in elements, or in bytes for the lumps whose
limit is a byte count (lighting, visibility, texdata string data).
"""
from __future__ import annotations

from ..lump_ids import LumpId

__all__ = ["LIMITS", "BYTE_LIMITS"]

#: lump -> (MAX_MAP_* name, element limit)
LIMITS: dict[LumpId, tuple[str, int]] = {
    LumpId.MODELS: ("MAX_MAP_MODELS", 1024),
    LumpId.BRUSHES: ("MAX_MAP_BRUSHES", 8192),
    LumpId.TEXINFO: ("MAX_MAP_TEXINFO", 12288),
    LumpId.TEXDATA: ("MAX_MAP_TEXDATA", 2048),
    LumpId.DISPINFO: ("MAX_MAP_DISPINFO", 2048),
    LumpId.AREAS: ("MAX_MAP_AREAS", 256),
    LumpId.AREAPORTALS: ("MAX_MAP_AREAPORTALS", 1024),
    LumpId.PLANES: ("MAX_MAP_PLANES", 65536),
    LumpId.NODES: ("MAX_MAP_NODES", 65536),
    LumpId.BRUSHSIDES: ("MAX_MAP_BRUSHSIDES", 65536),
    LumpId.LEAFS: ("MAX_MAP_LEAFS", 65536),
    LumpId.VERTEXES: ("MAX_MAP_VERTS", 65536),
    LumpId.VERTNORMALS: ("MAX_MAP_VERTNORMALS", 256000),
    LumpId.VERTNORMALINDICES: ("MAX_MAP_VERTNORMALINDICES", 256000),
    LumpId.FACES: ("MAX_MAP_FACES", 65536),
    LumpId.LEAFFACES: ("MAX_MAP_LEAFFACES", 65536),
    LumpId.LEAFBRUSHES: ("MAX_MAP_LEAFBRUSHES", 65536),
    LumpId.LEAFWATERDATA: ("MAX_MAP_LEAFWATERDATA", 32768),
    LumpId.EDGES: ("MAX_MAP_EDGES", 256000),
    LumpId.SURFEDGES: ("MAX_MAP_SURFEDGES", 512000),
    LumpId.WORLDLIGHTS: ("MAX_MAP_WORLDLIGHTS", 8192),
    LumpId.CUBEMAPS: ("MAX_MAP_CUBEMAPSAMPLES", 1024),
    LumpId.OVERLAYS: ("MAX_MAP_OVERLAYS", 512),
    LumpId.WATEROVERLAYS: ("MAX_MAP_WATEROVERLAYS", 16384),
    LumpId.TEXDATA_STRING_TABLE: ("MAX_MAP_TEXDATA_STRING_TABLE", 65536),
    LumpId.PRIMITIVES: ("MAX_MAP_PRIMITIVES", 32768),
    LumpId.PRIMVERTS: ("MAX_MAP_PRIMVERTS", 65536),
    LumpId.PRIMINDICES: ("MAX_MAP_PRIMINDICES", 65536),
}

#: lump -> (MAX_MAP_* name, byte limit)
BYTE_LIMITS: dict[LumpId, tuple[str, int]] = {
    LumpId.LIGHTING: ("MAX_MAP_LIGHTING", 0x1000000),
    LumpId.VISIBILITY: ("MAX_MAP_VISIBILITY", 0x1000000),
    LumpId.TEXDATA_STRING_DATA: ("MAX_MAP_TEXDATA_STRING_DATA", 256000),
}

#: MAX_MAP_ENTITIES, counted on the entity lump.
MAX_MAP_ENTITIES = 8192

"""The records and lump tables of the lump families whose codecs need numpy: lighting,
occlusion, physics, overlays, prop collision (slots 22-25) and visibility.

Declared here, without numpy, so that the branch tables (:mod:`sourcebsp.codecs.tables`)
and the element counts ``info`` prints are made without importing those codecs: each of
those modules takes its records from here, and its codec is named in the tables as a
:class:`~sourcebsp.codecs.base.Deferred` (imported when a lump of its kind is first
decoded) with the count of its elements from the lump's bytes.  The bspfile.h structs
and the other facts are those the codec modules' docstrings describe.
"""
from __future__ import annotations

import struct
from typing import Callable

from ..header import Endian
from ..lump_ids import LumpId
from .base import COLOR_RGB_EXP32, Deferred, Field, Layouts, Record, vec3

# ---- lighting (codecs/lighting.py): dworldlight_t, dleafambientindex_t, dleafambientlighting_t ----

_WORLDLIGHT_TAIL: list[Field] = [
    ("cluster", "<i4"),  # int cluster
    ("type", "<i4"),  # emittype_t type
    ("style", "<i4"),  # int style
    ("stopdot", "<f4"),  # float stopdot (start of penumbra for emit_spotlight)
    ("stopdot2", "<f4"),  # float stopdot2 (end of penumbra)
    ("exponent", "<f4"),  # float exponent
    ("radius", "<f4"),  # float radius (cutoff distance)
    ("constant_attn", "<f4"),  # float constant_attn
    ("linear_attn", "<f4"),  # float linear_attn
    ("quadratic_attn", "<f4"),  # float quadratic_attn
    ("flags", "<i4"),  # int flags (DWL_FLAGS_*)
    ("texinfo", "<i4"),  # int texinfo
    ("owner", "<i4"),  # int owner (entity that made this light)
]
WORLDLIGHT_V0 = Record(
    [vec3("origin"), vec3("intensity"), vec3("normal"), *_WORLDLIGHT_TAIL]
)  # 88 bytes
WORLDLIGHT = Record(
    [vec3("origin"), vec3("intensity"), vec3("normal"), vec3("shadow_cast_offset"), *_WORLDLIGHT_TAIL]
)  # 100 bytes

# Dark Messiah: SDK 2013's version 0 record and one more unsigned int, per bsp_tool's only note on
# it (arkane.dark_messiah_mp: "sdk_2013 + uint32 illuminate_players (0, 1, 2 enum)", its sdk_2013
# record being the 88-byte version 0 one).  BSPSource reads no world lights, so there is no second
# source: the field's place (last) and name are that note's.
WORLDLIGHT_DARK_MESSIAH = Record(
    [*WORLDLIGHT_V0.fields, ("illuminate_players", "<u4")]  # unsigned int illuminate_players (0, 1, 2)
)  # 92 bytes

LEAF_AMBIENT_INDEX = Record(
    [
        ("ambient_sample_count", "<u2"),  # unsigned short ambientSampleCount
        ("first_ambient_sample", "<u2"),  # unsigned short firstAmbientSample
    ]
)  # 4 bytes
LEAF_AMBIENT_INDEX_V25 = Record(
    [("ambient_sample_count", "<u4"), ("first_ambient_sample", "<u4")]
)  # 8 bytes

# The per-leaf CompressedLightCube that early BSP 20 maps (CS:S 2007) store in
# lump 56 in place of dleafambientlighting_t, writing junk in its lump version.
LEAF_AMBIENT_CUBE = Record([("cube", COLOR_RGB_EXP32, (6,))])  # 24 bytes

LEAF_AMBIENT_LIGHTING = Record(
    [
        ("cube", COLOR_RGB_EXP32, (6,)),  # CompressedLightCube cube
        ("x", "u1"),  # byte x (fixed point fraction of the leaf bounds)
        ("y", "u1"),  # byte y
        ("z", "u1"),  # byte z
        ("pad", "u1"),  # byte pad
    ]
)  # 28 bytes


# Half-Life 2 on the original Xbox keeps its lightmaps in pages: LUMP_LIGHTMAPPAGES (51, their
# texels, layout not documented: raw) and LUMP_LIGHTMAPPAGEINFOS (52), one record per face
# (bsp_tool's valve.source_xbox: LightmapPageInfo "2h4s"; field meanings not known).
LIGHTMAP_PAGE_INFO = Record(
    [
        ("unknown_1", "<i2"),  # short, 0 for the first faces
        ("unknown_2", "<i2"),  # short
        ("unknown_3", "u1", (4,)),  # 4 bytes (an average colour?)
    ]
)  # 8 bytes


def _whole_samples(data: memoryview, endian: Endian) -> int:
    return len(data) // COLOR_RGB_EXP32.size  # whole ColorRGBExp32 samples (a short tail is kept apart)


_LIGHTMAPS = Deferred("lighting", "LIGHTMAPS_CODEC", _whole_samples)
LIGHTING: Layouts = {
    # Lump versions 0 and 1 both hold ColorRGBExp32 samples.
    LumpId.LIGHTING: {0: _LIGHTMAPS, 1: _LIGHTMAPS},
    LumpId.LIGHTING_HDR: {0: _LIGHTMAPS, 1: _LIGHTMAPS},
    LumpId.WORLDLIGHTS: {0: WORLDLIGHT_V0, 1: WORLDLIGHT},
    LumpId.WORLDLIGHTS_HDR: {0: WORLDLIGHT_V0, 1: WORLDLIGHT},
    LumpId.LEAF_AMBIENT_INDEX: {0: LEAF_AMBIENT_INDEX},
    LumpId.LEAF_AMBIENT_INDEX_HDR: {0: LEAF_AMBIENT_INDEX},
    # None: any other lump version (the early form stores junk there).
    LumpId.LEAF_AMBIENT_LIGHTING: {1: LEAF_AMBIENT_LIGHTING, None: LEAF_AMBIENT_CUBE},
    LumpId.LEAF_AMBIENT_LIGHTING_HDR: {1: LEAF_AMBIENT_LIGHTING, None: LEAF_AMBIENT_CUBE},
}
LIGHTING_V25: Layouts = {
    LumpId.LEAF_AMBIENT_INDEX: {0: LEAF_AMBIENT_INDEX, 1: LEAF_AMBIENT_INDEX_V25},
    LumpId.LEAF_AMBIENT_INDEX_HDR: {0: LEAF_AMBIENT_INDEX, 1: LEAF_AMBIENT_INDEX_V25},
}
LIGHTING_DARK_MESSIAH: Layouts = {LumpId.WORLDLIGHTS: {0: WORLDLIGHT_DARK_MESSIAH},
                                 LumpId.WORLDLIGHTS_HDR: {0: WORLDLIGHT_DARK_MESSIAH}}
# Before BSP 20 slots 51 and 52 were the console-only LIGHTMAPPAGES and
# LIGHTMAPPAGEINFOS, whose layout is not documented.
REMOVED_BEFORE_V20 = (LumpId.LEAF_AMBIENT_INDEX_HDR, LumpId.LEAF_AMBIENT_INDEX)

LIGHTING_XBOX: Layouts = {LumpId.LEAF_AMBIENT_INDEX: {0: LIGHTMAP_PAGE_INFO}}

# ---- overlays (codecs/overlays.py): doverlay_t, dwateroverlay_t, doverlayfade_t, ... -----------

def _overlay(max_faces: int, wide: bool, tail: tuple[str, ...] = ()) -> Record:
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
    return Record(
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

OVERLAY_FADE = Record(
    [
        ("fade_dist_min_sq", "<f4"),  # float flFadeDistMinSq
        ("fade_dist_max_sq", "<f4"),  # float flFadeDistMaxSq
    ]
)  # 8 bytes
OVERLAY_SYSTEM_LEVEL = Record(
    [
        ("min_cpu_level", "u1"),  # unsigned char nMinCPULevel
        ("max_cpu_level", "u1"),  # unsigned char nMaxCPULevel
        ("min_gpu_level", "u1"),  # unsigned char nMinGPULevel
        ("max_gpu_level", "u1"),  # unsigned char nMaxGPULevel
    ]
)  # 4 bytes

CUBEMAP = Record(
    [
        ("origin", "<i4", (3,)),  # int origin[3]
        ("size", "<i4"),  # int size (0 = default)
    ]
)  # 16 bytes

MAP_FLAGS = Record([("level_flags", "<u4")])  # dflagslump_t: uint32 m_LevelFlags (LVLFLAGS_*)

OVERLAYS: Layouts = {
    LumpId.OVERLAYS: {0: OVERLAY},
    LumpId.WATEROVERLAYS: {0: WATEROVERLAY},
    LumpId.OVERLAY_FADES: {0: OVERLAY_FADE},
    LumpId.OVERLAY_SYSTEM_LEVELS: {0: OVERLAY_SYSTEM_LEVEL},
    LumpId.CUBEMAPS: {0: CUBEMAP},
    LumpId.MAP_FLAGS: {0: MAP_FLAGS},
}
OVERLAYS_DOTA2: Layouts = {LumpId.OVERLAYS: {0: OVERLAY_DOTA2}}
OVERLAYS_VINDICTUS: Layouts = {LumpId.OVERLAYS: {0: OVERLAY_V25}}  # Strata's 356-byte doverlay_t, years earlier
OVERLAYS_V25: Layouts = {
    LumpId.OVERLAYS: {0: OVERLAY, 1: OVERLAY_V25},
    LumpId.WATEROVERLAYS: {0: WATEROVERLAY, 1: WATEROVERLAY_V25},
}


# ---- slots 22-25 from BSP 21 on (codecs/propcollision.py) ----------------------------------------

PROPCOLLISION = Record(
    [
        ("hull_count", "<i4"),  # int m_nHullCount
        ("hull_start", "<i4"),  # int m_nHullStart: index into PROPHULLS
    ]
)  # dpropcollision_t: 8 bytes
PROPHULL = Record(
    [
        ("vert_count", "<i4"),  # int m_nVertCount
        ("vert_start", "<i4"),  # int m_nVertStart: index into PROPHULLVERTS
        ("surface_prop", "<i4"),  # int m_nSurfaceProp
        ("contents", "<u4"),  # unsigned int m_nContents (CONTENTS_*)
    ]
)  # dprophull_t: 16 bytes
PROPHULLVERT = Record([vec3("point")])  # dvertex_t: Vector point (12 bytes)
PROPHULLTRIS = Record(
    [
        ("index_start", "<i4"),  # int m_nIndexStart
        ("index_count", "<i4"),  # int m_nIndexCount
    ]
)  # dprophulltris_t: 8 bytes

FACEBRUSH = Record("<u2")  # LUMP_FACEBRUSHES: unsigned short brush index
FACEBRUSH_V25 = Record("<u4")  # Strata lump version 1: unsigned int
FACEBRUSHLIST = Record(
    [
        ("face_brush_count", "<u2"),  # unsigned short m_nFaceBrushCount
        ("face_brush_start", "<u2"),  # unsigned short m_nFaceBrushStart (a brush index if count <= 1)
    ]
)  # dfacebrushlist_t: 4 bytes
FACEBRUSHLIST_V25 = Record(
    [
        ("face_brush_count", "<u4"),  # unsigned int m_nFaceBrushCount
        ("face_brush_start", "<u4"),  # unsigned int m_nFaceBrushStart
    ]
)  # dfacebrushlist_t (Strata lump version 1): 8 bytes


# Left 4 Dead 2.
PROPCOLLISION_L4D2: Layouts = {
    LumpId.PROPCOLLISION: {0: PROPCOLLISION},
    LumpId.PROPHULLS: {0: PROPHULL},
    LumpId.PROPHULLVERTS: {0: PROPHULLVERT},
    LumpId.PROPTRIS: {0: PROPHULLTRIS},
}
# CS:GO (slots 22 and 23 are LUMP_FACEBRUSHES, LUMP_FACEBRUSHLIST).
PROPCOLLISION_CSGO: Layouts = {
    LumpId.PROPCOLLISION: {0: FACEBRUSH},
    LumpId.PROPHULLS: {0: FACEBRUSHLIST},
}
# Strata Source: LUMP_FACEBRUSHES_VERSION 1, LUMP_FACEBRUSHLIST_VERSION 1.
PROPCOLLISION_V25: Layouts = {
    LumpId.PROPCOLLISION: {0: FACEBRUSH, 1: FACEBRUSH_V25},
    LumpId.PROPHULLS: {0: FACEBRUSHLIST, 1: FACEBRUSHLIST_V25},
}

# ---- occlusion (codecs/occlusion.py): three arrays, each after its int count -------------------

_OCCLUDER_FIELDS: list[Field] = [
    ("flags", "<i4"),  # int flags (OCCLUDER_FLAGS_INACTIVE = 0x1)
    ("firstpoly", "<i4"),  # int firstpoly: index into the polygon array
    ("polycount", "<i4"),  # int polycount
    vec3("mins"),  # Vector mins
    vec3("maxs"),  # Vector maxs
]
OCCLUDER_V1 = Record(_OCCLUDER_FIELDS)  # doccluderdataV1_t: 36 bytes
OCCLUDER = Record([*_OCCLUDER_FIELDS, ("area", "<i4")])  # doccluderdata_t (version 2): 40 bytes
OCCLUDER_POLY = Record(
    [
        ("firstvertexindex", "<i4"),  # int firstvertexindex: index into the vertex indices
        ("vertexcount", "<i4"),  # int vertexcount
        ("planenum", "<i4"),  # int planenum
    ]
)  # doccluderpolydata_t: 12 bytes
OCCLUDER_VERTEX_INDEX = Record("<i4")  # int: index into VERTEXES
COUNT = Record("<i4")  # int: the count before each array (and each physics solid's size)


def _counted(*records: Record) -> Callable[[memoryview, Endian], "int | None"]:
    """The count of an array of ``records[0]`` that is followed by arrays of the others, each
    after its int count and nothing after them."""
    def count(data: memoryview, endian: Endian) -> int | None:
        position, first, field = 0, None, COUNT.struct(endian)
        for record in records:
            if position + field.size > len(data):
                return None
            number: int = field.unpack_from(data, position)[0]
            position += field.size + number * record.size
            if number < 0 or position > len(data):
                return None
            first = number if first is None else first
        return None if position != len(data) else first
    return count


OCCLUSION: Layouts = {
    LumpId.OCCLUSION: {
        1: Deferred("occlusion", "OCCLUSION_V1_CODEC", _counted(OCCLUDER_V1, OCCLUDER_POLY, OCCLUDER_VERTEX_INDEX)),
        2: Deferred("occlusion", "OCCLUSION_CODEC", _counted(OCCLUDER, OCCLUDER_POLY, OCCLUDER_VERTEX_INDEX)),
    },
}

# ---- physics (codecs/physics.py): dphysmodel_t sequences, dphysdisp_t ------------------------------

PHYSMODEL = Record(
    [
        ("model_index", "<i4"),  # int modelIndex (-1 ends the lump)
        ("data_size", "<i4"),  # int dataSize: the solids with their size fields
        ("keydata_size", "<i4"),  # int keydataSize: the key data text with its NUL
        ("solid_count", "<i4"),  # int solidCount
    ]
)  # dphysmodel_t: 16 bytes
PHYSDISP_SIZE = Record("<u2")  # unsigned short numDisplacements and dataSize[]
PHYSDISP_SIZE_V2 = Record("<u4")  # Strata Source LUMP_PHYSDISP_VERSION 2: unsigned int


def _physcollide(data: memoryview, endian: Endian) -> int | None:
    """The models of a dphysmodel_t sequence: each header, its solids (each after its int size)
    and key data (Latin-1: any bytes), until modelIndex -1."""
    length, position, models = len(data), 0, 0
    if length == 0:
        return 0
    header, size_field = PHYSMODEL.struct(endian), COUNT.struct(endian)
    while True:
        if position + header.size > length:
            return None
        index, data_size, keydata_size, solid_count = header.unpack_from(data, position)
        if index == -1:
            return models
        start = position + header.size
        end = start + data_size + keydata_size
        if min(index, data_size, keydata_size, solid_count) < 0 or end > length:
            return None
        solid, limit = start, start + data_size
        for _ in range(solid_count):
            if solid + size_field.size > limit:
                return None
            size: int = size_field.unpack_from(data, solid)[0]
            solid += size_field.size + size
            if size < 0 or solid > limit:
                return None
        if solid != limit:
            return None
        models, position = models + 1, end


def _physdisp(field: Record) -> Callable[[memoryview, Endian], "int | None"]:
    """The displacements of a dphysdisp_t: a count and a size table of ``field``, then the blobs."""
    def count(data: memoryview, endian: Endian) -> int | None:
        length, width = len(data), field.size
        if length == 0:
            return 0
        if length < width:
            return None
        number: int = field.struct(endian).unpack_from(data)[0]
        table_end = width * (1 + number)
        if table_end > length:
            return None
        sizes = struct.unpack_from(f"{endian}{number}{field.struct().format[1:]}", data, width)
        return number if table_end + sum(sizes) == length else None
    return count


_PHYSCOLLIDE = Deferred("physics", "PHYSCOLLIDE_CODEC", _physcollide)
_PHYSDISP = Deferred("physics", "PHYSDISP_CODEC", _physdisp(PHYSDISP_SIZE))
PHYSICS: Layouts = {
    LumpId.PHYSCOLLIDE: {0: _PHYSCOLLIDE},
    LumpId.PHYSDISP: {0: _PHYSDISP},
}
# BSP 17-19: slot 49 is LUMP_PHYSCOLLIDESURFACE, the same dphysmodel_t sequence.
# (Left 4 Dead reuses it for an undocumented prop blob, so later variants keep it raw.)
PHYSICS_V19: Layouts = {
    LumpId.PROP_BLOB: {0: _PHYSCOLLIDE},
}
PHYSICS_V25: Layouts = {
    LumpId.PHYSDISP: {0: _PHYSDISP, 2: Deferred("physics", "PHYSDISP_V2_CODEC", _physdisp(PHYSDISP_SIZE_V2))},
}

# ---- visibility (codecs/visibility.py): dvis_t {int numclusters; int bitofs[numclusters][2]} -------


def _clusters(data: memoryview, endian: Endian) -> int | None:
    """numclusters, when the row offsets all point into the row data after the header."""
    size, field = len(data), COUNT.struct(endian)
    if size == 0:
        return 0
    if size < field.size:
        return None
    count: int = field.unpack_from(data)[0]
    header = field.size * (1 + 2 * count)
    if count < 0 or header > size or (count and size == header):
        return None
    if count:
        offsets = struct.unpack_from(f"{endian}{2 * count}{field.format[1:]}", data, field.size)
        if min(offsets) < header or max(offsets) >= size:
            return None
    return count


VISIBILITY: Layouts = {
    LumpId.VISIBILITY: {None: Deferred("visibility", "VISIBILITY_CODEC", _clusters)},
}

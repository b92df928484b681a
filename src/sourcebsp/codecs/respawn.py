"""Respawn's rBSP (Titanfall, Titanfall 2): the header, the lump ids and the record layouts.

The container is :mod:`sourcebsp.respawn`; this module holds the facts it and the
branch table (:mod:`sourcebsp.variants`) share.  The header is ``ident``,
``version``, ``mapRevision``, ``127`` (the last lump index), then 128 ``lump_t``
{fileofs, filelen, version, fourCC}.  The lump ids and record layouts are those of
bsp_tool 0.7.0's ``respawn.titanfall`` and ``respawn.titanfall2`` branches (the class
named beside each dtype; sizes from their ``_format``), checked against a real
Titanfall 2 map.  rBSP has no ``lzma_header_t``: every lump's fourCC is 0 in the
Titanfall 2 corpus map and in what bsp_tool writes, so no lump is decompressed.

The static props (game lump ``sprp``: Titanfall's version 12, Titanfall 2's 13) are the
records of :data:`STATIC_PROP_VERSIONS` after a header of model names; see
:func:`decode_static_props`.
"""
from __future__ import annotations

import functools
import struct
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable, Mapping, NamedTuple

from ..errors import BspFormatError, TruncatedError, UnsupportedError

from . import tables
from .base import Field, Layouts, Record

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "IDENT",
    "NUM_LUMPS",
    "HEADER",
    "HEADER_SIZE",
    "lump_names",
    "record_dtypes",
    "layouts",
    "RespawnStaticProps",
    "STATIC_PROP_VERSIONS",
    "decode_static_props",
    "VERTEX_LUMP_OF_FLAGS",
    "MASK_VERTEX",
]

IDENT = b"rBSP"
NUM_LUMPS = 128
HEADER = struct.Struct(f"<4s3i{4 * NUM_LUMPS}i")  # ident, version, mapRevision, 127, lump_t[128]
HEADER_SIZE = HEADER.size  # 2064

# Lump ids both versions share (bsp_tool's respawn LUMP enums); the rest are UNUSED_<n>.
_COMMON_NAMES = {
    0x00: "ENTITIES", 0x01: "PLANES", 0x02: "TEXTURE_DATA", 0x03: "VERTICES", 0x0E: "MODELS",
    0x18: "ENTITY_PARTITIONS", 0x1D: "PHYSICS_COLLIDE", 0x1E: "VERTEX_NORMALS", 0x23: "GAME_LUMP",
    0x24: "LEAF_WATER_DATA", 0x28: "PAKFILE", 0x2A: "CUBEMAPS", 0x2B: "TEXTURE_DATA_STRING_DATA",
    0x2C: "TEXTURE_DATA_STRING_TABLE", 0x36: "WORLD_LIGHTS", 0x42: "TRICOLL_TRIANGLES",
    0x44: "TRICOLL_NODES", 0x45: "TRICOLL_HEADERS", 0x47: "VERTEX_UNLIT", 0x48: "VERTEX_LIT_FLAT",
    0x49: "VERTEX_LIT_BUMP", 0x4A: "VERTEX_UNLIT_TS", 0x4B: "VERTEX_BLINN_PHONG",
    0x4C: "VERTEX_RESERVED_5", 0x4D: "VERTEX_RESERVED_6", 0x4E: "VERTEX_RESERVED_7",
    0x4F: "MESH_INDICES", 0x50: "MESHES", 0x51: "MESH_BOUNDS", 0x52: "MATERIAL_SORTS",
    0x53: "LIGHTMAP_HEADERS", 0x55: "CM_GRID", 0x56: "CM_GRID_CELLS", 0x57: "CM_GEO_SETS",
    0x58: "CM_GEO_SET_BOUNDS", 0x59: "CM_PRIMITIVES", 0x5A: "CM_PRIMITIVE_BOUNDS",
    0x5B: "CM_UNIQUE_CONTENTS", 0x5C: "CM_BRUSHES", 0x5D: "CM_BRUSH_SIDE_PLANE_OFFSETS",
    0x5E: "CM_BRUSH_SIDE_PROPERTIES", 0x5F: "CM_BRUSH_SIDE_TEXTURE_VECTORS", 0x60: "TRICOLL_BEVEL_STARTS",
    0x61: "TRICOLL_BEVEL_INDICES", 0x62: "LIGHTMAP_DATA_SKY", 0x63: "CSM_AABB_NODES",
    0x64: "CSM_OBJ_REFERENCES", 0x65: "LIGHTPROBES", 0x66: "STATIC_PROP_LIGHTPROBE_INDICES",
    0x67: "LIGHTPROBE_TREE", 0x68: "LIGHTPROBE_REFERENCES", 0x69: "LIGHTMAP_DATA_REAL_TIME_LIGHTS",
    0x6A: "CELL_BSP_NODES", 0x6B: "CELLS", 0x6C: "PORTALS", 0x6D: "PORTAL_VERTICES", 0x6E: "PORTAL_EDGES",
    0x6F: "PORTAL_VERTEX_EDGES", 0x70: "PORTAL_VERTEX_REFERENCES", 0x71: "PORTAL_EDGE_REFERENCES",
    0x72: "PORTAL_EDGE_INTERSECT_EDGE", 0x73: "PORTAL_EDGE_INTERSECT_VERTEX",
    0x74: "PORTAL_EDGE_INTERSECT_HEADER", 0x75: "OCCLUSION_MESH_VERTICES", 0x76: "OCCLUSION_MESH_INDICES",
    0x77: "CELL_AABB_NODES", 0x78: "OBJ_REFERENCES", 0x79: "OBJ_REFERENCE_BOUNDS", 0x7B: "LEVEL_INFO",
    0x7C: "SHADOW_MESH_OPAQUE_VERTICES", 0x7D: "SHADOW_MESH_ALPHA_VERTICES", 0x7E: "SHADOW_MESH_INDICES",
    0x7F: "SHADOW_MESHES",
}
# Titanfall 2 named four lumps Titanfall left unused, and a seventh lightmap lump.
_TITANFALL2_NAMES = {0x04: "LIGHTPROBE_PARENT_INFOS", 0x05: "SHADOW_ENVIRONMENTS", 0x06: "LIGHTPROBE_BSP_NODES",
                     0x07: "LIGHTPROBE_BSP_REF_IDS", 0x37: "WORLD_LIGHT_PARENT_INFOS",
                     0x7A: "LIGHTMAP_DATA_RTL_PAGES"}

# The lumps sourcebsp reads, by id.
ENTITIES = 0x00
PLANES = 0x01
TEXTURE_DATA = 0x02
VERTICES = 0x03
MODELS = 0x0E
ENTITY_PARTITIONS = 0x18
VERTEX_NORMALS = 0x1E
GAME_LUMP = 0x23
PAKFILE = 0x28
TEXTURE_DATA_STRING_DATA = 0x2B
TEXTURE_DATA_STRING_TABLE = 0x2C
MESH_INDICES = 0x4F
MESHES = 0x50
MESH_BOUNDS = 0x51
MATERIAL_SORTS = 0x52
CM_GRID = 0x55
CM_GRID_CELLS = 0x56
CM_GEO_SETS = 0x57
CM_PRIMITIVES = 0x59
CM_UNIQUE_CONTENTS = 0x5B
CM_BRUSHES = 0x5C
CM_BRUSH_SIDE_PLANE_OFFSETS = 0x5D
CM_BRUSH_SIDE_PROPERTIES = 0x5E
CM_BRUSH_SIDE_TEXTURE_VECTORS = 0x5F

# CM_BRUSH_SIDE_PROPERTIES: an unsigned short per side, its TEXTURE_DATA index in the low 9 bits
# and flags above (MRVN-Radiant's remap titanfall.h: MASK_TEXTURE_DATA 0x01FF, MASK_DISCARD 0x4000,
# the flag its compiler writes for an axial side of the box the brush does not have).
BRUSH_SIDE_TEXTURE_DATA = 0x01FF
BRUSH_SIDE_DISCARD = 0x4000

# A collision primitive (CM_GEO_SETS' last field, CM_PRIMITIVES' record): CM_UNIQUE_CONTENTS index
# in the low 8 bits, the shape's index in the next 16, its type in the top 8 (MRVN-Radiant's
# CMPrimitive_t bit-fields; bsp_tool 0.7.0's titanfall.Primitive, read from the top).
PRIMITIVE_CONTENTS_BITS = 8
PRIMITIVE_INDEX_BITS = 16
PRIMITIVE_BRUSH = 0  # the shape is CM_BRUSHES row ``index``
PRIMITIVE_TRICOLL = 64  # the shape is TRICOLL_HEADERS row ``index`` (patches, displacements)


@functools.lru_cache(maxsize=None)
def lump_names(version: int) -> tuple[str, ...]:
    """The 128 lump names of rBSP ``version`` (29 or 37); ids nothing uses are ``UNUSED_<n>``."""
    names = dict(_COMMON_NAMES)
    if version >= 37:
        names.update(_TITANFALL2_NAMES)
    return tuple(names.get(index, f"UNUSED_{index}") for index in range(NUM_LUMPS))


@functools.lru_cache(maxsize=None)
def record_dtypes(version: int) -> "Mapping[int, np.dtype]":
    """The record of each decoded lump of rBSP ``version`` (little-endian, packed), as numpy dtypes."""
    records = _TITANFALL if version < 37 else _TITANFALL2
    return MappingProxyType({lump: record.dtype for lump, record in records.items()})


_VEC3 = ("<f4", 3)
_VERTEX: list[Field] = [("position_index", "<u4"), ("normal_index", "<u4")]  # into VERTICES, VERTEX_NORMALS
_COMMON: dict[int, Record] = {
    PLANES: Record([("normal", *_VEC3), ("dist", "<f4")]),  # quake3.Plane "4f": 16
    TEXTURE_DATA: Record([("reflectivity", *_VEC3), ("name_index", "<i4"), ("size", "<i4", 2),
                          ("view", "<i4", 2), ("flags", "<i4")]),  # titanfall.TextureData "3f6i": 36
    VERTICES: Record(_VEC3),  # quake.Vertex "3f"
    MODELS: Record([("mins", *_VEC3), ("maxs", *_VEC3), ("first_mesh", "<u4"),
                    ("num_meshes", "<u4")]),  # titanfall.Model "6f2I": 32
    VERTEX_NORMALS: Record(_VEC3),  # quake.Vertex "3f"
    TEXTURE_DATA_STRING_TABLE: Record("<i4"),  # offsets into TEXTURE_DATA_STRING_DATA
    0x47: Record([*_VERTEX, ("uv", "<f4", 2), ("colour", "u1", 4)]),  # titanfall.VertexUnlit "2I2f4B": 20
    0x48: Record([*_VERTEX, ("uv", "<f4", 2), ("colour", "u1", 4), ("lightmap_uv", "<f4", 2),
                  ("lightmap_step", "<f4", 2)]),  # titanfall.VertexLitFlat "2I2f4B4f": 36
    0x49: Record([*_VERTEX, ("uv", "<f4", 2), ("colour", "u1", 4), ("lightmap_uv", "<f4", 2),
                  ("lightmap_step", "<f4", 2), ("tangent", "<i4", 2)]),  # titanfall.VertexLitBump: 44
    0x4A: Record([*_VERTEX, ("uv", "<f4", 2), ("colour", "u1", 4),
                  ("tangent", "<i4", 2)]),  # titanfall.VertexUnlitTS "2I2f4B2i": 28
    0x4B: Record([*_VERTEX, ("colour", "u1", 4), ("uv", "<f4", 2), ("lightmap_uv", "<f4", 2),
                  ("tangent", "<f4", 16)]),  # titanfall.VertexBlinnPhong "2I4B20f": 92
    MESH_INDICES: Record("<u2"),  # shared.UnsignedShorts
    MESH_BOUNDS: Record([("origin", *_VEC3), ("radius", "<f4"), ("extents", *_VEC3),
                         ("tan_yaw", "<f4")]),  # titanfall.MeshBounds "8f": 32
    MATERIAL_SORTS: Record([("texture_data", "<i2"), ("lightmap_header", "<i2"), ("cubemap", "<i2"),
                            ("last_vertex", "<u2"),
                            ("vertex_offset", "<i4")]),  # titanfall.MaterialSort "4hi": 12
    # Collision brushes: an axial box (origin +- extents) cut by num_plane_offsets more planes.
    CM_BRUSHES: Record([("origin", *_VEC3), ("num_non_axial_no_discard", "u1"), ("num_plane_offsets", "u1"),
                        ("index", "<i2"), ("extents", *_VEC3),
                        ("brush_side_offset", "<i4")]),  # titanfall.Brush "3f2Bh3fi": 32
    CM_BRUSH_SIDE_PLANE_OFFSETS: Record("<u2"),  # shared.UnsignedShorts
    CM_BRUSH_SIDE_PROPERTIES: Record("<u2"),  # titanfall.BrushSideProperty "H" (flags | texture data)
    # The collision grid: one record; first_brush_plane is the PLANES row non-axial brush sides count from.
    CM_GRID: Record([("scale", "<f4"), ("offset", "<i4", 2), ("count", "<i4", 2), ("num_straddle_groups", "<i4"),
                     ("first_brush_plane", "<i4")]),  # titanfall.Grid "f6i": 28 (MRVN-Radiant's CMGrid_t)
    # The collision grid's cells (the world's count.x * count.y, then one per MODELS row) each
    # name a run of geo sets; a geo set holds one primitive, or names a run of CM_PRIMITIVES.
    CM_GRID_CELLS: Record([("first_geo_set", "<u2"), ("num_geo_sets", "<u2")]),  # titanfall.GridCell "2H": 4
    CM_GEO_SETS: Record([("straddle_group", "<u2"), ("num_primitives", "<u2"),
                         ("primitive", "<u4")]),  # titanfall.GeoSet "2HI": 8
    CM_PRIMITIVES: Record("<u4"),  # titanfall.Primitive "I" (see PRIMITIVE_*)
    CM_UNIQUE_CONTENTS: Record("<u4"),  # shared.UnsignedInts: contents flags, OR-ed
    # A side's texture axes: s (x, y, z, offset) and t, as texinfo_t's textureVecs.
    CM_BRUSH_SIDE_TEXTURE_VECTORS: Record([("s", "<f4", 4), ("t", "<f4", 4)]),  # titanfall.TextureVector "8f": 32
}
_MESH_TAIL: list[Field] = [("styles", "i1", 4), ("luxel_origin", "<i2", 2), ("luxel_offset_max", "u1", 2),
              ("material_sort", "<u2"), ("flags", "<u4")]
_MESH_HEAD: list[Field] = [("first_mesh_index", "<u4"), ("num_triangles", "<u2"), ("first_vertex", "<u2"),
              ("num_vertices", "<u2")]
_TITANFALL = {**_COMMON, MESHES: Record([*_MESH_HEAD, ("vertex_type", "<u2"),
                                         *_MESH_TAIL])}  # titanfall.Mesh "I4H4b2h2BHI": 28
# Titanfall 2's Mesh: the vertex type a byte, then a cubemap index.
_TITANFALL2 = {**_COMMON, MESHES: Record([*_MESH_HEAD, ("vertex_type", "i1"), ("cubemap", "i1"),
                                          *_MESH_TAIL])}  # titanfall2.Mesh "I3H6b2h2BHI": 28

# The branch tables' own lumps (codecs/tables.py): each decoded lump's record, for any lump version.
LAYOUTS_TITANFALL: Layouts = {lump: {None: record} for lump, record in _TITANFALL.items()}
LAYOUTS_TITANFALL2: Layouts = {lump: {None: record} for lump, record in _TITANFALL2.items()}


def layouts(version: int) -> Layouts:
    """The branch table's lump table for rBSP ``version``: each decoded lump's record for any
    lump version, and the ENTITIES lump's text codec (the Source one: the same keyvalue blocks)."""
    return tables.table("TITANFALL" if version < 37 else "TITANFALL2")


# Mesh.flags & 0x600 picks the vertex lump a mesh's indices point into (bsp_tool's MeshFlags).
VERTEX_LUMP_OF_FLAGS: Mapping[int, int] = MappingProxyType({0x000: 0x48, 0x200: 0x49, 0x400: 0x47, 0x600: 0x4A})
MASK_VERTEX = 0x600


# ---- static props: game lump "sprp", Titanfall's version 12 and Titanfall 2's 13 ---------------

# titanfall.StaticPropv12 "6f3H2B2h6f4b4Bif2I": 84 bytes, SDK 2013's v10 fields up to the diffuse
# modulation (a Left 4 Dead v8 record with a cubemap beside the skin), then a 4-byte disable_x360, a
# scale and two collision flag words.  The same offsets in LibBSP's StaticProp (wfowler1/LibBSP,
# Titanfall at version 12: origin 0, angles 12, model 24, solid 30, flags 31, fade distances 36-40,
# lighting origin 44, forced fade scale 56, CPU/GPU levels 60-63, diffuse modulation 64-67) and the
# 0x54-byte StaticProp of bsp_tool's C++ titanfall header.
STATIC_PROP_V12 = Record([
    ("origin", "<f4", 3), ("angles", "<f4", 3),
    ("prop_type", "<u2"),  # index into the model names
    ("first_leaf", "<u2"), ("leaf_count", "<u2"),  # a range of the leaf array after the names
    ("solid", "u1"), ("flags", "u1"), ("skin", "<u2"), ("cubemap", "<u2"),
    ("fade_min_dist", "<f4"), ("fade_max_dist", "<f4"), ("lighting_origin", "<f4", 3),
    ("forced_fade_scale", "<f4"),
    ("min_cpu_level", "i1"), ("max_cpu_level", "i1"), ("min_gpu_level", "i1"), ("max_gpu_level", "i1"),
    ("diffuse_modulation", "u1", 4),
    ("disable_x360", "<u4"),  # an int in both sources (SDK 2013's is a bool and three pad bytes)
    ("scale", "<f4"), ("collision_flags_add", "<u4"), ("collision_flags_remove", "<u4"),
])
# titanfall2.StaticPropv13 "7fH2B2H4f4b4B2H": 64 bytes.
STATIC_PROP_V13 = Record([
    ("origin", "<f4", 3), ("angles", "<f4", 3), ("scale", "<f4"),
    ("prop_type", "<u2"),  # index into the model names
    ("solid", "u1"), ("flags", "u1"), ("skin", "<u2"), ("cubemap", "<u2"),
    ("forced_fade_scale", "<f4"), ("lighting_origin", "<f4", 3),
    ("min_cpu_level", "i1"), ("max_cpu_level", "i1"), ("min_gpu_level", "i1"), ("max_gpu_level", "i1"),
    ("diffuse_modulation", "u1", 4), ("collision_flags_add", "<u2"), ("collision_flags_remove", "<u2"),
])
# titanfall2.Unknown3 "12f4i": 64 bytes of unknown meaning after the props (kept as is).
STATIC_PROP_EXTRA_V13 = Record([("unknown_float", "<f4", 12), ("unknown_int", "<i4", 4)])


def static_prop_v12() -> "np.dtype":
    """:data:`STATIC_PROP_V12` as a numpy dtype."""
    return STATIC_PROP_V12.dtype


def static_prop_v13() -> "np.dtype":
    """:data:`STATIC_PROP_V13` as a numpy dtype."""
    return STATIC_PROP_V13.dtype


def static_prop_extra_v13() -> "np.dtype":
    """:data:`STATIC_PROP_EXTRA_V13` as a numpy dtype."""
    return STATIC_PROP_EXTRA_V13.dtype


# The sprp versions decoded, each with its prop record (bsp_tool's GAME_LUMP_CLASSES["sprp"]).
STATIC_PROP_VERSIONS: Mapping[int, Callable[[], "np.dtype"]] = MappingProxyType(
    {12: static_prop_v12, 13: static_prop_v13})


MODEL_NAME_LENGTH = 128  # char[128] per model name


class RespawnStaticProps(NamedTuple):
    """An rBSP ``sprp`` game lump: model names, props, and what the version adds around them."""

    version: int  # the sprp version: 12 (Titanfall) or 13 (Titanfall 2)
    names: list[str]
    props: "np.ndarray"  # STATIC_PROP_VERSIONS[version]() records
    header: tuple[int, int]  # two ints after the prop count (meaning not known)
    extra: "np.ndarray | None"  # v13: static_prop_extra_v13() records, None when the lump ends before their count
    leaves: "np.ndarray | None" = None  # v12: the leaf array (unsigned shorts) the props' leaf ranges index


def decode_static_props(data: bytes, *, version: int = 13, file_offset: int = 0) -> RespawnStaticProps:
    """The props of an rBSP ``sprp`` game lump: ``int`` name count, ``char[128]`` names, (v12:
    ``int`` leaf count, ``unsigned short`` leaves), ``int`` prop count, two ints, the props, then
    (v13, unless all four counts are 0) an ``int`` count of 64-byte records.  Every count is
    checked against the bytes left first."""
    import numpy as np  # a seam: detection and opening an rBSP map import this module, and need no numpy

    lump = "GAME_LUMP sprp"

    def need(at: int, size: int, what: str) -> None:
        if size < 0 or at + size > len(data):
            raise TruncatedError(f"{what} needs {size} bytes at {at}, the lump has {len(data)}",
                                 lump=lump, offset=file_offset + at, needed=at + size, available=len(data))

    if version not in STATIC_PROP_VERSIONS:
        raise UnsupportedError(f"static props version {version} are not decoded (Titanfall's 12 and "
                               f"Titanfall 2's 13 are)", lump=lump, offset=file_offset)
    need(0, 4, "the model name count")
    (num_names,) = struct.unpack_from("<i", data, 0)
    need(4, num_names * MODEL_NAME_LENGTH, f"{num_names} model names")
    at = 4 + num_names * MODEL_NAME_LENGTH
    raw_names = np.frombuffer(data, f"S{MODEL_NAME_LENGTH}", num_names, 4).tolist() if num_names else []
    names = [name.split(b"\0", 1)[0].decode("utf-8", "replace") for name in raw_names]
    leaves = None
    if version == 12:
        need(at, 4, "the leaf count")
        (num_leaves,) = struct.unpack_from("<i", data, at)
        need(at + 4, num_leaves * 2, f"{num_leaves} leaves")
        leaves = np.frombuffer(data, "<u2", num_leaves, at + 4)
        at += 4 + num_leaves * 2
    need(at, 12, "the prop count")
    num_props, first, second = struct.unpack_from("<i2i", data, at)
    at += 12
    prop = STATIC_PROP_VERSIONS[version]()
    need(at, num_props * prop.itemsize, f"{num_props} props")
    props = np.frombuffer(data, prop, num_props, at)
    at += num_props * prop.itemsize
    extra = None
    if version == 13 and at < len(data):
        need(at, 4, "the count of records after the props")
        (num_extra,) = struct.unpack_from("<i", data, at)
        record = static_prop_extra_v13()
        need(at + 4, num_extra * record.itemsize, f"{num_extra} records after the props")
        extra = np.frombuffer(data, record, num_extra, at + 4)
        at += 4 + num_extra * record.itemsize
    if at != len(data):
        raise BspFormatError(f"{len(data) - at} bytes after the static props", lump=lump, offset=file_offset + at)
    bad = props["prop_type"] >= max(len(names), 0)
    if bad.any():
        index = int(np.argmax(bad))
        raise BspFormatError(f"prop {index} names model {int(props['prop_type'][index])} of {len(names)}",
                             lump=lump, offset=file_offset + at)
    return RespawnStaticProps(version, names, props, (first, second), extra, leaves)

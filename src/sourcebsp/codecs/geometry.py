"""Geometry lumps: planes, vertexes, edges, surfedges, faces, vertex normals,
clip portal verts, primitives, face ids.

bspfile.h structs: ``dplane_t``, ``dvertex_t``, ``dedge_t``, ``dface_t``,
``dprimitive_t``, ``dprimvert_t``, ``dfaceid_t``; the Vampire: The Masquerade
(v17), leaked Half-Life 2 beta (BSP 17, 18) and Strata Source (v25) forms of
``dface_t`` and ``dedge_t``.
"""
from __future__ import annotations

from ..lump_ids import LumpId
from .base import COLOR_RGB_EXP32, Layouts, Record, vec3

PLANE = Record(
    [
        vec3("normal"),  # Vector normal
        ("dist", "<f4"),  # float dist
        ("type", "<i4"),  # int type (PLANE_X .. PLANE_ANYZ)
    ]
)  # 20 bytes

VECTOR = Record([vec3("point")])  # dvertex_t / dprimvert_t / Vector: 12 bytes

EDGE = Record([("v", "<u2", (2,))])  # dedge_t: unsigned short v[2]; 4 bytes
EDGE_V25 = Record([("v", "<u4", (2,))])  # Strata lump version 1: 8 bytes

SURFEDGE = Record("<i4")  # int; negative = edge walked from v[1] to v[0]

FACE = Record(
    [
        ("planenum", "<u2"),  # unsigned short planenum
        ("side", "u1"),  # byte side
        ("on_node", "u1"),  # byte onNode
        ("firstedge", "<i4"),  # int firstedge
        ("numedges", "<i2"),  # short numedges
        ("texinfo", "<i2"),  # short texinfo
        ("dispinfo", "<i2"),  # short dispinfo
        ("surface_fog_volume_id", "<i2"),  # short surfaceFogVolumeID
        ("styles", "u1", (4,)),  # byte styles[MAXLIGHTMAPS]
        ("lightofs", "<i4"),  # int lightofs
        ("area", "<f4"),  # float area
        ("lightmap_texture_mins_in_luxels", "<i4", (2,)),  # int m_LightmapTextureMinsInLuxels[2]
        ("lightmap_texture_size_in_luxels", "<i4", (2,)),  # int m_LightmapTextureSizeInLuxels[2]
        ("orig_face", "<i4"),  # int origFace
        ("num_prims", "<u2"),  # unsigned short m_NumPrims
        ("first_prim_id", "<u2"),  # unsigned short firstPrimID
        ("smoothing_groups", "<u4"),  # unsigned int smoothingGroups
    ]
)  # 56 bytes

# Vampire: The Masquerade - Bloodlines (v17): average colours up front, and three
# sets of eight light styles (base, day, night); no primitives.
FACE_V17 = Record(
    [
        ("avg_light_color", COLOR_RGB_EXP32, (8,)),  # ColorRGBExp32 m_AvgLightColor[8]
        ("planenum", "<u2"),
        ("side", "u1"),
        ("on_node", "u1"),
        ("firstedge", "<i4"),
        ("numedges", "<i2"),
        ("texinfo", "<i2"),
        ("dispinfo", "<i2"),
        ("surface_fog_volume_id", "<i2"),
        ("styles", "u1", (8,)),
        ("day_styles", "u1", (8,)),
        ("night_styles", "u1", (8,)),
        ("lightofs", "<i4"),
        ("area", "<f4"),
        ("lightmap_texture_mins_in_luxels", "<i4", (2,)),
        ("lightmap_texture_size_in_luxels", "<i4", (2,)),
        ("orig_face", "<i4"),
        ("smoothing_groups", "<u4"),
    ]
)  # 104 bytes

# The leaked Half-Life 2 beta, BSP 17: average colours up front as Vampire's, but four light
# styles and no primitives (BSPSource's DFaceBSP17, 68 bytes).
FACE_HL2_BETA17 = Record(
    [
        ("avg_light_color", COLOR_RGB_EXP32, (4,)),  # ColorRGBExp32 m_AvgLightColor[MAXLIGHTMAPS]
        *FACE.fields[:14],  # planenum .. origFace, as dface_t's
        ("smoothing_groups", "<u4"),
    ]
)  # 68 bytes
# BSP 18: primitives added before smoothingGroups, firstPrimID first (BSPSource's DFaceBSP18, 72 bytes).
FACE_HL2_BETA18 = Record(
    [
        *FACE_HL2_BETA17.fields[:-1],
        ("first_prim_id", "<u2"),  # unsigned short firstPrimID
        ("num_prims", "<u2"),  # unsigned short m_NumPrims
        ("smoothing_groups", "<u4"),
    ]
)  # 72 bytes

# Strata Source (v25), faces lump version 2: indices widened to 32 bits.
FACE_V25 = Record(
    [
        ("planenum", "<u4"),
        ("side", "u1"),
        ("on_node", "u1"),
        ("padding", "u1", (2,)),  # alignment of the int that follows
        ("firstedge", "<i4"),
        ("numedges", "<i4"),
        ("texinfo", "<i4"),
        ("dispinfo", "<i4"),
        ("surface_fog_volume_id", "<i4"),
        ("styles", "u1", (4,)),
        ("lightofs", "<i4"),
        ("area", "<f4"),
        ("lightmap_texture_mins_in_luxels", "<i4", (2,)),
        ("lightmap_texture_size_in_luxels", "<i4", (2,)),
        ("orig_face", "<i4"),
        ("num_prims", "<u4"),
        ("first_prim_id", "<u4"),
        ("smoothing_groups", "<u4"),
    ]
)  # 72 bytes

PRIMITIVE = Record(
    [
        ("type", "u1"),  # unsigned char type (PRIM_TRILIST / PRIM_TRISTRIP)
        ("padding", "u1"),
        ("first_index", "<u2"),  # unsigned short firstIndex
        ("index_count", "<u2"),  # unsigned short indexCount
        ("first_vert", "<u2"),  # unsigned short firstVert
        ("vert_count", "<u2"),  # unsigned short vertCount
    ]
)  # 10 bytes
PRIMITIVE_V25 = Record(
    [
        ("type", "u1"),
        ("padding", "u1", (3,)),
        ("first_index", "<u4"),
        ("index_count", "<u4"),
        ("first_vert", "<u4"),
        ("vert_count", "<u4"),
    ]
)  # 20 bytes

U16 = Record("<u2")
U32 = Record("<u4")

LAYOUTS: Layouts = {
    LumpId.PLANES: {0: PLANE},
    LumpId.VERTEXES: {0: VECTOR},
    LumpId.EDGES: {0: EDGE},
    LumpId.SURFEDGES: {0: SURFEDGE},
    LumpId.FACES: {0: FACE, 1: FACE},
    LumpId.ORIGINALFACES: {0: FACE, 1: FACE},
    LumpId.FACES_HDR: {0: FACE, 1: FACE},
    LumpId.VERTNORMALS: {0: VECTOR},
    LumpId.VERTNORMALINDICES: {0: U16},  # unsigned short
    LumpId.CLIPPORTALVERTS: {0: VECTOR},
    LumpId.PRIMITIVES: {0: PRIMITIVE},
    LumpId.PRIMVERTS: {0: VECTOR},
    LumpId.PRIMINDICES: {0: U16},  # unsigned short
    LumpId.FACEIDS: {0: U16},  # dfaceid_t: unsigned short hammerfaceid
}

LAYOUTS_V17: Layouts = {
    LumpId.FACES: {0: FACE_V17},
    LumpId.ORIGINALFACES: {0: FACE_V17},
}

# The leaked Half-Life 2 beta: BSPSource picks its dface_t by BSP version, whatever the lump version.
LAYOUTS_HL2_BETA18: Layouts = {
    LumpId.FACES: {0: FACE_HL2_BETA18, 1: FACE_HL2_BETA18},
    LumpId.ORIGINALFACES: {0: FACE_HL2_BETA18, 1: FACE_HL2_BETA18},
}
LAYOUTS_HL2_BETA17: Layouts = {
    LumpId.FACES: {0: FACE_HL2_BETA17, 1: FACE_HL2_BETA17},
    LumpId.ORIGINALFACES: {0: FACE_HL2_BETA17, 1: FACE_HL2_BETA17},
}

# Vindictus: faces v1 are Strata's 72-byte dface_t (bsp_tool's nexon.vindictus69 Face
# "I2bh5i4bif4i4I"); v2 add an int of unknown meaning after the fog volume ("I2bh6i4bif4i4I").
FACE_V2_VINDICTUS = Record(
    [*FACE_V25.fields[:9], ("unknown", "<i4"), *FACE_V25.fields[9:]]
)  # 76 bytes
LAYOUTS_VINDICTUS: Layouts = {
    LumpId.EDGES: {0: EDGE_V25},  # "2I"
    LumpId.FACES: {1: FACE_V25, 2: FACE_V2_VINDICTUS},
    LumpId.ORIGINALFACES: {1: FACE_V25, 2: FACE_V2_VINDICTUS},
    LumpId.FACES_HDR: {1: FACE_V25, 2: FACE_V2_VINDICTUS},
}

LAYOUTS_V25: Layouts = {
    LumpId.EDGES: {0: EDGE, 1: EDGE_V25},
    LumpId.FACES: {1: FACE, 2: FACE_V25},
    LumpId.ORIGINALFACES: {0: FACE_V25, 2: FACE_V25},
    LumpId.FACES_HDR: {1: FACE, 2: FACE_V25},
    LumpId.VERTNORMALINDICES: {0: U16, 1: U32},
    LumpId.PRIMITIVES: {0: PRIMITIVE, 1: PRIMITIVE_V25},
    # One 32-bit Hammer id per face, already at lump version 0.
    LumpId.FACEIDS: {0: U32, 1: U32},
}

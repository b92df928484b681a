"""BSP tree lumps: nodes, leafs, leaf faces, leaf brushes, models, areas,
area portals, leaf water data, leaf minimum distance to water.

bspfile.h structs: ``dnode_t``, ``dleaf_version_0_t``, ``dleaf_t``,
``dmodel_t``, ``darea_t``, ``dareaportal_t``, ``dleafwaterdata_t``; the
Strata Source (v25) forms with 32-bit indices and float bounds.
"""
from __future__ import annotations


from ..lump_ids import LumpId
from .base import COLOR_RGB_EXP32, Field, Layouts, Record, vec3

NODE = Record(
    [
        ("planenum", "<i4"),  # int planenum
        ("children", "<i4", (2,)),  # int children[2]; negative = -(leaf + 1)
        ("mins", "<i2", (3,)),  # short mins[3]
        ("maxs", "<i2", (3,)),  # short maxs[3]
        ("firstface", "<u2"),  # unsigned short firstface
        ("numfaces", "<u2"),  # unsigned short numfaces
        ("area", "<i2"),  # short area
        ("padding", "<i2"),  # short paddding
    ]
)  # 32 bytes
NODE_V25 = Record(
    [
        ("planenum", "<i4"),
        ("children", "<i4", (2,)),
        ("mins", "<f4", (3,)),
        ("maxs", "<f4", (3,)),
        ("firstface", "<u4"),
        ("numfaces", "<u4"),
        ("area", "<i2"),
        ("padding", "<i2"),
    ]
)  # 48 bytes
# Dark Messiah's dmodel_t: an int of unknown meaning before headnode (bsp_tool's arkane branch: "9f4i").
MODEL_DARK_MESSIAH = Record(
    [
        vec3("mins"),  # Vector mins
        vec3("maxs"),  # Vector maxs
        vec3("origin"),  # Vector origin
        ("unknown", "<i4"),  # int, meaning unknown: kept
        ("headnode", "<i4"),  # int headnode
        ("firstface", "<i4"),  # int firstface
        ("numfaces", "<i4"),  # int numfaces
    ]
)  # 52 bytes

_LEAF_HEAD: list[Field] = [
    ("contents", "<i4"),  # int contents
    ("cluster", "<i2"),  # short cluster
    ("area_flags", "<u2"),  # short area:9; short flags:7 (bit field)
    ("mins", "<i2", (3,)),  # short mins[3]
    ("maxs", "<i2", (3,)),  # short maxs[3]
    ("firstleafface", "<u2"),  # unsigned short firstleafface
    ("numleaffaces", "<u2"),  # unsigned short numleaffaces
    ("firstleafbrush", "<u2"),  # unsigned short firstleafbrush
    ("numleafbrushes", "<u2"),  # unsigned short numleafbrushes
    ("leaf_water_data_id", "<i2"),  # short leafWaterDataID
]
LEAF_V0 = Record(
    [
        *_LEAF_HEAD,
        ("ambient_lighting", COLOR_RGB_EXP32, (6,)),  # CompressedLightCube m_AmbientLighting
        ("padding", "<i2"),
    ]
)  # dleaf_version_0_t: 56 bytes (lump version 0, BSP 19 and older)
LEAF = Record([*_LEAF_HEAD, ("padding", "<i2")])  # dleaf_t: 32 bytes
LEAF_V25 = Record(
    [
        ("contents", "<i4"),
        ("cluster", "<i4"),
        ("area_flags", "<u4"),  # area:17, flags:15
        ("mins", "<f4", (3,)),
        ("maxs", "<f4", (3,)),
        ("firstleafface", "<u4"),
        ("numleaffaces", "<u4"),
        ("firstleafbrush", "<u4"),
        ("numleafbrushes", "<u4"),
        ("leaf_water_data_id", "<i4"),
    ]
)  # 56 bytes

MODEL = Record(
    [
        vec3("mins"),  # Vector mins
        vec3("maxs"),  # Vector maxs
        vec3("origin"),  # Vector origin (for sounds or lights)
        ("headnode", "<i4"),  # int headnode
        ("firstface", "<i4"),  # int firstface
        ("numfaces", "<i4"),  # int numfaces
    ]
)  # 48 bytes

AREA = Record(
    [
        ("numareaportals", "<i4"),  # int numareaportals
        ("firstareaportal", "<i4"),  # int firstareaportal
    ]
)  # 8 bytes

AREAPORTAL = Record(
    [
        ("portal_key", "<u2"),  # unsigned short m_PortalKey
        ("otherarea", "<u2"),  # unsigned short otherarea
        ("first_clip_portal_vert", "<u2"),  # unsigned short m_FirstClipPortalVert
        ("num_clip_portal_verts", "<u2"),  # unsigned short m_nClipPortalVerts
        ("planenum", "<i4"),  # int planenum
    ]
)  # 12 bytes
AREAPORTAL_V25 = Record(
    [
        ("portal_key", "<u4"),
        ("otherarea", "<u4"),
        ("first_clip_portal_vert", "<u4"),
        ("num_clip_portal_verts", "<u4"),
        ("planenum", "<i4"),
    ]
)  # 20 bytes

LEAFWATERDATA = Record(
    [
        ("surface_z", "<f4"),  # float surfaceZ
        ("min_z", "<f4"),  # float minZ
        ("surface_tex_info_id", "<i2"),  # short surfaceTexInfoID
        ("padding", "<i2"),
    ]
)  # 12 bytes

# BSP 17-19 kept vvis's portal graph in slots 22-25 (later reused for prop collision).
PORTAL = Record(
    [
        ("firstportalvert", "<i4"),  # int firstportalvert
        ("numportalverts", "<i4"),  # int numportalverts
        ("planenum", "<i4"),  # int planenum
        ("cluster", "<u2", (2,)),  # unsigned short cluster[2]
    ]
)  # dportal_t: 16 bytes
CLUSTER = Record(
    [
        ("firstportal", "<i4"),  # int firstportal
        ("numportals", "<i4"),  # int numportals
    ]
)  # dcluster_t: 8 bytes

U16 = Record("<u2")
U32 = Record("<u4")

LAYOUTS_DARK_MESSIAH: Layouts = {LumpId.MODELS: {0: MODEL_DARK_MESSIAH}}
LAYOUTS: Layouts = {
    LumpId.NODES: {0: NODE},
    LumpId.LEAFS: {0: LEAF_V0, 1: LEAF},
    LumpId.LEAFFACES: {0: U16},  # unsigned short
    LumpId.LEAFBRUSHES: {0: U16},  # unsigned short
    LumpId.MODELS: {0: MODEL},
    LumpId.AREAS: {0: AREA},
    LumpId.AREAPORTALS: {0: AREAPORTAL},
    LumpId.LEAFWATERDATA: {0: LEAFWATERDATA},
    LumpId.LEAFMINDISTTOWATER: {0: U16},  # unsigned short
}

LAYOUTS_V19: Layouts = {
    LumpId.PROPCOLLISION: {0: PORTAL},  # LUMP_PORTALS
    LumpId.PROPHULLS: {0: CLUSTER},  # LUMP_CLUSTERS
    LumpId.PROPHULLVERTS: {0: U16},  # LUMP_PORTALVERTS: unsigned short vertex indices
    LumpId.PROPTRIS: {0: U16},  # LUMP_CLUSTERPORTALS: unsigned short portal indices
}

# Vindictus (Nexon, BSP 20) widened the tree like Strata later did, but kept integer bounds
# (bsp_tool's nexon.vindictus69: Leaf "9i4Ii", Node "12i"; its node's last int is dnode_t's
# area and padding).
def _int_bounds(record: Record) -> Record:
    """``record`` with its float bounds as ints (int mins[3], maxs[3])."""
    return Record([(name, "<i4", (3,)) if name in ("mins", "maxs") else (name, *rest)
                   for name, *rest in record.fields])


LEAF_VINDICTUS = _int_bounds(LEAF_V25)  # 56 bytes
NODE_VINDICTUS = _int_bounds(NODE_V25)  # 48 bytes
LAYOUTS_VINDICTUS: Layouts = {
    LumpId.NODES: {0: NODE_VINDICTUS},
    LumpId.LEAFS: {1: LEAF_VINDICTUS},
    LumpId.LEAFFACES: {0: U32},
    LumpId.LEAFBRUSHES: {0: U32},
    LumpId.AREAPORTALS: {0: AREAPORTAL_V25},  # "4Ii": Strata's 20-byte dareaportal_t
}

# Vampire (v17) writes the 32-byte leaf under lump version 0.
LAYOUTS_V17: Layouts = {LumpId.LEAFS: {0: LEAF}}

LAYOUTS_V25: Layouts = {
    LumpId.NODES: {0: NODE, 1: NODE_V25},
    LumpId.LEAFS: {1: LEAF, 2: LEAF_V25},
    LumpId.LEAFFACES: {0: U16, 1: U32},
    LumpId.LEAFBRUSHES: {0: U16, 1: U32},
    LumpId.AREAPORTALS: {0: AREAPORTAL, 1: AREAPORTAL_V25},
    LumpId.LEAFWATERDATA: {0: LEAFWATERDATA, 1: LEAFWATERDATA},
}

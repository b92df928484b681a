"""Displacement lumps: dispinfo, disp verts, disp tris, lightmap alphas and
lightmap sample positions.

bspfile.h structs: ``ddispinfo_t`` (with ``CDispNeighbor``,
``CDispSubNeighbor``, ``CDispCornerNeighbors``), ``CDispVert``, ``CDispTri``;
the Strata Source (v25) dispinfo whose neighbour tables are kept as bytes; the
leaked Half-Life 2 beta's BSP 17 dispinfo (no triangle tags), the Dota 2
betas' (BSP 22: one int more, BSP 23: two) and Vindictus's (232 bytes, wide
neighbour tables kept as bytes, no minTess).
"""
from __future__ import annotations

from typing import Any

from ..lump_ids import LumpId
from .base import Layouts, Record, vec3

DISP_SUB_NEIGHBOR = Record(
    [
        ("neighbor", "<u2"),  # unsigned short m_iNeighbor (0xFFFF = none)
        ("neighbor_orientation", "u1"),  # unsigned char m_NeighborOrientation
        ("span", "u1"),  # unsigned char m_Span
        ("neighbor_span", "u1"),  # unsigned char m_NeighborSpan
        ("padding", "u1"),
    ]
)  # 6 bytes
DISP_NEIGHBOR = Record([("sub_neighbors", DISP_SUB_NEIGHBOR, (2,))])  # CDispNeighbor: 12 bytes
DISP_CORNER_NEIGHBORS = Record(
    [
        ("neighbors", "<u2", (4,)),  # unsigned short m_Neighbors[MAX_DISP_CORNER_NEIGHBORS]
        ("num_neighbors", "u1"),  # unsigned char m_nNeighbors
        ("padding", "u1"),
    ]
)  # 10 bytes

DISPINFO = Record(
    [
        vec3("start_position"),  # Vector startPosition
        ("disp_vert_start", "<i4"),  # int m_iDispVertStart
        ("disp_tri_start", "<i4"),  # int m_iDispTriStart
        ("power", "<i4"),  # int power (2, 3 or 4)
        ("min_tess", "<i4"),  # int minTess
        ("smoothing_angle", "<f4"),  # float smoothingAngle
        ("contents", "<i4"),  # int contents
        ("map_face", "<u2"),  # unsigned short m_iMapFace
        ("padding", "u1", (2,)),
        ("lightmap_alpha_start", "<i4"),  # int m_iLightmapAlphaStart
        ("lightmap_sample_position_start", "<i4"),  # int m_iLightmapSamplePositionStart
        ("edge_neighbors", DISP_NEIGHBOR, (4,)),  # CDispNeighbor m_EdgeNeighbors[4]
        ("corner_neighbors", DISP_CORNER_NEIGHBORS, (4,)),  # CDispCornerNeighbors m_CornerNeighbors[4]
        ("allowed_verts", "<u4", (10,)),  # unsigned long m_AllowedVerts[10]
    ]
)  # 176 bytes


def _dispinfo_with(added: dict[str, str], without: tuple[str, ...] = ()) -> Record:
    """``ddispinfo_t`` with ``added`` int fields each after the named field (and ``without``
    fields left out): the branches that changed it only so."""
    fields: list[Any] = []  # fields: (name, type) or (name, type, shape)
    for field in DISPINFO.fields:
        if field[0] not in without:
            fields.append(field)
        if field[0] in added:
            fields.append((added[field[0]], "<i4"))
    return Record(fields)


# The leaked Half-Life 2 beta, BSP 17: no m_iDispTriStart (its maps have no triangle tags);
# BSPSource's DDispInfoBSP17 (172 bytes).
DISPINFO_HL2_BETA17 = _dispinfo_with({}, without=("disp_tri_start",))  # 172 bytes
# Dota 2 beta, BSP 22: an int of unknown meaning after m_iLightmapSamplePositionStart
# (BSPSource's DDispInfoBSP22, 180 bytes).
DISPINFO_DOTA2_V22 = _dispinfo_with({"lightmap_sample_position_start": "unknown"})  # 180 bytes
# Dota 2 beta, BSP 23: one more after contents (BSPSource's DDispInfoBSP23, 184 bytes).
DISPINFO_DOTA2_V23 = _dispinfo_with({"contents": "unknown1",
                                     "lightmap_sample_position_start": "unknown2"})  # 184 bytes

DISPINFO_V25 = Record(
    [
        vec3("start_position"),
        ("disp_vert_start", "<i4"),
        ("disp_tri_start", "<i4"),
        ("power", "<i4"),
        ("min_tess", "<i4"),
        ("smoothing_angle", "<f4"),
        ("contents", "<i4"),
        ("map_face", "<u4"),
        ("lightmap_alpha_start", "<i4"),
        ("lightmap_sample_position_start", "<i4"),
        ("edge_neighbors", "u1", (72,)),  # layout not documented: kept as bytes
        ("corner_neighbors", "u1", (72,)),
        ("allowed_verts", "<u4", (10,)),
    ]
)  # 232 bytes

# Vindictus: BSPSource's DDispInfoVin and bsp_tool's nexon.vindictus69 DisplacementInfo agree on
# the order: an int of unknown meaning after smoothingAngle where ddispinfo_t has minTess before it,
# then contents, the map face, and 144 bytes of neighbours (bsp_tool splits them 72 + 72, as
# Strata's).  They differ on the map face: BSPSource reads an unsigned short and two bytes of
# padding, bsp_tool an unsigned int.  The unsigned int is taken: Vindictus widened every other face
# index to 32 bits (its dface_t, dedge_t, leaf faces), and where the high half is zero (the padding
# BSPSource skips) both read the same value.
DISPINFO_VINDICTUS = Record(
    [
        vec3("start_position"),  # Vector startPosition
        ("disp_vert_start", "<i4"),  # int m_iDispVertStart
        ("disp_tri_start", "<i4"),  # int m_iDispTriStart
        ("power", "<i4"),  # int power
        ("smoothing_angle", "<f4"),  # float smoothingAngle
        ("unknown", "<i4"),  # int, meaning unknown (where minTess was, moved after smoothingAngle?)
        ("contents", "<i4"),  # int contents
        ("map_face", "<u4"),  # unsigned int m_iMapFace (see above)
        ("lightmap_alpha_start", "<i4"),  # int m_iLightmapAlphaStart
        ("lightmap_sample_position_start", "<i4"),  # int m_iLightmapSamplePositionStart
        ("edge_neighbors", "u1", (72,)),  # wide CDispNeighbor[4]: layout not documented, kept as bytes
        ("corner_neighbors", "u1", (72,)),  # wide CDispCornerNeighbors[4], the same
        ("allowed_verts", "<u4", (10,)),  # unsigned long m_AllowedVerts[10]
    ]
)  # 232 bytes

DISPVERT = Record(
    [
        vec3("vec"),  # Vector m_vVector (unit direction)
        ("dist", "<f4"),  # float m_flDist
        ("alpha", "<f4"),  # float m_flAlpha
    ]
)  # 20 bytes

DISPTRI = Record("<u2")  # CDispTri: unsigned short m_uiTags (DISPTRI_TAG_*)
BYTES = Record("u1")

LAYOUTS: Layouts = {
    LumpId.DISPINFO: {0: DISPINFO},
    LumpId.DISP_VERTS: {0: DISPVERT},
    LumpId.DISP_TRIS: {0: DISPTRI},
    LumpId.DISP_LIGHTMAP_ALPHAS: {0: BYTES},
    LumpId.DISP_LIGHTMAP_SAMPLE_POSITIONS: {0: BYTES},
}
LAYOUTS_V25: Layouts = {LumpId.DISPINFO: {0: DISPINFO, 1: DISPINFO_V25}}
# BSPSource picks these by BSP version, not lump version: each the lump's one layout, read
# whatever its lump version says (see Variant.codec).
LAYOUTS_HL2_BETA17: Layouts = {LumpId.DISPINFO: {0: DISPINFO_HL2_BETA17}}
LAYOUTS_DOTA2_V22: Layouts = {LumpId.DISPINFO: {0: DISPINFO_DOTA2_V22}}
LAYOUTS_DOTA2_V23: Layouts = {LumpId.DISPINFO: {0: DISPINFO_DOTA2_V23}}
LAYOUTS_VINDICTUS: Layouts = {LumpId.DISPINFO: {0: DISPINFO_VINDICTUS}}

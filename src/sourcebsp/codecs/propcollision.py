"""Directory slots 22-25 from BSP 21 on: static prop collision, face brush lists.

Before BSP 20 these slots held vvis's portal graph (see ``tree.LAYOUTS_V19``);
SDK 2013 leaves them unused.  Later branches gave them two meanings:

* Left 4 Dead 2 (``LUMP_PROPCOLLISION`` .. ``LUMP_PROPTRIS``): static prop
  convex hulls.  ``dpropcollision_t`` {int m_nHullCount; int m_nHullStart}
  lists a prop's hulls; ``dprophull_t`` {int m_nVertCount; int m_nVertStart;
  int m_nSurfaceProp; unsigned int m_nContents}; the hull vertices are
  ``Vector``; ``dprophulltris_t`` {int m_nIndexStart; int m_nIndexCount}.
* CS:GO and Strata Source (``LUMP_FACEBRUSHES`` = 22, ``LUMP_FACEBRUSHLIST`` =
  23): for each face, the brushes that gave it a side.
  ``dfacebrushlist_t`` {unsigned short m_nFaceBrushCount; unsigned short
  m_nFaceBrushStart}: when the count is 0 or 1, ``m_nFaceBrushStart`` *is*
  the brush index; otherwise it indexes the brush list of lump 22 (unsigned
  short brush indices).  Strata's lump version 1 widens both to unsigned int.

Slots 24 and 25 are unused in CS:GO and Strata.  ``LUMP_PHYSLEVEL`` (62) has
no published layout and stays raw.
"""
from __future__ import annotations

import numpy as np

from ..errors import BspFormatError
from ..lump_ids import LumpId
from .base import Layouts, vec3

__all__ = [
    "PROPCOLLISION",
    "PROPHULL",
    "PROPHULLVERT",
    "PROPHULLTRIS",
    "FACEBRUSH",
    "FACEBRUSH_V25",
    "FACEBRUSHLIST",
    "FACEBRUSHLIST_V25",
    "face_brushes",
]

PROPCOLLISION = np.dtype(
    [
        ("hull_count", "<i4"),  # int m_nHullCount
        ("hull_start", "<i4"),  # int m_nHullStart: index into PROPHULLS
    ]
)  # dpropcollision_t: 8 bytes
PROPHULL = np.dtype(
    [
        ("vert_count", "<i4"),  # int m_nVertCount
        ("vert_start", "<i4"),  # int m_nVertStart: index into PROPHULLVERTS
        ("surface_prop", "<i4"),  # int m_nSurfaceProp
        ("contents", "<u4"),  # unsigned int m_nContents (CONTENTS_*)
    ]
)  # dprophull_t: 16 bytes
PROPHULLVERT = np.dtype([vec3("point")])  # dvertex_t: Vector point (12 bytes)
PROPHULLTRIS = np.dtype(
    [
        ("index_start", "<i4"),  # int m_nIndexStart
        ("index_count", "<i4"),  # int m_nIndexCount
    ]
)  # dprophulltris_t: 8 bytes

FACEBRUSH = np.dtype("<u2")  # LUMP_FACEBRUSHES: unsigned short brush index
FACEBRUSH_V25 = np.dtype("<u4")  # Strata lump version 1: unsigned int
FACEBRUSHLIST = np.dtype(
    [
        ("face_brush_count", "<u2"),  # unsigned short m_nFaceBrushCount
        ("face_brush_start", "<u2"),  # unsigned short m_nFaceBrushStart (a brush index if count <= 1)
    ]
)  # dfacebrushlist_t: 4 bytes
FACEBRUSHLIST_V25 = np.dtype(
    [
        ("face_brush_count", "<u4"),  # unsigned int m_nFaceBrushCount
        ("face_brush_start", "<u4"),  # unsigned int m_nFaceBrushStart
    ]
)  # dfacebrushlist_t (Strata lump version 1): 8 bytes


def face_brushes(face_brush_list: np.ndarray, brush_list: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (face, brush) pair of the face brush lists, vectorized.

    Parameters
    ----------
    face_brush_list
        The FACEBRUSHLIST lump (one ``dfacebrushlist_t`` per face).
    brush_list
        The FACEBRUSHES lump (brush indices for faces with several brushes).

    Returns
    -------
    faces, brushes : ndarray
        Two arrays of equal length: face ``faces[i]`` has a side on brush
        ``brushes[i]``.
    """
    counts = face_brush_list["face_brush_count"].astype(np.int64)
    starts = face_brush_list["face_brush_start"].astype(np.int64)
    faces = np.repeat(np.arange(len(counts)), counts)
    # Position of each pair inside its face's run: 0, 1, ... count-1.
    run_start = np.repeat(np.cumsum(counts) - counts, counts)
    within = np.arange(len(faces)) - run_start
    direct = np.repeat(counts <= 1, counts)
    indices = np.repeat(starts, counts) + within
    brushes = np.where(direct, np.repeat(starts, counts), 0)
    listed = ~direct
    brush_list = np.asarray(brush_list, np.int64)
    if listed.any() and indices[listed].max() >= len(brush_list):
        raise BspFormatError(
            f"a face brush list reaches entry {int(indices[listed].max())} of a "
            f"{len(brush_list)}-entry FACEBRUSHES lump", lump="FACEBRUSHLIST")
    brushes[listed] = brush_list[indices[listed]]
    return faces, brushes


# Left 4 Dead 2.
LAYOUTS_L4D2: Layouts = {
    LumpId.PROPCOLLISION: {0: PROPCOLLISION},
    LumpId.PROPHULLS: {0: PROPHULL},
    LumpId.PROPHULLVERTS: {0: PROPHULLVERT},
    LumpId.PROPTRIS: {0: PROPHULLTRIS},
}
# CS:GO (slots 22 and 23 are LUMP_FACEBRUSHES, LUMP_FACEBRUSHLIST).
LAYOUTS_CSGO: Layouts = {
    LumpId.PROPCOLLISION: {0: FACEBRUSH},
    LumpId.PROPHULLS: {0: FACEBRUSHLIST},
}
# Strata Source: LUMP_FACEBRUSHES_VERSION 1, LUMP_FACEBRUSHLIST_VERSION 1.
LAYOUTS_V25: Layouts = {
    LumpId.PROPCOLLISION: {0: FACEBRUSH, 1: FACEBRUSH_V25},
    LumpId.PROPHULLS: {0: FACEBRUSHLIST, 1: FACEBRUSHLIST_V25},
}

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
no published layout and stays raw.  The records are declared in
:mod:`sourcebsp.codecs.records` (without numpy).
"""
from __future__ import annotations

import numpy as np

from ..errors import BspFormatError

__all__ = ["face_brushes"]


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


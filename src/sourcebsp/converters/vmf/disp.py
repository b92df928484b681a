"""Displacements back to ``dispinfo`` blocks.

Each ``ddispinfo_t`` names its face (``m_iMapFace``, a FACES index); that
face is the displacement's four-cornered base, on the plane of the brush
side it was made from.  The side is found as the brush side on the face's
plane whose polygon has the face's four corners (within
:data:`CORNER_EPSILON`); vbsp drops displacement brushes from the BRUSHES
lump, so usually there is none, and the decompiler then makes a brush for
the displacement: the face extruded :data:`DISP_BRUSH_DEPTH` units behind it,
its other sides ``tools/toolsnodraw``.

The ``dispinfo`` block holds what the BSP keeps:

* ``power``, ``startposition`` (``startPosition``), ``allowed_verts``
  (``m_AllowedVerts``, written as signed 32-bit numbers);
* ``flags``: vbsp stores the VMF flags in ``minTess`` with the top bit set
  (``0x80000000 | flags``); other values give 0;
* ``normals`` and ``distances``: ``CDispVert`` ``m_vVector`` and ``m_flDist``,
  the whole offset of each vertex from its place on the flat face, so
  ``offsets`` are zero, ``elevation`` is 0 and ``offset_normals`` are the
  face normal, as Hammer writes for an unsculpted displacement;
* ``alphas``: ``m_flAlpha``;
* ``triangle_tags``: ``CDispTri`` tags turned back into Hammer's
  (``DISPTRI_TAG_WALKABLE`` 0x2 -> 1, ``DISPTRI_TAG_BUILDABLE`` 0x4 -> 8).

Vertex ``k`` of the BSP grid is vertex ``k`` of the VMF rows (row-major from
the corner at ``startposition``), as vbsp copies them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import BspFormatError
from ...lump_ids import LumpId
from ...protocols import MapReader
from ...numeric import floats
from .writer import VmfDisp

__all__ = ["DISP_BRUSH_DEPTH", "CORNER_EPSILON", "DispFace", "displacement_faces", "disp_block"]

DISP_BRUSH_DEPTH = 8.0
CORNER_EPSILON = 0.1
_FLAGS_STORED = 0x80000000
# bspfile.h DISPTRI_TAG_* -> Hammer's CoreDispInfo tags in VMF triangle_tags.
_TAG_WALKABLE, _TAG_BUILDABLE = 0x2, 0x4
_HAMMER_WALKABLE, _HAMMER_BUILDABLE = 0x1, 0x8


@dataclass
class DispFace:
    """One displacement and its base face."""

    index: int  # DISPINFO row
    face: int  # FACES row (m_iMapFace)
    corners: np.ndarray  # (4, 3) face corners as stored (clockwise seen from the front)
    normal: np.ndarray  # (3,)
    dist: float
    planenum: int
    texinfo: int


def displacement_faces(bsp: MapReader, faces: np.ndarray, face_points: np.ndarray,
                       face_offsets: np.ndarray) -> list[DispFace]:
    """The base face of every displacement of the map."""
    dispinfo = bsp.lump_or_none(LumpId.DISPINFO, "decompile displacements")
    if dispinfo is None or not len(dispinfo):
        return []
    planes = bsp.planes
    out = []
    for i, row in enumerate(dispinfo):
        face = int(row["map_face"])
        if not 0 <= face < len(faces) or int(faces["dispinfo"][face]) != i:
            # Some compilers leave m_iMapFace stale: find the face that points here.
            hits = np.flatnonzero(faces["dispinfo"] == i)
            if not len(hits):
                continue
            face = int(hits[0])
        start, end = int(face_offsets[face]), int(face_offsets[face + 1])
        if end - start != 4:
            raise BspFormatError(f"displacement {i} has a base face of {end - start} corners, not 4",
                                 lump="DISPINFO", offset=bsp.entry(LumpId.DISPINFO).fileofs + i * dispinfo.dtype.itemsize)
        pn = int(faces["planenum"][face])
        if not 0 <= pn < len(planes):
            raise BspFormatError(f"displacement {i}'s base face {face} uses plane {pn} of {len(planes)}",
                                 lump="FACES", offset=bsp.entry(LumpId.FACES).fileofs + face * faces.dtype.itemsize)
        out.append(DispFace(i, face, face_points[start:end].copy(), planes["normal"][pn].astype(np.float64),
                            float(planes["dist"][pn]), pn, int(faces["texinfo"][face])))
    return out


def disp_block(bsp: MapReader, disp: DispFace, normal: np.ndarray) -> VmfDisp:
    """The ``dispinfo`` block of one displacement; ``normal`` is its side's outward normal."""
    dispinfo = bsp.dispinfo
    row = dispinfo[disp.index]
    power = int(row["power"])
    if not 1 <= power <= 4:
        raise BspFormatError(f"displacement {disp.index} has power {power}", lump="DISPINFO",
                             offset=bsp.entry(LumpId.DISPINFO).fileofs + disp.index * dispinfo.dtype.itemsize)
    w = (1 << power) + 1
    nverts, ntris = w * w, 2 * (w - 1) * (w - 1)
    verts = bsp.lump_or_none(LumpId.DISP_VERTS, "decompile displacements")
    first = int(row["disp_vert_start"])
    if verts is None or first < 0 or first + nverts > len(verts):
        raise BspFormatError(f"displacement {disp.index} needs DISP_VERTS {first}..{first + nverts - 1}",
                             lump="DISP_VERTS", offset=bsp.entry(LumpId.DISP_VERTS).fileofs)
    dv = verts[first : first + nverts]
    tris = bsp.lump_or_none(LumpId.DISP_TRIS, "decompile displacements")
    tfirst = int(row["disp_tri_start"]) if "disp_tri_start" in (dispinfo.dtype.names or ()) else -1  # HL2 beta 17
    if tris is not None and 0 <= tfirst and tfirst + ntris <= len(tris):
        raw = tris[tfirst : tfirst + ntris].astype(np.int64)
        tags = np.where(raw & _TAG_WALKABLE, _HAMMER_WALKABLE, 0) | np.where(raw & _TAG_BUILDABLE, _HAMMER_BUILDABLE, 0)
    else:
        tags = np.zeros(ntris, np.int64)
    # Vindictus's ddispinfo_t has no minTess (an int of unknown meaning elsewhere): no flags stored.
    min_tess = int(row["min_tess"]) & 0xFFFFFFFF if "min_tess" in (dispinfo.dtype.names or ()) else 0
    flags = min_tess & 0xF if min_tess & _FLAGS_STORED else 0
    allowed = np.asarray(row["allowed_verts"]).astype(np.int64)
    allowed = np.where(allowed >= 1 << 31, allowed - (1 << 32), allowed)
    return VmfDisp(
        power=power,
        start_position=floats(row["start_position"]),
        normals=floats(dv["vec"]),
        distances=floats(dv["dist"]),
        offsets=np.zeros((nverts, 3)),
        offset_normals=np.tile(np.asarray(normal, np.float64), (nverts, 1)),
        alphas=floats(dv["alpha"]),
        triangle_tags=tags,
        allowed_verts=allowed,
        flags=flags,
    )

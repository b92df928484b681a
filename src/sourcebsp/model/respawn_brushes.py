"""The collision brushes of a Titanfall rBSP map (CM_BRUSHES) as solids, gathered in numpy.

A brush is a box, ``origin +- extents``, cut by ``num_plane_offsets`` more planes.
Its sides, in order, are the box's six axial planes (+X -X +Y -Y +Z -Z) and then
the cutting planes; cutting side ``i`` is entry ``k = brush_side_offset + i`` of
CM_BRUSH_SIDE_PLANE_OFFSETS, and its plane is PLANES row
``CM_GRID.first_brush_plane + k - CM_BRUSH_SIDE_PLANE_OFFSETS[k]`` (an offset lets
a side point back at a plane an earlier side already stored).  The properties
(CM_BRUSH_SIDE_PROPERTIES: TEXTURE_DATA index in the low 9 bits, flags above) and
texture vectors (CM_BRUSH_SIDE_TEXTURE_VECTORS, when the map has them) of the
brush's ``6 + num_plane_offsets`` sides start at row ``6 * index +
brush_side_offset``.

Sources: bsp_tool 0.7.0 (``respawn.titanfall.brush``) and MRVN-Radiant's Titanfall
decompiler (``remap``'s ``Titanfall::ParseBrush``) read these lumps by the same
rules; MRVN-Radiant's compiler writes them so (each cutting plane appended to
PLANES, its offset 0; ``brush_side_offset`` the count of cutting sides before
the brush).  That compiler leaves ``brush_side_offset`` 0 on a brush with no
cutting side, whose properties still follow on from the brush before it, so for
such a brush the count of earlier cutting sides is used (the same value wherever
the field is written).

The polygons are those of :func:`sourcebsp.model.brushes.clip_brushes`, as for
Source brushes; :func:`brush_checks` tells, per brush, whether the planes so
indexed make the solid the box promises (see the tests on a real map).

Untrusted input: every count, index and plane is checked before use, and the
clipping is sized against the memory budget first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..codecs.respawn import (BRUSH_SIDE_DISCARD, BRUSH_SIDE_TEXTURE_DATA, CM_BRUSH_SIDE_PLANE_OFFSETS,
                              CM_BRUSH_SIDE_PROPERTIES, CM_BRUSHES, CM_GEO_SETS, CM_GRID, CM_GRID_CELLS,
                              CM_PRIMITIVES, CM_UNIQUE_CONTENTS, MODELS, PLANES, PRIMITIVE_BRUSH,
                              PRIMITIVE_CONTENTS_BITS, PRIMITIVE_INDEX_BITS, TEXTURE_DATA)
from ..errors import BspFormatError
from ..numeric import floats, range_rows
from ..resources import check_memory
from .brushes import BrushSet, clip_brushes, clipping_bytes, closed_brushes

if TYPE_CHECKING:
    from ..respawn import RespawnBsp

__all__ = ["AXIAL_NORMALS", "RespawnBrushes", "BrushOwners", "BrushChecks", "build_respawn_brushes",
           "brush_owners", "brush_checks"]

#: The normals of a brush's six axial sides, in their order.
AXIAL_NORMALS = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], np.float64)
#: A box corner may lie this far off ``origin +- extents`` (map units).
BOX_EPSILON = 0.01


@dataclass
class RespawnBrushes:
    """The brushes' polygons, and every side as stored (those that bound no face too).

    ``brushes`` is a :class:`~sourcebsp.model.brushes.BrushSet` of the sides that bound
    their solid: ``side_index`` their CM_BRUSH_SIDE_PROPERTIES row, ``planenum`` their
    PLANES row (-1 for an axial side), ``texinfo`` their TEXTURE_DATA index.  The
    ``side_*`` arrays hold all ``6 + num_plane_offsets`` sides of each brush, brush by
    brush (``side_first`` (B + 1,)), and ``side_kept`` which of them have a polygon.
    """

    brushes: BrushSet
    side_first: np.ndarray
    side_normal: np.ndarray  # (S, 3) float64
    side_dist: np.ndarray  # (S,)
    side_plane: np.ndarray  # (S,) PLANES row, -1: axial
    side_property: np.ndarray  # (S,) CM_BRUSH_SIDE_PROPERTIES row
    side_flags: np.ndarray  # (S,) the property's bits above the texture data
    side_kept: np.ndarray  # (S,) bool
    box_mins: np.ndarray  # (B, 3) origin - extents
    box_maxs: np.ndarray  # (B, 3)

    @property
    def side_axial(self) -> np.ndarray:
        """Bool per side: one of its brush's six box sides."""
        local = np.arange(len(self.side_plane)) - np.repeat(self.side_first[:-1], np.diff(self.side_first))
        return np.asarray(local < 6)


def _fail(bsp: RespawnBsp, lump: int, row: int, itemsize: int, message: str) -> BspFormatError:
    index = bsp.lump_index(lump)
    base = 0 if index in bsp.external else bsp.lumps[index].fileofs
    return BspFormatError(message, lump=bsp.names[index], offset=base + row * itemsize)


def _first_bad(bad: np.ndarray | np.bool_) -> int:
    return int(np.argmax(bad))


def build_respawn_brushes(bsp: RespawnBsp) -> RespawnBrushes:
    """Every CM_BRUSHES brush clipped into its side polygons (see the module's docstring).

    Raises
    ------
    BspFormatError
        A brush whose box is not finite, whose sides run past their lumps, or whose
        plane or texture data does not exist (the message names the lump and offset).
    LimitExceededError
        Clipping would need more memory than the budget allows.
    """
    brushes = bsp.array(CM_BRUSHES)
    n = len(brushes)
    size = brushes.dtype.itemsize
    planes = bsp.array(PLANES)
    offsets = bsp.array(CM_BRUSH_SIDE_PLANE_OFFSETS).astype(np.int64)
    properties = bsp.array(CM_BRUSH_SIDE_PROPERTIES)
    textures = bsp.array(TEXTURE_DATA)
    origin = floats(brushes["origin"])  # a signalling NaN warns in a plain cast
    extents = floats(brushes["extents"])
    bad = ~(np.isfinite(origin).all(axis=1) & np.isfinite(extents).all(axis=1) & (extents >= 0).all(axis=1))
    if bad.any():
        row = _first_bad(bad)
        raise _fail(bsp, CM_BRUSHES, row, size, f"brush {row}: origin {origin[row].tolist()} extents "
                                                f"{extents[row].tolist()} is not a box")
    cutting = brushes["num_plane_offsets"].astype(np.int64)
    start = brushes["brush_side_offset"].astype(np.int64)
    bad = (cutting > 0) & ((start < 0) | (start + cutting > len(offsets)))
    if bad.any():
        row = _first_bad(bad)
        raise _fail(bsp, CM_BRUSHES, row, size, f"brush {row}: plane offsets {int(start[row])}+{int(cutting[row])} "
                                                f"run past the {len(offsets)} of CM_BRUSH_SIDE_PLANE_OFFSETS")
    before = np.cumsum(cutting) - cutting
    start = np.where(cutting > 0, start, before)  # unset (0) on a brush without cutting sides
    per_brush = 6 + cutting
    first_property = 6 * brushes["index"].astype(np.int64) + start
    bad = (first_property < 0) | (first_property + per_brush > len(properties))
    if bad.any():
        row = _first_bad(bad)
        raise _fail(bsp, CM_BRUSHES, row, size, f"brush {row}: side properties {int(first_property[row])}"
                                                f"+{int(per_brush[row])} run past the {len(properties)} of "
                                                f"CM_BRUSH_SIDE_PROPERTIES")
    check_memory(bsp.file_size, clipping_bytes(per_brush), f"clipping {n} brushes of up to "
                 f"{int(per_brush.max(initial=0))} sides", lump="CM_BRUSHES", offset=bsp.lumps[CM_BRUSHES].fileofs)
    # Side s of brush b: local index 0-5 axial, 6.. cutting.
    side_first = np.zeros(n + 1, np.int64)
    np.cumsum(per_brush, out=side_first[1:])
    total = int(side_first[-1])
    side_brush = np.repeat(np.arange(n), per_brush)
    local = np.arange(total) - side_first[:-1][side_brush]
    axial = local < 6
    normal = np.zeros((total, 3))
    dist = np.zeros(total)
    axis = np.where(axial, local, 0)
    normal[axial] = AXIAL_NORMALS[axis[axial]]
    sign = 1.0 - 2.0 * (axis % 2)  # +X: origin + extents, -X: -(origin - extents); likewise Y, Z
    dist[axial] = (sign * origin[side_brush, axis // 2] + extents[side_brush, axis // 2])[axial]
    plane_row = np.full(total, -1, np.int64)
    cut = np.flatnonzero(~axial)
    if len(cut):
        grid = bsp.array(CM_GRID)
        if not len(grid):
            raise _fail(bsp, CM_GRID, 0, 28, "the brushes have cutting planes but the map has no CM_GRID record")
        first_plane = int(grid["first_brush_plane"][0])
        entry = start[side_brush[cut]] + local[cut] - 6
        rows = first_plane + entry - offsets[entry]
        bad = (rows < 0) | (rows >= len(planes))
        if bad.any():
            k = int(entry[_first_bad(bad)])
            raise _fail(bsp, CM_BRUSH_SIDE_PLANE_OFFSETS, k, 2, f"entry {k} ({int(offsets[k])}) names plane "
                                                                f"{int(rows[_first_bad(bad)])} of {len(planes)}")
        plane_row[cut] = rows
        normal[cut] = floats(planes["normal"][rows])
        dist[cut] = floats(planes["dist"][rows])
        with np.errstate(over="ignore", invalid="ignore"):
            length = np.linalg.norm(normal[cut], axis=1)
        bad = ~(np.isfinite(length) & (length > 1e-6) & np.isfinite(dist[cut]))
        if bad.any():
            row = int(rows[_first_bad(bad)])
            raise _fail(bsp, PLANES, row, 16, f"plane {row} of a brush side has no direction or is not finite")
    prop_row = first_property[side_brush] + local
    prop = properties[prop_row].astype(np.int64)
    texture = prop & BRUSH_SIDE_TEXTURE_DATA
    bad = texture >= len(textures)
    if bad.any():
        row = int(prop_row[_first_bad(bad)])
        raise _fail(bsp, CM_BRUSH_SIDE_PROPERTIES, row, 2, f"side property {row} names texture data "
                                                           f"{int(texture[_first_bad(bad)])} of {len(textures)}")
    keep, poly_offsets, points = clip_brushes(normal, dist, side_brush, n)
    kept_brush = side_brush[keep]
    brush_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(kept_brush, minlength=n), out=brush_offsets[1:])
    result = BrushSet(
        contents=np.zeros(n, np.int64), brush_offsets=brush_offsets, side_index=prop_row[keep],
        planenum=plane_row[keep], normal=normal[keep], dist=dist[keep], texinfo=texture[keep],
        dispinfo=np.full(int(keep.sum()), -1, np.int64), poly_offsets=poly_offsets, points=points)
    result.closed = closed_brushes(result)
    return RespawnBrushes(result, side_first, normal, dist, plane_row, prop_row, prop & ~BRUSH_SIDE_TEXTURE_DATA,
                          keep, origin - extents, origin + extents)


@dataclass
class BrushOwners:
    """Which MODELS row each brush's collision cell belongs to, and its contents.

    ``model`` is -1 for a brush no cell names (or every brush, when the map has no
    CM_GRID_CELLS); ``conflicts`` the brushes named by cells of two models (kept with
    the higher model).  ``contents`` is the OR of the CM_UNIQUE_CONTENTS values of the
    primitives naming the brush (0 where none does).
    """

    model: np.ndarray  # (B,) int64
    contents: np.ndarray  # (B,) int64
    conflicts: np.ndarray  # (C,) brush rows


def brush_owners(bsp: RespawnBsp) -> BrushOwners:
    """The collision grid read back to its brushes (see :class:`BrushOwners`).

    The cells are the world's ``count.x * count.y`` grid, then one per MODELS row
    (row 0's empty); a cell names a run of CM_GEO_SETS; a geo set with one primitive
    holds it, one with more names a run of CM_PRIMITIVES.  A primitive of type
    :data:`~sourcebsp.codecs.respawn.PRIMITIVE_BRUSH` is a CM_BRUSHES row.  MRVN-Radiant
    (``Titanfall::ParseWorldspawn`` / ``ParseExtraBrushes`` / ``ParseGridCells``) reads
    them so; bsp_tool 0.7.0's GridCell notes give the same cell count.

    Raises
    ------
    BspFormatError
        A cell, geo set or primitive that points past its lump (named with its offset).
    """
    n = len(bsp.array(CM_BRUSHES))
    model = np.full(n, -1, np.int64)
    contents = np.zeros(n, np.int64)
    cells = bsp.array(CM_GRID_CELLS)
    grid = bsp.array(CM_GRID)
    if not len(cells) or not len(grid):
        return BrushOwners(model, contents, np.zeros(0, np.int64))
    count = grid["count"][0].astype(np.int64)
    world_cells = int(count[0] * count[1]) if (count >= 0).all() else -1
    models = len(bsp.array(MODELS))
    if not 0 <= world_cells <= len(cells):
        raise _fail(bsp, CM_GRID, 0, 28, f"a grid of {count.tolist()} cells, but CM_GRID_CELLS has {len(cells)}")
    cell_model = np.zeros(len(cells), np.int64)
    extra = np.arange(len(cells) - world_cells)
    cell_model[world_cells:] = np.where(extra < max(models, 1), extra, -1)  # cells past the models own nothing
    geo_sets = bsp.array(CM_GEO_SETS)
    first = cells["first_geo_set"].astype(np.int64)
    num = cells["num_geo_sets"].astype(np.int64)
    bad = first + num > len(geo_sets)
    if bad.any():
        row = _first_bad(bad)
        raise _fail(bsp, CM_GRID_CELLS, row, 4, f"cell {row}: geo sets {int(first[row])}+{int(num[row])} run "
                                                f"past the {len(geo_sets)} of CM_GEO_SETS")
    references = int(num.sum())
    check_memory(bsp.file_size, 64 * references, f"{references} geo set references of {len(cells)} grid cells",
                 lump="CM_GRID_CELLS", offset=bsp.lumps[CM_GRID_CELLS].fileofs)
    set_row = range_rows(first, num)[1]
    set_model = np.repeat(cell_model, num)
    # A geo set's primitives: itself (one), or a run of CM_PRIMITIVES (more).
    width = geo_sets["num_primitives"][set_row].astype(np.int64)
    own = geo_sets["primitive"][set_row].astype(np.int64)
    index_mask = (1 << PRIMITIVE_INDEX_BITS) - 1
    single, runs = width == 1, width > 1
    start = (own[runs] >> PRIMITIVE_CONTENTS_BITS) & index_mask
    primitives = bsp.array(CM_PRIMITIVES).astype(np.int64)
    bad = start + width[runs] > len(primitives)
    if bad.any():
        row = int(set_row[runs][_first_bad(bad)])
        raise _fail(bsp, CM_GEO_SETS, row, 8, f"geo set {row}: primitives {int(start[_first_bad(bad)])}"
                                              f"+{int(width[runs][_first_bad(bad)])} run past the "
                                              f"{len(primitives)} of CM_PRIMITIVES")
    total = int(width[runs].sum())
    check_memory(bsp.file_size, 64 * total, f"{total} primitive references of the collision grid",
                 lump="CM_GEO_SETS", offset=bsp.lumps[CM_GEO_SETS].fileofs)
    in_run = range_rows(start, width[runs])[1]
    value = np.concatenate([own[single], primitives[in_run]])
    owner = np.concatenate([set_model[single], np.repeat(set_model[runs], width[runs])])
    source = [(CM_GEO_SETS, set_row[single], 8), (CM_PRIMITIVES, in_run, 4)]
    shape = value >> (PRIMITIVE_CONTENTS_BITS + PRIMITIVE_INDEX_BITS)
    brush = (value >> PRIMITIVE_CONTENTS_BITS) & index_mask
    unique = value & ((1 << PRIMITIVE_CONTENTS_BITS) - 1)
    table = bsp.array(CM_UNIQUE_CONTENTS).astype(np.int64)
    keep = (shape == PRIMITIVE_BRUSH) & (owner >= 0)
    bad = keep & ((brush >= n) | (unique >= len(table)))
    if bad.any():
        i = _first_bad(bad)
        lump, rows, size = source[0] if i < int(single.sum()) else source[1]
        row = int(rows[i if lump == CM_GEO_SETS else i - int(single.sum())])
        raise _fail(bsp, lump, row, size, f"a brush primitive names brush {int(brush[i])} of {n} and "
                                          f"contents {int(unique[i])} of {len(table)}")
    brush, owner, unique = brush[keep], owner[keep], unique[keep]
    np.maximum.at(model, brush, owner)
    lowest = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(lowest, brush, owner)
    np.bitwise_or.at(contents, brush, table[unique])
    conflicts = np.flatnonzero((model >= 0) & (lowest != model))
    return BrushOwners(model, contents, conflicts)


@dataclass
class BrushChecks:
    """Per brush, whether its rebuilt solid is what the lumps promise (see :func:`brush_checks`)."""

    closed: np.ndarray  # (B,) bool: a closed convex solid
    box: np.ndarray  # (B,) bool: its corners span origin +- extents (within BOX_EPSILON)
    cutting_faces: np.ndarray  # (B,) bool: every cutting side without DISCARD has a face of non-zero area

    @property
    def passed(self) -> np.ndarray:
        return np.asarray(self.closed & self.box & self.cutting_faces)


def brush_checks(found: RespawnBrushes) -> BrushChecks:
    """Three checks of the side-to-plane indexing, per brush, independent of any other reader.

    (a) the sides close into a convex solid; (b) its corners' bounding box is the
    brush's ``origin +- extents`` within :data:`BOX_EPSILON` (cutting planes cut
    inside the box, never outside, and the box's faces survive where the solid
    reaches them); (c) every cutting side not flagged DISCARD bounds the solid with
    a face of non-zero area (a plane taken from the wrong row would miss the box or
    cut it away).
    """
    brushes = found.brushes
    n = len(brushes)
    mins, maxs = brushes.bounds()
    with np.errstate(invalid="ignore"):
        box = (np.abs(mins - found.box_mins) <= BOX_EPSILON).all(axis=1) & \
            (np.abs(maxs - found.box_maxs) <= BOX_EPSILON).all(axis=1)
    # A face's area: half the length of the sum of its corners' cross products (Newell).
    counts = brushes.side_counts
    side_of_point = np.repeat(np.arange(len(counts)), counts)
    nxt = np.arange(len(brushes.points)) + 1
    if len(nxt):
        nxt[brushes.poly_offsets[1:] - 1] = brushes.poly_offsets[:-1]
    area_vector = np.zeros((len(counts), 3))
    np.add.at(area_vector, side_of_point, np.cross(brushes.points, brushes.points[nxt]) * 0.5)
    area = np.zeros(len(found.side_kept))
    area[found.side_kept] = np.linalg.norm(area_vector, axis=1)
    must = ~found.side_axial & ((found.side_flags & BRUSH_SIDE_DISCARD) == 0)
    side_brush = np.repeat(np.arange(n), np.diff(found.side_first))
    missing = np.bincount(side_brush[must & (area <= 1e-6)], minlength=n)
    return BrushChecks(closed=brushes.closed.copy(), box=box, cutting_faces=missing == 0)

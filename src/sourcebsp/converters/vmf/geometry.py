"""Geometry shared by the VMF decompiler: plane points, faces to brush sides, prisms.

* :func:`plane_points` picks, for each side polygon, the three points
  Hammer's ``"plane"`` key is written from: points on the BSP plane whose
  plane (as Hammer and vbsp compute it from them, :func:`defined_planes`)
  is the BSP plane within :data:`PLANE_RULE`: the side's own corners when
  they are whole numbers, else a triangle as wide as the map allows;
* :func:`face_sides` maps faces to the brush sides they were cut from (candidates
  by :func:`candidate_pairs`: same model, same plane, nearby grid cell): a
  face lies on its side's plane (``dface_t.planenum`` is the side's plane,
  or its opposite for faces seen from inside water), inside the side's
  polygon (the face's centroid within 0.1 units of it: a face is a convex
  piece of the side) and, when several sides qualify (coplanar brushes),
  with the side's texinfo.  Faces and sides of a brush entity are both in
  the model's space, so no transform is needed.  :func:`faces_within` tells
  the faces wholly inside their side from those vbsp merged across sides.
* :func:`prism_planes` gives the planes of a polygon extruded backwards,
  the brush made for a displacement whose brush vbsp dropped, or for an
  occluder polygon.
"""
from __future__ import annotations


import numpy as np

from ...model.brushes import BrushSet
from ...model.geometry import face_polygons, vertex_points
from ...protocols import MapReader
from ...numeric import sorted_unique

__all__ = ["plane_points", "defined_planes", "defined_plane_errors", "candidate_pairs", "face_sides", "faces_within",
           "prism_planes", "CONTAIN_EPSILON", "SNAP_ON_PLANE", "PLANE_RULE", "WRITTEN_DECIMALS", "MAP_EXTENT",
           "MIN_SPREAD"]

CONTAIN_EPSILON = 0.1


def _padded(points: np.ndarray, offsets: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The polygons' corners padded to ``width`` each, and which are real."""
    counts = np.diff(offsets)
    n = len(counts)
    idx = np.arange(width)
    valid = idx[None, :] < counts[:, None]
    src = np.where(valid, offsets[:-1, None] + idx[None, :], 0)
    return (points[src] if len(points) else np.zeros((n, width, 3))), valid


def plane_points(points: np.ndarray, offsets: np.ndarray, normal: np.ndarray, dist: np.ndarray,
                 origin: np.ndarray | None = None) -> np.ndarray:
    """Three points per polygon for a VMF ``"plane"`` key, ``(N, 3, 3)``, clockwise from outside.

    Hammer and vbsp do not read the points: they read the plane the points
    define, and a plane defined by points close together tilts with the
    least error in them.  So every side's points define its plane ``(normal,
    dist)`` by :data:`PLANE_RULE` (:func:`defined_plane_errors` of the points
    as written), and they are one of two triangles on the plane itself:

    * three corners of the side, projected onto the plane (the clipper
      snapped them to the grid) and spanning it (the first corner, the one
      farthest from it, the one making the largest triangle with both),
      kept only when all three are whole numbers (the mapper's grid points:
      exact in any reader's precision) that still give the plane back;
    * otherwise a right triangle centred on the side, its legs as long as
      :data:`MAP_EXTENT` allows (at least :data:`MIN_SPREAD`), rounded to
      whole numbers only where the rounded points still give the plane back.

    "Give the plane back" is :data:`PLANE_RULE` with half its tolerances, so
    the six decimals the VMF is written with never push a side over it.
    Both kinds also hold for vbsp, which reads the points as floats (a
    thousandth of a unit at 16384): whole numbers are exact, and across a
    triangle thousands of units wide a thousandth tilts the plane by 1e-7.

    With ``origin`` (per side), ``dist`` is the plane's distance in its
    model's space, the model placed at ``origin`` (``normal`` is already
    turned): vbsp moves a brush entity's planes by its origin after reading
    them, so the rule holds in the model's space.
    """
    normal = np.asarray(normal, np.float64).reshape(-1, 3)
    dist = np.asarray(dist, np.float64).reshape(-1)
    n = len(normal)
    if not n:
        return np.zeros((0, 3, 3))
    unit, target, slack = _plane_target(normal, dist)
    if origin is not None:
        target = target + np.einsum("nj,nj->n", unit, np.asarray(origin, np.float64).reshape(-1, 3))
    # Every polygon padded to the largest one's corners, in runs of sides: whole, the padded
    # arrays took 23 MiB on a 9 MB map (one 40-corner side pads all 12,000 to 40).
    width = max(int(np.diff(offsets).max(initial=0)), 3)
    step = max(_CORNERS_PER_PASS // width, 1)
    out = np.empty((n, 3, 3))
    # A hostile plane (infinite distance, NaN normal) gives NaN points, which the writer writes as 0.
    with np.errstate(invalid="ignore", over="ignore"):
        for lo in range(0, n, step):
            hi = min(lo + step, n)
            out[lo:hi] = _points_of_sides(points, offsets[lo : hi + 1], unit[lo:hi], target[lo:hi], slack[lo:hi],
                                          width)
    return out


def _plane_target(normal: np.ndarray, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unit normal of each plane, the distance its points are put at, and how far that is from either reading.

    A stored normal is unit only to float precision (a few 1e-7 off), so a
    plane far from the origin has two distances a few thousandths apart:
    the stored one (``n . p = d``: where vbsp's points lay) and the unit
    plane's (``d / |n|``).  The points go halfway, the slack off both.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        length = np.linalg.norm(normal, axis=1)
        scale = np.where(length > 0, length, 1.0)
        unit_dist = dist / scale
        return normal / scale[:, None], (dist + unit_dist) / 2, np.abs(unit_dist - dist) / 2


#: Padded polygon corners :func:`plane_points` handles per pass (a few hundred bytes each).
_CORNERS_PER_PASS = 1 << 14
#: The plane a side's written points define is its plane: each normal component within the first
#: value, the distance within the second (vbsp finds a plane again within 1e-5 and 0.01).
PLANE_RULE = (1e-5, 1e-3)
#: Decimals a VMF's plane points are written (and read back) with.
WRITTEN_DECIMALS = 6
#: How far from the origin plane points may reach on each axis: Hammer's map extent.
MAP_EXTENT = 16384.0
#: The least half-leg of a triangle made from the plane, in units.
MIN_SPREAD = 64.0


def defined_planes(points: np.ndarray, decimals: int | None = WRITTEN_DECIMALS) -> tuple[np.ndarray, np.ndarray]:
    """The planes ``(unit normals, dists)`` three points each define, as Hammer reads them.

    Hammer's ``(p0 - p1) x (p2 - p1)`` normalized, ``dist = normal . p0``, in
    double precision, from the points rounded to ``decimals`` (as written;
    None: as given).  Points in a line give a zero normal.
    """
    pts = np.asarray(points, np.float64).reshape(-1, 3, 3)
    if decimals is not None:
        pts = np.round(pts, decimals)
    normal = np.cross(pts[:, 0] - pts[:, 1], pts[:, 2] - pts[:, 1])
    length = np.linalg.norm(normal, axis=1)
    normal = normal / np.where(length > 0, length, 1.0)[:, None]
    return normal, np.einsum("ij,ij->i", normal, pts[:, 0])


def defined_plane_errors(points: np.ndarray, normal: np.ndarray, dist: np.ndarray,
                         decimals: int | None = WRITTEN_DECIMALS, origin: np.ndarray | None = None,
                         rotation: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How far the plane each point triple defines is from ``(normal, dist)``: largest normal component, distance.

    Compare with :data:`PLANE_RULE`.  The distance is the larger error
    against both readings of a normal that is unit only to float precision:
    ``dist`` as stored, and ``dist / |normal|``.  A triple in a line is off
    by the whole normal.  With ``origin`` and ``rotation`` (per triple), the
    points are placed by them and ``(normal, dist)`` is in the model's space
    (where vbsp looks the plane up): the defined plane is moved back first.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return _errors(points, normal, dist, decimals, origin, rotation)


def _errors(points: np.ndarray, normal: np.ndarray, dist: np.ndarray, decimals: int | None,
            origin: np.ndarray | None, rotation: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    got_n, got_d = defined_planes(points, decimals)
    if origin is not None:
        got_d = got_d - np.einsum("ij,ij->i", got_n, np.asarray(origin, np.float64).reshape(-1, 3))
    if rotation is not None:
        got_n = np.einsum("sji,sj->si", np.asarray(rotation, np.float64).reshape(-1, 3, 3), got_n)
    normal = np.asarray(normal, np.float64).reshape(-1, 3)
    unit, target, slack = _plane_target(normal, np.asarray(dist, np.float64).reshape(-1))
    err_n = np.maximum(np.abs(got_n - normal).max(axis=1, initial=0.0), np.abs(got_n - unit).max(axis=1, initial=0.0))
    return err_n, np.abs(got_d - target) + slack


def _gives_plane_back(points: np.ndarray, unit: np.ndarray, target: np.ndarray, slack: np.ndarray) -> np.ndarray:
    """The triples that define their plane (``target`` give or take ``slack``) within half of :data:`PLANE_RULE`."""
    got_n, got_d = defined_planes(points)
    with np.errstate(invalid="ignore"):
        ok: np.ndarray = ((np.abs(got_n - unit).max(axis=1, initial=0.0) <= PLANE_RULE[0] / 2)
                          & (np.abs(got_d - target) + slack <= PLANE_RULE[1] / 2))
    return ok


def _points_of_sides(points: np.ndarray, offsets: np.ndarray, unit: np.ndarray, dist: np.ndarray,
                     slack: np.ndarray, width: int) -> np.ndarray:
    """:func:`plane_points` of some sides (``offsets`` into ``points``, unit normals)."""
    n = len(unit)
    pts, valid = _padded(points, offsets, width)
    # Onto the plane: the clipper snapped corners to the grid.
    pts = pts - unit[:, None, :] * (np.einsum("nkj,nj->nk", pts, unit) - dist[:, None])[:, :, None]
    rows = np.arange(n)
    p0 = pts[:, 0]
    far = np.where(valid, np.linalg.norm(pts - p0[:, None], axis=2), -1.0)
    i1 = np.argmax(far, axis=1)
    p1 = pts[rows, i1]
    area = np.where(valid, np.linalg.norm(np.cross(p1[:, None] - p0[:, None], pts - p0[:, None]), axis=2), -1.0)
    i2 = np.argmax(area, axis=1)
    # Keep the polygon's order: the two chosen corners after corner 0, sorted.
    lo, hi = np.minimum(i1, i2), np.maximum(i1, i2)
    corners = _snapped_points(np.stack([p0, pts[rows, lo], pts[rows, hi]], axis=1), unit, dist, pts, valid)
    whole = np.all(corners == np.round(corners), axis=(1, 2)) & (lo != hi)
    keep = whole & _gives_plane_back(corners, unit, dist, slack)
    count = valid.sum(axis=1)
    centre = np.where(valid[:, :, None], pts, 0.0).sum(axis=1) / np.maximum(count, 1)[:, None]
    centre = np.where((count > 0)[:, None], centre, unit * dist[:, None])
    spread = _spread_points(unit, dist, slack, centre)
    return np.where(keep[:, None, None], corners, spread) + 0.0  # no -0.0


#: How far from its plane a plane point, or a corner of the side, may be after rounding.
SNAP_ON_PLANE = 1e-4


def _snapped_points(out: np.ndarray, unit: np.ndarray, dist: np.ndarray, pts: np.ndarray,
                    valid: np.ndarray) -> np.ndarray:
    """``out`` with each side's points rounded to whole numbers where that keeps the side's plane."""
    rounded = np.round(out)
    near = np.abs(np.einsum("npj,nj->np", rounded, unit) - dist[:, None]) <= SNAP_ON_PLANE
    trial = np.where(near[:, :, None], rounded, out)
    normal = np.cross(trial[:, 2] - trial[:, 0], trial[:, 1] - trial[:, 0])
    length = np.linalg.norm(normal, axis=1)
    normal /= np.where(length > 0, length, 1.0)[:, None]
    d = np.einsum("nj,nj->n", normal, trial[:, 0])
    off = np.abs(np.einsum("nkj,nj->nk", pts, normal) - d[:, None])
    worst = np.where(valid, off, 0.0).max(axis=1)
    keep = (length > 0) & (worst <= SNAP_ON_PLANE) & (np.einsum("nj,nj->n", normal, unit) > 0)
    return np.where(keep[:, None, None], trial, out)


def _spread_points(unit: np.ndarray, dist: np.ndarray, slack: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """A right triangle on each plane, centred on ``centre`` projected onto it, legs as long as the map allows."""
    centre = centre - unit * (np.einsum("nk,nk->n", unit, centre) - dist)[:, None]
    axis = np.zeros_like(unit)
    axis[np.arange(len(unit)), np.argmin(np.abs(unit), axis=1)] = 1.0
    u = np.cross(unit, axis)
    u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-300)
    w = np.cross(u, unit)  # w x u = normal: (p2 - p0) x (p1 - p0) faces out
    # Every corner within the map's extent: |centre| + half * (|u| + |w|) per axis, |u_i| + |w_i| <= sqrt 2.
    reach = MAP_EXTENT - np.abs(np.where(np.isfinite(centre), centre, 0.0)).max(axis=1)
    half = np.floor(np.maximum(reach / np.sqrt(2.0), MIN_SPREAD))[:, None]
    raw = np.stack([centre - half * (u + w), centre + half * (u - w), centre + half * (w - u)], axis=1)
    rounded = np.round(raw)
    # The rounded points on the plane too: a plane a few 1e-6 off 45 degrees passes the rule, yet
    # points of the exact 45 degrees 10,000 units out are hundredths off it.
    on_plane = np.all(np.abs(np.einsum("npj,nj->np", rounded, unit) - dist[:, None]) <= SNAP_ON_PLANE, axis=1)
    keep = on_plane & _gives_plane_back(rounded, unit, dist, slack)
    return np.where(keep[:, None, None], rounded, raw)


#: Edge of the grid cells that keep a face from meeting the far-away sides of its plane.
CELL_SIZE = 256.0
#: A side covering more cells than this is a candidate for every face of its plane.
MAX_SIDE_CELLS = 64
_CELL_BITS = 11  # cell coordinates within +-1024 cells (+-262144 units)


def _cell_code(cells: np.ndarray) -> np.ndarray:
    """One non-negative integer per 3D cell coordinate (0 is kept for "every cell")."""
    c = np.clip(cells.astype(np.int64) + (1 << (_CELL_BITS - 1)), 0, (1 << _CELL_BITS) - 1)
    return ((c[:, 0] << (2 * _CELL_BITS)) | (c[:, 1] << _CELL_BITS) | c[:, 2]) + 1


def candidate_pairs(face_plane: np.ndarray, side_plane: np.ndarray, face_model: np.ndarray | None = None,
                    side_model: np.ndarray | None = None, face_point: np.ndarray | None = None,
                    side_box: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (face, side, flipped) with the face on the side's plane (or its twin) in the same model.

    Faces and sides are grouped by (model, plane): a brush entity's faces are
    only paired with its own model's sides.  Without that, hundreds of
    brush entities built around their origins (coplanar in model space)
    pair every face with every side, a cost quadratic in their number.
    With ``face_point`` (a point of each face, its centroid) and ``side_box``
    (``(mins, maxs)`` of each side), a face also meets only the sides whose
    box reaches its :data:`CELL_SIZE` grid cell (or that span more than
    :data:`MAX_SIDE_CELLS` cells), so a floor of many coplanar world brushes
    stays linear too.
    """
    face_plane = np.asarray(face_plane, np.int64)
    side_plane = np.asarray(side_plane, np.int64)
    n_sides = len(side_plane)
    fm = np.zeros(len(face_plane), np.int64) if face_model is None else np.asarray(face_model, np.int64)
    sm = np.zeros(n_sides, np.int64) if side_model is None else np.asarray(side_model, np.int64)
    span = int(max(face_plane.max(initial=0), side_plane.max(initial=0))) + 2
    groups, side_group = np.unique(sm * span + side_plane, return_inverse=True)
    side_group = side_group.reshape(-1).astype(np.int64)
    side_rows = np.arange(n_sides)
    side_cell = np.zeros(n_sides, np.int64)
    if face_point is not None and side_box is not None and n_sides:
        # Boxes of a malformed map may be NaN or huge: such sides go in the "every cell" bucket.
        finite = np.all(np.isfinite(side_box[0]) & np.isfinite(side_box[1]), axis=1)
        lo_f = np.where(finite[:, None], np.floor((side_box[0] - CONTAIN_EPSILON) / CELL_SIZE), 0.0)
        hi_f = np.where(finite[:, None], np.floor((side_box[1] + CONTAIN_EPSILON) / CELL_SIZE), 0.0)
        # Beyond the cell grid (huge coordinates) a side goes in the "every cell" bucket too,
        # before anything is cast to integers.
        in_grid = np.all((np.abs(lo_f) <= 1 << _CELL_BITS) & (np.abs(hi_f) <= 1 << _CELL_BITS), axis=1)
        small = finite & in_grid & np.all(hi_f - lo_f < MAX_SIDE_CELLS, axis=1) & np.all(hi_f >= lo_f, axis=1)
        lo = np.where(small[:, None], lo_f, 0.0).astype(np.int64)
        extent = np.where(small[:, None], hi_f - lo_f + 1, 1.0).astype(np.int64)
        count = extent.prod(axis=1)
        small &= count <= MAX_SIDE_CELLS
        reps = np.where(small, count, 1)
        side_rows = np.repeat(side_rows, reps)
        k = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        e = extent[side_rows]
        cells = lo[side_rows] + np.stack([k // (e[:, 1] * e[:, 2]), (k // e[:, 2]) % e[:, 1], k % e[:, 2]], axis=1)
        side_cell = np.where(small[side_rows], _cell_code(cells), 0)
        side_group = side_group[side_rows]
    side_key = side_group * (1 << (3 * _CELL_BITS + 1)) + side_cell
    order = np.argsort(side_key, kind="stable")
    sorted_keys = side_key[order]
    face_cells = [np.zeros(len(face_plane), np.int64)]
    if face_point is not None and side_box is not None:
        point = np.asarray(face_point, np.float64)
        cell = np.floor(np.where(np.isfinite(point), point, 0.0) / CELL_SIZE)
        face_cells = [_cell_code(np.clip(cell, -(1 << _CELL_BITS), 1 << _CELL_BITS)), face_cells[0]]
    pairs_face, pairs_side, pairs_flip = [], [], []
    for flip in (0, 1):
        wanted = np.where(fm >= 0, fm * span + (face_plane ^ flip), -1)
        at = np.clip(np.searchsorted(groups, wanted), 0, max(len(groups) - 1, 0))
        known = (wanted >= 0) & (len(groups) > 0) & (groups[at] == wanted) if len(groups) else wanted < -1
        for cell in face_cells:
            key = np.where(known, at * (1 << (3 * _CELL_BITS + 1)) + cell, -1)
            lo_at = np.searchsorted(sorted_keys, key, "left")
            hi_at = np.searchsorted(sorted_keys, key, "right")
            num = np.where(known, hi_at - lo_at, 0)
            f = np.repeat(np.arange(len(face_plane)), num)
            pos = np.repeat(lo_at - np.cumsum(num) + num, num) + np.arange(int(num.sum()))
            pairs_face.append(f)
            pairs_side.append(side_rows[order[pos]])
            pairs_flip.append(np.full(len(f), flip))
    return np.concatenate(pairs_face), np.concatenate(pairs_side), np.concatenate(pairs_flip)


def face_sides(faces: np.ndarray, face_points: np.ndarray, face_offsets: np.ndarray,
               brushes: BrushSet, side_ok: np.ndarray | None = None, *, face_model: np.ndarray | None = None,
               side_model: np.ndarray | None = None) -> np.ndarray:
    """The brush side row (into ``brushes``' side arrays) each face was cut from, or -1.

    ``face_points`` / ``face_offsets``: the corners of every face (as from
    :func:`sourcebsp.model.geometry.face_polygons`).  ``side_ok`` (per side
    row) limits the candidates; ``face_model`` / ``side_model`` (the model
    of each face and side, -1: none) keep each face to its own model's sides.
    """
    n_faces = len(faces)
    out = np.full(n_faces, -1, np.int64)
    n_sides = len(brushes.side_index)
    if not n_faces or not n_sides:
        return out
    counts = np.diff(face_offsets)
    owner = np.repeat(np.arange(n_faces), counts)
    centroid = np.zeros((n_faces, 3))
    np.add.at(centroid, owner, face_points)
    centroid /= np.maximum(counts, 1)[:, None]
    fm = np.zeros(n_faces, np.int64) if face_model is None else np.asarray(face_model, np.int64).copy()
    fm[counts < 3] = -1
    sm = np.zeros(n_sides, np.int64) if side_model is None else np.asarray(side_model, np.int64).copy()
    if side_ok is not None:
        sm[~np.asarray(side_ok, bool)] = -2  # never equal to a face's model
    lo_box, hi_box = _side_boxes(brushes)
    pf, ps, flipped = candidate_pairs(faces["planenum"], brushes.planenum, fm, sm, centroid, (lo_box, hi_box))
    # Cheap rejection first: the centroid must lie in the side's bounding box.
    c = centroid[pf]
    near = np.all((c >= lo_box[ps] - CONTAIN_EPSILON) & (c <= hi_box[ps] + CONTAIN_EPSILON), axis=1)
    pf, ps, flipped = pf[near], ps[near], flipped[near]
    if not len(pf):
        return out
    # How far the face centroid lies outside the side polygon, in runs of (pair, side edge) rows.
    worst = np.zeros(len(pf))
    for lo, hi in _runs(brushes.side_counts[ps]):
        worst[lo:hi] = _centroid_outside(centroid[pf[lo:hi]], ps[lo:hi], brushes)
    inside = worst <= CONTAIN_EPSILON
    same_tex = faces["texinfo"].astype(np.int64)[pf] == brushes.texinfo[ps]
    # Best candidate per face: inside, then not flipped, then same texinfo, then least outside.
    score = inside * 4.0 + (flipped == 0) * 2.0 + same_tex * 1.0 - np.clip(worst, 0, 1) * 0.5
    score = np.where(inside, score, -np.inf)
    best = np.lexsort((-score, pf))
    first_of_face = np.r_[True, pf[best][1:] != pf[best][:-1]]
    chosen = best[first_of_face]
    good = np.isfinite(score[chosen])
    out[pf[chosen][good]] = ps[chosen][good]
    return out


#: Rows :func:`face_sides` and :func:`faces_within` test per pass ((candidate, side edge) and
#: (face corner, side edge) pairs), at about 250 bytes each: all at once they took 16 and
#: 68 MiB on a 9 MB map (the second was most of its decompile's peak).
_PAIRS_PER_PASS = 1 << 13


def faces_within(face_points: np.ndarray, face_offsets: np.ndarray, face_side: np.ndarray,
                 brushes: BrushSet) -> np.ndarray:
    """Bool per face: every corner of the face lies inside its side's polygon (within 0.1 units).

    A face vbsp merged across the sides of several coplanar brushes has its
    centroid in one of them but not all its corners; such faces say which
    side they are on, but their Hammer id may be another side's.  Faces go
    in runs of a few thousand (corner, edge) pairs.
    """
    out = np.zeros(len(face_side), bool)
    faces = np.flatnonzero(face_side >= 0)
    if not len(faces):
        return out
    sides = face_side[faces]
    for lo, hi in _runs(np.diff(face_offsets)[faces] * brushes.side_counts[sides]):
        out[faces[lo:hi]] = _corners_within(face_points, face_offsets, faces[lo:hi], sides[lo:hi], brushes)
    return out


def _runs(rows: np.ndarray) -> list[tuple[int, int]]:
    """``(start, stop)`` runs of items that make about ``_PAIRS_PER_PASS`` rows together (``rows``
    per item); an item of more rows is a run of its own."""
    ends = np.cumsum(rows)
    total = int(ends[-1]) if len(ends) else 0
    cuts = np.searchsorted(ends, np.arange(_PAIRS_PER_PASS, total, _PAIRS_PER_PASS), "right")
    bounds = sorted_unique(np.concatenate([[0], cuts, [len(rows)]])).tolist()
    return list(zip(bounds[:-1], bounds[1:]))


def _centroid_outside(centroid: np.ndarray, sides: np.ndarray, brushes: BrushSet) -> np.ndarray:
    """Per (face centroid, side): the largest signed distance of the point outside an edge of the side."""
    scount = brushes.side_counts[sides]
    edge_pair = np.repeat(np.arange(len(sides)), scount)
    start = brushes.poly_offsets[sides]
    k = np.arange(int(scount.sum())) - np.repeat(np.cumsum(scount) - scount, scount)
    a = brushes.points[start[edge_pair] + k]
    b = brushes.points[start[edge_pair] + (k + 1) % scount[edge_pair]]
    outside = _outside_edges(a, b, centroid[edge_pair], brushes.normal[sides[edge_pair]])
    first = np.r_[0, np.cumsum(scount)[:-1]]
    return np.maximum.reduceat(outside, first) if len(outside) else np.zeros(len(sides))


def _corners_within(face_points: np.ndarray, face_offsets: np.ndarray, faces: np.ndarray, sides: np.ndarray,
                    brushes: BrushSet) -> np.ndarray:
    """:func:`faces_within` for some faces, each with its side."""
    fcount = np.diff(face_offsets)[faces]
    scount = brushes.side_counts[sides]
    # (face corner, side edge) pairs.
    pairs = fcount * scount
    owner = np.repeat(np.arange(len(faces)), pairs)
    k = np.arange(int(pairs.sum())) - np.repeat(np.cumsum(pairs) - pairs, pairs)
    corner = k // scount[owner]
    edge = k % scount[owner]
    c = face_points[face_offsets[faces][owner] + corner]
    start = brushes.poly_offsets[sides][owner]
    a = brushes.points[start + edge]
    b = brushes.points[start + (edge + 1) % scount[owner]]
    outside = _outside_edges(a, b, c, brushes.normal[sides][owner])
    worst = np.full(len(faces), -np.inf)
    np.maximum.at(worst, owner, outside)
    return worst <= CONTAIN_EPSILON


def _outside_edges(a: np.ndarray, b: np.ndarray, point: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """Per row: how far ``point`` lies outside the edge ``a -> b`` of a clockwise polygon facing ``normal``."""
    edge = b - a
    length = np.linalg.norm(edge, axis=1)
    return np.asarray(np.einsum("ij,ij->i", np.cross(edge, point - a), normal) / np.where(length > 0, length, 1.0))


def _side_boxes(brushes: BrushSet) -> tuple[np.ndarray, np.ndarray]:
    """Bounding box of every side polygon: ``(mins, maxs)``, ``(S, 3)`` each."""
    starts = brushes.poly_offsets[:-1]
    if not len(brushes.points):
        empty = np.zeros((len(starts), 3))
        return empty, empty
    return (np.minimum.reduceat(brushes.points, starts, axis=0),
            np.maximum.reduceat(brushes.points, starts, axis=0))


def prism_planes(polygon: np.ndarray, normal: np.ndarray, depth: float) -> tuple[np.ndarray, np.ndarray]:
    """Planes ``(normals (K+2, 3), dists (K+2,))`` of ``polygon`` extruded ``depth`` units behind it.

    Row 0 is the polygon's own plane, row 1 the back, then one per edge.
    ``polygon`` is clockwise seen from the front (from ``normal``).
    """
    polygon = np.asarray(polygon, np.float64)
    normal = np.asarray(normal, np.float64)
    normal = normal / np.linalg.norm(normal)
    dist = float(np.mean(polygon @ normal))
    a = polygon
    b = np.roll(polygon, -1, axis=0)
    side = np.cross(normal[None, :], b - a)  # outward for a clockwise polygon
    length = np.linalg.norm(side, axis=1)
    keep = length > 1e-6
    side = side[keep] / length[keep, None]
    side_d = np.einsum("ij,ij->i", side, a[keep])
    normals = np.concatenate([normal[None], -normal[None], side])
    dists = np.concatenate([[dist], [-(dist - depth)], side_d])
    return normals, dists


def face_corner_points(bsp: MapReader, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Corner positions and offsets of ``faces`` (polygons as stored, clockwise)."""
    indices, offsets = face_polygons(bsp, faces)
    return vertex_points(bsp, indices), offsets

"""Geometry shared by the VMF decompiler: plane points, faces to brush sides, prisms.

* :func:`plane_points` picks, for each side polygon, the three points
  Hammer's ``"plane"`` key is written from, on the BSP plane itself and
  spanning the side (three of its corners projected onto the plane, kept in
  polygon (clockwise) order; made from the plane for slivers), rounded to
  whole numbers only where that keeps every corner on the plane.
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

from ..model.brushes import BrushSet
from ..protocols import MapReader
from ..numeric import sorted_unique

__all__ = ["plane_points", "candidate_pairs", "face_sides", "faces_within", "prism_planes", "CONTAIN_EPSILON", "SNAP_ON_PLANE"]

CONTAIN_EPSILON = 0.1


def _padded(points: np.ndarray, offsets: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The polygons' corners padded to ``width`` each, and which are real."""
    counts = np.diff(offsets)
    n = len(counts)
    idx = np.arange(width)
    valid = idx[None, :] < counts[:, None]
    src = np.where(valid, offsets[:-1, None] + idx[None, :], 0)
    return (points[src] if len(points) else np.zeros((n, width, 3))), valid


def plane_points(points: np.ndarray, offsets: np.ndarray, normal: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Three points per polygon for a VMF ``"plane"`` key, ``(N, 3, 3)``, clockwise from outside.

    The points lie on the plane ``(normal, dist)`` itself, not merely near
    it: the polygon's corners (snapped to the grid by the clipper, so a few
    thousandths off an oblique plane) are first projected onto the plane.
    Of those, the first corner, the corner farthest from it and the corner
    making the largest triangle with both span the side.  Each point is then
    rounded to whole numbers where the rounded point is still within
    :data:`SNAP_ON_PLANE` of the plane, and the rounding is kept only for
    sides whose three points then still give the plane back at every corner
    (within :data:`SNAP_ON_PLANE`).  Sides too thin to span a stable
    triangle get three points made from the plane around their centre.
    """
    normal = np.asarray(normal, np.float64).reshape(-1, 3)
    dist = np.asarray(dist, np.float64).reshape(-1)
    n = len(normal)
    if not n:
        return np.zeros((0, 3, 3))
    length = np.linalg.norm(normal, axis=1)
    unit = normal / np.where(length > 0, length, 1.0)[:, None]
    dist = dist / np.where(length > 0, length, 1.0)
    # Every polygon padded to the largest one's corners, in runs of sides: whole, the padded
    # arrays took 23 MiB on a 9 MB map (one 40-corner side pads all 12,000 to 40).
    width = max(int(np.diff(offsets).max(initial=0)), 3)
    step = max(_CORNERS_PER_PASS // width, 1)
    out = np.empty((n, 3, 3))
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        out[lo:hi] = _points_of_sides(points, offsets[lo : hi + 1], unit[lo:hi], dist[lo:hi], width)
    return out


#: Padded polygon corners :func:`plane_points` handles per pass (a few hundred bytes each).
_CORNERS_PER_PASS = 1 << 14


def _points_of_sides(points: np.ndarray, offsets: np.ndarray, unit: np.ndarray, dist: np.ndarray,
                     width: int) -> np.ndarray:
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
    out = np.stack([p0, pts[rows, lo], pts[rows, hi]], axis=1)
    got = np.cross(out[:, 2] - out[:, 0], out[:, 1] - out[:, 0])
    twice_area = np.linalg.norm(got, axis=1)
    span = far.max(axis=1)
    # A stable triangle: not a sliver (height at least 1 unit, or a tenth of its base) and facing out.
    bad = (lo == hi) | (twice_area <= np.maximum(np.minimum(span, 10.0), 1e-9))
    bad |= np.einsum("nk,nk->n", got, unit) <= 0
    if bad.any():
        out[bad] = _points_from_plane(unit[bad], dist[bad], pts[bad], valid[bad])
    return _snapped_points(out, unit, dist, pts, valid)


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
    return np.where(keep[:, None, None], trial, out) + 0.0  # no -0.0


def _points_from_plane(normal: np.ndarray, dist: np.ndarray, pts: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Three points of each plane around the polygon's centre, at least 64 units apart."""
    count = np.maximum(valid.sum(axis=1), 1)
    centre = np.where(valid[:, :, None], pts, 0.0).sum(axis=1) / count[:, None]
    centre -= normal * (np.einsum("nk,nk->n", normal, centre) - dist)[:, None]
    axis = np.zeros_like(normal)
    axis[np.arange(len(normal)), np.argmin(np.abs(normal), axis=1)] = 1.0
    u = np.cross(normal, axis)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    w = np.cross(u, normal)  # (p0 + w - p0) x (p0 + u - p0) = w x u = normal
    radius = np.where(valid, np.linalg.norm(pts - centre[:, None], axis=2), 0.0).max(axis=1)
    size = np.maximum(radius, 64.0)[:, None]
    return np.stack([centre, centre + size * u, centre + size * w], axis=1)


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
    from ..model.geometry import face_polygons, vertex_points

    indices, offsets = face_polygons(bsp, faces)
    return vertex_points(bsp, indices), offsets

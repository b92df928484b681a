"""Geometry shared by the VMF decompiler: plane points, faces to brush sides, prisms.

* :func:`plane_points` picks, for each side polygon, the three corners
  Hammer's ``"plane"`` key is written from: the first corner, the corner
  farthest from it, and the corner that makes the largest triangle with
  those two, kept in polygon (clockwise) order.  When the three points do
  not give back the side's plane within 1e-6 (normal) and 0.01 units
  (distance), as on a sliver, three points are made from the plane itself.
* :func:`face_sides` maps faces to the brush sides they were cut from: a
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

from typing import Any

import numpy as np

from ..model.brushes import BrushSet

__all__ = ["plane_points", "face_sides", "faces_within", "prism_planes", "CONTAIN_EPSILON"]

CONTAIN_EPSILON = 0.1


def _padded(points: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    counts = np.diff(offsets)
    width = max(int(counts.max(initial=0)), 3)
    n = len(counts)
    idx = np.arange(width)
    valid = idx[None, :] < counts[:, None]
    src = np.where(valid, offsets[:-1, None] + idx[None, :], 0)
    return (points[src] if len(points) else np.zeros((n, width, 3))), valid


def plane_points(points: np.ndarray, offsets: np.ndarray, normal: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Three points per polygon for a VMF ``"plane"`` key, ``(N, 3, 3)``, clockwise from outside."""
    normal = np.asarray(normal, np.float64).reshape(-1, 3)
    dist = np.asarray(dist, np.float64).reshape(-1)
    n = len(normal)
    if not n:
        return np.zeros((0, 3, 3))
    pts, valid = _padded(points, offsets)
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
    length = np.linalg.norm(got, axis=1)
    got_n = got / np.where(length > 0, length, 1.0)[:, None]
    bad = (lo == hi) | (length <= 0) | (np.einsum("nk,nk->n", got_n, normal) < 1 - 1e-6)
    bad |= np.abs(np.einsum("nk,nk->n", normal, out[:, 0]) - dist) > 0.01
    bad |= np.abs(np.einsum("nk,nk->n", normal, out[:, 1]) - dist) > 0.01
    bad |= np.abs(np.einsum("nk,nk->n", normal, out[:, 2]) - dist) > 0.01
    if bad.any():
        out[bad] = _points_from_plane(normal[bad], dist[bad], pts[bad], valid[bad])
    return out


def _points_from_plane(normal: np.ndarray, dist: np.ndarray, pts: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Three points of each plane, 64 units apart, around the polygon's centre."""
    count = np.maximum(valid.sum(axis=1), 1)
    centre = np.where(valid[:, :, None], pts, 0.0).sum(axis=1) / count[:, None]
    centre -= normal * (np.einsum("nk,nk->n", normal, centre) - dist)[:, None]
    axis = np.zeros_like(normal)
    axis[np.arange(len(normal)), np.argmin(np.abs(normal), axis=1)] = 1.0
    u = np.cross(normal, axis)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    w = np.cross(u, normal)  # (p0 + w - p0) x (p0 + u - p0) = w x u = normal
    return np.stack([centre, centre + 64.0 * u, centre + 64.0 * w], axis=1)


def face_sides(faces: np.ndarray, face_points: np.ndarray, face_offsets: np.ndarray,
               brushes: BrushSet, side_ok: np.ndarray | None = None) -> np.ndarray:
    """The brush side row (into ``brushes``' side arrays) each face was cut from, or -1.

    ``face_points`` / ``face_offsets``: the corners of every face (as from
    :func:`sourcebsp.model.geometry.face_polygons`).  ``side_ok`` (per side
    row) limits the candidates.
    """
    n_faces = len(faces)
    out = np.full(n_faces, -1, np.int64)
    n_sides = len(brushes.side_index)
    if not n_faces or not n_sides:
        return out
    counts = np.diff(face_offsets)
    has = counts >= 3
    owner = np.repeat(np.arange(n_faces), counts)
    centroid = np.zeros((n_faces, 3))
    np.add.at(centroid, owner, face_points)
    centroid /= np.maximum(counts, 1)[:, None]
    allowed = np.ones(n_sides, bool) if side_ok is None else np.asarray(side_ok, bool)
    side_rows = np.flatnonzero(allowed)
    order = side_rows[np.argsort(brushes.planenum[side_rows], kind="stable")]
    sorted_planes = brushes.planenum[order]
    face_plane = faces["planenum"].astype(np.int64)
    pairs_face, pairs_side, pairs_flip = [], [], []
    for flip in (0, 1):
        key = face_plane ^ flip
        lo = np.searchsorted(sorted_planes, key, "left")
        hi = np.searchsorted(sorted_planes, key, "right")
        num = np.where(has, hi - lo, 0)
        f = np.repeat(np.arange(n_faces), num)
        pos = np.repeat(lo - np.cumsum(num) + num, num) + np.arange(int(num.sum()))
        pairs_face.append(f)
        pairs_side.append(order[pos])
        pairs_flip.append(np.full(len(f), flip))
    pf = np.concatenate(pairs_face)
    ps = np.concatenate(pairs_side)
    flipped = np.concatenate(pairs_flip)
    # Cheap rejection first: the centroid must lie in the side's bounding box.
    lo_box, hi_box = _side_boxes(brushes)
    c = centroid[pf]
    near = np.all((c >= lo_box[ps] - CONTAIN_EPSILON) & (c <= hi_box[ps] + CONTAIN_EPSILON), axis=1)
    pf, ps, flipped = pf[near], ps[near], flipped[near]
    if not len(pf):
        return out
    # Signed distance of the face centroid outside each edge of the side polygon.
    scount = brushes.side_counts[ps]
    edge_pair = np.repeat(np.arange(len(pf)), scount)
    start = brushes.poly_offsets[ps]
    k = np.arange(int(scount.sum())) - np.repeat(np.cumsum(scount) - scount, scount)
    a = brushes.points[start[edge_pair] + k]
    b = brushes.points[start[edge_pair] + (k + 1) % scount[edge_pair]]
    c = centroid[pf[edge_pair]]
    n = brushes.normal[ps[edge_pair]]
    edge = b - a
    elen = np.linalg.norm(edge, axis=1)
    outside = np.einsum("ij,ij->i", np.cross(edge, c - a), n) / np.where(elen > 0, elen, 1.0)
    first = np.r_[0, np.cumsum(scount)[:-1]]
    worst = np.maximum.reduceat(outside, first) if len(outside) else np.zeros(0)
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


def faces_within(face_points: np.ndarray, face_offsets: np.ndarray, face_side: np.ndarray,
                 brushes: BrushSet) -> np.ndarray:
    """Bool per face: every corner of the face lies inside its side's polygon (within 0.1 units).

    A face vbsp merged across the sides of several coplanar brushes has its
    centroid in one of them but not all its corners; such faces say which
    side they are on, but their Hammer id may be another side's.
    """
    out = np.zeros(len(face_side), bool)
    faces = np.flatnonzero(face_side >= 0)
    if not len(faces):
        return out
    sides = face_side[faces]
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
    n = brushes.normal[sides][owner]
    e = b - a
    length = np.linalg.norm(e, axis=1)
    outside = np.einsum("ij,ij->i", np.cross(e, c - a), n) / np.where(length > 0, length, 1.0)
    worst = np.full(len(faces), -np.inf)
    np.maximum.at(worst, owner, outside)
    out[faces] = worst <= CONTAIN_EPSILON
    return out


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


def face_corner_points(bsp: Any, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Corner positions and offsets of ``faces`` (polygons as stored, clockwise)."""
    from ..model.geometry import face_polygons, vertex_points

    indices, offsets = face_polygons(bsp, faces)
    return vertex_points(bsp, indices), offsets

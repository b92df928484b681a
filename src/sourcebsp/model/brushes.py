"""Brush solids: the polygon of every brush side, and which model owns each brush.

A ``dbrush_t`` is a convex solid given only by its planes (``dbrushside_t``
points at a plane whose normal faces out of the brush).  The polygon of a
side is the part of its plane inside every other plane of the brush: this
module starts each side from a square of half-size :data:`BIG` on its plane
and clips it by the brush's other planes (Sutherland-Hodgman), for every side
of every brush at once with numpy.  Brushes are bucketed by their number of
planes so that each bucket is one padded array.

Tolerances (in map units):

* :data:`ON_EPSILON` (0.01): a vertex closer than this to a clipping plane
  counts as on it (kept, no new vertex made), so near-parallel planes and
  planes through an existing corner do not create slivers;
* two sides of one brush whose normals differ by less than
  :data:`NORMAL_EPSILON` (1e-4 per component) and whose distances differ by
  less than :data:`DIST_EPSILON` (0.01) are one plane: the first is kept;
* a coordinate within :data:`SNAP_EPSILON` (0.005) of a whole number is
  rounded to it (vbsp stores planes as float32, so corners of grid-aligned
  brushes come back a few thousandths off the grid).

Bevel sides (``dbrushside_t.bevel``), which vbsp adds for collision and which
touch the brush without cutting it, are skipped.  A side whose polygon ends
with fewer than three corners does not bound the solid and is dropped.

Polygons wind clockwise seen from outside the brush (from the side the normal
points to), as Hammer's ``plane`` points do.

Brush ownership: a brush model's head node (``dmodel_t.headnode``) leads to
its leaves, and their ``LEAFBRUSHES`` lists name its brushes.  A brush that
any brush entity's model uses belongs to that model; the world (model 0)
keeps the rest.  Brushes no leaf refers to (vbsp writes every brush, even
those entirely outside the map) go to the model whose brush index range
encloses them, else to the world.

Untrusted input: :func:`build_brushes` first validates every brush's side
range, side plane numbers and planes, and sizes the clipping (which grows
with the square of a brush's sides) against the budget of
:mod:`sourcebsp.resources`, before any array is built.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..codecs.brushes import BRUSHSIDE
from ..codecs.geometry import PLANE
from ..errors import BspFormatError
from ..lump_ids import LumpId
from ..numeric import floats, sorted_unique
from ..resources import check_indices, check_memory, expand_ranges

if TYPE_CHECKING:
    from ..protocols import MapReader

__all__ = [
    "ON_EPSILON", "NORMAL_EPSILON", "DIST_EPSILON", "SNAP_EPSILON", "BIG",
    "BrushSide", "Brush", "BrushSet", "build_brushes", "clip_brushes", "clipping_bytes", "closed_brushes",
    "model_brushes", "brush_models_of", "leaf_models",
]

ON_EPSILON = 0.01
NORMAL_EPSILON = 1e-4
DIST_EPSILON = 0.01
SNAP_EPSILON = 0.005
#: Half-size of the starting square on each plane: beyond any map coordinate
#: (MAX_COORD_INTEGER is 16384; a few branches allow 32768).
BIG = float(1 << 17)


# ---- lumps ------------------------------------------------------------------------
def _check(index: np.ndarray, size: int, what: str, bsp: MapReader, lump: LumpId) -> None:
    if len(index) and (int(index.min()) < 0 or int(index.max()) >= size):
        bad = int(index.max()) if int(index.max()) >= size else int(index.min())
        raise BspFormatError(f"refers to {what} {bad}, but there are {size}", lump=lump.name,
                             offset=bsp.entry(lump).fileofs)


# ---- results ------------------------------------------------------------------------
@dataclass
class BrushSide:
    """One side of a brush: its plane, polygon and texture."""

    index: int  # index into BRUSHSIDES
    planenum: int
    normal: np.ndarray  # (3,) unit, out of the brush
    dist: float
    texinfo: int  # -1: none
    dispinfo: int
    vertices: np.ndarray  # (K, 3), clockwise seen from outside


@dataclass
class Brush:
    """One brush: its contents and the sides that bound it."""

    index: int
    contents: int
    sides: list[BrushSide]
    closed: bool

    @property
    def mins(self) -> np.ndarray:
        return np.asarray(np.min([s.vertices.min(0) for s in self.sides], axis=0))

    @property
    def maxs(self) -> np.ndarray:
        return np.asarray(np.max([s.vertices.max(0) for s in self.sides], axis=0))


@dataclass
class BrushSet:
    """The side polygons of a set of brushes, in flat arrays.

    Sides of brush ``b`` are rows ``brush_offsets[b]:brush_offsets[b + 1]``
    of the side arrays; side ``s``'s corners are
    ``points[poly_offsets[s]:poly_offsets[s + 1]]``.  Only sides that bound
    the solid are listed (bevels, duplicates and sides left with fewer than
    three corners are not).
    """

    contents: np.ndarray  # (B,) int
    brush_offsets: np.ndarray  # (B + 1,)
    side_index: np.ndarray  # (S,) index into BRUSHSIDES (or the input rows)
    planenum: np.ndarray  # (S,)
    normal: np.ndarray  # (S, 3) float64
    dist: np.ndarray  # (S,) float64
    texinfo: np.ndarray  # (S,)
    dispinfo: np.ndarray  # (S,)
    poly_offsets: np.ndarray  # (S + 1,)
    points: np.ndarray  # (P, 3) float64
    closed: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # (B,)

    def __len__(self) -> int:
        return len(self.contents)

    @property
    def num_sides(self) -> np.ndarray:
        return np.diff(self.brush_offsets)

    @property
    def side_brush(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.contents)), self.num_sides)

    @property
    def side_counts(self) -> np.ndarray:
        return np.diff(self.poly_offsets)

    def polygon(self, side: int) -> np.ndarray:
        return self.points[self.poly_offsets[side] : self.poly_offsets[side + 1]]

    def sides_of(self, brush: int) -> range:
        return range(int(self.brush_offsets[brush]), int(self.brush_offsets[brush + 1]))

    def brush(self, index: int) -> Brush:
        sides = [
            BrushSide(int(self.side_index[s]), int(self.planenum[s]), self.normal[s], float(self.dist[s]),
                      int(self.texinfo[s]), int(self.dispinfo[s]), self.polygon(s))
            for s in self.sides_of(index)
        ]
        closed = bool(self.closed[index]) if len(self.closed) else False
        return Brush(index, int(self.contents[index]), sides, closed)

    def __iter__(self) -> Iterator[Brush]:
        for b in range(len(self.contents)):
            yield self.brush(b)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mins, maxs)`` of every brush, ``(B, 3)`` each (NaN for a brush without sides)."""
        n = len(self.contents)
        mins = np.full((n, 3), np.nan)
        maxs = np.full((n, 3), np.nan)
        if not len(self.points):
            return mins, maxs
        point_brush = np.repeat(self.side_brush, self.side_counts)
        order_start = np.r_[0, np.cumsum(np.bincount(point_brush, minlength=n))[:-1]]
        has = np.bincount(point_brush, minlength=n) > 0
        order = np.argsort(point_brush, kind="stable")
        pts = self.points[order]
        idx = order_start[has]
        mins[has] = np.minimum.reduceat(pts, idx, axis=0)
        maxs[has] = np.maximum.reduceat(pts, idx, axis=0)
        return mins, maxs


# ---- clipping ---------------------------------------------------------------------
def _perpendicular(normal: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to each normal ``(N, 3)``."""
    axis = np.zeros_like(normal)
    # The world axis least aligned with the normal.
    axis[np.arange(len(normal)), np.argmin(np.abs(normal), axis=1)] = 1.0
    u = np.cross(normal, axis)
    return np.asarray(u / np.linalg.norm(u, axis=1, keepdims=True))


def _start_squares(normal: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """A clockwise (seen from the front) square of half-size BIG on each plane: ``(N, 4, 3)``."""
    u = _perpendicular(normal)
    v = np.cross(normal, u)  # (u, v, normal) is right-handed: u -> v turns counter-clockwise
    centre = normal * dist[:, None]
    corners = np.array([(1, -1), (-1, -1), (-1, 1), (1, 1)], np.float64) * BIG
    return np.asarray(centre[:, None, :] + corners[None, :, 0, None] * u[:, None, :] + corners[None, :, 1, None] * v[:, None, :])


def _clip(points: np.ndarray, counts: np.ndarray, normal: np.ndarray, dist: np.ndarray,
          active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep the part of each polygon behind its plane (``dot(n, p) - d <= ON_EPSILON``).

    ``points`` ``(R, K, 3)`` with ``counts`` valid corners per row; rows where
    ``active`` is False are returned unchanged.
    """
    rows, k, _ = points.shape
    idx = np.arange(k)
    valid = idx[None, :] < counts[:, None]
    d = np.einsum("rkj,rj->rk", points, normal) - dist[:, None]
    d = np.where(valid & active[:, None], d, -1.0)
    nxt = (idx[None, :] + 1) % np.maximum(counts[:, None], 1)
    p_next = np.take_along_axis(points, nxt[:, :, None], axis=1)
    d_next = np.take_along_axis(d, nxt, axis=1)
    front, back = d > ON_EPSILON, d < -ON_EPSILON
    front_next, back_next = d_next > ON_EPSILON, d_next < -ON_EPSILON
    keep = valid & ~front
    crossing = valid & ((front & back_next) | (back & front_next))
    t = d / np.where(crossing, d - d_next, 1.0)
    cut = points + (p_next - points) * t[:, :, None]
    candidates = np.stack([points, cut], axis=2).reshape(rows, 2 * k, 3)
    mask = np.stack([keep, crossing], axis=2).reshape(rows, 2 * k)
    new_counts = mask.sum(axis=1)
    order = np.argsort(~mask, axis=1, kind="stable")
    width = max(int(new_counts.max(initial=0)), 1)
    order = order[:, :width]
    return np.take_along_axis(candidates, order[:, :, None], axis=1), new_counts


def _tidy(points: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop corners that repeat the previous one or lie on the line through their neighbours."""
    for _ in range(2):
        rows, k, _ = points.shape
        idx = np.arange(k)
        valid = idx[None, :] < counts[:, None]
        n = np.maximum(counts[:, None], 1)
        prev = np.take_along_axis(points, ((idx[None, :] - 1) % n)[:, :, None], axis=1)
        nxt = np.take_along_axis(points, ((idx[None, :] + 1) % n)[:, :, None], axis=1)
        a, b = points - prev, nxt - points
        same = np.linalg.norm(a, axis=2) < ON_EPSILON
        # Distance of the corner from the line prev -> next.
        chord = nxt - prev
        chord_len = np.linalg.norm(chord, axis=2)
        off_line = np.linalg.norm(np.cross(a, chord), axis=2) / np.where(chord_len > 0, chord_len, 1.0)
        straight = (off_line < ON_EPSILON * 0.1) & (np.einsum("rkj,rkj->rk", a, b) > 0)
        drop = valid & (same | straight)
        # Never reduce a polygon below three corners by tidying alone.
        drop &= (counts - drop.sum(axis=1))[:, None] >= 3
        if not drop.any():
            break
        keep = valid & ~drop
        order = np.argsort(~keep, axis=1, kind="stable")
        points = np.take_along_axis(points, order[:, :, None], axis=1)
        counts = keep.sum(axis=1)
    return points, counts


def _snap(points: np.ndarray) -> np.ndarray:
    rounded = np.round(points)
    return np.where(np.abs(points - rounded) < SNAP_EPSILON, rounded, points) + 0.0  # no -0.0


def _bucket_of(m: np.ndarray) -> np.ndarray:
    """Padded plane count of each brush: the next power of two, at least 4."""
    return np.asarray(np.maximum(4, 1 << np.ceil(np.log2(np.maximum(m, 1))).astype(np.int64)))


def clip_brushes(normal: np.ndarray, dist: np.ndarray, side_brush: np.ndarray,
                 num_brushes: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Polygons of brush sides given as planes.

    Parameters
    ----------
    normal : (S, 3) array
        Unit normals, pointing out of their brush.
    dist : (S,) array
        Plane distances (``dot(normal, p) == dist`` on the plane).
    side_brush : (S,) int array, non-decreasing
        The brush of each side.

    Returns
    -------
    keep : (S,) bool
        Sides that bound their brush: not a duplicate plane, at least three corners.
    poly_offsets : (K + 1,) int array
        For the K kept sides, in input order: their corners are
        ``points[poly_offsets[i]:poly_offsets[i + 1]]``.
    points : (P, 3) float64 array
        Corners, clockwise seen from outside, snapped to whole numbers within
        :data:`SNAP_EPSILON`.
    """
    normal = np.asarray(normal, np.float64).reshape(-1, 3)
    dist = np.asarray(dist, np.float64).reshape(-1)
    side_brush = np.asarray(side_brush, np.int64).reshape(-1)
    s_total = len(normal)
    if num_brushes is None:
        num_brushes = int(side_brush.max()) + 1 if s_total else 0
    if s_total and np.any(np.diff(side_brush) < 0):
        raise ValueError("sides must be grouped by brush (side_brush non-decreasing)")
    length = np.linalg.norm(normal, axis=1)
    normal = normal / np.where(length > 0, length, 1.0)[:, None]
    per_brush = np.bincount(side_brush, minlength=num_brushes)
    first = np.r_[0, np.cumsum(per_brush)[:-1]]
    counts_out = np.zeros(s_total, np.int64)
    made_sides: list[np.ndarray] = []  # per bucket: the sides with a polygon,
    made_points: list[np.ndarray] = []  # and their corners, side after side
    bucket = _bucket_of(per_brush)
    for m in sorted_unique(bucket[per_brush > 0]).tolist():
        brushes = np.flatnonzero((bucket == m) & (per_brush > 0))
        nb = len(brushes)
        # Padded plane table of the bucket: (nb, m).
        slot_valid = np.arange(m)[None, :] < per_brush[brushes][:, None]
        src = np.where(slot_valid, first[brushes][:, None] + np.arange(m)[None, :], 0)
        n_tab = normal[src]
        d_tab = dist[src]
        # Duplicate planes within a brush: the later copy is dropped.
        close_n = np.all(np.abs(n_tab[:, :, None, :] - n_tab[:, None, :, :]) < NORMAL_EPSILON, axis=3)
        close_d = np.abs(d_tab[:, :, None] - d_tab[:, None, :]) < DIST_EPSILON
        earlier = np.tri(m, m, -1, dtype=bool)[None]  # [i, j]: j < i
        dup = np.any(close_n & close_d & earlier & slot_valid[:, None, :], axis=2)
        plane_ok = slot_valid & ~dup
        rows_ok = plane_ok.reshape(-1)
        row_src = src.reshape(-1)
        row_brush = np.repeat(np.arange(nb), m)
        row_local = np.tile(np.arange(m), nb)
        # Work only on rows that are real sides.
        live = np.flatnonzero(rows_ok)
        pts = _start_squares(n_tab.reshape(-1, 3)[live], d_tab.reshape(-1)[live])
        cnt = np.full(len(live), 4, np.int64)
        rb, rl = row_brush[live], row_local[live]
        for r in range(m):
            active = plane_ok[rb, r] & (rl != r) & (cnt > 0)
            if not active.any():
                continue
            sel = np.flatnonzero(active)
            clipped, new_cnt = _clip(pts[sel], cnt[sel], n_tab[rb[sel], r], d_tab[rb[sel], r],
                                     np.ones(len(sel), bool))
            width = max(pts.shape[1], clipped.shape[1])
            if width > pts.shape[1]:
                pts = np.concatenate([pts, np.zeros((len(pts), width - pts.shape[1], 3))], axis=1)
            pts[sel, : clipped.shape[1]] = clipped
            cnt[sel] = new_cnt
        pts, cnt = _tidy(pts, cnt)
        made = cnt >= 3
        counts_out[row_src[live][made]] = cnt[made]
        made_sides.append(row_src[live][made])
        made_points.append(pts[made][np.arange(pts.shape[1])[None, :] < cnt[made][:, None]])
    keep = counts_out >= 3
    kept = np.flatnonzero(keep)
    poly_offsets = np.zeros(len(kept) + 1, np.int64)
    np.cumsum(counts_out[kept], out=poly_offsets[1:])
    if not len(kept):
        return keep, poly_offsets, np.zeros((0, 3))
    # The buckets' corners, moved into side order.
    sides = np.concatenate(made_sides)
    size = counts_out[sides]
    start = np.cumsum(size) - size
    order = np.argsort(sides)
    source = np.repeat(start[order] - poly_offsets[:-1], size[order]) + np.arange(int(poly_offsets[-1]))
    return keep, poly_offsets, _snap(np.concatenate(made_points)[source])


def closed_brushes(brushes: BrushSet) -> np.ndarray:
    """Bool per brush: a closed convex solid.

    A brush passes when it has at least four sides, every corner of every
    side lies behind (or within ``2 * ON_EPSILON + SNAP_EPSILON`` of) every
    plane of the brush (convex), and the area vectors of its polygons sum
    to zero (the divergence theorem: only a closed surface encloses a
    volume), within ``2 * ON_EPSILON`` times the total perimeter, the most
    that corners moved by the on-plane tolerance can change that sum.
    """
    n = len(brushes.contents)
    ok = brushes.num_sides >= 4
    if not len(brushes.points):
        return np.zeros(n, bool)
    counts = brushes.side_counts
    n_sides = len(counts)
    side_of_point = np.repeat(np.arange(n_sides), counts)
    nxt = np.arange(len(brushes.points)) + 1
    nxt[brushes.poly_offsets[1:] - 1] = brushes.poly_offsets[:-1]
    p, q = brushes.points, brushes.points[nxt]
    # Newell's area vector: half the sum of cross products of consecutive corners.
    area = np.zeros((n_sides, 3))
    np.add.at(area, side_of_point, np.cross(p, q) * 0.5)
    perimeter = np.bincount(side_of_point, np.linalg.norm(q - p, axis=1), minlength=n_sides)
    side_brush = brushes.side_brush
    total = np.zeros((n, 3))
    np.add.at(total, side_brush, area)
    length = np.bincount(side_brush, perimeter, minlength=n)
    ok &= np.linalg.norm(total, axis=1) <= 2 * ON_EPSILON * length + 1e-9
    # Convexity: each corner against each plane of its own brush.  Brushes of one shape (corners,
    # sides) go together, one stacked matrix product each: the same products as brush by brush.
    tol = 2 * ON_EPSILON + SNAP_EPSILON
    first_point = brushes.poly_offsets[brushes.brush_offsets]  # a brush's corners are contiguous
    corners = np.diff(first_point)
    sides = brushes.num_sides
    shape = corners * (int(sides.max(initial=0)) + 1) + sides
    # One sort into groups of a shape (a pass over all brushes per shape would be quadratic in
    # a map of many shapes); each group's brushes stay in index order.
    candidates = np.flatnonzero(ok)
    by_shape = candidates[np.argsort(shape[candidates], kind="stable")]
    keys = shape[by_shape]
    bounds = np.r_[np.flatnonzero(np.diff(keys, prepend=-1)), len(keys)].tolist()  # shapes are >= 0
    for start, end in zip(bounds[:-1], bounds[1:]):
        group = by_shape[start:end]
        k, s = int(corners[group[0]]), int(sides[group[0]])
        step = max(_DISTANCES_PER_PASS // (k * s), 1)  # many large brushes of one shape: in runs
        for run in (group[at : at + step] for at in range(0, len(group), step)):
            points = p[first_point[run][:, None] + np.arange(k)]
            rows = brushes.brush_offsets[run][:, None] + np.arange(s)
            d = np.matmul(points, brushes.normal[rows].transpose(0, 2, 1)) - brushes.dist[rows][:, None, :]
            ok[run] = ~(d.max(axis=(1, 2), initial=-1.0) > tol)
    return ok


#: Corner-to-plane distances :func:`closed_brushes` works out per pass (8 bytes each, a few times over).
_DISTANCES_PER_PASS = 1 << 18


# ---- from a map -------------------------------------------------------------------
# Per side, what clipping keeps (padded polygons, distances, masks): bytes.  Clipping
# a brush compares every pair of its sides, so its cost also grows with sides squared.
_BYTES_PER_SIDE = 2048
_BYTES_PER_SIDE_PAIR = 256


def clipping_bytes(sides_per_brush: np.ndarray) -> int:
    """About how many bytes :func:`clip_brushes` needs for brushes of these side counts (checked
    against the memory budget before clipping a map's brushes)."""
    padded = _bucket_of(np.asarray(sides_per_brush, np.int64))
    return int((padded * padded).sum()) * _BYTES_PER_SIDE_PAIR


def _validated_sides(bsp: MapReader, brushes: np.ndarray, sides: np.ndarray, planes: np.ndarray,
                     indices: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chosen brushes, and the owner and row of each of their sides, checked before use.

    Brush indices, each brush's ``firstside, numsides`` range and every
    side's plane number are checked against the tables they refer to, and
    the total number of sides against the memory budget, before any array
    is sized from them.
    """
    chosen = np.arange(len(brushes)) if indices is None else np.asarray(indices, np.int64)
    _check(chosen, len(brushes), "brush", bsp, LumpId.BRUSHES)
    rows = brushes[chosen]
    owner, side_idx = expand_ranges(
        rows["firstside"], rows["numsides"], len(sides), bsp=bsp,
        lump=LumpId.BRUSHES, fields=("firstside", "numsides"), target="BRUSHSIDES",
        bytes_per_item=_BYTES_PER_SIDE, records=chosen, itemsize=brushes.dtype.itemsize)
    if len(side_idx):
        used = side_idx[sides["bevel"][side_idx] == 0]  # bevel sides are skipped, their planes unused
        planenum = sides["planenum"][used]
        check_indices(planenum, len(planes), bsp=bsp,
                      lump=LumpId.BRUSHSIDES, field="planenum", target="PLANES", records=used,
                      itemsize=sides.dtype.itemsize)
        normal, dist = floats(planes["normal"][planenum]), floats(planes["dist"][planenum])
        with np.errstate(over="ignore", invalid="ignore"):
            length = np.linalg.norm(normal, axis=1)
        bad = ~(np.isfinite(length) & (length > 1e-6) & np.isfinite(dist))
        if bad.any():
            plane = int(planenum[int(np.argmax(bad))])
            raise BspFormatError(f"plane {plane} of a brush side has no direction or is not finite: normal "
                                 f"{planes['normal'][plane].tolist()}, dist {float(planes['dist'][plane])}",
                                 lump="PLANES", offset=bsp.entry(LumpId.PLANES).fileofs + plane * planes.dtype.itemsize)
        check_memory(bsp, clipping_bytes(rows["numsides"]),
                     f"clipping brushes of up to {int(rows['numsides'].max())} sides", lump="BRUSHES",
                     offset=bsp.entry(LumpId.BRUSHES).fileofs)
    return chosen, owner, side_idx


def build_brushes(bsp: MapReader, indices: np.ndarray | None = None) -> BrushSet:
    """The side polygons of the map's brushes (all, or those in ``indices``).

    Bevel sides are skipped; ``texinfo``, ``dispinfo`` and ``planenum`` come
    from ``dbrushside_t``.  Raises :class:`~sourcebsp.errors.BspFormatError`
    when a brush refers to a side or plane that does not exist.
    """
    brushes = bsp.lump_or_none(LumpId.BRUSHES, "build brushes")
    sides = bsp.lump_or_none(LumpId.BRUSHSIDES, "build brushes")
    planes = bsp.lump_or_none(LumpId.PLANES, "build brushes")
    if brushes is None or not len(brushes):
        empty = np.zeros(0, np.int64)
        return BrushSet(empty, np.zeros(1, np.int64), empty, empty, np.zeros((0, 3)), np.zeros(0),
                        empty, empty, np.zeros(1, np.int64), np.zeros((0, 3)), np.zeros(0, bool))
    # A map may lack BRUSHSIDES or PLANES while its brushes have no sides: empty tables then.
    sides = np.zeros(0, BRUSHSIDE) if sides is None else sides
    planes = np.zeros(0, PLANE) if planes is None else planes
    chosen, owner, side_idx = _validated_sides(bsp, brushes, sides, planes, indices)
    rows = brushes[chosen]
    side_rows = sides[side_idx]
    bevel = side_rows["bevel"].astype(np.int64) != 0
    use = ~bevel
    owner, side_idx, side_rows = owner[use], side_idx[use], side_rows[use]
    planenum = side_rows["planenum"].astype(np.int64)
    normal = floats(planes["normal"][planenum])
    dist = floats(planes["dist"][planenum])
    keep, poly_offsets, points = clip_brushes(normal, dist, owner, len(chosen))
    owner = owner[keep]
    counts = np.bincount(owner, minlength=len(chosen))
    brush_offsets = np.zeros(len(chosen) + 1, np.int64)
    np.cumsum(counts, out=brush_offsets[1:])
    result = BrushSet(
        contents=rows["contents"].astype(np.int64),
        brush_offsets=brush_offsets,
        side_index=side_idx[keep],
        planenum=planenum[keep],
        normal=normal[keep],
        dist=dist[keep],
        texinfo=side_rows["texinfo"].astype(np.int64)[keep],
        dispinfo=side_rows["dispinfo"].astype(np.int64)[keep],
        poly_offsets=poly_offsets,
        points=points,
    )
    result.closed = closed_brushes(result)
    return result


def model_brushes(bsp: MapReader) -> list[np.ndarray]:
    """The brush indices of every model (``dmodel_t``), found through its BSP tree.

    Model ``N``'s head node leads to its leaves; their leaf brushes are its
    brushes.  A brush used by a brush entity's model is that model's only;
    the world keeps the others.  Brushes no leaf lists are given to the
    model whose range of brush indices encloses them (vbsp writes each
    entity's brushes together), else to the world.
    """
    models = bsp.lump_or_none(LumpId.MODELS, "build brushes")
    if models is None or not len(models):
        return []
    owner = brush_models_of(bsp)
    return [np.flatnonzero(owner == m) for m in range(len(models))]


def leaf_models(bsp: MapReader) -> np.ndarray:
    """The model whose tree reaches each leaf (-1: none), ``(L,)``.

    A leaf reached from several head nodes goes to the highest model number
    (a brush entity's, not the world's).
    """
    models = bsp.lump_or_none(LumpId.MODELS, "find the leaves of each model")
    nodes = bsp.lump_or_none(LumpId.NODES, "find the leaves of each model")
    leafs = bsp.lump_or_none(LumpId.LEAFS, "find the leaves of each model")
    leaf_model = np.full(0 if leafs is None else len(leafs), -1, np.int64)
    if models is None or not len(models) or leafs is None:
        return leaf_model
    if nodes is None:
        if bool((models["headnode"] >= 0).any()):
            raise BspFormatError("the models have head nodes but the map has no NODES lump", lump="NODES",
                                 offset=bsp.entry(LumpId.NODES).fileofs)
        return leaf_model
    n_nodes = len(nodes)
    node_model = np.full(n_nodes, -1, np.int64)
    heads = models["headnode"].astype(np.int64)
    labels = np.arange(len(models))
    # Breadth-first over all models at once, one tree level per step.
    frontier, frontier_label = heads, labels
    for _ in range(n_nodes + 1):
        if not len(frontier):
            break
        is_leaf = frontier < 0
        leaf_idx = -(frontier[is_leaf] + 1)
        ok_leaf = (leaf_idx >= 0) & (leaf_idx < len(leafs))
        leaf_idx, leaf_lab = leaf_idx[ok_leaf], frontier_label[is_leaf][ok_leaf]
        # The world's label must not overwrite a brush entity's: keep the larger label.
        np.maximum.at(leaf_model, leaf_idx, leaf_lab)
        node_idx = frontier[~is_leaf]
        node_lab = frontier_label[~is_leaf]
        ok = node_idx < n_nodes
        node_idx, node_lab = node_idx[ok], node_lab[ok]
        fresh = node_model[node_idx] < 0  # a malformed tree could loop
        node_idx, node_lab = node_idx[fresh], node_lab[fresh]
        node_model[node_idx] = node_lab
        children = nodes["children"][node_idx].astype(np.int64)
        frontier = children.reshape(-1)
        frontier_label = np.repeat(node_lab, 2)
    return leaf_model


def brush_models_of(bsp: MapReader) -> np.ndarray:
    """The model that owns each brush (see :func:`model_brushes`), ``(B,)``."""
    models = bsp.lump_or_none(LumpId.MODELS, "build brushes")
    brushes = bsp.lump_or_none(LumpId.BRUSHES, "build brushes")
    leafs = bsp.lump_or_none(LumpId.LEAFS, "build brushes")
    leafbrushes = bsp.lump_or_none(LumpId.LEAFBRUSHES, "build brushes")
    n_brushes = 0 if brushes is None else len(brushes)
    owner = np.zeros(n_brushes, np.int64)
    if models is None or not len(models) or not n_brushes or leafs is None or leafbrushes is None:
        return owner
    leaf_model = leaf_models(bsp)
    used = leaf_model >= 0
    leaf_of, pos = expand_ranges(leafs["firstleafbrush"][used], leafs["numleafbrushes"][used], len(leafbrushes),
                                 bsp=bsp, lump=LumpId.LEAFS, fields=("firstleafbrush", "numleafbrushes"),
                                 target="LEAFBRUSHES", records=np.flatnonzero(used), itemsize=leafs.dtype.itemsize)
    lab_of = leaf_model[used][leaf_of]
    brush_of = leafbrushes.astype(np.int64)[pos]
    ok = (brush_of >= 0) & (brush_of < n_brushes)
    brush_of, lab_of = brush_of[ok], lab_of[ok]
    owner = np.full(n_brushes, -1, np.int64)
    np.maximum.at(owner, brush_of, lab_of)
    # Brushes no leaf lists: the model whose index range encloses them.
    missing = np.flatnonzero(owner < 0)
    if len(missing):
        fill = np.zeros(len(missing), np.int64)
        for m in range(1, len(models)):
            mine = np.flatnonzero(owner == m)
            if len(mine):
                inside = (missing > mine.min()) & (missing < mine.max())
                fill[inside] = m
        owner[missing] = fill
    return owner

"""Where is a point, what can be seen from there, and how it is lit: BSP tree, PVS and ambient light queries.

Model layer: these functions read decoded lumps (nodes, planes, leafs,
models, visibility) and never byte offsets.  :class:`~sourcebsp.BspFile`
exposes them as methods (``bsp.leaf_at(points)``, ``bsp.is_visible(a, b)``).

Conventions, as the engine has them (``CM_PointLeafnum``, ``CM_Vis``):

* A node sends a point to ``children[0]`` when ``dot(normal, p) - dist >= 0``
  and to ``children[1]`` otherwise; a negative child ``c`` is leaf ``-(c + 1)``.
* A leaf in solid has cluster -1: it has no PVS, sees nothing and is seen by
  nothing.
* A map without visibility data (vvis did not run; the lump is empty) has
  ``max(leaf cluster) + 1`` clusters and every one of them sees every other,
  as the engine does when the lump is missing.
* The ambient light at a point (``Mod_LeafAmbientColorAtPos``) is the
  inverse squared distance weighted mean, ``1 / (d^2 + 1)``, of the ambient
  cubes sampled in its leaf; a leaf without samples whose first sample index
  is not 0 borrows the samples of the leaf that index names.  A cube is lit
  along a unit normal ``n`` as the model shaders do: ``n.x^2`` times its
  +X or -X side (by the sign of ``n.x``), plus the same for Y and Z.
"""
from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from .codecs.base import RawLump
from .codecs.lighting import rgbexp_to_float
from .codecs.visibility import Visibility
from .errors import BspFormatError
from .lump_ids import LumpId
from .numeric import floats

if TYPE_CHECKING:
    from .protocols import MapReader

__all__ = ["leaf_at", "cluster_at", "num_clusters", "pvs", "pas", "is_visible", "visibility", "ambient_cubes",
           "ambient_light"]

Place = Union[int, np.integer, "np.ndarray", list[Any], tuple[Any, ...]]


def _points(points: Any) -> tuple[np.ndarray, bool]:
    """Points as a float64 ``(N, 3)`` array, and whether one point was given."""
    array = np.asarray(points, dtype=np.float64)
    if array.shape == (3,):
        return array[None, :], True
    if array.ndim == 2 and array.shape[1] == 3:
        return array, False
    raise ValueError(f"expected a point (3,) or points (N, 3), got shape {array.shape}")


def _record_offset(bsp: MapReader, lump: LumpId, index: int, table: np.ndarray) -> int:
    return int(bsp.entry(lump).fileofs + index * table.dtype.itemsize)


def _check_tree(bsp: MapReader, nodes: np.ndarray, planes: np.ndarray, leafs: np.ndarray) -> None:
    """Every plane and child index of the node lump points at something that exists."""
    bad_plane = np.flatnonzero((nodes["planenum"] < 0) | (nodes["planenum"] >= len(planes)))
    if len(bad_plane):
        i = int(bad_plane[0])
        raise BspFormatError(f"node {i} uses plane {int(nodes['planenum'][i])} of {len(planes)}",
                             lump="NODES", offset=_record_offset(bsp, LumpId.NODES, i, nodes))
    children = nodes["children"].astype(np.int64)
    bad_child = np.flatnonzero(((children >= len(nodes)) | (-(children + 1) >= len(leafs))).any(axis=1))
    if len(bad_child):
        i = int(bad_child[0])
        raise BspFormatError(
            f"node {i} has children {children[i].tolist()}: {len(nodes)} nodes and {len(leafs)} leafs exist",
            lump="NODES", offset=_record_offset(bsp, LumpId.NODES, i, nodes),
        )


def leaf_at(bsp: MapReader, points: Any, *, model: int = 0) -> Any:
    """The leaf containing each point, found by walking the node tree.

    Parameters
    ----------
    bsp : BspFile
    points : array_like, shape ``(3,)`` or ``(N, 3)``
        One point or many.
    model : int
        The brush model whose tree to walk (``dmodel_t.headnode``); 0 is the world.

    Returns
    -------
    int or ndarray of int64, shape ``(N,)``
        Leaf indices (an int for one point).

    Notes
    -----
    All points descend together, one tree level per step, so the cost is
    one vectorized step per level of the deepest path, not one per point.
    """
    pts, single = _points(points)
    nodes = bsp.lump_or_raise(LumpId.NODES, "walk the BSP tree")
    planes = bsp.lump_or_raise(LumpId.PLANES, "walk the BSP tree")
    leafs = bsp.lump_or_raise(LumpId.LEAFS, "walk the BSP tree")
    if not len(nodes):
        raise BspFormatError("the map has no BSP tree (the node lump is empty)", lump="NODES",
                             offset=bsp.entry(LumpId.NODES).fileofs)
    models = bsp.get_lump(LumpId.MODELS)
    if isinstance(models, RawLump) or not len(models):
        if model:
            raise IndexError(f"model {model} does not exist: the map has no model lump")
        head = 0
    else:
        if not 0 <= model < len(models):
            raise IndexError(f"model {model} is outside 0..{len(models) - 1}")
        head = int(models["headnode"][model])
        if not 0 <= head < len(nodes):
            raise BspFormatError(f"model {model} has head node {head} of {len(nodes)}", lump="MODELS",
                                 offset=_record_offset(bsp, LumpId.MODELS, model, models))
    _check_tree(bsp, nodes, planes, leafs)
    planenum = nodes["planenum"].astype(np.int64)
    children = nodes["children"].astype(np.int64)
    normal = floats(planes["normal"])
    dist = floats(planes["dist"])

    current = np.full(len(pts), head, dtype=np.int64)
    walking = np.arange(len(pts))
    # A tree path visits each node at most once; a longer walk means a cycle.
    for _ in range(len(nodes) + 1):
        if not len(walking):
            break
        here = current[walking]
        plane = planenum[here]
        side = np.einsum("ij,ij->i", pts[walking], normal[plane]) - dist[plane]
        step = np.where(side >= 0, children[here, 0], children[here, 1])
        current[walking] = step
        walking = walking[step >= 0]
    else:
        raise BspFormatError("the node tree has a cycle", lump="NODES", offset=bsp.entry(LumpId.NODES).fileofs)
    found = -(current + 1)
    return int(found[0]) if single else found


def cluster_at(bsp: MapReader, points: Any) -> Any:
    """The visibility cluster of each point's leaf (-1 in solid); int or int64 array."""
    leaf = leaf_at(bsp, points)
    clusters = bsp.lump_or_raise(LumpId.LEAFS, "walk the BSP tree")["cluster"]
    if isinstance(leaf, int):
        return int(clusters[leaf])
    return clusters[leaf].astype(np.int64)


def visibility(bsp: MapReader) -> Visibility:
    """The decoded visibility lump (an empty :class:`Visibility` when there is none)."""
    value = bsp.get_lump(LumpId.VISIBILITY)
    if isinstance(value, RawLump):
        raise BspFormatError(f"cannot read visibility: {value.reason}", lump="VISIBILITY",
                             offset=bsp.entry(LumpId.VISIBILITY).fileofs)
    return value


def num_clusters(bsp: MapReader) -> int:
    """``dvis_t.numclusters``; without visibility data, the highest leaf cluster + 1."""
    vis = visibility(bsp)
    if vis.present:
        return vis.num_clusters
    leafs = bsp.lump_or_raise(LumpId.LEAFS, "walk the BSP tree")
    return int(leafs["cluster"].max()) + 1 if len(leafs) else 0


def _row(bsp: MapReader, cluster: int, kind: str) -> np.ndarray:
    vis = visibility(bsp)
    if vis.present:
        return vis.pvs(cluster) if kind == "pvs" else vis.pas(cluster)
    count = num_clusters(bsp)
    cluster = int(cluster)
    if not -1 <= cluster < count:
        raise IndexError(f"cluster {cluster} is outside -1..{count - 1}")
    # No visibility data: everything is visible, except from solid.
    return np.full(count, cluster != -1)


def pvs(bsp: MapReader, cluster: int) -> np.ndarray:
    """The clusters ``cluster`` can see, as a bool array ``(num_clusters,)``.

    All False for the solid cluster -1; all True when the map has no
    visibility data.
    """
    return _row(bsp, cluster, "pvs")


def pas(bsp: MapReader, cluster: int) -> np.ndarray:
    """The clusters ``cluster`` can hear, as a bool array ``(num_clusters,)``."""
    return _row(bsp, cluster, "pas")


def _clusters(bsp: MapReader, place: Any, count: int) -> tuple[np.ndarray, bool]:
    """A cluster number (int) or points (array-like) as cluster numbers."""
    if isinstance(place, (Integral, np.integer)) and not isinstance(place, bool):
        cluster = int(place)
        if not -1 <= cluster < count:
            raise IndexError(f"cluster {cluster} is outside -1..{count - 1}")
        return np.array([cluster], np.int64), True
    pts, single = _points(place)
    leaf = np.atleast_1d(np.asarray(leaf_at(bsp, pts), np.int64))
    leafs = bsp.lump_or_raise(LumpId.LEAFS, "walk the BSP tree")
    clusters = leafs["cluster"][leaf].astype(np.int64)
    bad = (clusters < -1) | (clusters >= count)
    if bad.any():
        i = int(leaf[int(np.argmax(bad))])
        raise BspFormatError(f"leaf {i} is in cluster {int(leafs['cluster'][i])}, but the visibility data "
                             f"has {count} clusters", lump="LEAFS", offset=_record_offset(bsp, LumpId.LEAFS, i, leafs))
    return clusters, single


def is_visible(bsp: MapReader, a: Place, b: Place) -> Any:
    """Whether ``b`` is in the PVS of ``a``.

    Parameters
    ----------
    a, b : int or array_like
        A cluster number (a Python or numpy integer), or a point ``(3,)`` or
        points ``(N, 3)`` (any array-like, whatever its dtype, is taken as
        coordinates).  Point arrays of ``a`` and ``b`` broadcast together.

    Returns
    -------
    bool or ndarray of bool
        A bool when both are single; False whenever either side is in solid
        (cluster -1); True between any two non-solid clusters of a map
        without visibility data.
    """
    count = num_clusters(bsp)
    ca, single_a = _clusters(bsp, a, count)
    cb, single_b = _clusters(bsp, b, count)
    ca, cb = np.broadcast_arrays(ca, cb)
    open_ = (ca >= 0) & (cb >= 0)
    vis = visibility(bsp)
    # Only the rows asked about are decoded: the whole matrix is numclusters squared.
    result = vis.visible(ca, cb) if vis.present else open_
    return bool(result[0]) if single_a and single_b else result


# Ambient samples weighed at once, at most: points are taken in groups that stay under it.
_AMBIENT_CHUNK = 1 << 18
_LIGHT_CAP = 1e6


def _cube_linear(cubes: np.ndarray) -> np.ndarray:
    """(..., 6, 3) float32 linear light of ``CompressedLightCube`` records.

    The engine decodes ambient cubes with ``ColorRGBExp32ToVector``
    (``component * 2 ** exponent``), 255 times the lightmaps' ``TexLightToLinear``:
    vrad stores a cube scaled down by 255.  On the corpus maps the decoded
    cubes' mean is then of the order of the lightmaps' (0.39 against 0.74 on
    valvebsp_testmap), where the lightmaps' decoding gives 1/500 of it.
    """
    # Capped far above any light a compiler writes: a damaged exponent must not overflow what follows.
    linear: np.ndarray = np.minimum(rgbexp_to_float(cubes).astype(np.float64) * 255.0, _LIGHT_CAP).astype(np.float32)
    return linear


def ambient_cubes(bsp: MapReader, points: Any, *, hdr: bool | None = None) -> np.ndarray | None:
    """The leaf ambient light cube at each point, or None for a map without ambient lighting.

    Parameters
    ----------
    points : array_like, shape ``(3,)`` or ``(N, 3)``
    hdr : bool or None
        Which lumps: LDR (``LEAF_AMBIENT_LIGHTING``) or HDR; None takes the LDR
        ones when the map has them, else the HDR ones.

    Returns
    -------
    ndarray of float32, shape ``(N, 6, 3)`` or None
        Linear RGB of the cube's sides +X, -X, +Y, -Y, +Z, -Z (Source axes).
        Maps before BSP 20 keep one cube per leaf (in ``dleaf_t``, or in lump 56
        for some BSP 20 maps): that cube, unweighted.  Points in a leaf without
        samples get black.
    """
    pts, _ = _points(points)
    leafs = bsp.lump_or_raise(LumpId.LEAFS, "find the ambient light")
    kinds = [False, True] if hdr is None else [hdr]
    for kind in kinds:
        lighting_id = LumpId.LEAF_AMBIENT_LIGHTING_HDR if kind else LumpId.LEAF_AMBIENT_LIGHTING
        index_id = LumpId.LEAF_AMBIENT_INDEX_HDR if kind else LumpId.LEAF_AMBIENT_INDEX
        samples = bsp.lump_or_none(lighting_id) if bsp.has_lump(lighting_id) else None
        if samples is None or not len(samples) or "cube" not in (samples.dtype.names or ()):
            continue
        if "x" not in (samples.dtype.names or ()):  # one CompressedLightCube per leaf
            return _per_leaf(bsp, pts, samples["cube"], lighting_id)
        index = bsp.lump_or_none(index_id) if bsp.has_lump(index_id) else None
        if index is None or "ambient_sample_count" not in (index.dtype.names or ()):
            continue
        return _weighted(bsp, pts, leafs, index, samples, index_id)
    if "ambient_lighting" in (leafs.dtype.names or ()) and hdr is not True:
        return _per_leaf(bsp, pts, leafs["ambient_lighting"], LumpId.LEAFS)
    return None


def _per_leaf(bsp: MapReader, pts: np.ndarray, cubes: np.ndarray, lump: LumpId) -> np.ndarray:
    leaf = np.asarray(leaf_at(bsp, pts), np.int64)
    inside = leaf < len(cubes)
    out = np.zeros((len(pts), 6, 3), np.float32)
    out[inside] = _cube_linear(cubes[leaf[inside]])
    return out


def _weighted(bsp: MapReader, pts: np.ndarray, leafs: np.ndarray, index: np.ndarray, samples: np.ndarray,
              index_id: LumpId) -> np.ndarray:
    if len(index) != len(leafs):
        raise BspFormatError(f"{len(index)} ambient index records for {len(leafs)} leaves", lump=index_id.name,
                             offset=bsp.entry(index_id).fileofs)
    count = index["ambient_sample_count"].astype(np.int64)
    first = index["first_ambient_sample"].astype(np.int64)
    bad = np.flatnonzero(((count > 0) & (first + count > len(samples)))
                         | ((count == 0) & (first >= len(leafs))))
    if len(bad):
        i = int(bad[0])
        raise BspFormatError(f"leaf {i}'s ambient samples {int(first[i])}+{int(count[i])} are outside the "
                             f"{len(samples)} samples and {len(leafs)} leaves", lump=index_id.name,
                             offset=_record_offset(bsp, index_id, i, index))
    leaf = np.asarray(leaf_at(bsp, pts), np.int64)
    borrow = (count[leaf] == 0) & (first[leaf] != 0)  # a solid leaf lit as the leaf it names
    leaf[borrow] = first[leaf[borrow]]
    mins = floats(leafs["mins"]).astype(np.float32)
    size = floats(leafs["maxs"]).astype(np.float32) - mins
    fraction = np.stack([samples["x"], samples["y"], samples["z"]], axis=1).astype(np.float32) / np.float32(255)
    cubes = samples["cube"]
    out = np.zeros((len(pts), 6, 3), np.float32)
    per_point = count[leaf]
    ends = np.cumsum(per_point)
    start = 0
    while start < len(pts):
        # Points up to the chunk's sample budget (at least one), weighed together.
        stop = max(int(np.searchsorted(ends, (ends[start - 1] if start else 0) + _AMBIENT_CHUNK, "right")),
                   start + 1)
        n = per_point[start:stop]
        owner = np.repeat(np.arange(start, stop), n)
        if len(owner):
            offset = np.arange(len(owner)) - np.repeat(np.cumsum(n) - n, n)
            sample = first[leaf[owner]] + offset
            where = mins[leaf[owner]] + fraction[sample] * size[leaf[owner]]
            weight = 1.0 / (np.sum((where - pts[owner]) ** 2, axis=1) + 1.0)
            light = _cube_linear(cubes[sample]).reshape(len(owner), 18) * weight[:, None].astype(np.float32)
            local = owner - start
            total = np.bincount(local, weight, minlength=stop - start)
            summed = np.stack([np.bincount(local, light[:, j], minlength=stop - start) for j in range(18)], axis=1)
            lit = total > 0
            out[start:stop][lit] = (summed[lit] / total[lit, None]).reshape(-1, 6, 3)
        start = stop
    return out


def ambient_light(cubes: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """(N, 3) light of ambient cubes ``(N, 6, 3)`` along unit normals ``(N, 3)`` (Source axes).

    Each side weighs the square of its axis component, the side facing the normal's sign.
    """
    normals = np.asarray(normals, np.float32)
    squared = normals * normals
    rows = np.arange(len(normals))[:, None]
    side = np.arange(3) * 2 + (normals < 0)  # +X 0 / -X 1, +Y 2 / -Y 3, +Z 4 / -Z 5
    light: np.ndarray = np.einsum("nk,nkc->nc", squared, np.asarray(cubes, np.float32)[rows, side])
    return light

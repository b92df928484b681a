"""Where is a point, and what can be seen from there: BSP tree and PVS queries.

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
"""
from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from .codecs.base import RawLump
from .codecs.visibility import Visibility
from .errors import BspFormatError
from .lump_ids import LumpId
from .numeric import floats

if TYPE_CHECKING:
    from .protocols import MapReader

__all__ = ["leaf_at", "cluster_at", "num_clusters", "pvs", "pas", "is_visible", "visibility"]

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

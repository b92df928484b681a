"""Brush side polygons and brush ownership (sourcebsp.model.brushes).

Polygons are checked against vertex enumeration (every triple of planes
intersected, the points inside all planes kept), which shares nothing with
the clipping the module does; ownership against a plain recursive walk of
the node tree and against the ``dmodel_t`` bounds.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

import sourcebsp
from sourcebsp.lump_ids import LumpId
from sourcebsp.model.brushes import (
    BIG, DIST_EPSILON, NORMAL_EPSILON, ON_EPSILON, BrushSet, brush_models_of, build_brushes, clip_brushes,
    closed_brushes, model_brushes,
)


# ---- independent geometry -------------------------------------------------------------
def enumerate_vertices(normals: np.ndarray, dists: np.ndarray, eps: float = 0.02) -> np.ndarray:
    """Corners of the solid ``dot(n, p) <= d``: intersections of plane triples inside every plane."""
    n = len(normals)
    tri = np.array(list(combinations(range(n), 3)))
    a = normals[tri]
    det = np.linalg.det(a)
    ok = np.abs(det) > 1e-6
    pts = np.linalg.solve(a[ok], dists[tri[ok]][:, :, None])[:, :, 0]
    inside = np.all(pts @ normals.T - dists <= eps, axis=1)
    pts = pts[inside]
    unique: list[np.ndarray] = []
    for p in pts:
        if not any(np.linalg.norm(p - q) < 0.05 for q in unique):
            unique.append(p)
    return np.array(unique).reshape(-1, 3)


def cube_planes(lo=(-1, -2, -3), hi=(4, 5, 6)) -> tuple[np.ndarray, np.ndarray]:
    normals, dists = [], []
    for axis in range(3):
        e = np.eye(3)[axis]
        normals += [e, -e]
        dists += [hi[axis], -lo[axis]]
    return np.array(normals, float), np.array(dists, float)


def polygon_normal(poly: np.ndarray) -> np.ndarray:
    """Newell's normal: counter-clockwise seen from its side."""
    return np.cross(poly, np.roll(poly, -1, axis=0)).sum(axis=0)


# ---- synthetic brushes --------------------------------------------------------------
def test_tolerances_are_the_stated_ones():
    assert (ON_EPSILON, NORMAL_EPSILON, DIST_EPSILON) == (0.01, 1e-4, 0.01)
    assert BIG > 32768 * np.sqrt(3)


def test_box_sides_are_clockwise_quads_with_the_box_corners():
    normals, dists = cube_planes()
    keep, offsets, points = clip_brushes(normals, dists, np.zeros(6, int))
    assert keep.all() and np.all(np.diff(offsets) == 4)
    corners = {tuple(p) for p in points.tolist()}
    assert corners == {(x, y, z) for x in (-1, 4) for y in (-2, 5) for z in (-3, 6)}
    for k in range(6):
        poly = points[offsets[k]:offsets[k + 1]]
        assert np.allclose(poly @ normals[k], dists[k])
        # Clockwise seen from outside: Newell's normal points into the brush.
        assert polygon_normal(poly) @ normals[k] < 0


def test_duplicate_and_near_duplicate_planes_are_dropped():
    normals, dists = cube_planes()
    near = normals[0] + np.array([0, 5e-5, 0])
    normals = np.vstack([normals, normals[2], near / np.linalg.norm(near)])
    dists = np.append(dists, [dists[2], dists[0] + 0.005])
    keep, offsets, _ = clip_brushes(normals, dists, np.zeros(8, int))
    assert keep.tolist() == [True] * 6 + [False, False]


def test_plane_touching_an_edge_does_not_bound_the_brush():
    normals, dists = cube_planes((0, 0, 0), (8, 8, 8))
    # A 45-degree plane through the edge x = 8, z = 8: it meets the box along that edge only.
    n = np.array([1.0, 0, 1.0]) / np.sqrt(2)
    keep, _, _ = clip_brushes(np.vstack([normals, n]), np.append(dists, 16 / np.sqrt(2)), np.zeros(7, int))
    assert keep.tolist() == [True] * 6 + [False]


def test_pyramid_apex_where_four_planes_meet():
    base = np.array([0, 0, -1.0])
    sides = [np.array(v, float) / np.linalg.norm(v) for v in ([1, 0, 1], [-1, 0, 1], [0, 1, 1], [0, -1, 1])]
    normals = np.array([base] + sides)
    dists = np.array([0.0] + [16 / np.sqrt(2)] * 4)  # apex at (0, 0, 16), base 32 x 32
    keep, offsets, points = clip_brushes(normals, dists, np.zeros(5, int))
    assert keep.all()
    assert np.diff(offsets).tolist() == [4, 3, 3, 3, 3]
    assert {tuple(p) for p in points.tolist()} == {(0, 0, 16), (16, 16, 0), (16, -16, 0), (-16, 16, 0),
                                                  (-16, -16, 0)}


def test_random_convex_solids_match_vertex_enumeration():
    rng = np.random.default_rng(5)
    normals, dists, owner = [], [], []
    for b in range(40):
        n = rng.normal(size=(rng.integers(5, 14), 3))
        n /= np.linalg.norm(n, axis=1, keepdims=True)
        n = np.vstack([n, np.eye(3), -np.eye(3)])  # keep it bounded
        centre = rng.uniform(-5000, 5000, 3)
        d = n @ centre + rng.uniform(10, 200, len(n))
        normals.append(n)
        dists.append(d)
        owner.append(np.full(len(n), b))
    keep, offsets, points = clip_brushes(np.vstack(normals), np.concatenate(dists), np.concatenate(owner))
    side_owner = np.concatenate(owner)[keep]
    for b in range(40):
        expected = enumerate_vertices(normals[b], dists[b], eps=1e-6)
        rows = np.flatnonzero(side_owner == b)
        got = np.vstack([points[offsets[r]:offsets[r + 1]] for r in rows])
        for p in expected:
            assert np.linalg.norm(got - p, axis=1).min() < 0.02
        for p in got:
            assert np.linalg.norm(expected - p, axis=1).min() < 0.02


def test_closed_check_rejects_an_open_solid():
    normals, dists = cube_planes()
    keep, offsets, points = clip_brushes(normals, dists, np.zeros(6, int))
    full = BrushSet(np.array([1]), np.array([0, 6]), np.arange(6), np.arange(6), normals, dists,
                    np.zeros(6, int), np.zeros(6, int), offsets, points)
    assert closed_brushes(full).tolist() == [True]
    opened = BrushSet(np.array([1]), np.array([0, 5]), np.arange(5), np.arange(5), normals[:5], dists[:5],
                      np.zeros(5, int), np.zeros(5, int), offsets[:6], points[: offsets[5]])
    assert closed_brushes(opened).tolist() == [False]


def test_sides_must_be_grouped_by_brush():
    normals, dists = cube_planes()
    with pytest.raises(ValueError):
        clip_brushes(normals, dists, np.array([0, 1, 0, 1, 0, 1]))


# ---- the corpus ---------------------------------------------------------------------
def _has_brushes(bsp) -> bool:
    return bool(bsp.entry(LumpId.BRUSHES).filelen)


def test_every_brush_closed_and_every_side_on_its_plane(map_path):
    with sourcebsp.open(map_path) as bsp:
        if not _has_brushes(bsp):
            pytest.fail(f"{map_path.name} has no brushes")
        result = build_brushes(bsp)
        brushes, sides = bsp.brushes, bsp.brushsides
        assert len(result) == len(brushes)
        assert result.closed.all(), np.flatnonzero(~result.closed)
        assert np.all(result.side_counts >= 3)
        # Only non-bevel sides, each on its own plane, every corner inside every plane of its brush.
        assert not np.any(sides["bevel"][result.side_index])
        assert np.array_equal(result.planenum, sides["planenum"][result.side_index].astype(np.int64))
        for b in range(len(result)):
            rows = result.sides_of(b)
            pts = np.vstack([result.polygon(s) for s in rows])
            d = pts @ result.normal[list(rows)].T - result.dist[list(rows)]
            assert d.max() <= 2 * ON_EPSILON + 0.005
            for s in rows:
                on = result.polygon(s) @ result.normal[s] - result.dist[s]
                assert np.abs(on).max() <= 2 * ON_EPSILON + 0.005
        # The brush's own planes: non-bevel sides, less the ones that do not bound it.
        for b in range(len(result)):
            first, num = int(brushes["firstside"][b]), int(brushes["numsides"][b])
            own = sides[first:first + num]
            assert len(result.sides_of(b)) <= int((own["bevel"] == 0).sum())


def test_polygons_match_vertex_enumeration(map_path):
    with sourcebsp.open(map_path) as bsp:
        result = build_brushes(bsp)
        planes = bsp.planes
        brushes, sides = bsp.brushes, bsp.brushsides
        rng = np.random.default_rng(0)
        chosen = range(len(result)) if len(result) <= 300 else rng.choice(len(result), 300, replace=False)
        for b in chosen:
            first, num = int(brushes["firstside"][b]), int(brushes["numsides"][b])
            own = sides[first:first + num]
            own = own[own["bevel"] == 0]
            n = planes["normal"][own["planenum"]].astype(np.float64)
            d = planes["dist"][own["planenum"]].astype(np.float64)
            expected = enumerate_vertices(n, d)
            got = np.vstack([result.polygon(s) for s in result.sides_of(b)])
            assert len(expected)
            # Every corner found by enumeration is a polygon corner, and the other way round, within
            # 0.1 units: where planes meet at a grazing angle (slivers), moving a corner by the
            # on-plane tolerance (0.01) along one plane moves it further along their line.
            assert max(np.linalg.norm(got - p, axis=1).min() for p in expected) < 0.1
            assert max(np.linalg.norm(expected - p, axis=1).min() for p in got) < 0.1


def _walk(nodes, head: int) -> set[int]:
    """Leaves under ``head``, by plain recursion (an explicit stack)."""
    leaves, stack = set(), [head]
    while stack:
        n = stack.pop()
        if n < 0:
            leaves.add(-(n + 1))
        else:
            stack.extend(int(c) for c in nodes["children"][n])
    return leaves


def test_brush_owners_follow_the_tree_and_the_model_bounds(map_path):
    with sourcebsp.open(map_path) as bsp:
        models, nodes, leafs, leafbrushes = bsp.models, bsp.nodes, bsp.leafs, bsp.leafbrushes
        owner = brush_models_of(bsp)
        per_model = model_brushes(bsp)
        assert len(per_model) == len(models)
        assert sorted(np.concatenate(per_model).tolist()) == list(range(len(bsp.brushes)))
        result = build_brushes(bsp)
        mins, maxs = result.bounds()
        for m in range(len(models)):
            listed = set()
            for leaf in _walk(nodes, int(models["headnode"][m])):
                f, k = int(leafs["firstleafbrush"][leaf]), int(leafs["numleafbrushes"][leaf])
                listed |= set(leafbrushes[f:f + k].tolist())
            mine = set(np.flatnonzero(owner == m).tolist())
            if m == 0:
                entity_brushes = set(np.flatnonzero(owner > 0).tolist())
                assert listed - entity_brushes <= mine
            else:
                assert listed <= mine
                # vbsp's model bounds enclose the model's brushes (in model space).
                for b in mine:
                    assert np.all(mins[b] >= models["mins"][m] - 1.01) and np.all(maxs[b] <= models["maxs"][m] + 1.01)


# ---- a map built in code --------------------------------------------------------------
def synthetic_box_map(bad_plane: bool = False):
    """A BspFile holding one 6-sided box brush plus one bevel side, set through set_lump."""
    from sourcebsp.codecs.brushes import BRUSH, BRUSHSIDE
    from sourcebsp.codecs.geometry import PLANE

    normals, dists = cube_planes((0, 0, 0), (64, 32, 16))
    planes = np.zeros(8, PLANE)
    planes["normal"][:6], planes["dist"][:6] = normals, dists
    planes["normal"][6], planes["dist"][6] = [1, 0, 0], 64  # bevel, the same plane as side 0
    sides = np.zeros(7, BRUSHSIDE)
    sides["planenum"] = [0, 1, 2, 3, 4, 5, 6]
    sides["bevel"][6] = 1
    if bad_plane:
        sides["planenum"][2] = 99
    brushes = np.zeros(1, BRUSH)
    brushes["numsides"], brushes["contents"] = 7, 1
    bsp = sourcebsp.BspFile()
    bsp.set_lump(LumpId.PLANES, planes)
    bsp.set_lump(LumpId.BRUSHSIDES, sides)
    bsp.set_lump(LumpId.BRUSHES, brushes)
    return bsp


def test_synthetic_map_box():
    result = build_brushes(synthetic_box_map())
    assert len(result) == 1 and result.closed.tolist() == [True]
    assert result.side_index.tolist() == [0, 1, 2, 3, 4, 5]  # the bevel is skipped
    mins, maxs = result.bounds()
    assert mins[0].tolist() == [0, 0, 0] and maxs[0].tolist() == [64, 32, 16]
    brush = result.brush(0)
    assert [len(s.vertices) for s in brush.sides] == [4] * 6 and brush.contents == 1


def test_bad_plane_index_is_a_format_error():
    with pytest.raises(sourcebsp.BspFormatError) as exc:
        build_brushes(synthetic_box_map(bad_plane=True))
    assert exc.value.lump == "BRUSHSIDES" and "planenum 99" in str(exc.value)


def test_brushes_tested_together_are_closed_as_when_alone(map_path, monkeypatch):
    """``closed_brushes`` tests the brushes of one shape (corners, sides) together, in runs: each
    brush's flag is the one it gets in a set of its own, and in runs of one brush."""
    from sourcebsp.model import brushes as brushes_module

    with sourcebsp.open(map_path) as bsp:
        if not bsp.has_lump(LumpId.BRUSHES):
            return
        together = build_brushes(bsp)
        monkeypatch.setattr(brushes_module, "_DISTANCES_PER_PASS", 1)
        np.testing.assert_array_equal(closed_brushes(together), together.closed)
        shapes = np.diff(together.poly_offsets[together.brush_offsets]) * 1000 + together.num_sides
        # One brush of every shape, and both kinds of flag, at most 60 brushes.
        _, first = np.unique(shapes * 2 + together.closed, return_index=True)
        for b in first[:60].tolist():
            alone = build_brushes(bsp, np.array([b]))
            assert len(alone) == 1 and alone.points.tobytes() == together.points[
                together.poly_offsets[together.brush_offsets[b]] : together.poly_offsets[together.brush_offsets[b + 1]]
            ].tobytes()
            assert closed_brushes(alone).tolist() == [bool(together.closed[b])], b


def test_brushes_without_sides_and_no_brushsides_lump(tmp_path):
    """Brushes of 0 sides in a map with no BRUSHSIDES lump (a fuzz regression, found by typing
    the map parameter as MapReader): empty, unclosed brushes, not a TypeError; decompile runs."""
    import json
    import subprocess
    import sys

    from sourcebsp.examples import example_map_bytes
    from sourcebsp.fuzz.mutate import Mutation, apply

    from ..conftest import ROOT

    stored = ROOT / "tests" / "fuzz_regressions" / "decompile_brushes_without_sides.bsp"
    recipe = json.loads(stored.with_suffix(".json").read_text(encoding="utf-8"))
    data = apply(example_map_bytes(), [Mutation(**m) for m in recipe["mutations"]])
    assert data == stored.read_bytes()  # the stored file is what its recipe makes
    bsp = sourcebsp.BspFile.from_bytes(data)
    assert bsp.lump_or_none(LumpId.BRUSHSIDES) is None and len(bsp.brushes) == 7
    assert not bsp.brushes["numsides"].any()
    result = build_brushes(bsp)
    assert len(result) == 7 and result.num_sides.tolist() == [0] * 7
    assert result.closed.tolist() == [False] * 7 and len(result.points) == 0
    vmf = tmp_path / "out.vmf"
    done = subprocess.run([sys.executable, "-m", "sourcebsp", "decompile", str(stored), "-o", str(vmf)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr
    assert "7 brushes skipped (not closed)" in done.stdout and vmf.read_text().startswith("versioninfo")

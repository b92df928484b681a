"""Geometry of the decompiler (sourcebsp.converters.vmf.geometry): plane points, faces to sides, cost."""
from __future__ import annotations

import numpy as np

from sourcebsp.converters.vmf import build_vmf
from sourcebsp.converters.vmf.geometry import (
    MAP_EXTENT, PLANE_RULE, SNAP_ON_PLANE, candidate_pairs, defined_plane_errors, plane_points,
)
from sourcebsp.converters.vmf.writer import format_number
from sourcebsp.examples.helpers import Box
from sourcebsp.model.brushes import brush_models_of, build_brushes
from sourcebsp.model.geometry import face_table

from ._brush_entity_map import brush_entity_map

TILE = Box((-8.0, -8.0, -2.0), (8.0, 8.0, 2.0))


def _tiles(n: int):
    """The room with ``n`` func_breakable tiles on its floor: coplanar in the world and in model space."""
    return brush_entity_map([("func_breakable", (-240.0 + (k % 25) * 19, -240.0 + (k // 25) * 19, 8.0), None)
                             for k in range(n)], TILE)


def test_coplanar_brush_entities_cost_linear_pairs():
    """Faces are paired only with sides of their own model: the pair count grows linearly."""
    counts = {}
    for n in (50, 300):
        bsp = _tiles(n)
        faces = face_table(bsp)
        brushes = build_brushes(bsp)
        owner = brush_models_of(bsp)
        models = bsp.models
        face_model = np.repeat(np.arange(len(models)), models["numfaces"].astype(np.int64))
        side_model = owner[brushes.side_brush]
        pairs = candidate_pairs(faces["planenum"], brushes.planenum, face_model, side_model)[0]
        unpaired = candidate_pairs(faces["planenum"], brushes.planenum)[0]
        counts[n] = (len(pairs), len(unpaired), len(faces))
        # Each tile face meets its own brush's side (and the side facing the other way on the
        # same plane pair, at most): a few pairs per face, however many tiles share the plane.
        assert len(pairs) <= 2 * len(faces)
        # Without the model grouping every tile face would meet every tile side on its plane.
        assert len(unpaired) >= n * n
        vmf, stats = build_vmf(bsp)
        tiles = [e for e in vmf.entities if e.classname == "func_breakable"]
        assert len(tiles) == n and all(len(e.solids) == 1 for e in tiles)
        # Every tile side got a face's Hammer id (FACEIDS): faces were matched to their own tiles.
        assert stats.restored_side_ids >= 6 * n
    assert counts[300][0] / counts[50][0] <= 1.2 * counts[300][2] / counts[50][2]


def test_plane_points_lie_on_the_plane_and_span_the_side():
    # An oblique side whose corners were snapped off its plane (as the clipper's are).
    normal = np.array([[0.6, 0.0, 0.8]])
    dist = np.array([100.3])
    u = np.array([0.8, 0.0, -0.6])
    v = np.array([0.0, 1.0, 0.0])
    centre = normal[0] * dist[0]
    corners = np.array([centre + a * u * 50 + b * v * 80 for a, b in ((-1, 1), (1, 1), (1, -1), (-1, -1))])
    snapped = np.round(corners, 2)
    pts = plane_points(snapped, np.array([0, 4]), normal, dist)[0]
    assert np.abs(pts @ normal[0] - dist[0]).max() <= SNAP_ON_PLANE
    n = np.cross(pts[2] - pts[0], pts[1] - pts[0])
    assert n @ normal[0] > 0  # clockwise seen from outside
    # The triangle spans the side: its area is at least a quarter of the polygon's (100 x 160).
    assert np.linalg.norm(n) / 2 >= 0.25 * 100 * 160
    # Grid points stay whole numbers when they lie on the plane.
    box = plane_points(np.array([[0, 0, 16], [0, 64, 16], [64, 64, 16], [64, 0, 16]], float), np.array([0, 4]),
                       np.array([[0, 0, 1.0]]), np.array([16.0]))[0]
    assert np.array_equal(box, np.round(box)) and np.all(box[:, 2] == 16)


def test_a_sliver_gets_points_from_its_plane():
    normal = np.array([[0.0, 0.0, 1.0]])
    sliver = np.array([[0, 0, 5], [100, 0.001, 5], [100, 0, 5]], float)
    pts = plane_points(sliver, np.array([0, 3]), normal, np.array([5.0]))[0]
    assert np.allclose(pts[:, 2], 5)
    n = np.cross(pts[2] - pts[0], pts[1] - pts[0])
    assert n[2] > 0 and np.linalg.norm(n) >= 64 * 64 * 0.99


def _read_back(points: np.ndarray) -> tuple[np.ndarray, float]:
    """The plane Hammer reads from the points as the VMF writes them: text, then doubles, then
    normalize((p0 - p1) x (p2 - p1)) and dist = normal . p0 (written out here, not the library's)."""
    p0, p1, p2 = (np.array([float(format_number(v)) for v in p]) for p in points)
    n = np.cross(p0 - p1, p2 - p1)
    n /= np.linalg.norm(n)
    return n, float(n @ p0)


def test_a_small_side_far_from_the_origin_defines_its_plane():
    """css_glasstrap_final's side 1085 (brush side of a ceiling bevel, 0.5 x 8 units at z = -3719):
    its corners lie within 1e-4 of the plane, but three of them, a few tenths apart, define a plane
    whose distance is a tenth of a unit off: the points must define the plane, not lie near it."""
    normal = np.array([-0.8944272, 0.0, 0.4472136], np.float32).astype(np.float64)
    dist = float(np.float32(-1534.3898))
    corners = np.array([[-144.0, 1168.0, -3719.0], [-144.5000784067, 1168.0, -3720.0],
                        [-144.5000784067, 1176.0, -3720.0], [-144.0, 1176.0, -3719.0]])
    assert np.abs(corners @ normal - dist).max() <= SNAP_ON_PLANE
    # Three of those corners define a plane off by the rule: lying near the plane is not enough.
    m, e = _read_back(corners[[0, 2, 3]])
    assert np.abs(m - normal).max() > PLANE_RULE[0] and abs(e - dist) > 10 * PLANE_RULE[1]
    pts = plane_points(corners, np.array([0, 4]), normal[None], np.array([dist]))[0]
    n, d = _read_back(pts)
    assert np.abs(n - normal).max() <= PLANE_RULE[0] and abs(d - dist) <= PLANE_RULE[1]
    assert n @ normal > 0  # facing out: clockwise seen from outside
    # The points spread as far as the map allows, and stay inside it.
    assert np.linalg.norm(pts[1] - pts[0]) >= 1000 and np.abs(pts).max() <= MAP_EXTENT
    # The library's measure agrees with the read-back above, and finds the corners off.
    err_n, err_d = defined_plane_errors(np.stack([pts, corners[[0, 2, 3]]]), np.stack([normal, normal]),
                                        np.array([dist, dist]))
    assert err_n[0] <= PLANE_RULE[0] and err_d[0] <= PLANE_RULE[1]
    assert err_n[1] > PLANE_RULE[0] and err_d[1] > PLANE_RULE[1]


def test_points_from_the_plane_are_whole_numbers_only_when_they_stay_on_it():
    # An axis plane: whole numbers, exactly on it.
    pts = plane_points(np.array([[0.3, 0.2, 24], [0.3, 9.7, 24], [5.5, 9.7, 24]]), np.array([0, 3]),
                       np.array([[0.0, 0.0, 1.0]]), np.array([24.0]))[0]
    assert np.array_equal(pts, np.round(pts)) and np.all(pts[:, 2] == 24)
    # A plane a few 1e-6 off 45 degrees (vbsp keeps such twins): whole-number points far apart would
    # define the exact 45 degrees, hundredths of a unit off this one 10,000 units out.
    normal = np.array([[0.0, -0.70710385, -0.70710951]])
    dist = np.array([56.56839370727539])
    corners = np.array([[-1456, -32, -48], [-1376, -32, -48], [-1376, -16, -64], [-1456, -16, -64]], float)
    pts = plane_points(corners, np.array([0, 4]), normal, dist)[0]
    assert np.abs(pts @ normal[0] - dist[0]).max() <= SNAP_ON_PLANE
    n, d = _read_back(pts)
    assert np.abs(n - normal[0]).max() <= PLANE_RULE[0] and abs(d - dist[0]) <= PLANE_RULE[1]


def test_a_floor_of_many_coplanar_world_brushes_costs_linear_pairs():
    """1600 coplanar 32-unit floor tiles in one model: each face meets only the sides near it."""
    n = 40
    xy = np.stack(np.meshgrid(np.arange(n), np.arange(n), indexing="ij"), axis=-1).reshape(-1, 2) * 32.0
    mins = np.c_[xy, np.zeros(len(xy))]
    maxs = np.c_[xy + 32.0, np.zeros(len(xy))]
    plane = np.zeros(len(xy), np.int64)  # all on plane 0 (z = 0)
    centroid = (mins + maxs) / 2
    pairs = candidate_pairs(plane, plane, face_point=centroid, side_box=(mins, maxs))
    # A face's cell is reached by at most (256 / 32 + 2) ** 2 tiles (those touching its border
    # included); without cells it would meet all 1600.
    assert len(pairs[0]) <= 100 * len(xy)
    assert len(candidate_pairs(plane, plane)[0]) == len(xy) ** 2
    # No face loses the side it lies on.
    found = set(zip(pairs[0].tolist(), pairs[1].tolist()))
    assert all((i, i) in found for i in range(len(xy)))
    # A side wider than MAX_SIDE_CELLS cells still meets every face of its plane.
    big_min, big_max = np.array([[-4096.0, -4096.0, 0.0]]), np.array([[4096.0, 4096.0, 0.0]])
    wide = candidate_pairs(plane, np.zeros(1, np.int64), face_point=centroid, side_box=(big_min, big_max))
    assert len(wide[0]) == len(xy)


def test_candidate_pairs_survive_nan_and_huge_boxes():
    plane = np.zeros(3, np.int64)
    mins = np.array([[np.nan, 0, 0], [-1e30, -1e30, 0], [0, 0, 0]])
    maxs = np.array([[np.nan, 1, 0], [1e30, 1e30, 0], [16, 16, 0]])
    points = np.array([[8.0, 8.0, 0.0], [np.inf, 0.0, 0.0], [1e300, 1e300, 0.0]])
    faces, sides, _ = candidate_pairs(plane, plane, face_point=points, side_box=(mins, maxs))
    pairs = set(zip(faces.tolist(), sides.tolist()))
    # The NaN and the huge side meet every face; the 16-unit side the face in its cell.
    assert {(f, s) for f in range(3) for s in (0, 1)} <= pairs and (0, 2) in pairs


def test_work_in_runs_gives_what_all_at_once_gives(map_path, monkeypatch):
    """Faces to sides and plane points are worked out in runs to bound memory: runs of a few
    rows (many runs, items larger than a run) give exactly the arrays of one pass over all."""
    import sourcebsp
    from sourcebsp.converters.vmf import geometry as vmf_geometry
    from sourcebsp.converters.vmf.solids import BrushFrames, match_faces, side_table
    from sourcebsp.converters.vmf.textures import material_names

    with sourcebsp.open(map_path) as bsp:
        if not bsp.has_lump("BRUSHES"):
            return
        brushes = build_brushes(bsp)
        owner = brush_models_of(bsp)
        frames = BrushFrames(np.zeros((len(owner), 3)), np.broadcast_to(np.eye(3), (len(owner), 3, 3)))
        results = []
        for pairs, corners in ((1 << 40, 1 << 40), (5, 7)):
            monkeypatch.setattr(vmf_geometry, "_PAIRS_PER_PASS", pairs)
            monkeypatch.setattr(vmf_geometry, "_CORNERS_PER_PASS", corners)
            match = match_faces(bsp, brushes, owner)
            results.append((match.side, match.whole, side_table(bsp, brushes, frames, material_names(bsp)).points))
    (side, whole, points), (side_runs, whole_runs, points_runs) = results
    np.testing.assert_array_equal(side_runs, side)
    np.testing.assert_array_equal(whole_runs, whole)
    assert points_runs.tobytes() == points.tobytes()  # bit for bit

"""BSP tree and visibility queries: ``bsp.leaf_at``, ``cluster_at``, ``pvs``, ``is_visible``."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import BspFormatError, LumpId

# Maps srctools 2.x cannot open (VTMB's 104-byte BSP 17 faces; the big-endian
# Xbox 360 file): the independent walker below still checks them.
SRCTOOLS_UNREADABLE = {"vtmb_sp_genesisdevice_1", "x360_shack"}
# Player starts that really are inside solid: in sp_genesisdevice_1 the
# info_player_start (235 0 145) sits in the solid slab between the two rooms
# (leaf contents 1 from z=100 to z=150); VTMB places the player by script.
SPAWNS_IN_SOLID = {"vtmb_sp_genesisdevice_1": 1}


def reference_leaf(nodes: np.ndarray, planes: np.ndarray, head: int, point: np.ndarray) -> int:
    """Scalar walk, one node at a time, as the engine's CM_PointLeafnum does."""
    node = head
    while node >= 0:
        plane = planes[int(nodes["planenum"][node])]
        d = float(np.dot(plane["normal"].astype(np.float64), point)) - float(plane["dist"])
        node = int(nodes["children"][node][0 if d >= 0 else 1])
    return -(node + 1)


def subtree_leaves(nodes: np.ndarray, head: int) -> set[int]:
    leaves, stack = set(), [head]
    while stack:
        node = stack.pop()
        for child in nodes["children"][node].tolist():
            (stack.append(child) if child >= 0 else leaves.add(-(child + 1)))
    return leaves


def entity_origins(bsp: sourcebsp.BspFile, prefix: bytes) -> np.ndarray:
    """Origins of entities whose classname starts with ``prefix``, by a simple regex."""
    text = bytes(bsp.lump_bytes(LumpId.ENTITIES))
    origins = []
    for block in re.findall(rb"\{[^{}]*\}", text):
        classname = re.search(rb'"classname"\s+"([^"]*)"', block)
        origin = re.search(rb'"origin"\s+"([^"]*)"', block)
        if classname and origin and classname.group(1).startswith(prefix):
            origins.append([float(v) for v in origin.group(1).split()])
    return np.array(origins, np.float64).reshape(-1, 3)


def _random_points(bsp: sourcebsp.BspFile, count: int, seed: int = 0) -> np.ndarray:
    world = bsp.models[0]
    return np.random.default_rng(seed).uniform(world["mins"], world["maxs"], size=(count, 3))


# ---- leaf_at -----------------------------------------------------------------------


def test_leaf_centres_find_their_leaf(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        leafs, nodes = bsp.leafs, bsp.nodes
        world = sorted(subtree_leaves(nodes, int(bsp.models["headnode"][0])))
        # Every leaf of the world tree that is not solid (cluster >= 0)
        open_leaves = np.array([i for i in world if leafs["cluster"][i] >= 0])
        assert len(open_leaves)
        mins = leafs["mins"][open_leaves].astype(np.float64)
        maxs = leafs["maxs"][open_leaves].astype(np.float64)
        centres = (mins + maxs) / 2
        found = bsp.leaf_at(centres)
        assert found.shape == (len(open_leaves),) and found.dtype == np.int64
        exact = found == open_leaves
        # A box centre may lie outside a non-box-shaped leaf; it must then be in a leaf
        # whose stored bounds (whole units, hence 1 unit of slack) contain it.
        fmins = leafs["mins"][found].astype(np.float64) - 1
        fmaxs = leafs["maxs"][found].astype(np.float64) + 1
        contained = ((fmins <= centres) & (centres <= fmaxs)).all(axis=1)
        assert (exact | contained).all()
        assert exact.mean() > 0.7  # measured: 71% (glasstrap_final), 72% (de_rats), else 93% to 100%


def test_leaf_at_equals_an_independent_walker(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        nodes, planes = bsp.nodes, bsp.planes
        leafs = bsp.leafs
        points = np.concatenate([_random_points(bsp, 300), (leafs["mins"][1:40] + leafs["maxs"][1:40]) / 2])
        found = bsp.leaf_at(points)
        expected = [reference_leaf(nodes, planes, 0, p) for p in points]
        assert found.tolist() == expected
        # One point gives a plain int, the same as in a batch.
        single = bsp.leaf_at(points[0])
        assert isinstance(single, int) and single == expected[0]
        assert bsp.leaf_at(points[0].tolist()) == expected[0]


def test_leaf_at_matches_srctools(map_path: Path) -> None:
    srctools_bsp = pytest.importorskip("srctools.bsp")
    from srctools.math import Vec

    if map_path.stem in SRCTOOLS_UNREADABLE:
        with pytest.raises(Exception):
            srctools_bsp.BSP(str(map_path)).vis_tree()
        return
    theirs = srctools_bsp.BSP(str(map_path))
    tree = theirs.vis_tree()
    index = {id(leaf): i for i, leaf in enumerate(theirs.visleafs)}
    with sourcebsp.open(map_path) as bsp:
        # Random points avoid the tie on a plane, which srctools breaks the
        # other way (points on a plane go behind it; the engine puts them in front).
        points = _random_points(bsp, 400, seed=1)
        ours = bsp.leaf_at(points)
    compared = 0
    for point, leaf in zip(points, ours.tolist()):
        hit = tree.test_point(Vec(*point))
        if hit is None:  # srctools gives up when a rounded node box excludes the point
            continue
        assert index[id(hit)] == leaf
        compared += 1
    assert compared >= 395  # measured: at most 2 of 1000 points unanswered


def test_brush_model_trees(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        models, nodes = bsp.models, bsp.nodes
        for k in range(1, len(models)):
            centre = (models["mins"][k].astype(np.float64) + models["maxs"][k]) / 2
            leaf = bsp.leaf_at(centre, model=k)
            assert leaf in subtree_leaves(nodes, int(models["headnode"][k]))
        with pytest.raises(IndexError):
            bsp.leaf_at([0, 0, 0], model=len(models))


def test_player_starts_are_in_open_space(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        origins = entity_origins(bsp, b"info_player_")
        if not len(origins):
            assert map_path.stem in ("tf2_test_displacement_decompile", "tf2_test_physcollide", "v42_rot_main")
            return
        clusters = bsp.cluster_at(origins)
        leaves = bsp.leaf_at(origins)
        assert (clusters == bsp.leafs["cluster"][leaves]).all()
        solid = bsp.leafs["contents"][leaves] & 1  # CONTENTS_SOLID
        assert int((clusters < 0).sum()) == SPAWNS_IN_SOLID.get(map_path.stem, 0)
        assert ((clusters < 0) == (solid == 1)).all()


# ---- visibility queries ----------------------------------------------------------------


def test_is_visible_follows_the_pvs(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        n = bsp.num_clusters
        vis = bsp.visibility
        rng = np.random.default_rng(n)
        pairs = rng.integers(0, n, size=(40, 2))
        for a, b in pairs.tolist():
            expected = bool(vis.pvs_matrix()[a, b]) if vis.present else True
            assert bsp.is_visible(a, b) is expected
            assert bsp.pvs(a)[b] == expected
        assert bsp.is_visible(-1, 0) is False and bsp.is_visible(0, -1) is False
        assert not bsp.pvs(-1).any() and not bsp.pas(-1).any()
        assert bsp.pvs(-1).shape == (n,)
        with pytest.raises(IndexError):
            bsp.pvs(n)
        with pytest.raises(IndexError):
            bsp.is_visible(0, n)
        if not vis.present:
            # No visibility data: every non-solid cluster sees every other (engine CM_NullVis).
            assert bsp.pvs(0).all() and bsp.pas(n - 1).all()


def test_is_visible_for_points_batches_like_single_calls(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        a = _random_points(bsp, 60, seed=2)
        b = _random_points(bsp, 60, seed=3)
        batch = bsp.is_visible(a, b)
        assert batch.shape == (60,) and batch.dtype == bool
        ca, cb = bsp.cluster_at(a), bsp.cluster_at(b)
        for i in range(60):
            single = bsp.is_visible(a[i], b[i])
            assert single == batch[i]
            assert single == (ca[i] >= 0 and cb[i] >= 0 and bool(bsp.pvs(int(ca[i]))[cb[i]]))
        # a point against many, and a cluster against many points
        assert (bsp.is_visible(a[0], b) == np.array([bsp.is_visible(a[0], p) for p in b])).all()
        if ca[0] >= 0:
            assert (bsp.is_visible(int(ca[0]), b) == bsp.is_visible(a[0], b)).all()
        spawns = entity_origins(bsp, b"info_player_")
        if len(spawns):
            clusters = bsp.cluster_at(spawns)
            # A player start sees itself unless it is in solid.
            assert (bsp.is_visible(spawns, spawns) == (clusters >= 0)).all()


def test_visibility_is_symmetric_where_the_pvs_is(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        a = _random_points(bsp, 200, seed=4)
        b = _random_points(bsp, 200, seed=5)
        assert (bsp.is_visible(a, b) == bsp.is_visible(b, a)).all()


# ---- errors and edge cases ---------------------------------------------------------------


def test_bad_point_shapes() -> None:
    bsp = sourcebsp.BspFile()
    with pytest.raises(ValueError):
        bsp.leaf_at([1, 2])
    with pytest.raises(ValueError):
        bsp.leaf_at(np.zeros((4, 2)))


def test_map_without_tree() -> None:
    with pytest.raises(BspFormatError, match="walk the BSP tree: the map has no NODES lump"):
        sourcebsp.BspFile().leaf_at([0, 0, 0])


def _patch(data: bytearray, bsp: sourcebsp.BspFile, lump: LumpId, record: int, field_offset: int,
           value: int) -> None:
    """Write one little-endian int field of one record of a fixed-size lump."""
    at = bsp.entry(lump).fileofs + record * bsp.get_lump(lump).dtype.itemsize + field_offset
    data[at : at + 4] = int(value).to_bytes(4, "little", signed=True)


def test_corrupt_node_child(all_maps: list[Path]) -> None:
    path = next(p for p in all_maps if p.stem == "tf2_test2")
    with sourcebsp.open(path) as bsp:
        node_offset = bsp.entry(LumpId.NODES).fileofs
        child = bytearray(path.read_bytes())
        _patch(child, bsp, LumpId.NODES, 3, 4, len(bsp.nodes) + 5)  # children[0] of node 3
        plane = bytearray(path.read_bytes())
        _patch(plane, bsp, LumpId.NODES, 2, 0, -7)  # planenum of node 2
    with pytest.raises(BspFormatError) as info:
        sourcebsp.BspFile.from_bytes(child).leaf_at([0, 0, 0])
    assert info.value.offset == node_offset + 3 * 32 and info.value.lump == "NODES"
    with pytest.raises(BspFormatError, match="plane -7"):
        sourcebsp.BspFile.from_bytes(plane).leaf_at(np.zeros((5, 3)))


def test_node_cycle(all_maps: list[Path]) -> None:
    path = next(p for p in all_maps if p.stem == "tf2_test2")
    data = bytearray(path.read_bytes())
    with sourcebsp.open(path) as bsp:
        points = _random_points(bsp, 50)
        # both children of the root point back to the root
        _patch(data, bsp, LumpId.NODES, 0, 4, 0)
        _patch(data, bsp, LumpId.NODES, 0, 8, 0)
    with pytest.raises(BspFormatError, match="cycle"):
        sourcebsp.BspFile.from_bytes(data).leaf_at(points)


# ---- ambient light --------------------------------------------------------------------------
def _example_with_two_samples():
    """The example map, its room leaf holding two ambient samples (different cubes, in opposite corners), and
    a solid leaf that borrows the room's samples (count 0, first = the room leaf)."""
    from sourcebsp.codecs.records import LEAF_AMBIENT_LIGHTING
    from sourcebsp.examples import PLAYER_START, build_example_map

    bsp = build_example_map()
    room = int(bsp.leaf_at(PLAYER_START))
    index = np.array(bsp.leaf_ambient_index)
    samples = np.array(bsp.leaf_ambient_lighting)
    extra = np.zeros(2, LEAF_AMBIENT_LIGHTING)
    for k, (r, g, b, exponent) in enumerate([(200, 100, 50, 0), (0, 20, 160, 1)]):  # ColorRGBExp32, all 6 sides
        extra["cube"]["r"][k], extra["cube"]["g"][k], extra["cube"]["b"][k] = r, g, b
        extra["cube"]["exponent"][k] = exponent
    extra["x"], extra["y"], extra["z"] = [0, 255], [0, 255], [0, 255]
    index[room] = (2, len(samples))
    centres = (bsp.leafs["mins"].astype(float) + bsp.leafs["maxs"].astype(float)) / 2
    solid = next(int(i) for i in np.flatnonzero(bsp.leafs["contents"] != 0) if bsp.leaf_at(centres[i]) == i)
    index[solid] = (0, room)
    bsp.set_lump(LumpId.LEAF_AMBIENT_INDEX, index)
    bsp.set_lump(LumpId.LEAF_AMBIENT_LIGHTING, np.concatenate([samples, extra]))
    return bsp, room, solid


def test_ambient_cube_is_the_inverse_square_weighted_mean_of_the_leafs_samples() -> None:
    bsp, room, solid = _example_with_two_samples()
    low, high = bsp.leafs["mins"][room].astype(float), bsp.leafs["maxs"][room].astype(float)
    points = np.array([low + (high - low) * f for f in (0.25, 0.5, 0.9)])
    cubes = sourcebsp.queries.ambient_cubes(bsp, points)
    # Mod_LeafAmbientColorAtPos: weights 1 / (d^2 + 1) to the samples at the leaf's corners (x, y, z of
    # 0 and 255 of the bounds); sides decoded as ColorRGBExp32ToVector (255 times TexLightToLinear).
    near = 1 / (((points - low) ** 2).sum(axis=1) + 1)
    far = 1 / (((points - high) ** 2).sum(axis=1) + 1)
    want = (near[:, None] * [200.0, 100.0, 50.0] + far[:, None] * [0.0, 40.0, 320.0]) / (near + far)[:, None]
    assert cubes.shape == (3, 6, 3)
    assert cubes[:, 0] == pytest.approx(want, rel=1e-5) and (cubes == cubes[:, :1]).all()
    assert cubes[0, 0, 0] > cubes[2, 0, 0]  # nearer the first sample, redder
    # A solid leaf with no samples whose index names a leaf is lit as that leaf.
    centre = (bsp.leafs["mins"][solid].astype(float) + bsp.leafs["maxs"][solid]) / 2
    assert int(bsp.leaf_at(centre)) == solid
    borrowed = sourcebsp.queries.ambient_cubes(bsp, centre)
    d_near, d_far = ((centre - low) ** 2).sum() + 1, ((centre - high) ** 2).sum() + 1
    assert borrowed[0, 0, 2] == pytest.approx((50.0 / d_near + 320.0 / d_far) / (1 / d_near + 1 / d_far), rel=1e-5)


def test_ambient_light_weighs_the_sides_by_the_squared_normal() -> None:
    cube = np.arange(18, dtype=np.float32).reshape(1, 6, 3)  # side k is 3k, 3k+1, 3k+2
    normals = np.array([[0.6, 0.0, -0.8], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    light = sourcebsp.queries.ambient_light(np.repeat(cube, 3, axis=0), normals)
    assert light[0] == pytest.approx(0.36 * cube[0, 0] + 0.64 * cube[0, 5])  # +X and -Z
    assert light[1] == pytest.approx(cube[0, 1]) and light[2] == pytest.approx(cube[0, 4])


def test_ambient_index_past_the_samples_is_a_format_error() -> None:
    bsp, room, _ = _example_with_two_samples()
    index = np.array(bsp.leaf_ambient_index)
    index[room] = (3, len(bsp.leaf_ambient_lighting) - 1)
    bsp.set_lump(LumpId.LEAF_AMBIENT_INDEX, index)
    target = sourcebsp.BspFile.from_bytes(bsp.to_bytes())  # laid out: the error names a file offset
    with pytest.raises(BspFormatError, match=f"leaf {room}'s ambient samples") as info:
        sourcebsp.queries.ambient_cubes(target, [0.0, 0.0, 0.0])
    assert info.value.lump == "LEAF_AMBIENT_INDEX"
    assert info.value.offset == target.entry(LumpId.LEAF_AMBIENT_INDEX).fileofs + 4 * room


def test_maps_without_ambient_light_give_none() -> None:
    from sourcebsp.examples import build_example_map

    bsp = build_example_map()
    bsp.set_lump(LumpId.LEAF_AMBIENT_LIGHTING, np.zeros(0, bsp.leaf_ambient_lighting.dtype))
    assert sourcebsp.queries.ambient_cubes(bsp, [0.0, 0.0, 0.0]) is None


@pytest.mark.slow
def test_corpus_ambient_cubes_are_lit_as_the_lightmaps(all_maps: list[Path]) -> None:
    """Decoded as the engine does (ColorRGBExp32ToVector), a map's ambient light is of the order of its
    lightmaps' (TexLightToLinear): within 20x either way (medians) on every corpus map holding both with
    light (0.13x to 2.5x); the lightmaps' decoding would put the cubes 255 times lower.  Left out: LDR
    lightmap lumps whose median is no light (CS:GO's, junk in an HDR-only map; sparse test maps)."""
    from sourcebsp.codecs.lighting import rgbexp_to_float

    checked = 0
    for path in all_maps:
        with sourcebsp.open(path) as bsp:
            try:
                lightmap = bsp.lump_or_none(LumpId.LIGHTING) if bsp.has_lump(LumpId.LIGHTING) else None
                leafs = bsp.leafs
            except Exception:  # noqa: BLE001 - a map whose lumps this library cannot decode is not a sample
                continue
            if lightmap is None or not len(lightmap.samples) or not len(leafs):
                continue
            centres = (leafs["mins"].astype(float) + leafs["maxs"].astype(float)) / 2
            cubes = sourcebsp.queries.ambient_cubes(bsp, centres[leafs["contents"] == 0], hdr=False)
            if cubes is None or not cubes.any():
                continue
            light = float(np.median(rgbexp_to_float(lightmap.samples)))
            if not 1e-3 < light < 1e3:
                continue
            ratio = float(np.median(cubes[cubes > 0])) / light
            assert 1 / 20 < ratio < 20, (path.name, ratio)
            checked += 1
    assert checked >= 10

"""The resource rule (sourcebsp.resources): validate, then allocate, within a budget the caller can change."""
from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.errors import BspError, BspFormatError, LimitExceededError, UnsupportedError
from sourcebsp.examples import example_map_bytes
from sourcebsp.fuzz.mutate import Mutation, apply
from sourcebsp.resources import (Budget, budget, check_memory, current_budget, expand_ranges, input_size,
                                 sorted_unique)

FACE_SIZE = 56  # sizeof(dface_t)
BRUSH_SIZE = 12  # sizeof(dbrush_t)


def example(*mutations: Mutation) -> sourcebsp.BspFile:
    return sourcebsp.BspFile.from_bytes(apply(example_map_bytes(), list(mutations)))


def set_field(lump: LumpId, record: int, field: str, value) -> sourcebsp.BspFile:
    """The example map with one field of one record changed, through the decoded lump."""
    bsp = sourcebsp.BspFile.from_bytes(example_map_bytes())
    table = bsp.get_lump(lump).copy()
    table[field][record] = value
    data = bytearray(example_map_bytes())
    entry = bsp.entry(lump)
    data[entry.fileofs : entry.fileofs + entry.filelen] = table.tobytes()
    return sourcebsp.BspFile.from_bytes(bytes(data))


# ---- the budget ---------------------------------------------------------------------
def test_defaults_and_override() -> None:
    assert current_budget() == Budget(memory_factor=64.0, allowance=256 << 20)
    with budget(memory_factor=2, allowance=10) as inner:
        assert current_budget() is inner and inner.limit(100) == 210
        with budget(allowance=0):
            assert current_budget().limit(100) == 200
    assert current_budget() == Budget()


def test_input_size_counts_decompressed_lumps() -> None:
    bsp = sourcebsp.BspFile.from_bytes(example_map_bytes())
    assert input_size(bsp) == len(example_map_bytes())
    packed = sourcebsp.BspFile.from_bytes(bsp.to_bytes(compression="lzma"))
    extra = sum(e.fourcc for _, e in packed.iter_lumps() if e.compressed)
    assert extra > 0 and input_size(packed) == packed.file_size + extra


def test_check_memory_says_which_limit_and_how_to_raise_it() -> None:
    check_memory(1000, 64_000 + (256 << 20), "a thing")  # exactly the limit
    with pytest.raises(LimitExceededError) as info:
        check_memory(1000, 64_001 + (256 << 20), "a thing", lump="FACES", offset=12)
    error = info.value
    assert isinstance(error, BspError) and error.limit == "memory_factor"
    assert error.lump == "FACES" and error.offset == 12 and error.needed == 64_001 + (256 << 20)
    assert "sourcebsp.resources.budget(" in str(error) and "a thing" in str(error)
    with budget(allowance=1 << 30):
        check_memory(1000, 64_001 + (256 << 20), "a thing")


# ---- ranges -------------------------------------------------------------------------
def test_expand_ranges_matches_a_plain_loop() -> None:
    first, count = np.array([3, 0, 5, 2]), np.array([2, 0, 3, 4])
    owner, index = expand_ranges(first, count, 8, bsp=0, lump=LumpId.FACES, fields=("f", "n"), target="T")
    expected = [(k, first[k] + j) for k in range(4) for j in range(count[k])]
    assert list(zip(owner.tolist(), index.tolist())) == expected


@pytest.mark.parametrize("first, count", [(-1, 2), (7, 2), (0, -1), (0, 9), (1 << 40, 1)])
def test_expand_ranges_rejects_a_range_outside_the_table(first: int, count: int) -> None:
    with pytest.raises(BspFormatError, match=f"record 1: f {first} and n {count} do not lie within the 8 T"):
        expand_ranges(np.array([0, first]), np.array([1, count]), 8, bsp=0, lump=LumpId.FACES,
                      fields=("f", "n"), target="T")


def test_shared_ranges_are_held_to_the_budget() -> None:
    # 10 000 records each naming the whole 10 000-row table: 10**8 rows, from a small input.
    first, count = np.zeros(10_000, np.int64), np.full(10_000, 10_000)
    with pytest.raises(LimitExceededError, match="expanding 100000000 T rows"):
        expand_ranges(first, count, 10_000, bsp=100_000, lump=LumpId.FACES, fields=("f", "n"), target="T")
    # A thousand times fewer fit the default budget, and not a budget the caller made smaller.
    owner, index = expand_ranges(first[:100], count[:1000:10], 10_000, bsp=100_000, lump=LumpId.FACES,
                                 fields=("f", "n"), target="T")
    assert len(index) == 10**6 and index[-1] == 9_999 and owner[-1] == 99
    with budget(memory_factor=1, allowance=0), pytest.raises(LimitExceededError):
        expand_ranges(first[:100], count[:1000:10], 10_000, bsp=100_000, lump=LumpId.FACES,
                      fields=("f", "n"), target="T")


# ---- faces, brushes, leaves: checked before anything is sized ----------------------
def test_edge_count_past_the_table_is_refused_at_once() -> None:
    bsp = set_field(LumpId.FACES, 2, "numedges", 32767)  # dface_t.numedges is a short
    from sourcebsp.model.geometry import build_mesh, face_polygons

    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(BspFormatError) as info:
        face_polygons(bsp)
    assert time.perf_counter() - started < 1.0 and tracemalloc.get_traced_memory()[1] < 16 << 20
    tracemalloc.stop()
    assert info.value.lump == "FACES" and info.value.offset == bsp.entry(LumpId.FACES).fileofs + 2 * FACE_SIZE
    assert "numedges 32767" in str(info.value)
    with pytest.raises(BspFormatError):
        build_mesh(bsp)


def test_huge_side_count_is_refused_at_once() -> None:
    bsp = set_field(LumpId.BRUSHES, 1, "numsides", 1 << 28)
    from sourcebsp.model.brushes import build_brushes

    started = time.perf_counter()
    with pytest.raises(BspFormatError) as info:
        build_brushes(bsp)
    assert time.perf_counter() - started < 1.0
    assert info.value.lump == "BRUSHES" and info.value.offset == bsp.entry(LumpId.BRUSHES).fileofs + BRUSH_SIZE


def test_brushes_sharing_all_sides_are_held_to_the_budget() -> None:
    from sourcebsp.model.brushes import build_brushes

    bsp = set_field(LumpId.BRUSHES, 0, "numsides", 28)  # brush 0 takes every side of the map
    assert len(build_brushes(bsp)) == 7
    with budget(memory_factor=0, allowance=64 << 10):
        with pytest.raises(LimitExceededError, match="BRUSHSIDES|clipping brushes"):
            build_brushes(bsp)


def test_leaf_brush_ranges_are_checked() -> None:
    from sourcebsp.model.brushes import brush_models_of

    bsp = set_field(LumpId.LEAFS, 1, "numleafbrushes", 40_000)
    with pytest.raises(BspFormatError, match="LEAFBRUSHES") as info:
        brush_models_of(bsp)
    assert info.value.lump == "LEAFS"


# ---- missing and unreadable lumps --------------------------------------------------
def test_missing_texinfo_is_a_format_error() -> None:
    from sourcebsp.model.geometry import build_mesh

    bsp = example(Mutation("dir", int(LumpId.TEXINFO), 1, value=0))
    with pytest.raises(BspFormatError, match="the map has no TEXINFO lump") as info:
        build_mesh(bsp)
    assert info.value.lump == "TEXINFO"


def test_missing_nodes_is_a_format_error() -> None:
    from sourcebsp.model.brushes import brush_models_of

    bsp = example(Mutation("dir", int(LumpId.NODES), 1, value=0))
    with pytest.raises(BspFormatError, match="no NODES lump"):
        brush_models_of(bsp)


def test_faces_of_unknown_layout_name_the_lump() -> None:
    from sourcebsp.codecs.base import RawLump
    from sourcebsp.model.geometry import build_mesh
    from sourcebsp.model.lightmaps import build_atlas

    bsp = sourcebsp.BspFile.from_bytes(example_map_bytes())
    bsp.set_lump(LumpId.FACES, RawLump(bytes(bsp.raw_lump(LumpId.FACES)), "no layout known for lump version 9"))
    for build in (build_mesh, build_atlas):
        with pytest.raises(UnsupportedError, match="lump version") as info:
            build(bsp)
        assert info.value.lump == "FACES"


def test_non_finite_vertices_are_refused() -> None:
    from sourcebsp.model.geometry import build_mesh

    for bad in ([np.nan, 0, 0], [0, np.inf, 0], [0, 0, 3e38]):
        bsp = set_field(LumpId.VERTEXES, 3, "point", bad)
        with pytest.raises(BspFormatError, match="vertex 3 is not a usable point") as info:
            build_mesh(bsp)
        assert info.value.lump == "VERTEXES"
        assert info.value.offset == bsp.entry(LumpId.VERTEXES).fileofs + 3 * 12


# ---- visibility --------------------------------------------------------------------
def test_leaf_cluster_beyond_numclusters_names_the_leaf() -> None:
    room = [0.0, 0.0, 128.0]
    leaf = sourcebsp.BspFile.from_bytes(example_map_bytes()).leaf_at(room)
    bsp = set_field(LumpId.LEAFS, leaf, "cluster", 20)
    assert bsp.num_clusters == 1 and bsp.leaf_at(room) == leaf
    for a, b in ((room, room), (np.array([room, room]), np.array([room, room]))):
        with pytest.raises(BspFormatError, match="cluster 20") as info:
            bsp.is_visible(a, b)
        assert info.value.lump == "LEAFS"
        assert info.value.offset == bsp.entry(LumpId.LEAFS).fileofs + leaf * bsp.leafs.dtype.itemsize


def test_many_clusters_sharing_rows_stay_small() -> None:
    """100 000 clusters whose rows are one shared row: questions are answered, the matrix refused."""
    from sourcebsp.codecs.visibility import Visibility, compress_rows

    n = 100_000
    row = np.zeros((1, (n + 7) >> 3), np.uint8)
    row[0, 0] = 0b101  # sees clusters 0 and 2
    data, _ = compress_rows(row)
    vis = Visibility(np.full((n, 2), 4 + 8 * n, np.int32), data)
    a = np.arange(0, n, 97)
    tracemalloc.start()
    seen = vis.visible(a, np.full(len(a), 2))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seen.all() and not vis.visible(a, np.full(len(a), 1)).any()
    assert peak < 128 << 20
    assert vis.visible(np.array([-1, 5]), np.array([2, -1])).tolist() == [False, False]
    with pytest.raises(LimitExceededError, match="PVS matrix of 100000 clusters"):
        vis.pvs_matrix()


# ---- lightmaps ---------------------------------------------------------------------
def test_atlas_is_held_to_the_budget() -> None:
    from sourcebsp.model.lightmaps import build_atlas

    bsp = sourcebsp.BspFile.from_bytes(example_map_bytes())
    atlas = build_atlas(bsp)
    assert atlas is not None
    with budget(memory_factor=0, allowance=atlas.width * atlas.height * 4):
        with pytest.raises(LimitExceededError, match=f"atlas of {atlas.width} x") as info:
            build_atlas(bsp)
    assert info.value.lump == "LIGHTING"


def test_lightmap_size_cannot_overflow_the_check() -> None:
    from sourcebsp.model.lightmaps import lightmap_layout

    bsp = set_field(LumpId.FACES, 0, "lightmap_texture_size_in_luxels", [(1 << 31) - 1, (1 << 31) - 1])
    with pytest.raises(BspFormatError, match="runs past"):
        lightmap_layout(bsp)


# ---- the rule, measured on real maps -------------------------------------------------
@pytest.mark.parametrize("operation", ["geometry", "brushes", "lightmaps", "decode_all"])
def test_real_maps_keep_the_rule_with_a_small_allowance(map_path, operation: str) -> None:
    """Every operation fits 64 x input + 32 MiB (not 256): the estimates refuse no real map,
    and the memory actually used (numpy's allocations, traced) stays under that limit."""
    from sourcebsp.model.brushes import build_brushes
    from sourcebsp.model.geometry import build_mesh
    from sourcebsp.model.lightmaps import build_atlas

    run = {"geometry": build_mesh, "brushes": build_brushes,
           "lightmaps": lambda b: build_atlas(b) or build_atlas(b, hdr=True),
           "decode_all": lambda b: b.decode_all()}[operation]
    with sourcebsp.open(map_path) as bsp, budget(allowance=32 << 20) as small:
        tracemalloc.start()
        try:
            run(bsp)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak <= small.limit(input_size(bsp))


@pytest.mark.parametrize("values", [
    np.zeros(0, np.int64), np.array([7]), np.array([3, 3, 3], np.int16), np.array([[5, -1], [5, 2]], np.int32),
    np.random.default_rng(3).integers(-50, 50, 10_000), np.random.default_rng(4).integers(0, 2**40, 5_000),
    np.arange(1000, 0, -1, dtype=np.uint16),
])
def test_sorted_unique_equals_numpys_unique(values: np.ndarray) -> None:
    got = sorted_unique(values)
    want = np.unique(values)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


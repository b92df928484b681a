"""The occlusion lump (codecs/occlusion.py): occluders, their polygons, the vertex indices."""
from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId, RawLump
from sourcebsp.codecs.base import LumpContext
from sourcebsp.codecs.occlusion import (
    OCCLUDER,
    OCCLUDER_POLY,
    OCCLUSION_CODEC,
    OCCLUSION_V1_CODEC,
    Occlusion,
)

FUNC_OCCLUDER = re.compile(rb'"classname"\s+"func_occluder"')


def _occlusion(bsp: sourcebsp.BspFile) -> Occlusion | None:
    value = bsp.get_lump(LumpId.OCCLUSION)
    if isinstance(value, RawLump):
        # Only an empty lump of an unknown version may stay raw (VTMB's version 0).
        assert not value.data and bsp.entry(LumpId.OCCLUSION).version not in (1, 2)
        return None
    assert isinstance(value, Occlusion)
    return value


def test_occlusion_round_trips(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        value = _occlusion(bsp)
        if value is None:
            return
        codec = bsp.codec(LumpId.OCCLUSION)
        assert codec.encode(value, bsp._context(LumpId.OCCLUSION)) == bytes(bsp.lump_bytes(LumpId.OCCLUSION))
        assert bsp.count(LumpId.OCCLUSION) == len(value.occluders)


def test_occluders_match_func_occluder_entities(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        value = _occlusion(bsp)
        if value is None:
            return
        entities = bytes(bsp.lump_bytes(LumpId.ENTITIES))
        assert len(value.occluders) == len(FUNC_OCCLUDER.findall(entities))
        # vbsp numbers each func_occluder with the index of its occluder.
        numbers = sorted(int(n) for n in re.findall(rb'"occludernumber"\s+"(\d+)"', entities))
        assert numbers == list(range(len(value.occluders)))


def test_ranges_lie_inside_their_arrays(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        value = _occlusion(bsp)
        if value is None:
            return
        occluders, polys, indices = value.occluders, value.polys, value.vertex_indices
        assert (occluders["firstpoly"] >= 0).all() and (occluders["polycount"] >= 0).all()
        assert (occluders["firstpoly"] + occluders["polycount"]).max(initial=0) <= len(polys)
        assert (polys["firstvertexindex"] >= 0).all() and (polys["vertexcount"] >= 3).all()
        assert (polys["firstvertexindex"] + polys["vertexcount"]).max(initial=0) <= len(indices)
        assert ((indices >= 0) & (indices < len(bsp.vertexes))).all()
        assert ((polys["planenum"] >= 0) & (polys["planenum"] < len(bsp.planes))).all()
        assert (occluders["mins"] <= occluders["maxs"]).all()
        if "area" in occluders.dtype.names:
            assert ((occluders["area"] >= 0) & (occluders["area"] < len(bsp.areas))).all()


def test_polygons_lie_on_their_planes_inside_the_bounds(map_path: Path) -> None:
    """Independent geometry: every occluder vertex is on its polygon's plane and in the box."""
    with sourcebsp.open(map_path) as bsp:
        value = _occlusion(bsp)
        if value is None or not len(value.polys):
            return
        vertexes = bsp.vertexes
        points = vertexes["point"] if vertexes.dtype.names else vertexes
        for number, occluder in enumerate(value.occluders):
            for poly_index in range(*value.poly_range(number).indices(len(value.polys))):
                poly = value.polys[poly_index]
                plane = bsp.planes[poly["planenum"]]
                corners = points[value.vertex_indices[value.vertex_range(poly_index)]]
                assert np.abs(corners @ plane["normal"] - plane["dist"]).max() < 0.01
                assert (corners >= occluder["mins"] - 0.01).all() and (corners <= occluder["maxs"] + 0.01).all()


def test_counts_match_compile_logs(vmf_dir: Path) -> None:
    checked = 0
    for log_path in sorted(vmf_dir.glob("*.log")):
        map_path = vmf_dir.parent / f"{log_path.stem}.bsp"
        log = log_path.read_text(errors="replace")
        found = {name: re.search(rf"^{name}\s+(\d+)/", log, re.MULTILINE)
                 for name in ("occluders", "occluder polygons", "occluder vert ind")}
        if not map_path.exists() or not all(found.values()):
            continue
        with sourcebsp.open(map_path) as bsp:
            value = _occlusion(bsp)
            assert value is not None
            assert len(value.occluders) == int(found["occluders"].group(1))
            assert len(value.polys) == int(found["occluder polygons"].group(1))
            assert len(value.vertex_indices) == int(found["occluder vert ind"].group(1))
        checked += 1
    assert checked >= 3


def _sample() -> Occlusion:
    occluders = np.zeros(2, OCCLUDER)
    occluders["flags"] = [0, 1]
    occluders["firstpoly"] = [0, 1]
    occluders["polycount"] = [1, 2]
    occluders["mins"] = [[0, 0, 0], [-1, -2, -3]]
    occluders["maxs"] = [[64, 64, 0], [1, 2, 3]]
    occluders["area"] = [1, 2]
    polys = np.zeros(3, OCCLUDER_POLY)
    polys["firstvertexindex"] = [0, 4, 7]
    polys["vertexcount"] = [4, 3, 3]
    polys["planenum"] = [10, 11, 12]
    return Occlusion(occluders, polys, np.arange(10, dtype="<i4"))


@pytest.mark.parametrize("endian", ["<", ">"])
def test_synthetic_round_trip_both_byte_orders(endian: str) -> None:
    ctx = LumpContext(9, "OCCLUSION", 2, 20, endian, 0)
    raw = OCCLUSION_CODEC.encode(_sample(), ctx)
    assert len(raw) == 4 + 2 * 40 + 4 + 3 * 12 + 4 + 10 * 4
    assert struct.unpack_from(endian + "i", raw, 0)[0] == 2
    assert struct.unpack_from(endian + "3i", raw, 4 + 80 + 4 + 12)[:2] == (4, 3)
    decoded = OCCLUSION_CODEC.decode(memoryview(raw), ctx)
    for name in ("occluders", "polys", "vertex_indices"):
        got, want = getattr(decoded, name), getattr(_sample(), name)
        if got.dtype.names:
            for field in want.dtype.names:
                np.testing.assert_array_equal(got[field], want[field])
        else:
            np.testing.assert_array_equal(got, want)
    assert OCCLUSION_CODEC.encode(decoded, ctx) == raw


def test_version_1_has_no_area() -> None:
    ctx = LumpContext(9, "OCCLUSION", 1, 19, "<", 0)
    raw = OCCLUSION_V1_CODEC.encode(_sample(), ctx)  # area is dropped
    assert len(raw) == 4 + 2 * 36 + 4 + 3 * 12 + 4 + 10 * 4
    decoded = OCCLUSION_V1_CODEC.decode(memoryview(raw), ctx)
    assert "area" not in decoded.occluders.dtype.names
    np.testing.assert_array_equal(decoded.occluders["maxs"], _sample().occluders["maxs"])


def test_truncated_and_oversized_lumps() -> None:
    ctx = LumpContext(9, "OCCLUSION", 2, 20, "<", 4000)
    raw = OCCLUSION_CODEC.encode(_sample(), ctx)
    with pytest.raises(sourcebsp.TruncatedError) as caught:
        OCCLUSION_CODEC.decode(memoryview(raw[:-4]), ctx)
    assert caught.value.offset == 4000 + 4 + 80 + 4 + 36  # the vertex index count
    with pytest.raises(sourcebsp.TruncatedError) as caught:
        OCCLUSION_CODEC.decode(memoryview(raw[:50]), ctx)
    assert caught.value.offset == 4000
    with pytest.raises(sourcebsp.TruncatedError):
        OCCLUSION_CODEC.decode(memoryview(struct.pack("<i", -1)), ctx)
    with pytest.raises(sourcebsp.LumpSizeError) as caught:
        OCCLUSION_CODEC.decode(memoryview(raw + b"\0\0"), ctx)
    assert caught.value.offset == 4000 + len(raw)

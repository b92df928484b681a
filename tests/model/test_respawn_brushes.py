"""Titanfall collision brushes (CM_BRUSHES) rebuilt as solids: the side-to-plane indexing checked.

Sources for the indexing (plane of cutting side ``k = brush_side_offset + i`` is PLANES row
``CM_GRID.first_brush_plane + k - CM_BRUSH_SIDE_PLANE_OFFSETS[k]``; properties from
``6 * index + brush_side_offset``): bsp_tool 0.7.0 (``respawn.titanfall.brush``, compared
below side by side) and MRVN-Radiant (github.com/MRVN-Radiant/MRVN-Radiant,
``tools/remap/source/titanfall/titanfall_decompile.cpp`` ``Titanfall::ParseBrush`` reads them
by the same rule; its ``titanfall.h`` gives MASK_TEXTURE_DATA 0x01FF and MASK_DISCARD 0x4000).
The corpus map was compiled by MRVN-Radiant from ``tests/mapsrc/MRVN-Radiant/Titanfall
2/mp_crossfire.map`` in snake-biscuits/bsp_tool: against that source (not in the corpus),
all 458 brushes' boxes and all 182 cutting planes are the mapper's.  Independently of any
reader, the geometric checks below hold for every brush, and fail broadly when the planes are
taken one row off.
"""
from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from sourcebsp.codecs.respawn import (BRUSH_SIDE_DISCARD, CM_BRUSH_SIDE_PLANE_OFFSETS, CM_BRUSHES, CM_GRID,
                                      CM_GRID_CELLS, PLANES)
from sourcebsp.errors import BspFormatError
from sourcebsp.examples.respawn import example_respawn_bytes
from sourcebsp.model.respawn_brushes import AXIAL_NORMALS, brush_checks, brush_owners, build_respawn_brushes
from sourcebsp.respawn import RespawnBsp

from ..conftest import CORPUS

CROSSFIRE = CORPUS / "other-engines" / "titanfall2_mp_crossfire.bsp"
needs_crossfire = pytest.mark.skipif(not CROSSFIRE.is_file(), reason="no Titanfall 2 map in the corpus")


def _with_lump(data: bytes, index: int, new: bytes) -> bytes:
    """``data`` with lump ``index``'s bytes replaced in place (the same length)."""
    fileofs, filelen = struct.unpack_from("<2i", data, 16 + 16 * index)
    assert len(new) == filelen
    return data[:fileofs] + new + data[fileofs + filelen:]


def _lump(data: bytes, index: int) -> bytes:
    fileofs, filelen = struct.unpack_from("<2i", data, 16 + 16 * index)
    return data[fileofs:fileofs + filelen]


@needs_crossfire
def test_every_brush_of_a_real_map_closes_into_its_box_with_its_cutting_faces() -> None:
    found = build_respawn_brushes(RespawnBsp.open(CROSSFIRE))
    checks = brush_checks(found)
    assert len(checks.passed) == 458
    # (a) closed and convex, (b) corners span origin +- extents, (c) every cutting side bounds a face.
    assert checks.closed.all() and checks.box.all() and checks.cutting_faces.all()
    cutting = ~found.side_axial
    assert int(cutting.sum()) == 182 and found.side_kept[cutting].all()
    assert int((np.diff(found.side_first) > 6).sum()) == 137  # the brushes the indexing matters for


@needs_crossfire
def test_the_checks_fail_broadly_when_the_planes_are_one_row_off() -> None:
    data = CROSSFIRE.read_bytes()
    planes = _lump(data, PLANES)
    shifted = RespawnBsp(_with_lump(data, PLANES, planes[16:] + planes[:16]))
    found = build_respawn_brushes(shifted)
    cut = np.diff(found.side_first) > 6
    passed = brush_checks(found).passed[cut]
    assert passed.sum() < len(passed) / 4  # 14 of 137 in this map, against all 137 read right


@needs_crossfire
def test_planes_are_those_bsp_tool_builds_side_by_side() -> None:
    bsp_tool = pytest.importorskip("bsp_tool")
    from bsp_tool.branches.respawn import titanfall

    reference = bsp_tool.load_bsp(str(CROSSFIRE))
    found = build_respawn_brushes(RespawnBsp.open(CROSSFIRE))
    # The map has no texture vectors (an empty lump), which titanfall.brush pairs every side with.
    blank = SimpleNamespace(s=([0.0, 0.0, 0.0], 0.0), t=([0.0, 0.0, 0.0], 0.0))
    reference.CM_BRUSH_SIDE_TEXTURE_VECTORS = [blank] * len(reference.CM_BRUSH_SIDE_PROPERTIES)
    normals, dists = [], []
    for index in range(len(reference.CM_BRUSHES)):
        for side in titanfall.brush(reference, index).sides:
            normals.append(list(side.plane.normal))
            dists.append(side.plane.distance)
    assert len(dists) == len(found.side_dist)
    assert np.allclose(normals, found.side_normal, atol=1e-6) and np.allclose(dists, found.side_dist, atol=1e-3)


@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_the_example_ramps_share_a_plane_through_an_offset(variant: str, tmp_path: Path) -> None:
    path = tmp_path / "mp_room.bsp"
    path.write_bytes(example_respawn_bytes(variant))
    bsp = RespawnBsp.open(path)
    found = build_respawn_brushes(bsp)
    checks = brush_checks(found)
    assert checks.passed.tolist() == [True, True, True]
    # Both ramps' sloped sides are PLANES row 6, after the room's six (first_brush_plane 6): the
    # second through its offset of 1.
    assert found.side_plane.tolist() == [-1] * 6 + [-1] * 6 + [6] + [-1] * 6 + [6]
    slope = np.array([-1.0, 0.0, 2.0]) / np.sqrt(5.0)
    assert np.allclose(found.side_normal[[12, 19]], slope, atol=1e-6)
    assert np.array_equal(found.side_normal[:6], AXIAL_NORMALS)
    # A ramp's -X and +Z box sides are edges of the wedge (DISCARD): no face; every other side has one.
    discard = (found.side_flags & BRUSH_SIDE_DISCARD) != 0
    assert discard.tolist() == [False] * 6 + [False, True, False, False, True, False, False] * 2
    assert np.array_equal(found.side_kept, ~discard)
    mins, maxs = found.brushes.bounds()
    assert np.array_equal(mins, [[-256, -256, -16], [-128, -192, 0], [-128, 64, 0]])
    assert np.array_equal(maxs, [[256, 256, 0], [0, -64, 64], [0, 192, 64]])
    reference = pytest.importorskip("bsp_tool").load_bsp(str(path))
    from bsp_tool.branches.respawn import titanfall

    sides = [side for index in range(3) for side in titanfall.brush(reference, index).sides]
    assert np.allclose([list(s.plane.normal) for s in sides], found.side_normal, atol=1e-6)
    assert [s.shader for s in sides] == [bsp.texture_names()[t] for t in
                                         [0] * 12 + [1] + [0] * 6 + [1]]


def test_a_plane_offset_past_the_planes_is_refused_naming_the_lump() -> None:
    data = example_respawn_bytes("titanfall2")
    far = RespawnBsp(_with_lump(data, CM_BRUSH_SIDE_PLANE_OFFSETS, struct.pack("<2H", 0, 0xFFFF)))
    with pytest.raises(BspFormatError) as info:
        build_respawn_brushes(far)  # row 6 + 1 - 65535
    fileofs = struct.unpack_from("<i", data, 16 + 16 * CM_BRUSH_SIDE_PLANE_OFFSETS)[0]
    assert info.value.lump == "CM_BRUSH_SIDE_PLANE_OFFSETS" and info.value.offset == fileofs + 2
    assert f"{fileofs + 2}" in str(info.value)


@pytest.mark.parametrize("field, value, lump", [("brush_side_offset", 5, "CM_BRUSHES"),
                                                ("index", 40, "CM_BRUSHES"),
                                                ("extents", float("nan"), "CM_BRUSHES")])
def test_a_brush_reaching_past_its_lumps_is_refused(field: str, value: float, lump: str) -> None:
    data = example_respawn_bytes("titanfall2")
    bsp = RespawnBsp(data)
    brushes = bsp.array(CM_BRUSHES).copy()
    brushes[field][2] = value
    with pytest.raises(BspFormatError) as info:
        build_respawn_brushes(RespawnBsp(_with_lump(data, CM_BRUSHES, brushes.tobytes())))
    assert info.value.lump == lump
    assert info.value.offset == bsp.lumps[CM_BRUSHES].fileofs + 2 * brushes.dtype.itemsize


# ---- the collision grid: which model each brush belongs to, and its contents -----------------

@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_the_example_grid_gives_the_second_ramp_to_model_one(variant: str) -> None:
    owners = brush_owners(RespawnBsp(example_respawn_bytes(variant)))
    # Cell 0's geo set names primitives 0-1 (slab, first ramp), cells 1-3 share the slab's geo set,
    # cell 4 (model 0's) is empty and cell 5 (model 1's) names the second ramp.
    assert owners.model.tolist() == [0, 0, 1]
    assert owners.contents.tolist() == [0x1, 0x8000001, 0x1]  # SOLID; SOLID | DETAIL; SOLID
    assert owners.conflicts.tolist() == []


@needs_crossfire
def test_every_brush_of_the_real_map_is_in_a_world_cell() -> None:
    bsp = RespawnBsp.open(CROSSFIRE)
    owners = brush_owners(bsp)
    # One model (the world), one unique contents value (SOLID): MRVN-Radiant gives each brush a geo set.
    assert bsp.count("MODELS") == 1 and bsp.array("CM_UNIQUE_CONTENTS").tolist() == [1]
    assert (owners.model == 0).all() and (owners.contents == 1).all() and len(owners.model) == 458
    # Cross-check by hand: every brush row appears among the geo sets' primitives.
    sets = bsp.array("CM_GEO_SETS")
    assert sorted(set(((sets["primitive"] >> 8) & 0xFFFF).tolist())) == list(range(458))


def test_a_map_without_grid_cells_leaves_every_brush_unowned() -> None:
    data = example_respawn_bytes("titanfall2")
    cells = _lump(data, CM_GRID_CELLS)
    header = bytearray(data)
    struct.pack_into("<i", header, 16 + 16 * CM_GRID_CELLS + 4, 0)  # the lump's length: 0
    owners = brush_owners(RespawnBsp(bytes(header)))
    assert len(cells) == 24 and owners.model.tolist() == [-1, -1, -1] and owners.contents.tolist() == [0, 0, 0]


@pytest.mark.parametrize("lump, row, field, value, itemsize", [
    ("CM_GRID_CELLS", 5, "num_geo_sets", 9, 4),  # past the 3 geo sets
    ("CM_GEO_SETS", 0, "num_primitives", 7, 8),  # a run past the 2 primitives
    ("CM_GEO_SETS", 2, "primitive", (40 << 8), 8),  # brush 40 of 3
    ("CM_PRIMITIVES", 1, None, (1 << 8) | 5, 4),  # contents 5 of 2
])
def test_a_grid_reaching_past_its_lumps_is_refused_naming_the_lump(lump: str, row: int, field: str | None,
                                                                   value: int, itemsize: int) -> None:
    from sourcebsp.codecs import respawn as codecs

    data = example_respawn_bytes("titanfall2")
    bsp = RespawnBsp(data)
    index = getattr(codecs, lump)
    records = bsp.array(index).copy()
    if field is None:
        records[row] = value
    else:
        records[field][row] = value
    with pytest.raises(BspFormatError) as info:
        brush_owners(RespawnBsp(_with_lump(data, index, records.tobytes())))
    assert info.value.lump == lump and info.value.offset == bsp.lumps[index].fileofs + row * itemsize


def test_a_grid_larger_than_its_cells_is_refused() -> None:
    data = example_respawn_bytes("titanfall2")
    bsp = RespawnBsp(data)
    grid = bsp.array(CM_GRID).copy()
    grid["count"] = [40, 40]
    with pytest.raises(BspFormatError) as info:
        brush_owners(RespawnBsp(_with_lump(data, CM_GRID, grid.tobytes())))
    assert info.value.lump == "CM_GRID" and "CM_GRID_CELLS has 6" in str(info.value)

"""Slots 22-25 from BSP 21 on (codecs/propcollision.py): face brush lists, L4D2 prop hulls."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId, RawLump
from sourcebsp.codecs.propcollision import face_brushes

SLOTS = (LumpId.PROPCOLLISION, LumpId.PROPHULLS, LumpId.PROPHULLVERTS, LumpId.PROPTRIS)


def test_slots_round_trip(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        for lump in SLOTS + (LumpId.PHYSLEVEL,):
            value = bsp.get_lump(lump)
            raw = bytes(bsp.lump_bytes(lump))
            if isinstance(value, RawLump):
                assert value.data == raw
                # Every non-empty slot of the corpus is understood.
                assert not raw, (bsp.lump_name(lump), bsp.variant.name)
            else:
                assert bsp.codec(lump).encode(value, bsp._context(lump)) == raw


def test_face_brush_lists_cover_every_face(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        if bsp.variant.name not in ("csgo", "strata"):
            return
        lists, brushes = bsp.get_lump(LumpId.PROPHULLS), bsp.get_lump(LumpId.PROPCOLLISION)
        assert len(lists) == len(bsp.faces)
        counts = lists["face_brush_count"].astype(np.int64)
        starts = lists["face_brush_start"].astype(np.int64)
        single = counts <= 1
        assert (starts[single] < len(bsp.brushes)).all()
        # Faces with several brushes use consecutive, disjoint runs of lump 22.
        assert (starts[~single] + counts[~single]).max(initial=0) <= len(brushes)
        assert int(counts[~single].sum()) == len(brushes)
        assert (np.asarray(brushes) < len(bsp.brushes)).all()


def test_each_face_lies_on_a_side_of_its_brushes(map_path: Path) -> None:
    """Independent geometry: a face's plane is the plane of a side of every brush listed for it."""
    with sourcebsp.open(map_path) as bsp:
        if bsp.variant.name not in ("csgo", "strata"):
            return
        faces, brush_of = face_brushes(bsp.get_lump(LumpId.PROPHULLS), bsp.get_lump(LumpId.PROPCOLLISION))
        assert len(faces) >= len(bsp.faces)
        face_planes = bsp.faces["planenum"].astype(np.int64)[faces]
        brushes, sides = bsp.brushes, bsp.brushsides
        for face_plane, brush in zip(face_planes, brush_of):
            first, count = int(brushes[brush]["firstside"]), int(brushes[brush]["numsides"])
            side_planes = sides["planenum"][first : first + count].astype(np.int64)
            # A face may face either way of its side's plane (planes come in pairs p, p^1).
            assert ((side_planes | 1) == (face_plane | 1)).any()


def test_face_brush_counts_match_compile_log(vmf_dir: Path) -> None:
    log = (vmf_dir / "momentum_mp_lobby.log").read_text(errors="replace")
    lists = int(re.search(r"^facebrushlists\s+(\d+)/", log, re.MULTILINE).group(1))
    brushes = int(re.search(r"^facebrushes\s+(\d+)/", log, re.MULTILINE).group(1))
    with sourcebsp.open(vmf_dir.parent / "momentum_mp_lobby.bsp") as bsp:
        assert len(bsp.get_lump(LumpId.PROPHULLS)) == lists
        assert len(bsp.get_lump(LumpId.PROPCOLLISION)) == brushes
        assert bsp.get_lump(LumpId.PROPHULLS).dtype.itemsize == 8  # Strata's 32-bit fields


def test_left4dead2_prop_hull_lumps_decode(all_maps: list[Path]) -> None:
    checked = 0
    for map_path in all_maps:
        with sourcebsp.open(map_path) as bsp:
            if bsp.variant.name != "left4dead2":
                continue
            for lump, itemsize in zip(SLOTS, (8, 16, 12, 8)):
                value = bsp.get_lump(lump)
                assert isinstance(value, np.ndarray) and value.dtype.itemsize == itemsize
                assert len(value) * itemsize == bsp.entry(lump).filelen
            checked += 1
    assert checked >= 2


def test_face_brushes_helper() -> None:
    lists = np.zeros(4, [("face_brush_count", "<u2"), ("face_brush_start", "<u2")])
    lists["face_brush_count"] = [1, 0, 3, 2]
    lists["face_brush_start"] = [7, 9, 0, 3]
    faces, brushes = face_brushes(lists, np.array([4, 5, 6, 8, 2], "<u2"))
    assert faces.tolist() == [0, 2, 2, 2, 3, 3]
    assert brushes.tolist() == [7, 4, 5, 6, 8, 2]
    lists["face_brush_start"][3] = 4
    with pytest.raises(sourcebsp.BspFormatError):
        face_brushes(lists, np.array([4, 5, 6, 8, 2], "<u2"))

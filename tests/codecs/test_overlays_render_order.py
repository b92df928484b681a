"""Overlay render order helpers (codecs/overlays.py: split_render_order, join_render_order)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId, RawLump
from sourcebsp.codecs.overlays import join_render_order, split_render_order

MAX_FACES = {LumpId.OVERLAYS: 64, LumpId.WATEROVERLAYS: 256}  # OVERLAY_BSP_FACE_COUNT, WATEROVERLAY_...


def test_split_then_join_is_the_identity(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        for lump, max_faces in MAX_FACES.items():
            overlays = bsp.get_lump(lump)
            if isinstance(overlays, RawLump):
                assert not overlays.data
                continue
            count, order = split_render_order(overlays)
            assert count.shape == order.shape == (len(overlays),)
            assert (count <= max_faces).all() and (order < 4).all()
            packed = overlays["face_count_and_render_order"]
            np.testing.assert_array_equal(join_render_order(count, order), packed)
            # The used face slots point at faces; the unused ones are zero.
            if len(overlays):
                used = np.arange(max_faces) < count[:, None]
                faces = overlays["faces"]
                assert ((faces[used] >= 0) & (faces[used] < len(bsp.faces))).all()
                assert (faces[~used] == 0).all()


def test_render_order_and_faces_match_srctools(all_maps: list[Path]) -> None:
    from srctools.bsp import BSP

    compared = 0
    for map_path in all_maps:
        with sourcebsp.open(map_path) as bsp:
            if bsp.version < 19 or bsp.endian == ">" or not bsp.entry(LumpId.OVERLAYS).filelen:
                continue  # srctools reads neither BSP 17 nor big-endian maps
            overlays = bsp.overlays
            count, order = split_render_order(overlays)
            theirs = list(BSP(map_path).overlays)
            assert len(theirs) == len(overlays)
            for i, overlay in enumerate(theirs):
                assert overlay.render_order == order[i]
                assert list(overlay.faces) == overlays["faces"][i, : count[i]].tolist()
            compared += len(theirs)
    assert compared >= 30


def test_join_packs_the_top_two_bits() -> None:
    packed = join_render_order([0, 5, 16383, 1], [0, 1, 3, 2])
    assert packed.dtype == np.uint16
    assert packed.tolist() == [0, 0x4005, 0xFFFF, 0x8001]
    count, order = split_render_order(packed)
    assert count.tolist() == [0, 5, 16383, 1] and order.tolist() == [0, 1, 3, 2]
    with pytest.raises(ValueError):
        join_render_order([16384], [0])
    with pytest.raises(ValueError):
        join_render_order([1], [4])
    with pytest.raises(ValueError):
        join_render_order([-1], [0])

"""``export --skybox``: the 3D skybox as its own node, scaled around the playable space; every corpus map
with a sky_camera, through the Khronos validator."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pygltflib")  # before the package, which needs it to import

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.converters import gltf as gl

from ..conftest import MAPS
from .test_gltf import _chunks, validator  # noqa: F401 (fixture)
from .test_gltf_props import _validate


def _sky_maps() -> list[Path]:
    found = []
    for path in MAPS:
        with sourcebsp.open(path) as bsp:
            try:
                if any(e.get("classname") == "sky_camera" for e in bsp.entities):
                    found.append(path)
            except sourcebsp.BspError:
                continue
    return found


def _box(document: dict, mesh: int) -> tuple[np.ndarray, np.ndarray]:
    lows, highs = [], []
    for primitive in document["meshes"][mesh]["primitives"]:
        accessor = document["accessors"][primitive["attributes"]["POSITION"]]
        lows.append(accessor["min"])
        highs.append(accessor["max"])
    return np.min(lows, 0), np.max(highs, 0)


@pytest.mark.slow
def test_skybox_surrounds_the_playable_space(tmp_path: Path, validator: Path) -> None:  # noqa: F811
    maps = _sky_maps()
    if not maps:
        pytest.skip("no corpus map with a sky_camera")
    written, with_sky = [], 0
    for path in maps:
        plain = gl.ExportStats()
        gl.glb_bytes(path, stats=plain)
        out = tmp_path / f"{path.stem}.glb"
        assert main(["export", str(path), "-o", str(out), "--skybox"]) == 0
        document, _ = _chunks(out.read_bytes())
        written.append(out)
        # The world's triangles are split between two meshes, none lost or doubled.
        assert sum(sum(document["accessors"][p["indices"]]["count"] for p in m["primitives"]) // 3
                   for m in document["meshes"]) == plain.triangles
        sky = [n for n in document["nodes"] if n.get("name") == "skybox"]
        if not sky:
            continue
        with_sky += 1
        with sourcebsp.open(path) as bsp:
            camera = next(e for e in bsp.entities if e.get("classname") == "sky_camera")
            scale = float(camera.get("scale", "16"))
            origin = np.array([float(v) for v in camera["origin"].split()])
        node = sky[0]
        assert node["scale"] == [scale] * 3
        low, high = _box(document, node["mesh"])
        # Placed: (sky - camera origin) * scale, in glTF's Y-up axes (x, z, -y).
        y_up_origin = np.array([origin[0], origin[2], -origin[1]])
        placed_low, placed_high = (low - y_up_origin) * scale, (high - y_up_origin) * scale
        world = next(n for n in document["nodes"] if n.get("name") == "world")
        world_low, world_high = _box(document, world["mesh"])
        centre = (world_low + world_high) / 2
        # Seen from the playable space's centre, the scaled skybox surrounds it horizontally (x and glTF z).
        assert placed_low[0] < centre[0] < placed_high[0] and placed_low[2] < centre[2] < placed_high[2], path
    assert with_sky
    _validate(validator, *written)

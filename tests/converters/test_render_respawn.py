"""``render`` of Titanfall rBSP maps: the Source views drawn from the map's meshes.

What is checked against the map itself: the top view of the example room covers the
room's floor where the room is (the floor's 512x512 square fills the frame as the
Source room's does), the player view looks from the room's player start, the
overview's markers are the entities' spawns, and meshes flagged sky or with a tools/
material are not drawn.
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from sourcebsp.cli import main
from sourcebsp.converters import render as rd
from sourcebsp.converters.render.camera import EYE_HEIGHT
from sourcebsp.converters.render.respawn import HIDDEN_MESH_FLAGS, respawn_scene_and_sight
from sourcebsp.examples.respawn import example_respawn_bytes, write_example_respawn
from sourcebsp.respawn import RespawnBsp

from ..conftest import CORPUS

CROSSFIRE = CORPUS / "other-engines" / "titanfall2_mp_crossfire.bsp"
needs_crossfire = pytest.mark.skipif(not CROSSFIRE.is_file(), reason="no Titanfall 2 map in the corpus")


@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_the_example_room_draws_in_every_view(variant: str, tmp_path: Path) -> None:
    path = write_example_respawn(tmp_path / "mp_room.bsp", variant)
    top = rd.render(path, view="top", size=(200, 200))
    # Seen from above only the floor (two triangles) faces up; it is the whole room's square, framed
    # with a 2% margin each side: 96% of each axis covered.
    assert top.triangles == 2 and top.covered == pytest.approx(0.96 ** 2, abs=0.02)
    # From the room's player start (a bare room scores low, so other views of it may win): inside the room.
    player = rd.render(path, view="player", size=(160, 90))
    assert player.covered == 1.0 and not player.warnings and player.views_tried > 1
    assert player.camera is not None and all(abs(v) < 256 for v in player.camera[:2]) and 0 < player.camera[2] < 256
    fixed = rd.render(path, camera=(0, 0, 1 + EYE_HEIGHT, 0, 0), size=(160, 90))
    assert fixed.camera == pytest.approx((0.0, 0.0, 1.0 + EYE_HEIGHT)) and fixed.covered == 1.0
    overview = rd.render(RespawnBsp.open(path), view="overview", size=(128, 128), markers=True)
    assert overview.covered > 0.8 and overview.overview is not None


def test_spawn_classes_of_titanfall_are_starts_and_markers(tmp_path: Path) -> None:
    path = write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2")
    bsp = RespawnBsp.open(path)
    entities = bsp.entities
    entities.remove(entities.first(classname="info_player_start"))
    entities.add(classname="info_spawnpoint_human_start", origin="100 -50 0", angles="0 45 0", TeamNum="3")
    entities.add(classname="info_spawnpoint_titan", origin="-100 50 0", TeamNum="2")
    bsp.entities = entities
    _, sight = respawn_scene_and_sight(bsp)
    starts = sight.starts()
    assert [c.source for c in starts] == ["info_spawnpoint_human_start #0", "info_spawnpoint_titan #0"]
    assert np.allclose(starts[0].eye, [100, -50, EYE_HEIGHT]) and np.allclose(starts[0].angles, [0, 45, 0])
    assert [(m.kind, m.origin.tolist()) for m in sight.markers()] == [("blue", [100, -50, 0]), ("red", [-100, 50, 0])]
    assert sight.camera_at("ramp_north").source == "entity ramp_north"  # the func_brush: its model's centre
    assert np.allclose(sight.camera_at("ramp_north").eye, [-64, 128, 32])


def test_sky_and_tool_meshes_are_not_drawn(tmp_path: Path) -> None:
    data = example_respawn_bytes("titanfall2")
    bsp = RespawnBsp(data)
    meshes = bsp.array("MESHES").copy()
    meshes["flags"] |= 0x0004  # SKY
    fileofs = bsp.lumps[0x50].fileofs
    sky = data[:fileofs] + meshes.tobytes() + data[fileofs + len(meshes.tobytes()):]
    path = tmp_path / "sky.bsp"
    path.write_bytes(sky)
    with pytest.raises(rd.NothingToDraw):
        rd.render(path, view="top", size=(32, 32))
    assert HIDDEN_MESH_FLAGS & 0x0004
    # A tools/ material hides its meshes too (the room's mesh uses TEXTURE_DATA 0).
    strings = bsp.lumps[0x2B]
    tools = data[:strings.fileofs] + b"tools/toolsnodraw\0\0\0\0\0\0\0" + data[strings.fileofs + 24:]
    table = bsp.lumps[0x2C]
    tools = tools[:table.fileofs] + struct.pack("<2i", 0, 18) + tools[table.fileofs + 8:]
    path.write_bytes(tools)
    assert RespawnBsp.open(path).texture_names()[0] == "tools/toolsnodraw"
    with pytest.raises(rd.NothingToDraw):
        rd.render(path, view="top", size=(32, 32))


@needs_crossfire
@pytest.mark.parametrize("view", ["overview", "top", "player"])
def test_the_corpus_map_renders_from_the_cli(view: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"{view}.png"
    assert main(["render", str(CROSSFIRE), "-o", str(out), "--view", view, "--size", "320x180"]) == 0
    line = capsys.readouterr().out
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"{view} view" in line
    from PIL import Image

    image = np.asarray(Image.open(out))
    background = (image == rd.BACKGROUND[view]).all(axis=2).mean()
    assert image.shape == (180, 320, 3) and background < 0.7  # the map, not an empty frame

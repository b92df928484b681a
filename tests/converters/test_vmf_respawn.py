"""``decompile`` of Titanfall rBSP maps: collision brushes as world solids, entities as entities."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from sourcebsp.cli import main
from sourcebsp.codecs.respawn import BRUSH_SIDE_TEXTURE_DATA
from sourcebsp.converters.vmf.geometry import PLANE_RULE, defined_plane_errors
from sourcebsp.converters.vmf.respawn import build_respawn_vmf
from sourcebsp.converters.vmf.writer import VmfSolid
from sourcebsp.examples.respawn import write_example_respawn
from sourcebsp.model.respawn_brushes import build_respawn_brushes
from sourcebsp.respawn import RespawnBsp

from ..conftest import CORPUS

CROSSFIRE = CORPUS / "other-engines" / "titanfall2_mp_crossfire.bsp"
needs_crossfire = pytest.mark.skipif(not CROSSFIRE.is_file(), reason="no Titanfall 2 map in the corpus")
_PLANE = re.compile(r'"plane" "\(([^)]*)\) \(([^)]*)\) \(([^)]*)\)"')


def _written_planes(text: str) -> np.ndarray:
    """The ``plane`` points of every side of the VMF text, as written: ``(S, 3, 3)``."""
    return np.array([[[float(v) for v in p.split()] for p in m.groups()] for m in _PLANE.finditer(text)])


def _check_sides(bsp: RespawnBsp, text: str) -> int:
    """The written sides of CM_BRUSHES' brushes (the first ones of the text: the world's, then
    those of the brush entities, each in CM_BRUSHES order) define the planes of the brush sides
    they came from; returns their count."""
    found = build_respawn_brushes(bsp)
    kept = found.brushes
    written = kept.closed[kept.side_brush]
    points = _written_planes(text)[:int(written.sum())]
    assert len(points) == int(written.sum())
    err_n, err_d = defined_plane_errors(points, kept.normal[written], kept.dist[written], decimals=None)
    assert (err_n <= PLANE_RULE[0]).all() and (err_d <= PLANE_RULE[1]).all()
    return len(points)


@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_the_example_room_decompiles_its_brushes_and_entities(variant: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = write_example_respawn(tmp_path / "mp_room.bsp", variant)
    out = tmp_path / "room.vmf"
    assert main(["decompile", str(path), "-o", str(out), "--variant", variant]) == 0
    line = capsys.readouterr().out.strip()
    # The slab in the world, the first ramp (contents SOLID | DETAIL) in a func_detail, the other ramp
    # in the func_brush, the trigger's box in its entity.
    assert line == (f"{out}: 4 solids (1 world, 1 detail, 2 in entities), 22 sides, 0 displacements, "
                    "3 brush entities, 2 point entities, 1 static props, 0 overlays, 0 cubemaps")
    text = out.read_text()
    bsp = RespawnBsp.open(path)
    assert _check_sides(bsp, text) == 16  # the slab's 6, each ramp's 5 (two box sides are edges)
    materials = re.findall(r'"material" "([^"]*)"', text)
    assert materials.count("dev/dev_measurewall01a") == 2 and materials.count("dev/dev_measuregeneric01") == 14
    assert materials.count("tools/toolstrigger") == 6
    # The sloped sides' axes are the map's texture vectors (scale 0.25), the rest too; the trigger's
    # six sides (no texture vectors) Hammer's default axes, also at 0.25.
    assert text.count('"uaxis" "[1 0 0 0] 0.25"') + text.count('"uaxis" "[0 1 0 0] 0.25"') == 16 + 6
    for classname in ("info_player_start", "light", "prop_static"):
        assert f'"classname" "{classname}"' in text
    assert '"model" "models/props_c17/oildrum001.mdl"' in text
    # What the compiler writes from the brushes is left for it to write again.
    assert "*trigger_" not in text and '"model" "*1"' not in text


def _solid_corners(solid: VmfSolid) -> np.ndarray:
    return np.concatenate([side.vertices for side in solid.sides])


def test_brush_entities_get_the_brushes_of_their_model_and_their_trigger_planes(tmp_path: Path) -> None:
    bsp = RespawnBsp.open(write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2"))
    vmf, stats = build_respawn_vmf(bsp)
    by_class = {e.classname: e for e in vmf.entities}
    assert [s.brush for s in vmf.world.solids] == [0]
    assert [s.brush for s in by_class["func_detail"].solids] == [1]  # CM_UNIQUE_CONTENTS: SOLID | DETAIL
    ramp = by_class["func_brush"].solids
    assert [s.brush for s in ramp] == [2] and len(ramp[0].sides) == 5
    corners = _solid_corners(ramp[0])  # CM_BRUSHES row 2's box: origin (-64, 128, 32) +- (64, 64, 32)
    assert np.allclose(corners.min(0), [-128, 64, 0]) and np.allclose(corners.max(0), [0, 192, 64])
    trigger = by_class["trigger_multiple"]
    assert len(trigger.solids) == 1 and len(trigger.solids[0].sides) == 6
    corners = _solid_corners(trigger.solids[0])  # the keys' planes, as the keys' bounds say
    assert np.allclose(corners.min(0), [96, -160, 32]) and np.allclose(corners.max(0), [160, -96, 96])
    # Each side's three points define its key's plane (outward normal, distance), as vbsp reads them.
    planes = {tuple(float(x) for x in v.split()) for k, v in bsp.entities[-1].items() if k.startswith("*trigger_brush")}
    for side in trigger.solids[0].sides:
        a, b, c = np.asarray(side.points, float)
        normal = np.cross(c - a, b - a)  # Hammer's winding: clockwise seen from outside
        normal /= np.linalg.norm(normal)
        assert any(np.allclose(normal, p[:3], atol=1e-6) and abs(normal @ a - p[3]) < 1e-3 for p in planes)
    assert [k for k, _ in trigger.pairs] == ["classname", "targetname"]
    assert stats.brush_entities == 3 and stats.detail_solids == 1 and stats.not_rebuilt == []
    # detail_as_world keeps the detail ramp in the world.
    from sourcebsp.converters.vmf.decompile import DecompileOptions

    vmf, _ = build_respawn_vmf(bsp, DecompileOptions(detail_as_world=True))
    assert [s.brush for s in vmf.world.solids] == [0, 1]
    assert "func_detail" not in {e.classname for e in vmf.entities}


def test_a_model_no_entity_names_leaves_its_brushes_in_the_world(tmp_path: Path) -> None:
    bsp = RespawnBsp.open(write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2"))
    entities = bsp.entities
    entities.remove(entities.first(classname="func_brush"))
    bsp.entities = entities
    vmf, stats = build_respawn_vmf(bsp)
    assert [s.brush for s in vmf.world.solids] == [0, 2]  # the first ramp is detail: in the func_detail


@pytest.mark.parametrize("planes", [
    ["1 0 0 160", "-1 0 0 -96", "0 1 0 -96", "0 -1 0 160", "0 0 1 96"],  # open below
    ["1 0 0 160", "-1 0 0 -96", "0 1 0 -96", "0 -1 0 160", "0 0 1 96", "0 0 0 -32"],  # no direction
    ["1 0 0 160", "-1 0 0 -96", "0 1 0 -96", "0 -1 0 160", "0 0 1 96", "0 0 -1 nan"],
    ["1 0 0 160", "-1 0 0 -96", "0 1 0 -96", "0 -1 0 160", "0 0 1 96", "0 0 -1"],
])
def test_trigger_planes_that_close_no_solid_are_reported_not_written(planes: list[str], tmp_path: Path) -> None:
    bsp = RespawnBsp.open(write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2"))
    entities = bsp.entities
    entities.remove(entities.first(classname="trigger_multiple"))
    entities.add(classname="trigger_once", **{f"*trigger_brush_0_plane_{i}": p for i, p in enumerate(planes)})
    bsp.entities = entities
    vmf, stats = build_respawn_vmf(bsp)
    assert [e.solids for e in vmf.entities if e.classname == "trigger_once"] == [[]]
    assert stats.not_rebuilt == ["1 trigger brush whose *trigger_brush planes do not close a solid"]


def test_the_vmf_keeps_each_side_material_from_its_property(tmp_path: Path) -> None:
    bsp = RespawnBsp.open(write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2"))
    vmf, stats = build_respawn_vmf(bsp)
    names = bsp.texture_names()
    properties = bsp.array("CM_BRUSH_SIDE_PROPERTIES")
    sides = [side for solid in vmf.iter_solids() for side in solid.sides if side.brushside >= 0]
    assert len(sides) == 16
    assert [s.material for s in sides] == [names[int(properties[s.brushside]) & BRUSH_SIDE_TEXTURE_DATA]
                                           for s in sides]
    all_sides = [side for solid in vmf.iter_solids() for side in solid.sides]
    assert len({s.id for s in all_sides}) == len(all_sides) == stats.sides
    assert stats.bsp_brushes == 3 and stats.skipped_brushes == [] and stats.sides_off_plane_rule == 0


@needs_crossfire
def test_the_corpus_map_decompiles_every_brush_and_entity(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mp_crossfire.bsp"
    shutil.copy(CROSSFIRE, path)
    (tmp_path / "mp_crossfire_spawn.ent").write_bytes(
        b'ENTITIES01\n{\n"classname" "info_spawnpoint_human"\n"origin" "64 0 0"\n}\n\0')
    out, report = tmp_path / "cf.vmf", tmp_path / "cf.json"
    assert main(["decompile", str(path), "-o", str(out), "--report", str(report)]) == 0
    line = capsys.readouterr().out.strip()
    # The lump's 33 entities less worldspawn, and the one of the .ent file.
    assert line.startswith(f"{out}: 458 solids (458 world, 0 detail, 0 in entities), 2733 sides, ")
    assert ", 33 point entities, 0 static props, " in line
    text = out.read_text()
    assert _check_sides(RespawnBsp.open(path), text) == 2733
    assert text.count('"classname" "info_spawnpoint_human"') == 1
    import json

    data = json.loads(report.read_text())
    assert data["compile_problems"] == [] and data["bsp_brushes"]["skipped_not_closed"] == []
    assert data["sides"]["off_plane_rule"] == 0


# Damaged floats in the lumps the decompile reads (fuzz finds of the rBSP seeds): each ends in a
# VMF or a BspError, with no numpy warning (a signalling NaN warns when cast, an infinite texture
# vector when normalised).
@pytest.mark.parametrize(("lump", "column", "value"), [
    ("PLANES", 0, "snan"), ("PLANES", 3, "snan"), ("CM_BRUSHES", 0, "snan"), ("CM_BRUSHES", 6, "snan"),
    ("CM_BRUSH_SIDE_TEXTURE_VECTORS", 0, "snan"), ("CM_BRUSH_SIDE_TEXTURE_VECTORS", 0, "inf"),
    ("CM_BRUSH_SIDE_TEXTURE_VECTORS", 5, "-inf"),
])
@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_damaged_floats_end_in_a_vmf_or_a_bsp_error(variant: str, lump: str, column: int, value: str,
                                                    tmp_path: Path) -> None:
    import warnings

    from sourcebsp.codecs import respawn as codecs
    from sourcebsp.errors import BspError
    from sourcebsp.examples.respawn import example_respawn_bytes
    from sourcebsp.fuzz.mutate import Mutation, apply

    seed = example_respawn_bytes(variant)
    data = apply(seed, [Mutation("column_float", getattr(codecs, lump), 0, column, value, "")])
    assert data != seed
    path = tmp_path / "damaged.bsp"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            vmf, _ = build_respawn_vmf(RespawnBsp.open(path))
        except BspError as error:
            assert lump in str(error) or "offset" in str(error)
        else:
            assert vmf is not None


def test_a_trigger_of_too_many_planes_is_refused_before_clipping(tmp_path: Path) -> None:
    from sourcebsp.errors import LimitExceededError

    bsp = RespawnBsp.open(write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2"))
    entities = bsp.entities
    angles = np.linspace(0, 2 * np.pi, 4000, endpoint=False)
    entities.add(classname="trigger_hurt", **{f"*trigger_brush_0_plane_{i}": f"{np.cos(a):.6f} {np.sin(a):.6f} 0 64"
                                              for i, a in enumerate(angles)})
    bsp.entities = entities
    with pytest.raises(LimitExceededError) as info:
        build_respawn_vmf(bsp)
    assert info.value.lump == "ENTITIES"

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
    """Every written side's points define the plane of the brush side it came from (the sides are
    written brush by brush, each brush's kept sides in order); returns the side count."""
    found = build_respawn_brushes(bsp)
    kept = found.brushes
    written = kept.closed[kept.side_brush]
    points = _written_planes(text)
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
    assert line == (f"{out}: 3 solids (3 world, 0 detail, 0 in entities), 16 sides, 0 displacements, "
                    "0 brush entities, 2 point entities, 1 static props, 0 overlays, 0 cubemaps")
    text = out.read_text()
    bsp = RespawnBsp.open(path)
    assert _check_sides(bsp, text) == 16  # the slab's 6, each ramp's 5 (two box sides are edges)
    materials = re.findall(r'"material" "([^"]*)"', text)
    assert materials.count("dev/dev_measurewall01a") == 2 and materials.count("dev/dev_measuregeneric01") == 14
    # The sloped sides' axes are the map's texture vectors (scale 0.25), the rest too.
    assert text.count('"uaxis" "[1 0 0 0] 0.25"') + text.count('"uaxis" "[0 1 0 0] 0.25"') == 16
    for classname in ("info_player_start", "light", "prop_static"):
        assert f'"classname" "{classname}"' in text
    assert '"model" "models/props_c17/oildrum001.mdl"' in text


def test_the_vmf_keeps_each_side_material_from_its_property(tmp_path: Path) -> None:
    bsp = RespawnBsp.open(write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2"))
    vmf, stats = build_respawn_vmf(bsp)
    names = bsp.texture_names()
    properties = bsp.array("CM_BRUSH_SIDE_PROPERTIES")
    sides = [side for solid in vmf.world.solids for side in solid.sides]
    assert [s.material for s in sides] == [names[int(properties[s.brushside]) & BRUSH_SIDE_TEXTURE_DATA]
                                           for s in sides]
    assert len({s.id for s in sides}) == len(sides) == stats.sides
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

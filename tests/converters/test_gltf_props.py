"""Static props exported as their models' meshes (``export --game``): names, sharing, skins, pakfile first,
missing models, the Khronos validator; on maps built here and on every corpus map with props."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pygltflib")  # before the package, which needs it to import

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.content import fold, mount
from sourcebsp.converters import gltf as gl

from ..conftest import MAPS
from ..content._maps import OPEN_DEATHMATCH, build_map
from ..content._studiomodels import box_spec, build_mdl, build_vtx, build_vvd
from ..content.test_studiomodel import _real_models, _sibling, independent_lod0
from .test_gltf import VALIDATOR_SCRIPT, _chunks, validator  # noqa: F401 (fixture)


STAND = "models/propper/powerup_stand/powerup_stand.mdl"
POLICE = "Models\\Player\\Police.mdl"  # spelled as a map may: case and back slashes


def _game() -> Path:
    if not (OPEN_DEATHMATCH / "gameinfo.txt").is_file():
        pytest.skip(f"no game at {OPEN_DEATHMATCH}")
    return OPEN_DEATHMATCH


def _triangles(document: dict, mesh: dict) -> int:
    return sum(document["accessors"][p["indices"]]["count"] for p in mesh["primitives"]) // 3


def _prop_nodes(document: dict) -> list[dict]:
    group = next(n for n in document["nodes"] if n.get("name") == "static_props")
    return [document["nodes"][i] for i in group["children"]]


def _validate(validator: Path, *files: Path) -> None:  # noqa: F811 (fixture name)
    run = subprocess.run(["node", str(VALIDATOR_SCRIPT), *map(str, files)], cwd=validator, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode in (0, 1), run.stderr
    for line in run.stdout.splitlines():
        report = json.loads(line)
        assert report["errors"] == 0 and report["warnings"] == 0, report["messages"]


def test_props_drawn_with_their_models(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       validator: Path) -> None:  # noqa: F811
    game = _game()
    path = build_map(tmp_path / "props.bsp", props=[STAND, POLICE, "models/none.mdl", STAND])
    bsp = sourcebsp.BspFile.open(path)
    assert bsp.static_props.model_names()[0] == "models/props_c17/oildrum001.mdl"  # the example map's own
    bsp.static_props.props["skin"][4] = 1  # a skin family the stand does not have: family 0 is drawn
    bsp.static_props.props["angles"][2] = (0.0, 90.0, 0.0)
    bsp.save(tmp_path / "map.bsp")
    bsp.close()
    out = tmp_path / "map.glb"
    assert main(["export", str(tmp_path / "map.bsp"), "-o", str(out), "--game", str(game)]) == 0
    captured = capsys.readouterr()
    assert "5 static props (3 drawn with the meshes of 2 models, 2 without a model found)" in captured.out
    assert "models/none.mdl: not found" in captured.err
    document, _ = _chunks(out.read_bytes())
    nodes = _prop_nodes(document)[1:]
    meshes = document["meshes"]
    stand = independent_lod0(game / STAND)
    police = independent_lod0(game / "models/player/police.mdl")
    assert [meshes[n["mesh"]]["name"] if "mesh" in n else None for n in nodes] == \
        [STAND, "models/player/police.mdl", None, STAND]
    # Each lit prop has a mesh of its own that shares the model's vertex and index accessors, adding COLOR_0.
    first, last = (meshes[nodes[k]["mesh"]]["primitives"] for k in (0, 3))
    assert nodes[0]["mesh"] != nodes[3]["mesh"]
    assert [{k: v for k, v in p["attributes"].items() if k != "COLOR_0"} for p in first] == \
        [{k: v for k, v in p["attributes"].items() if k != "COLOR_0"} for p in last]
    assert [p["indices"] for p in first] == [p["indices"] for p in last]
    assert first[0]["attributes"]["COLOR_0"] != last[0]["attributes"]["COLOR_0"]
    assert "lit per vertex by the map, " in captured.out
    assert _triangles(document, meshes[nodes[0]["mesh"]]) == stand[1]
    assert _triangles(document, meshes[nodes[1]["mesh"]]) == police[1]
    position = document["accessors"][meshes[nodes[1]["mesh"]]["primitives"][0]["attributes"]["POSITION"]]
    low, high = np.array(police[2][:3]), np.array(police[2][3:])
    assert np.allclose(position["min"], [low[0], low[2], -high[1]], atol=0.01)
    assert [document["materials"][p["material"]]["name"] for p in meshes[nodes[1]["mesh"]]["primitives"]] == \
        ["models/police/metrocop_sheet"]
    _validate(validator, out)


def test_pakfile_model_wins_over_the_game(tmp_path: Path) -> None:
    game = _game()
    spec = box_spec()
    stem = STAND[: -len(".mdl")]
    pak = {STAND: build_mdl(spec), stem + ".vvd": build_vvd(spec), stem + ".dx90.vtx": build_vtx(spec)}
    path = build_map(tmp_path / "packed.bsp", props=[STAND], pak=pak)
    stats = gl.ExportStats()
    document, _ = _chunks(gl.glb_bytes(path, game=mount(game), stats=stats))
    node = _prop_nodes(document)[1]
    assert _triangles(document, document["meshes"][node["mesh"]]) == 4  # the packed box, not the stand's 140
    assert (stats.props_meshed, stats.props_missing, stats.prop_models) == (1, 1, 1)  # the oil drum is missing


def test_without_a_game_props_stay_empty_nodes(tmp_path: Path) -> None:
    path = build_map(tmp_path / "plain.bsp", props=[STAND])
    document, _ = _chunks(gl.glb_bytes(path))
    assert not any("mesh" in node for node in _prop_nodes(document))


def _real_with_mesh() -> list[Path]:
    return [p for p in _real_models() if independent_lod0(p)[1] > 0]


@pytest.mark.slow
def test_corpus_maps_with_models_in_a_content_folder(tmp_path: Path, validator: Path) -> None:  # noqa: F811
    """Every corpus map with static props, each dictionary model stood in for by a real model copied under
    its name (no corpus map names this mod's models): every prop drawn with its model's triangle count."""
    real = _real_with_mesh()
    if not real:
        pytest.skip(f"no models under {OPEN_DEATHMATCH}")
    done = []
    for map_path in MAPS:
        bsp = sourcebsp.open(map_path)
        try:
            names = bsp.static_props.names
        except Exception:  # noqa: BLE001 - a map whose prop lump this layout cannot read has no props to draw
            continue
        if not names or not len(bsp.static_props.props):
            continue
        content = tmp_path / map_path.stem
        want = {}
        folded = sorted({fold(name) for name in names})  # "./models/a.mdl" and "models/A.mdl" are one file
        for name in names:
            source = real[folded.index(fold(name)) % len(real)]
            target = content / name.replace("\\", "/")
            target.parent.mkdir(parents=True, exist_ok=True)
            stem = target.name[: -len(".mdl")] if target.name.lower().endswith(".mdl") else target.name
            shutil.copyfile(source, target)
            for suffix in (".vvd", ".dx90.vtx"):
                found = _sibling(source, suffix)
                if found is not None:
                    shutil.copyfile(found, target.with_name(stem + suffix))
            want[name.lower().replace("\\", "/")] = independent_lod0(source)[1]
        out = tmp_path / f"{map_path.stem}.glb"
        assert main(["export", str(map_path), "-o", str(out), "--content", str(content)]) == 0
        document, _ = _chunks(out.read_bytes())
        nodes = _prop_nodes(document)
        assert len(nodes) == len(bsp.static_props.props)
        for node, model in zip(nodes, bsp.static_props.model_names()):
            mesh = document["meshes"][node["mesh"]]
            assert mesh["name"] == model.lower().replace("\\", "/")
            assert _triangles(document, mesh) == want[mesh["name"]]
        done.append(out)
    assert done
    _validate(validator, *done)


def test_each_model_read_once_under_every_spelling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sourcebsp.content import studiomodel

    spec = box_spec()
    (tmp_path / "game/models/props").mkdir(parents=True)
    for suffix, data in ((".mdl", build_mdl(spec)), (".vvd", build_vvd(spec)), (".dx90.vtx", build_vtx(spec))):
        (tmp_path / f"game/models/props/Crate{suffix}").write_bytes(data)
    spellings = ["models/props/crate.mdl", "./Models/Props/Crate.mdl", "models\\props\\CRATE.mdl"]
    path = build_map(tmp_path / "crates.bsp", props=spellings + spellings)
    calls: list[str] = []
    real = studiomodel.load_model

    def counting(fs: object, name: str, **kw: object) -> object:
        calls.append(name)
        return real(fs, name, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(studiomodel, "load_model", counting)
    stats = gl.ExportStats()
    document, _ = _chunks(gl.glb_bytes(path, game=mount(tmp_path / "game"), stats=stats))
    assert calls == ["models/props_c17/oildrum001.mdl", "models/props/crate.mdl"]  # the example's drum, the crate
    assert stats.prop_models == 1 and stats.props_meshed == 6
    names = [document["meshes"][n["mesh"]]["name"] for n in _prop_nodes(document)[1:]]
    # Each mesh is named as its prop's dictionary spells the model, lower-cased, forward slashes.
    assert names == [s.lower().replace("\\", "/") for s in spellings] * 2


def test_props_draw_their_skin(tmp_path: Path) -> None:
    spec = box_spec()  # two skin families: tex_a, tex_b and tex_b, tex_a
    (tmp_path / "game/models").mkdir(parents=True)
    for suffix, data in ((".mdl", build_mdl(spec)), (".vvd", build_vvd(spec)), (".dx90.vtx", build_vtx(spec))):
        (tmp_path / f"game/models/box{suffix}").write_bytes(data)
    path = build_map(tmp_path / "skins.bsp", props=["models/box.mdl"] * 3)
    bsp = sourcebsp.BspFile.open(path)
    bsp.static_props.props["skin"][1:4] = [0, 1, 1]
    bsp.save(tmp_path / "map.bsp")
    bsp.close()
    document, _ = _chunks(gl.glb_bytes(tmp_path / "map.bsp", game=mount(tmp_path / "game"), prop_lighting=False))
    nodes = _prop_nodes(document)[1:]
    meshes = [document["meshes"][n["mesh"]] for n in nodes]
    assert [m["name"] for m in meshes] == ["models/box.mdl"] * 3
    assert nodes[1]["mesh"] == nodes[2]["mesh"] != nodes[0]["mesh"]  # unlit: one mesh per (model, skin)
    assert not any("COLOR_0" in p["attributes"] for m in meshes for p in m["primitives"])
    materials = [[document["materials"][p["material"]]["name"] for p in m["primitives"]] for m in meshes]
    assert materials[0] == ["models/test/tex_a", "models/test/tex_b"] and materials[1] == materials[0][::-1]
    # The skins share the vertices: one POSITION accessor.
    assert meshes[0]["primitives"][0]["attributes"]["POSITION"] == meshes[1]["primitives"][0]["attributes"]["POSITION"]


def test_without_a_game_no_prop_is_counted_missing(tmp_path: Path) -> None:
    stats = gl.ExportStats()
    gl.glb_bytes(build_map(tmp_path / "plain.bsp", props=[STAND]), stats=stats)
    assert (stats.props, stats.props_meshed, stats.props_missing, stats.prop_models) == (2, 0, 0, 0)

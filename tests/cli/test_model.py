"""``sourcebsp model``: facts, JSON, .glb and .obj output, refusals; every real model through the validator."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sourcebsp.cli import main

from ..content._maps import OPEN_DEATHMATCH
from ..content._studiomodels import box_spec, write_model
from ..content.test_studiomodel import _real_models, independent_lod0
from ..converters.test_gltf import VALIDATOR_SCRIPT, _accessor, _chunks, validator  # noqa: F401 (fixture)

pytest.importorskip("pygltflib")


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["model", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_facts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_model(tmp_path, "box", box_spec(includes=["models/anims.mdl"]))
    facts = _json(capsys, str(path))
    assert (facts["version"], facts["vertices"], facts["triangles"]) == (48, 8, 4)
    assert facts["bbox"] == [[0, 0, 0], [10, 10, 5]]
    assert facts["materials"] == ["models/test/tex_a", "models/test/tex_b"]
    assert facts["skins"] == [facts["materials"], facts["materials"][::-1]]
    assert facts["bodyparts"] == [{"name": "body", "models": ["body_ref"], "default": 0}]
    assert facts["includes"] == ["models/anims.mdl"]


def test_text_and_name_in_a_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_model(tmp_path / "game/models/props", "Crate", box_spec())
    (tmp_path / "game/materials/models/test").mkdir(parents=True)
    assert main(["model", "models/props/crate.mdl", "--game", str(tmp_path / "game")]) == 0
    out = capsys.readouterr().out
    assert "MDL version 48, LOD 0: 8 vertices, 4 triangles" in out and "material 1: models/test/tex_b" in out
    assert main(["model", "models/props/none.mdl", "--game", str(tmp_path / "game")]) == 1
    assert "found neither" in capsys.readouterr().err


def test_glb_and_obj_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_model(tmp_path, "box", box_spec())
    glb, obj = tmp_path / "box.glb", tmp_path / "box.obj"
    assert main(["model", str(path), "-o", str(glb), "--skin", "1"]) == 0
    document, blob = _chunks(glb.read_bytes())
    primitives = document["meshes"][0]["primitives"]
    assert [document["materials"][p["material"]]["name"] for p in primitives] == \
        ["models/test/tex_b", "models/test/tex_a"]  # skin 1 swaps the two textures
    position = _accessor(document, blob, primitives[0]["attributes"]["POSITION"])
    # Y up: Source (x, y, z) is glTF (x, z, -y).
    assert position.min(0).tolist() == [0, 0, -10] and position.max(0).tolist() == [10, 5, 0]
    assert sum(document["accessors"][p["indices"]]["count"] for p in primitives) == 12
    assert main(["model", str(path), "-o", str(obj)]) == 0
    text = obj.read_text()
    assert text.count("\nv ") == 8 and text.count("\nf ") == 4 and "usemtl models/test/tex_a" in text
    assert (tmp_path / "box.mtl").read_text().count("newmtl") == 2
    capsys.readouterr()
    assert main(["model", str(path), "-o", str(glb)]) == 1  # exists: --overwrite needed
    assert "--overwrite" in capsys.readouterr().err


def test_refusals_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_model(tmp_path, "box", box_spec(), mesh_files=False)
    assert main(["model", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mesh files are missing" in err
    (tmp_path / "junk.mdl").write_bytes(b"IDST" + b"\xff" * 500)
    assert main(["model", str(tmp_path / "junk.mdl")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "junk.mdl" in err
    assert main(["model", str(tmp_path / "nothing.mdl")]) == 1
    with pytest.raises(SystemExit) as exit_info:
        main(["model", str(path), "-o", str(tmp_path / "x.fbx")])
    assert exit_info.value.code == 2


def test_every_real_model_through_the_validator(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                validator: Path) -> None:  # noqa: F811 (fixture)
    models = _real_models()
    if not models:
        pytest.skip(f"no models under {OPEN_DEATHMATCH}")
    written: dict[Path, tuple[int, int, tuple[float, ...] | None]] = {}
    for i, path in enumerate(models):
        vertices, triangles, box = independent_lod0(path)
        if vertices < 0:
            continue
        facts = _json(capsys, str(path))
        assert (facts["vertices"], facts["triangles"]) == (vertices, triangles), path
        if not triangles:
            continue
        out = tmp_path / f"{i}.glb"
        assert main(["model", str(path), "-o", str(out), "--json"]) == 0
        capsys.readouterr()
        written[out] = (vertices, triangles, box)
    assert len(written) >= 30
    run = subprocess.run(["node", str(VALIDATOR_SCRIPT), *map(str, written)], cwd=validator, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode in (0, 1), run.stderr
    for line, (out, (vertices, triangles, box)) in zip(run.stdout.splitlines(), written.items()):
        report = json.loads(line)
        assert report["errors"] == 0 and report["warnings"] == 0, (out, report["messages"])
        document, _ = _chunks(out.read_bytes())
        primitives = document["meshes"][0]["primitives"]
        assert sum(document["accessors"][p["indices"]]["count"] for p in primitives) == 3 * triangles
        accessor = document["accessors"][primitives[0]["attributes"]["POSITION"]]
        assert box is not None
        low, high = np.array(box[:3]), np.array(box[3:])
        # Source (x, y, z) -> glTF (x, z, -y)
        assert np.allclose(accessor["min"], [low[0], low[2], -high[1]], atol=0.01), out
        assert np.allclose(accessor["max"], [high[0], high[2], -low[1]], atol=0.01), out

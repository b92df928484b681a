"""``sourcebsp export``, ``sourcebsp lightmaps`` and ``sourcebsp render``."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp.cli import main

from ..model._expected import expected

pytest.importorskip("pygltflib")
Image = pytest.importorskip("PIL.Image")


def _json_chunk(path: Path) -> dict:
    data = path.read_bytes()
    size = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20 : 20 + size])


@pytest.mark.slow
@pytest.mark.parametrize("models", ["all", "world"])
def test_export_glb(map_path, tmp_path, capsys, models):
    out = tmp_path / "map.glb"
    assert main(["export", str(map_path), "-o", str(out), "--models", models, "--units", "meters"]) == 0
    assert out.name in capsys.readouterr().out
    document = _json_chunk(out)
    want = expected(sourcebsp.open(map_path), world_only=models == "world")
    assert len(document.get("meshes", [])) == len(want.models)
    assert document["asset"]["extras"]["units"] == "meters"


def test_export_obj_and_tools(tmp_path, corpus_file, capsys):
    path = corpus_file("tf2_test_physcollide.bsp")
    plain, tools = tmp_path / "plain.obj", tmp_path / "tools.obj"
    assert main(["export", str(path), "-o", str(plain)]) == 0
    assert main(["export", str(path), "-o", str(tools), "--include-tools"]) == 0
    count = lambda p: sum(1 for line in p.read_text().splitlines() if line.startswith("f "))  # noqa: E731
    bsp = sourcebsp.open(path)
    assert count(plain) == expected(bsp).triangles
    assert count(tools) == expected(bsp, include_tools=True).triangles > count(plain)
    assert (tmp_path / "plain.mtl").exists()


def test_export_errors(tmp_path, corpus_file, capsys):
    path = corpus_file("tf2_mp_lobby.bsp")
    with pytest.raises(SystemExit) as exit_info:
        main(["export", str(path), "-o", str(tmp_path / "x.fbx")])
    assert exit_info.value.code == 2
    capsys.readouterr()
    assert main(["export", str(tmp_path / "missing.bsp"), "-o", str(tmp_path / "x.glb")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.bsp" in err
    bad = tmp_path / "bad.bsp"
    bad.write_bytes(b"VBSP" + b"\0" * 20)
    assert main(["export", str(bad), "-o", str(tmp_path / "x.glb")]) == 1


def test_lightmaps_cli(tmp_path, corpus_file, capsys):
    out = tmp_path / "atlas.png"
    assert main(["lightmaps", str(corpus_file("css_de_rats.bsp")), "-o", str(out)]) == 0
    assert "LDR" in capsys.readouterr().out
    with Image.open(out) as image:
        assert image.mode == "RGB" and image.size[0] >= 64
    # HDR only: the default falls back to HDR; --hdr on an LDR-only map fails in one line.
    assert main(["lightmaps", str(corpus_file("x360_shack.bsp")), "-o", str(out), "--overwrite"]) == 0
    assert "HDR" in capsys.readouterr().out
    assert main(["lightmaps", str(corpus_file("css_de_rats.bsp")), "-o", str(out), "--hdr", "--overwrite"]) == 1
    assert main(["lightmaps", str(corpus_file("csgo_tooltextures.bsp")), "-o", str(out), "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "no HDR lightmaps" in err


@pytest.mark.parametrize("options", [[], ["--tonemap", "reinhard"], ["--exposure", "2.5"], ["--hdr"],
                                     ["--style", "1"], ["--bump", "2"]])
def test_lightmaps_cli_writes_the_atlas_of_the_linear_light(tmp_path, corpus_file, capsys, options):
    """The command builds the atlas as 8-bit sRGB when no exposure asks for linear light first:
    the pixels are those of the linear atlas tone-mapped afterwards."""
    from sourcebsp.model.lightmaps import build_atlas

    path, out = corpus_file("tf2c_vipr_downfall.bsp"), tmp_path / "atlas.png"
    assert main(["lightmaps", str(path), "-o", str(out), *options]) == 0
    value = lambda name, default: type(default)(options[1]) if options[:1] == [name] else default  # noqa: E731
    with sourcebsp.open(path) as bsp:
        atlas = build_atlas(bsp, hdr="--hdr" in options, style=value("--style", 0), bump=value("--bump", 0))
    assert atlas is not None
    method = "reinhard" if "--tonemap" in options else None
    with Image.open(out) as image:
        np.testing.assert_array_equal(np.asarray(image), atlas.to_rgb8(method=method,
                                                                      exposure=value("--exposure", 1.0)))


@pytest.mark.parametrize("view", ["top", "player"])
def test_render_cli(tmp_path, corpus_file, capsys, view):
    out = tmp_path / f"{view}.png"
    assert main(["render", str(corpus_file("x360_shack.bsp")), "-o", str(out), "--view", view, "--size", "200x150"]) == 0
    assert "shaded by lightmaps" in capsys.readouterr().out
    with Image.open(out) as image:
        pixels = np.asarray(image)
    assert pixels.shape == (150, 200, 3) and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50


def test_render_cli_errors(tmp_path, corpus_file, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["render", str(corpus_file("x360_shack.bsp")), "-o", str(tmp_path / "a.png"), "--size", "12"])
    assert exit_info.value.code == 2
    # A map with entities only: nothing to draw, one line, exit 1.
    assert main(["render", str(corpus_file("v42_rot_main.bsp")), "-o", str(tmp_path / "a.png")]) == 1
    assert "no drawn faces" in capsys.readouterr().err
    assert not (tmp_path / "a.png").exists()

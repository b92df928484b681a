"""``export --textures``: base textures embedded once each, downscaled, alpha and culling from the VMT,
the lightmap kept on the second UV set; the Khronos validator with and without textures."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pygltflib")  # before the package, which needs it to import

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.content import mount
from sourcebsp.converters import gltf as gl

from ..conftest import MAPS
from ..content._maps import build_map
from ..content._textures import vtf_bytes
from ..content._studiomodels import box_spec, build_mdl, build_vtx, build_vvd
from .test_gltf import _chunks, validator  # noqa: F401 (fixture)
from .test_gltf_props import _validate

Image = pytest.importorskip("PIL.Image")
pytest.importorskip("srctools.vtf")


def _png(document: dict, blob: bytes, texture: int) -> "Image.Image":
    image = document["images"][document["textures"][texture]["source"]]
    view = document["bufferViews"][image["bufferView"]]
    return Image.open(io.BytesIO(blob[view["byteOffset"]:view["byteOffset"] + view["byteLength"]]))


@pytest.fixture
def game(tmp_path: Path) -> Path:
    """A game folder: the box model (textures tex_a, tex_b in models/test/), their VMTs and one VTF."""
    root = tmp_path / "game"
    spec = box_spec()
    (root / "models").mkdir(parents=True)
    for suffix, data in ((".mdl", build_mdl(spec)), (".vvd", build_vvd(spec)), (".dx90.vtx", build_vtx(spec))):
        (root / f"models/box{suffix}").write_bytes(data)
    folder = root / "materials/models/test"
    folder.mkdir(parents=True)
    (folder / "tex_a.vmt").write_text('"VertexLitGeneric"\n{\n"$basetexture" "models/test/shared"\n'
                                      '"$alphatest" "1"\n"$alphatestreference" ".25"\n"$nocull" 1\n}\n')
    (folder / "tex_b.vmt").write_text('"VertexLitGeneric" { "$basetexture" "models\\\\test\\\\Shared" '
                                      '"$translucent" "1" }\n')
    (folder / "shared.vtf").write_bytes(vtf_bytes((255, 0, 0, 128), 64))
    return root


def test_prop_textures_shared_downscaled_with_alpha(tmp_path: Path, game: Path) -> None:
    path = build_map(tmp_path / "map.bsp", props=["models/box.mdl"])
    stats = gl.ExportStats()
    document, blob = _chunks(gl.glb_bytes(path, game=mount(game), textures=True, texture_size=16, stats=stats))
    by_name = {m["name"]: m for m in document["materials"]}
    a, b = by_name["models/test/tex_a"], by_name["models/test/tex_b"]
    # Both materials name one texture (in two spellings): one image.
    assert a["pbrMetallicRoughness"]["baseColorTexture"]["index"] == b["pbrMetallicRoughness"]["baseColorTexture"]["index"]
    assert stats.textures == 1 and len(document["images"]) == 1 + ("lightmap" in str(document["images"]))
    assert (a["alphaMode"], a["alphaCutoff"], a.get("doubleSided")) == ("MASK", 0.25, True)
    assert b["alphaMode"] == "BLEND" and not b.get("doubleSided", False)
    image = _png(document, blob, a["pbrMetallicRoughness"]["baseColorTexture"]["index"])
    assert image.size == (16, 16)  # the 16x16 mipmap of the 64x64 texture
    assert image.convert("RGBA").getpixel((3, 3)) == (255, 0, 0, 128)


def test_brush_textures_keep_the_lightmap(tmp_path: Path) -> None:
    vmt = b'"LightmappedGeneric" { "$basetexture" "dev/checker" }'
    pak = {"materials/dev/dev_measuregeneric01b.vmt": vmt, "materials/dev/checker.vtf": vtf_bytes((0, 0, 255, 255))}
    path = build_map(tmp_path / "map.bsp", pak=pak)
    plain, _ = _chunks(gl.glb_bytes(path))
    document, blob = _chunks(gl.glb_bytes(path, textures=True))  # the pakfile alone, no game
    material = next(m for m in document["materials"] if m["name"] == "DEV/DEV_MEASUREGENERIC01B")
    other = next(m for m in document["materials"] if m["name"] == "DEV/DEV_MEASUREGENERIC01")
    texture = material["pbrMetallicRoughness"]["baseColorTexture"]
    assert texture["texCoord"] == 0 and _png(document, blob, texture["index"]).size == (64, 64)
    occlusion = material["occlusionTexture"]
    assert (occlusion["index"], occlusion["texCoord"]) == (0, 1)  # the lightmap atlas stays, second UV set
    assert document["textures"][0]["name"] == "lightmap_atlas"
    assert "KHR_materials_unlit" not in (material.get("extensions") or {})
    # Without its files, a material is what it is without --textures: reflectivity times the lightmap.
    plain_other = next(m for m in plain["materials"] if m["name"] == "DEV/DEV_MEASUREGENERIC01")
    assert other == plain_other


@pytest.mark.slow
def test_corpus_maps_validate_with_textures(tmp_path: Path, validator: Path) -> None:  # noqa: F811
    """Every corpus map exported with its pakfile's textures; maps that pack textures embed some."""
    written = []
    embedded = 0
    for map_path in MAPS:
        out = tmp_path / f"{map_path.stem}.glb"
        assert main(["export", str(map_path), "-o", str(out), "--textures", "--texture-size", "128"]) == 0
        document, blob = _chunks(out.read_bytes())
        for texture in range(len(document.get("textures", []))):
            assert max(_png(document, blob, texture).size) <= 128 or document["textures"][texture]["name"] == \
                "lightmap_atlas"
        embedded += len(document.get("images", []))
        written.append(out)
    assert written and embedded
    _validate(validator, *written)


def test_vmt_comments_and_broken_vmts(tmp_path: Path, game: Path) -> None:
    """A comment between the shader and its brace (CRLF lines) is read; a VMT srctools cannot parse leaves its
    material untextured instead of ending the export."""
    folder = game / "materials/models/test"
    (folder / "tex_a.vmt").write_bytes(b'"VertexLitGeneric"\r\n//"Teeth"\r\n{\r\n"$basetexture" "models/test/shared"\r\n}\r\n')
    (folder / "tex_b.vmt").write_bytes(b'"VertexLitGeneric" { "$basetexture" ')
    path = build_map(tmp_path / "map.bsp", props=["models/box.mdl"])
    document, _ = _chunks(gl.glb_bytes(path, game=mount(game), textures=True))
    by_name = {m["name"]: m for m in document["materials"]}
    assert "baseColorTexture" in by_name["models/test/tex_a"]["pbrMetallicRoughness"]
    assert "baseColorTexture" not in by_name["models/test/tex_b"]["pbrMetallicRoughness"]

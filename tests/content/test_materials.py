"""Materials (VMT): one reader, ``patch`` includes followed, for the previews, the glTF export and ``deps``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sourcebsp.codecs.pakfile import Pakfile
from sourcebsp.content import GameFS, materials
from sourcebsp.content.materials import MAX_INCLUDES, material_params, material_path, material_refs, texture_path
from sourcebsp.errors import BspFormatError

from ._textures import vtf_bytes

pytest.importorskip("srctools.vmt")


def reader(files: dict[str, str]):
    """A ``read`` over ``files`` that counts the reads of each name."""
    reads: dict[str, int] = {}

    def read(name: str) -> bytes | None:
        reads[name] = reads.get(name, 0) + 1
        return files[name].encode() if name in files else None

    read.reads = reads  # type: ignore[attr-defined]
    return read


def test_paths_of_material_and_texture_names() -> None:
    assert material_path("Concrete\\Wall01") == "materials/concrete/wall01.vmt"
    assert material_path("materials/concrete/wall01.VMT") == "materials/concrete/wall01.vmt"
    assert material_path("sprites/glow.spr") == "materials/sprites/glow.vmt"
    assert texture_path("Concrete\\Wall01") == "materials/concrete/wall01.vtf"
    assert texture_path("materials/concrete/wall01.vtf") == "materials/concrete/wall01.vtf"


def test_a_patch_wins_over_what_it_includes_the_outermost_first() -> None:
    read = reader({
        "materials/maps/m/wall_1_2_3.vmt": 'patch { include "materials/maps/m/wall_c.vmt" '
                                           'replace { "$envmap" "maps/m/c1" } }',
        "materials/maps/m/wall_c.vmt": 'patch { include "Materials\\\\Concrete\\\\Wall.vmt" '
                                       'insert { "$envmap" "env_cubemap" "$basetexture" "concrete/patched" } }',
        "materials/concrete/wall.vmt": '"LightmappedGeneric" { "$basetexture" "concrete/wall" "$surfaceprop" "Concrete"'
                                       ' "$alphatest" 1 }',
    })
    params = material_params(read, "Maps\\M\\Wall_1_2_3")
    assert params is not None
    assert params["$envmap"] == "maps/m/c1" and params["$basetexture"] == "concrete/patched"
    assert params["$surfaceprop"] == "Concrete" and params["$alphatest"] == "1"
    assert set(read.reads.values()) == {1} and len(read.reads) == 3  # type: ignore[attr-defined]


def test_a_broken_chain_gives_no_material() -> None:
    """As the engine draws its error material: a missing include, a file that is not a VMT, a loop."""
    patch = 'patch {{ include "{}" replace {{ "$basetexture" "x" }} }}'
    assert material_params(reader({"materials/a.vmt": patch.format("materials/gone.vmt")}), "a") is None
    assert material_params(reader({"materials/a.vmt": patch.format("materials/b.vmt"),
                                   "materials/b.vmt": "} {"}), "a") is None
    assert material_params(reader({"materials/a.vmt": 'patch { replace { "$basetexture" "x" } }'}), "a") is None
    looped = reader({"materials/a.vmt": patch.format("materials/a.vmt")})
    assert material_params(looped, "a") is None
    assert looped.reads == {"materials/a.vmt": MAX_INCLUDES}  # type: ignore[attr-defined]
    assert material_params(reader({}), "a") is None


def test_parse_errors_are_format_errors() -> None:
    with pytest.raises(BspFormatError, match="cannot parse the material x.vmt"):
        materials.parse_material('"LightmappedGeneric" { "$basetexture" ', "x.vmt")
    assert material_refs('patch { include "materials/a.vmt" }').include == "materials/a.vmt"


def test_render_and_export_read_a_patch_through_the_one_reader(tmp_path: Path, monkeypatch) -> None:
    """A map's patch material (pakfile) includes a game material; the preview and the .glb both show the
    texture the patch puts in, and both parse the VMTs with :func:`materials.parse_material`."""
    pytest.importorskip("pygltflib")
    pytest.importorskip("PIL.Image")
    import sourcebsp
    from sourcebsp.content import mount
    from sourcebsp.converters import gltf, render
    from sourcebsp.examples import build_example_map
    from sourcebsp.examples.room import WALL_MATERIAL

    game = tmp_path / "game"
    (game / "materials/test").mkdir(parents=True)
    (game / "materials/test/wall.vmt").write_text('"LightmappedGeneric" { "$basetexture" "test/grey" }')
    (game / "materials/test/grey.vtf").write_bytes(vtf_bytes((128, 128, 128, 255), 16))
    bsp = build_example_map()
    bsp.pakfile.add(f"materials/{WALL_MATERIAL.lower()}.vmt",
                    b'patch { include "materials/test/wall.vmt" insert { "$basetexture" "test/red" } }')
    bsp.pakfile.add("materials/test/red.vtf", vtf_bytes((230, 20, 20, 255), 16))
    path = tmp_path / "map.bsp"
    bsp.save(path)

    parsed: list[str] = []
    real = materials.parse_material

    def counted(text: str, name: str = ""):
        parsed.append(name)
        return real(text, name)

    monkeypatch.setattr(materials, "parse_material", counted)
    picture = render.render(path, view="player", size=(96, 54), game=game)
    assert picture.textured
    shown = picture.image.reshape(-1, 3).astype(int)
    assert np.mean(shown[:, 0] > shown[:, 1] + 40) > 0.5  # the patch's red, not the included grey
    wall = f"materials/{WALL_MATERIAL.lower()}.vmt"
    assert parsed[:2] == [wall, "materials/test/wall.vmt"]
    parsed.clear()
    stats = gltf.ExportStats()
    with sourcebsp.open(path) as opened:
        gltf.glb_bytes(opened, game=mount(game), textures=True, stats=stats, props=False)
    assert stats.textures == 1
    assert parsed.count(wall) == 1 and parsed.count("materials/test/wall.vmt") == 1


def test_a_game_and_a_pakfile_read_with_a_size_limit(tmp_path: Path) -> None:
    (tmp_path / "materials").mkdir()
    (tmp_path / "materials/big.vtf").write_bytes(bytes(100))
    fs = GameFS.from_folders([tmp_path])
    pak = Pakfile()
    pak.add("Materials/Packed.vtf", bytes(50), compression="lzma")
    fs.attach_pakfile(pak, "map.bsp")
    assert fs.read_file("materials/big.vtf") == bytes(100)
    assert fs.read_file("materials/big.vtf", max_size=99) is None
    found = fs.fetch("materials/packed.VTF", max_size=50)
    assert found is not None and found[0].where == "pakfile" and found[1] == bytes(50)
    assert fs.fetch("materials/packed.vtf", max_size=49) is None
    assert fs.read_file("materials/none.vtf") is None


def test_without_srctools_textures_name_their_extra(tmp_path: Path, monkeypatch) -> None:
    """The export asks for the extra as soon as textures are asked for; the preview only with a game
    folder (without one it draws average colours); material_params names the extra too."""
    import sys

    pytest.importorskip("pygltflib")
    from sourcebsp.converters import gltf, render
    from sourcebsp.errors import MissingExtraError
    from sourcebsp.examples import build_example_map

    for name in [n for n in sys.modules if n == "srctools" or n.startswith("srctools.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "srctools", None)
    bsp = build_example_map()  # no material in its pakfile
    with pytest.raises(MissingExtraError, match=r"reading materials needs srctools: pip install 'sourcebsp\[deps\]'"):
        gltf.glb_bytes(bsp, textures=True)
    with pytest.raises(MissingExtraError, match=r"textures from a game folder needs srctools: .*sourcebsp\[render\]"):
        render.render(bsp, size=(32, 32), game=tmp_path)
    assert not render.render(bsp, size=(32, 32)).textured
    with pytest.raises(MissingExtraError, match="reading materials"):
        material_params(reader({"materials/a.vmt": '"LightmappedGeneric" {}'}), "a")

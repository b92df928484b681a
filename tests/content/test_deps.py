"""The dependency graph: on the open-deathmatch mod, on a game built in code, and on every corpus map."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp.content import map_dependencies, mount
from sourcebsp.model.geometry import texture_names

from ._maps import build_map

_TEXTURE_LINE = re.compile(r'^\s*"?(\$basetexture|\$bumpmap|\$detail|\$envmapmask|\$selfillummask|\$phongexponenttexture)"?'
                           r'\s+(?:"([^"]*)"|(\S+))', re.I | re.M)


def _files(root: Path) -> dict[str, Path]:
    """Every file of a folder by its lower-case relative name (an index built apart from GameFS)."""
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            found[path.relative_to(root).as_posix().lower()] = path
    return found


@pytest.fixture
def mod_graph(open_deathmatch: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    files = _files(open_deathmatch)
    models = sorted(n for n in files if n.endswith(".mdl"))
    materials = sorted(n[len("materials/"):-4] for n in files if n.endswith(".vmt"))
    path = build_map(tmp_path / "dm_lockdown.bsp", materials=materials, props=models,
                     entities=[{"classname": "env_sprite", "model": "sprites/powerup_health.vmt"},
                               {"classname": "ambient_generic", "message": "ODM.CollectPowerup"},
                               {"classname": "prop_dynamic", "model": "models/weapons/c_arms.mdl"}])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(open_deathmatch))
    return graph, files, models


def test_every_model_file_of_the_mod_is_found(mod_graph) -> None:  # type: ignore[no-untyped-def]
    graph, files, models = mod_graph
    assert len(models) == 123
    checked = 0
    for model in models:
        dep = graph.get(model)
        assert dep is not None and dep.where == "folder", model
        stem = model[:-4]
        for ext in (".vvd", ".dx90.vtx", ".dx80.vtx", ".sw.vtx", ".phy"):
            if stem + ext in files:  # shipped by the mod: listed and found in its folder
                found = graph.get(stem + ext)
                assert found is not None and found.where == "folder", stem + ext
                assert {"asset": model, "via": "model files"} in found.referenced_by
                checked += 1
    assert checked >= 41 * 2  # every .vvd and its .dx90.vtx at least


def test_every_skin_material_is_looked_up_through_cdmaterials(mod_graph) -> None:  # type: ignore[no-untyped-def]
    from srctools.filesys import RawFileSystem
    from srctools.mdl import Model

    graph, files, models = mod_graph
    system = RawFileSystem(str(graph.fs.paths[0].path))
    for model in models:
        parsed = Model(system, system[os.path.relpath(files[model], graph.fs.paths[0].path)])
        for texture in {t for family in parsed.skins for t in family}:
            candidates = [f"materials/{folder}{texture}.vmt".lower().replace("//", "/") for folder in parsed.cdmaterials]
            listed = [c for c in candidates if graph.get(c) is not None]
            assert listed, (model, texture)
            shipped = [c for c in candidates if c in files]
            if shipped:  # the mod has it: the first folder that has it is the one found
                assert graph.get(shipped[0]).where == "folder"
            else:  # stock HL2 content, not here: reported missing
                assert graph.get(listed[0]).where == "missing"


def test_every_vmt_texture_is_found_or_reported(mod_graph) -> None:  # type: ignore[no-untyped-def]
    graph, files, _ = mod_graph
    vmts = [n for n in files if n.endswith(".vmt")]
    seen = 0
    for vmt in vmts:
        for param, quoted, bare in _TEXTURE_LINE.findall(files[vmt].read_text(errors="replace")):
            value = quoted or bare
            name = "materials/" + value.replace("\\", "/").lower().removeprefix("materials/")
            name = name if name.endswith(".vtf") else name + ".vtf"
            dep = graph.get(name)
            assert dep is not None, (vmt, param, value)
            assert dep.where == ("folder" if name in files else "missing"), name
            seen += 1
    assert seen > 50


def test_sounds_through_soundscripts_and_sprites(mod_graph) -> None:  # type: ignore[no-untyped-def]
    graph, _, _ = mod_graph
    script = graph.get("scripts/game_sounds_player.txt")
    wave = graph.get("sound/beams/beam2.wav")
    assert script is not None and script.where == "folder"
    assert wave is not None and wave.where == "folder"
    assert {"asset": "scripts/game_sounds_player.txt", "via": "ODM.CollectPowerup"} in wave.referenced_by
    assert graph.get("materials/sprites/powerup_health.vtf").where == "folder"
    # The navigation mesh is loaded by the map's name.
    assert graph.get("maps/dm_lockdown.nav").where == "folder"


def test_corpus_map_lists_every_texdata_material_and_prop_model(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        graph = map_dependencies(bsp)
        names = [n for n in texture_names(bsp) if n]
        models = list(bsp.static_props.names) if bsp.entry(sourcebsp.LumpId.GAME_LUMP).filelen else []
        pak = bsp.lump_or_none(sourcebsp.LumpId.PAKFILE)
        pak_names = {n.replace("\\", "/").lower() for n in pak.names()} if pak is not None else set()
    for name in names:
        path = "materials/" + name.replace("\\", "/").lower().lstrip("/")
        path = path if path.endswith(".vmt") else path + ".vmt"
        dep = graph.get(path)
        assert dep is not None, name
        assert dep.where == ("pakfile" if path in pak_names else "missing")
    for model in models:
        if model:
            assert graph.get(model) is not None, model
    json = graph.to_json()
    assert json["summary"]["total"] == len(json["dependencies"]) == len(graph)


def _pcf(systems: dict[str, str], version: int = 2) -> bytes:
    """A particle file written by srctools (binary DMX ``version``): {system: material}."""
    import io

    from srctools.dmx import Attribute
    from srctools.particles import FORMAT_NAME, Particle

    root = Particle.export([Particle(name, {"material": Attribute.string("material", material)})
                            for name, material in systems.items()])
    buffer = io.BytesIO()
    root.export_binary(buffer, version=version, fmt_name=FORMAT_NAME, fmt_ver=2)
    return buffer.getvalue()


def test_whole_graph_on_a_built_game(tmp_path: Path) -> None:
    from ._maps import build_game

    unlit = b'"UnlitGeneric" { "$basetexture" "%s" }'
    mod = build_game(
        tmp_path / "game",
        vpk_files={"materials/brick/wall.vmt": b'"LightmappedGeneric" { "$basetexture" "brick/wall" '
                                               b'"$envmap" "env_cubemap" }',
                   "materials/brick/wall.vtf": b"stock",
                   **{f"materials/skybox/sky_x{side}.vmt": b'"Sky" { "$basetexture" "skybox/sky_x" }'
                      for side in ("rt", "lf", "bk", "ft", "up", "dn")}},
        loose={"particles/custom.pcf": _pcf({"my_fire": "particle/fire.vmt"}),
               "particles/built_manifest.txt": b'particles_manifest { "file" "!particles/custom.pcf" }',
               "materials/particle/fire.vmt": unlit % b"particle/fire",
               "materials/particle/fire.vtf": b"vtf",
               "scripts/vscripts/a.nut": b"// a", "scripts/vscripts/lib/b.nut": b"// b",
               "materials/decals/splat.vmt": unlit % b"decals/splat",
               "scripts/soundscapes_built.txt": b'"my.scape" { "playlooping" { "wave" "ambient/hum.wav" } }',
               "sound/ambient/hum.wav": b"RIFF",
               "maps/built.res": b'"resources" { "materials/extra.vmt" "file" }',
               "materials/extra.vmt": unlit % b"extra",
               "resource/overviews/built.txt": b'"built" { "material" "overviews/built" "pos_x" "0" }',
               "materials/overviews/built.vmt": unlit % b"overviews/built",
               "materials/skybox/sky_x_hdrrt.vmt": unlit % b"skybox/sky_x_hdr"},
    )
    patched = (b'"patch" { "include" "materials/brick/wall.vmt" '
               b'"insert" { "$envmap" "maps/built/c0_0_64" } }')
    path = build_map(tmp_path / "built.bsp", materials=["maps/built/brick/wall_0_0_64"],
                     worldspawn={"skyname": "sky_x"},
                     pak={"materials/maps/built/brick/wall_0_0_64.vmt": patched,
                          "materials/maps/built/c0_0_64.vtf": b"cubemap"},
                     entities=[{"classname": "info_particle_system", "effect_name": "my_fire"},
                               {"classname": "logic_script", "vscripts": "a lib/b.nut"},
                               {"classname": "infodecal", "texture": "decals/splat"},
                               {"classname": "env_soundscape", "soundscape": "my.scape"}])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(mod))

    def where(name: str) -> str:
        dep = graph.get(name)
        assert dep is not None, name
        return dep.where

    # The patched cubemap material: in the pakfile, including the stock material, naming the built cubemap.
    assert where("materials/maps/built/brick/wall_0_0_64.vmt") == "pakfile"
    assert graph.get("materials/brick/wall.vmt").referenced_by == [
        {"asset": "materials/maps/built/brick/wall_0_0_64.vmt", "via": "include"}]
    assert where("materials/brick/wall.vmt") == where("materials/brick/wall.vtf") == "vpk"
    assert where("materials/maps/built/c0_0_64.vtf") == "pakfile"
    # Particles: the map's manifest names the file; the system's material and its texture follow.
    assert where("particles/built_manifest.txt") == where("particles/custom.pcf") == "folder"
    assert {"asset": "particles/custom.pcf", "via": "my_fire"} in graph.get("materials/particle/fire.vmt").referenced_by
    assert where("materials/particle/fire.vtf") == "folder"
    assert where("scripts/vscripts/a.nut") == where("scripts/vscripts/lib/b.nut") == "folder"
    assert graph.get("materials/decals/splat.vmt").kind in ("decal", "material") and where("materials/decals/splat.vtf") == "missing"
    assert where("scripts/soundscapes_built.txt") == where("sound/ambient/hum.wav") == "folder"
    assert where("maps/built.res") == where("materials/extra.vmt") == "folder"
    assert where("resource/overviews/built.txt") == where("materials/overviews/built.vmt") == "folder"
    # Six sky faces from the VPK; the one HDR face shipped is listed, the five others are not.
    assert [where(f"materials/skybox/sky_x{s}.vmt") for s in ("rt", "lf", "bk", "ft", "up", "dn")] == ["vpk"] * 6
    assert where("materials/skybox/sky_x_hdrrt.vmt") == "folder" and graph.get("materials/skybox/sky_x_hdrlf.vmt") is None
    assert graph.problems == []


def _phy(keyvalues: str) -> bytes:
    """A .phy file with no solids and the given key values (phyheader_t: size, id, solidCount, checksum)."""
    import struct

    return struct.pack("<iiil", 16, 0, 0, 0) + keyvalues.encode() + b"\0"


def test_gibs_named_in_the_physics_key_values(open_deathmatch: Path, tmp_path: Path) -> None:
    from ._maps import build_game

    stand = open_deathmatch / "models/propper/powerup_stand/powerup_stand"
    mdl = stand.with_suffix(".mdl").read_bytes()
    mod = build_game(tmp_path / "game", loose={
        "models/crate.mdl": mdl, "models/crate.vvd": b"v", "models/crate.dx90.vtx": b"x",
        "models/crate.phy": _phy('solid { "index" "0" } break { "model" "props_junk/gib01" "health" "5" } '
                                 'break { "model" "models/props_junk/gib02.mdl" }'),
        "models/props_junk/gib01.mdl": mdl, "models/props_junk/gib01.vvd": b"v",
        "models/props_junk/gib01.dx90.vtx": b"x"})
    path = build_map(tmp_path / "gibs.bsp", entities=[{"classname": "prop_physics", "model": "models/crate.mdl"}])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(mod))
    gib = graph.get("models/props_junk/gib01.mdl")
    assert gib is not None and gib.where == "folder"
    assert gib.referenced_by == [{"asset": "models/crate.mdl", "via": "break model"}]
    assert graph.get("models/props_junk/gib01.vvd").where == "folder"
    assert graph.get("models/props_junk/gib02.mdl").where == "missing"
    assert graph.get("models/crate.phy").where == "folder"


@pytest.mark.parametrize("offset", [188, 204, 212, 220, 232, 336])
def test_hostile_model_counts_are_refused_before_parsing(open_deathmatch: Path, tmp_path: Path, offset: int) -> None:
    from sourcebsp.content.models import model_refs
    from sourcebsp.errors import BspError

    mdl = bytearray((open_deathmatch / "models/propper/powerup_stand/powerup_stand.mdl").read_bytes())
    model_refs("good.mdl", bytes(mdl))  # the real model passes the check
    mdl[offset:offset + 4] = (0x7FFFFFFF).to_bytes(4, "little")
    with pytest.raises(BspError, match=str(offset) if offset != 220 else "skin table"):
        model_refs("hostile.mdl", bytes(mdl))
    # In a map's pakfile: a problem noted, the walk goes on.
    path = build_map(tmp_path / "hostile.bsp", props=["models/hostile.mdl"],
                     pak={"models/hostile.mdl": bytes(mdl)})
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp)
    assert graph.get("models/hostile.mdl").where == "pakfile"
    assert any("hostile.mdl" in p for p in graph.problems)


def test_hostile_particle_string_count_is_refused() -> None:
    from sourcebsp.content.particles import particle_systems
    from sourcebsp.errors import BspError

    good = _pcf({"spark": "particle/spark.vmt"}, version=5)
    assert particle_systems(good) == {"spark": ["materials/particle/spark.vmt"]}
    start = good.index(b"-->\n\0") + 5
    hostile = good[:start] + (0x7FFFFFFF).to_bytes(4, "little") + good[start + 4:]
    with pytest.raises(BspError, match="2147483647 strings"):
        particle_systems(hostile, "hostile.pcf")


DETAIL_VBSP = b'''detail
{
    "Grass"
    {
        "density" "800"
        "Group1"
        {
            "alpha" "1"
            "TallGrass" { "model" "models/detail/tallgrass.mdl" "amount" "0.5" }
            "Sprite" { "sprite" "0 0 64 64 512" "amount" "0.3" }
            "Shared" { "model" "models/shared.mdl" }
            "Gone" { "model" "models/detail/nowhere.mdl" }
        }
    }
}
'''


def test_detail_vbsp_models_are_compile_only(tmp_path: Path) -> None:
    from sourcebsp.content.pack import plan_pack

    from ._maps import build_game

    mod = build_game(tmp_path / "game", loose={
        "detail_custom.vbsp": DETAIL_VBSP, "models/detail/tallgrass.mdl": b"IDST grass",
        "models/shared.mdl": b"IDST shared", "detail.vbsp": b'detail { "x" { "g" { "m" { "model" "models/x.mdl" } } } }',
        "models/x.mdl": b"IDST x"})
    path = build_map(tmp_path / "m.bsp", props=["models/shared.mdl"], worldspawn={"detailvbsp": "detail_custom.vbsp"})
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(mod))
    vbsp = graph.get("detail_custom.vbsp")
    assert vbsp is not None and vbsp.compile_only and vbsp.where == "folder"
    assert vbsp.referenced_by[0]["key"] == "detailvbsp"
    grass = graph.get("models/detail/tallgrass.mdl")
    assert grass is not None and grass.compile_only
    assert grass.referenced_by == [{"asset": "detail_custom.vbsp", "via": "Grass/Group1/TallGrass"}]
    shared = graph.get("models/shared.mdl")  # a static prop too: the engine loads it
    assert shared is not None and not shared.compile_only
    assert {"asset": "detail_custom.vbsp", "via": "Grass/Group1/Shared"} in shared.referenced_by
    assert graph.get("models/detail/nowhere.mdl") is None  # optional: not reported missing
    assert graph.get("detail.vbsp") is None and graph.get("models/x.mdl") is None  # the key named another file
    packed = {d.path for d in plan_pack(graph).add}
    assert "models/shared.mdl" in packed and not packed & {"detail_custom.vbsp", "models/detail/tallgrass.mdl"}


WEAPON_SCRIPT = b'''WeaponData
{
    "printname" "#HL2_Crowbar"
    "viewmodel" "models/weapons/v_crowbar.mdl"
    "playermodel" "models/weapons/w_crowbar.mdl"
    SoundData
    {
        "single_shot" "weapons/crowbar/swing.wav"
    }
    TextureData
    {
        "weapon" { "font" "WeaponIcons" "character" "c" }
        "crosshair" { "file" "sprites/crosshairs" "x" "0" "y" "48" "width" "24" "height" "24" }
    }
}
'''


def test_weapon_script_of_a_placed_weapon(tmp_path: Path) -> None:
    from ._maps import build_game

    mod = build_game(tmp_path / "game", loose={
        "scripts/weapon_crowbar.txt": WEAPON_SCRIPT, "models/weapons/w_crowbar.mdl": b"IDST w",
        "sound/weapons/crowbar/swing.wav": b"RIFF", "materials/sprites/crosshairs.vmt": b'"UnlitGeneric" {}'})
    path = build_map(tmp_path / "m.bsp", entities=[{"classname": "weapon_crowbar", "origin": "0 0 8"}])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(mod))
    script = graph.get("scripts/weapon_crowbar.txt")
    assert script is not None and script.referenced_by[0]["key"] == "@resources"
    world = graph.get("models/weapons/w_crowbar.mdl")
    assert world is not None and world.referenced_by == [{"asset": "scripts/weapon_crowbar.txt", "via": "playermodel"}]
    swing = graph.get("sound/weapons/crowbar/swing.wav")
    assert swing is not None and swing.where == "folder"
    assert graph.get("materials/sprites/crosshairs.vmt") is not None
    assert graph.get("models/weapons/v_crowbar.mdl") is None  # optional and not shipped: not reported


PROPDATA = b'''"PropData.txt"
{
    "sections" { "Wooden.Small" { "base" "Wooden.Small" } }
    "BreakableChunks"
    {
        "GlassChunks"
        {
            "models/gibs/glass_shard01.mdl" "1"
            "models/gibs/glass_shard02.mdl" "1"
        }
        "WoodChunks" { "models/gibs/wood_gib01a.mdl" "1" }
    }
}
'''


def test_breakable_chunks_through_propdata(tmp_path: Path) -> None:
    from ._maps import build_game

    mod = build_game(tmp_path / "game", loose={"scripts/propdata.txt": PROPDATA,
                                               "models/gibs/glass_shard01.mdl": b"IDST 1",
                                               "models/gibs/wood_gib01a.mdl": b"IDST w"})
    # func_breakable of material 0 (glass) breaks into the GlassChunks set.
    path = build_map(tmp_path / "m.bsp", entities=[{"classname": "func_breakable", "material": "0"}])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(mod))
    shard = graph.get("models/gibs/glass_shard01.mdl")
    assert shard is not None and shard.referenced_by == [{"asset": "scripts/propdata.txt", "via": "BreakableChunks/GlassChunks"}]
    assert graph.get("models/gibs/glass_shard02.mdl") is None  # optional, not shipped here
    assert graph.get("models/gibs/wood_gib01a.mdl") is None  # another set
    assert graph.get("scripts/propdata.txt") is not None


def _skin_textures(mdl: bytes) -> set[str]:
    """Every texture name a skin family of ``mdl`` points at, read with struct from studiohdr_t
    (numtextures/textureindex at 204/208, numskinref/numskinfamilies/skinindex at 220/224/228)."""
    import struct

    count, at = struct.unpack_from("<ii", mdl, 204)
    names = []
    for i in range(count):
        record = at + 64 * i
        start = record + struct.unpack_from("<i", mdl, record)[0]
        names.append(mdl[start:mdl.index(b"\0", start)].decode().replace("\\", "/").strip("/").lower())
    refs, families, skins = struct.unpack_from("<iii", mdl, 220)
    return {names[i] for i in struct.unpack_from(f"<{refs * families}h", mdl, skins)}


def test_skin_textures_srctools_misses_are_listed(mod_graph) -> None:  # type: ignore[no-untyped-def]
    from srctools.filesys import VirtualFileSystem
    from srctools.mdl import Model

    graph, files, models = mod_graph
    missed = {}
    for model in models:
        mdl = files[model].read_bytes()
        system = VirtualFileSystem({"m.mdl": mdl})
        parsed = Model(system, system["m.mdl"])
        srctools_names = {t.lower().strip("/") for family in parsed.skins for t in family}
        cdmaterials = [c.lower().strip("/") for c in parsed.cdmaterials]
        for texture in _skin_textures(mdl):
            candidates = [f"materials/{folder}/{texture}.vmt".replace("materials//", "materials/") for folder in cdmaterials]
            assert any(graph.get(c) is not None for c in candidates), (model, texture)
            if texture not in srctools_names:
                missed.setdefault(model, set()).add(texture)
    # 53 of the mod's 123 models name skin textures srctools' reader leaves out (eye glints and pupils,
    # a face map, hand sheets); one of them is shipped by the mod and so packed.
    assert len(missed) == 53
    assert "c_arms_citizen_sleeves" in missed["models/weapons/c_arms_refugee.mdl"]
    sleeves = graph.get("materials/models/weapons/c_arms_citizen/c_arms_citizen_sleeves.vmt")
    assert sleeves is not None and sleeves.where == "folder"
    assert {"asset": "models/weapons/c_arms_refugee.mdl", "via": "skin"} in sleeves.referenced_by
    assert graph.get("materials/models/weapons/c_arms_citizen/c_arms_citizen_sleeves.vtf").where == "folder"
    assert "erdim_facemap" in missed["models/humans/group03/male_09.mdl"]


def test_includemodel_chains_and_cycles_with_every_mesh_file(tmp_path: Path) -> None:
    from ._studiomodels import box_spec, write_model

    folder = tmp_path / "game" / "models"
    # a -> b -> c -> b (a cycle), c -> a (another); each shipped with a different mesh file set.
    write_model(folder, "a", box_spec(includes=["models/b.mdl"]))
    write_model(folder, "b", box_spec(includes=["models/c.mdl"], textures=["tex_b1", "tex_b2"]), vtx_suffix=".dx80.vtx")
    write_model(folder, "c", box_spec(includes=["models/b.mdl", "models\\a.mdl", "models/d.mdl"]), vtx_suffix=".sw.vtx")
    for ext in (".vtx", ".phy", ".ani"):
        (folder / f"c{ext}").write_bytes(b"\0" * 8)
    (tmp_path / "game" / "gameinfo.txt").write_text('"GameInfo" { FileSystem { SearchPaths { game |gameinfo_path|. } } }')
    path = build_map(tmp_path / "m.bsp", props=["models/a.mdl"])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(tmp_path / "game"))
    for name in ("a", "b", "c"):
        assert graph.get(f"models/{name}.mdl").where == "folder"
    assert graph.get("models/b.mdl").referenced_by == [{"asset": "models/a.mdl", "via": "$includemodel"},
                                                      {"asset": "models/c.mdl", "via": "$includemodel"}]
    assert {"asset": "models/c.mdl", "via": "$includemodel"} in graph.get("models/a.mdl").referenced_by
    assert graph.get("models/d.mdl").where == "missing"
    assert graph.get("models/b.dx80.vtx").where == "folder" and graph.get("models/b.dx90.vtx") is None
    for ext in (".vvd", ".sw.vtx", ".vtx", ".phy", ".ani"):
        assert graph.get(f"models/c{ext}").where == "folder", ext
    assert graph.get("materials/models/test/tex_b2.vmt").where == "missing"
    # The cycles end the walk: each model once (build_map's own oil drum besides).
    assert {d.path for d in graph if d.path.endswith(".mdl")} == {
        "models/a.mdl", "models/b.mdl", "models/c.mdl", "models/d.mdl", "models/props_c17/oildrum001.mdl"}
    # The 8 zero bytes of c.phy are no physics model: noted, and c's own names are still followed.
    assert len(graph.problems) == 1 and "models/c.mdl: its .phy cannot be read" in graph.problems[0]


def test_texture_no_skin_family_names_is_listed_when_found(tmp_path: Path) -> None:
    from ._studiomodels import box_spec, write_model

    game = tmp_path / "game"
    # tex_c and tex_d are in the texture table, in no skin family: the engine still loads them.
    write_model(game / "models", "a", box_spec(textures=["tex_a", "tex_b", "tex_c", "tex_d"],
                                               cdmaterials=["models\\one\\", "models\\two\\"]))
    (game / "materials/models/two").mkdir(parents=True)
    (game / "materials/models/two/tex_c.vmt").write_text('"VertexLitGeneric" { }')
    (game / "gameinfo.txt").write_text('"GameInfo" { FileSystem { SearchPaths { game |gameinfo_path|. } } }')
    path = build_map(tmp_path / "m.bsp", props=["models/a.mdl"])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(game))
    found = graph.get("materials/models/two/tex_c.vmt")
    assert found is not None and found.where == "folder" and found.optional
    assert found.referenced_by == [{"asset": "models/a.mdl", "via": "texture table"}]
    assert not [d.path for d in graph if "tex_d" in d.path]  # not shipped: not listed
    assert graph.get("materials/models/one/tex_a.vmt").where == "missing"  # skin textures stay required

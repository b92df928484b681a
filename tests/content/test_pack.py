"""Packing: exactly the custom files a map needs, stored, lower case; stock and missing never packed."""
from __future__ import annotations

import zipfile
from pathlib import Path

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.content import map_dependencies, mount
from sourcebsp.content.pack import apply_pack, plan_pack

from ._maps import build_game, build_map


def _pack(map_path: Path, fs, out: Path, lzma: bool = False, **kw) -> tuple[set[str], set[str]]:  # type: ignore[no-untyped-def]
    with sourcebsp.open(map_path) as bsp:
        graph = map_dependencies(bsp, fs)
        plan = plan_pack(graph, **kw)
        apply_pack(bsp, graph, plan, lzma=lzma)
        bsp.save(out)
    return {d.path for d in plan.add}, {d.path for d in plan.missing}


def test_pack_puts_exactly_the_needed_mod_files(open_deathmatch: Path, tmp_path: Path) -> None:
    source = build_map(tmp_path / "dm_pack.bsp", props=["models/propper/powerup_stand/powerup_stand.mdl"],
                       entities=[{"classname": "env_sprite", "model": "sprites/powerup_suit.vmt"}])
    packed, missing = _pack(source, mount(open_deathmatch), tmp_path / "out.bsp")
    # Worked out by hand from the mod's files: the model, its four companions, its one skin
    # material (cdmaterials models/propper/powerup_stand/), the sprite and its texture.
    stem = "models/propper/powerup_stand/powerup_stand"
    expected = {stem + ext for ext in (".mdl", ".vvd", ".dx90.vtx", ".dx80.vtx", ".phy")} | {
        "materials/models/propper/powerup_stand/dev/dev_measurewall01d.vmt",
        "materials/sprites/powerup_suit.vmt", "materials/sprites/powerup_suit.vtf"}
    assert packed == expected
    # What the mod does not ship (stock HL2 content) is reported, never packed.
    assert "materials/dev/dev_measurewall01d.vtf" in missing and "models/props_c17/oildrum001.mdl" in missing
    assert not packed & missing
    with sourcebsp.open(tmp_path / "out.bsp") as bsp:
        pak = bsp.pakfile
        assert set(pak.names()) == expected
        assert all(e.compress_type == zipfile.ZIP_STORED for e in pak.entries())
        assert pak.read(stem + ".phy") == (open_deathmatch / (stem + ".phy")).read_bytes()


def test_built_game_vpk_is_stock_loose_is_packed(tmp_path: Path) -> None:
    vmt = b'"LightmappedGeneric" { "$basetexture" "brick/wall" }'
    mod = build_game(tmp_path / "game",
                     vpk_files={"materials/brick/wall.vmt": vmt, "materials/brick/wall.vtf": b"VTF stock"},
                     loose={"materials/Custom/Thing.vmt": b'"UnlitGeneric" { "$basetexture" "Custom/Thing_Color" }',
                            "materials/custom/thing_color.VTF": b"VTF loose", "materials/custom/unused.vtf": b"x"})
    source = build_map(tmp_path / "built.bsp", materials=["BRICK/WALL", "custom\\THING"],
                       entities=[{"classname": "ambient_generic", "message": "No.Such.Sound"}])
    with sourcebsp.open(source) as bsp:  # a sound name no soundscript defines: listed, not a file
        unresolved = map_dependencies(bsp, mount(mod)).get("soundscript-entry:no.such.sound")
    assert unresolved is not None and unresolved.where == "missing"
    assert unresolved.referenced_by == [{"entity": 4, "classname": "ambient_generic", "key": "message"}]
    packed, missing = _pack(source, mount(mod), tmp_path / "out.bsp")
    assert "soundscript-entry:no.such.sound" not in missing  # pack lists files only
    assert packed == {"materials/custom/thing.vmt", "materials/custom/thing_color.vtf"}
    assert "materials/brick/wall.vmt" not in packed and "materials/brick/wall.vtf" not in packed
    packed_stock, _ = _pack(source, mount(mod), tmp_path / "out_stock.bsp", include_stock=True)
    assert packed_stock == packed | {"materials/brick/wall.vmt", "materials/brick/wall.vtf"}
    # srctools reads the packed map with the same content.
    from srctools.bsp import BSP

    with sourcebsp.open(tmp_path / "out.bsp") as ours:
        mine = {n: ours.pakfile.read(n) for n in ours.pakfile.names()}
    theirs = BSP(tmp_path / "out.bsp").pakfile
    assert {n: theirs.read(n) for n in theirs.namelist()} == mine
    assert mine["materials/custom/thing_color.vtf"] == b"VTF loose"


def test_packing_keeps_files_already_packed(tmp_path: Path) -> None:
    mod = build_game(tmp_path / "game", loose={"materials/a.vmt": b'"UnlitGeneric" { "$basetexture" "a" }',
                                                "materials/a.vtf": b"new"})
    source = build_map(tmp_path / "m.bsp", materials=["a"], pak={"materials/a.vtf": b"old"})
    packed, _ = _pack(source, mount(mod), tmp_path / "out.bsp")
    assert packed == {"materials/a.vmt"}
    with sourcebsp.open(tmp_path / "out.bsp") as bsp:
        assert bsp.pakfile.read("materials/a.vtf") == b"old"
        assert bsp.lump_or_none(LumpId.PAKFILE) is not None


def test_lzma_packing_keeps_sounds_stored(tmp_path: Path) -> None:
    mod = build_game(tmp_path / "game", loose={"sound/custom/beep.wav": b"RIFF" + b"\0" * 400,
                                               "materials/custom/thing.vmt": b'"UnlitGeneric" {}'})
    source = build_map(tmp_path / "m.bsp", materials=["custom/thing"],
                       entities=[{"classname": "ambient_generic", "message": "custom/beep.wav"}])
    _pack(source, mount(mod), tmp_path / "out.bsp", lzma=True)
    with sourcebsp.open(tmp_path / "out.bsp") as bsp:
        methods = {e.name: e.compression for e in bsp.pakfile.entries()}
    # The engine streams sounds out of the pak: stored, as check's SB205 demands.
    assert methods == {"sound/custom/beep.wav": "stored", "materials/custom/thing.vmt": "lzma"}


def test_class_implied_mod_model_is_packed(open_deathmatch: Path, tmp_path: Path) -> None:
    # npc_combine_s precaches models/combine_soldier.mdl (srctools' database); the mod ships its own.
    assert (open_deathmatch / "models/combine_soldier.mdl").is_file()
    source = build_map(tmp_path / "dm_npc.bsp", entities=[{"classname": "npc_combine_s", "origin": "0 0 16"}])
    packed, missing = _pack(source, mount(open_deathmatch), tmp_path / "out.bsp")
    assert "models/combine_soldier.mdl" in packed
    # The rest it precaches (grenade model, sounds) is HL2's, not here: neither packed nor reported missing.
    assert "models/weapons/w_grenade.mdl" not in packed | missing
    # Once found, the model is expanded like any other: the mod ships the .mdl alone, its mesh
    # files come from HL2, which is not mounted here, so they are reported.
    assert "models/combine_soldier.vvd" in missing and not (open_deathmatch / "models/combine_soldier.vvd").exists()
    with sourcebsp.open(tmp_path / "out.bsp") as bsp:
        assert bsp.pakfile.read("models/combine_soldier.mdl") == (open_deathmatch / "models/combine_soldier.mdl").read_bytes()


def test_skin_material_srctools_misses_is_packed(open_deathmatch: Path, tmp_path: Path) -> None:
    # c_arms_refugee.mdl's skin families name c_arms_citizen_sleeves (the mod ships it), which
    # srctools' header reader leaves out; the studio reader's skin table finds it.
    source = build_map(tmp_path / "arms.bsp", props=["models/weapons/c_arms_refugee.mdl"])
    packed, missing = _pack(source, mount(open_deathmatch), tmp_path / "out.bsp")
    sleeves = "materials/models/weapons/c_arms_citizen/c_arms_citizen_sleeves"
    assert {sleeves + ".vmt", sleeves + ".vtf", "models/weapons/c_arms_refugee.mdl"} <= packed
    with sourcebsp.open(tmp_path / "out.bsp") as bsp:
        assert sleeves + ".vmt" in set(bsp.pakfile.names())

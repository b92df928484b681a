"""The game filesystem: gameinfo search paths in order, folders and VPKs, case-insensitive look-ups."""
from __future__ import annotations

from pathlib import Path

import pytest

from sourcebsp.content import GameFS, fold, mount
from sourcebsp.content.vpk import VpkArchive, write_vpk
from sourcebsp.errors import BspError

from ._maps import build_game


def test_fold_is_the_engine_comparison() -> None:
    assert fold("Materials\\Brick//Wall01.VMT") == "materials/brick/wall01.vmt"
    assert fold("./models/a.mdl") == "models/a.mdl"


def test_open_deathmatch_mounts_its_folder_and_reports_steam_paths(open_deathmatch: Path) -> None:
    fs = GameFS.from_gameinfo(open_deathmatch / "gameinfo.txt")
    # mod+mod_write and game+game_write both name the mod folder: mounted once.
    assert [(p.kind, p.path, p.stock) for p in fs.paths] == [("folder", open_deathmatch.resolve(), False)]
    # Every |appid_243750| line of its gameinfo.txt is reported, none silently dropped.
    text = (open_deathmatch / "gameinfo.txt").read_text()
    assert len([u for u in fs.unresolved if u.startswith("|appid_")]) == text.count("|appid_243750|")
    found = fs.find("MODELS\\Player\\Police.MDL")
    assert found is not None and found.where == "folder" and found.name == "models/player/police.mdl"
    assert fs.find("models/player/police_nothere.mdl") is None


def test_built_game_order_stock_and_case(tmp_path: Path) -> None:
    mod = build_game(
        tmp_path,
        vpk_files={"materials/Brick/Wall.vmt": b"stock", "models/shared.mdl": b"stock"},
        loose={"materials/Custom/Thing.vmt": b"loose", "models/shared.mdl": b"mod"},
        custom={"models/shared.mdl": b"addon", "sound/Addon.wav": b"wav"},
    )
    fs = mount(mod)
    kinds = [(p.kind, p.path.name, p.stock) for p in fs.paths]
    # custom/* first, then the mod folder, then the VPK, then the base folder (order of gameinfo.txt).
    assert kinds == [("folder", "addon", False), ("folder", "mymod", False), ("vpk", "hl2_misc_dir.vpk", True),
                     ("folder", "hl2", True)]
    assert fs.unresolved == ["|appid_243750|platform"]
    shared = fs.find("MODELS/SHARED.MDL")
    assert shared is not None and fs.read(shared) == b"addon"  # the first search path wins
    stock = fs.find("materials\\brick\\wall.vmt")
    assert stock is not None and stock.where == "vpk" and stock.stock and stock.name == "materials/Brick/Wall.vmt"
    assert fs.read(stock) == b"stock"
    loose = fs.find("materials/custom/thing.VMT")
    assert loose is not None and loose.where == "folder" and not loose.stock and fs.read(loose) == b"loose"


def test_vpk_round_trip_through_srctools(tmp_path: Path) -> None:
    files = {"materials/a/B.vtf": b"\x00" * 100, "scripts/x.txt": b"hello"}
    archive = VpkArchive(write_vpk(tmp_path / "pak01_dir.vpk", files))
    assert archive.version in (1, 2)
    assert archive.names() == {"materials/a/b.vtf": "materials/a/B.vtf", "scripts/x.txt": "scripts/x.txt"}
    assert archive.read("scripts/x.txt") == b"hello"


def test_vpk_v2_is_read(tmp_path: Path) -> None:
    import vpk as vpk_package  # the other VPK library: an independent writer of v2 archives

    source = tmp_path / "src"
    (source / "materials").mkdir(parents=True)
    (source / "materials" / "Two.vmt").write_bytes(b"v2 file")
    vpk_package.new(str(source)).save(str(tmp_path / "two_dir.vpk"))
    archive = VpkArchive(tmp_path / "two_dir.vpk")
    assert archive.version == 2
    assert archive.read("materials/two.vmt") == b"v2 file"


def test_bad_inputs_are_bsp_errors(tmp_path: Path) -> None:
    with pytest.raises(BspError):
        GameFS.from_gameinfo(tmp_path / "nothing.txt")
    (tmp_path / "gameinfo.txt").write_text('"GameInfo" { game "x" }')
    with pytest.raises(BspError, match="SearchPaths"):
        GameFS.from_gameinfo(tmp_path)
    (tmp_path / "bad_dir.vpk").write_bytes(b"not a vpk at all")
    with pytest.raises(BspError):
        VpkArchive(tmp_path / "bad_dir.vpk").names()
    with pytest.raises(BspError):
        mount(content=[tmp_path / "missing"])


def test_custom_addon_vpk_is_custom_content(tmp_path: Path) -> None:
    mod = build_game(tmp_path, loose={"custom/addon_dir.vpk": b""})
    write_vpk(mod / "custom" / "addon_dir.vpk", {"models/Addon.mdl": b"addon"})
    fs = mount(mod)
    assert [(p.kind, p.path.name, p.stock) for p in fs.paths][:2] == [("vpk", "addon_dir.vpk", False),
                                                                      ("folder", "mymod", False)]
    found = fs.find("models/addon.mdl")
    assert found is not None and found.where == "vpk" and not found.stock and fs.read(found) == b"addon"


def test_reading_a_pakfile_location_without_a_pakfile_is_a_bsp_error() -> None:
    """A pakfile location handed to a GameFS with no pakfile attached (found by typing the
    attached pakfile as ``Pakfile | None``): a BspError naming the file, not an AttributeError."""
    from sourcebsp.codecs.pakfile import Pakfile
    from sourcebsp.content.gamefs import Location

    fs = GameFS()
    with pytest.raises(BspError, match="materials/a.vmt: no pakfile is attached"):
        fs.read(Location("pakfile", "map.bsp", "materials/a.vmt", False))
    pak = Pakfile()
    pak.add("materials/a.vmt", b"x")
    fs.attach_pakfile(pak, "map.bsp")
    found = fs.find("MATERIALS\\A.VMT")
    assert found is not None and found.where == "pakfile" and fs.read(found) == b"x"

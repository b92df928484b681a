"""Which engine branch a map is for, and what the branch table says it loads."""
from __future__ import annotations

from pathlib import Path

import sourcebsp
from sourcebsp.content import mount
from sourcebsp.content.branches import BRANCHES, map_branch

from ._maps import build_map

# What the corpus file names say (the game each map was taken from), checked against the guess.
_BY_PREFIX = {"csgo_": {"csgo"}, "l4d2_": {"csgo"}, "momentum_": {"strata"}, "x360_": {"console"},
              "vtmb_": {"source2004"}, "tf2_": {"sdk2013mp", None}, "tf2c_": {"sdk2013mp"},
              "css_": {"source2004", "sdk2013mp"}, "gmod_": {None}, "v42_": {None}, "valvebsp_": {None}}


def test_branch_of_every_corpus_map(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        branch, reason = map_branch(bsp)
        version = bsp.version
    prefix = next(p for p in _BY_PREFIX if map_path.name.startswith(p))
    assert (branch.id if branch else None) in _BY_PREFIX[prefix]
    assert bool(reason) == (branch is not None)
    if prefix == "css_":  # CS:S moved to BSP 20 with its 2010 engine update (Source 2013 Multiplayer today)
        assert branch is BRANCHES["source2004" if version < 20 else "sdk2013mp"]


def test_mounted_game_folder_wins(tmp_path: Path) -> None:
    folder = tmp_path / "hl2"
    folder.mkdir()
    (folder / "gameinfo.txt").write_text('"GameInfo" { FileSystem { SearchPaths { game |gameinfo_path|. } } }')
    path = build_map(tmp_path / "m.bsp", entities=[{"classname": "tf_gamerules"}])
    with sourcebsp.open(path) as bsp:
        assert map_branch(bsp)[0] is BRANCHES["sdk2013mp"]
        branch, reason = map_branch(bsp, mount(folder))
    assert branch is BRANCHES["sdk2013sp"] and "hl2" in reason
    assert branch.lzma_pak is False  # VDC: SDK 2013 Singleplayer does not read LZMA pak entries


def test_table_facts() -> None:
    assert BRANCHES["sdk2013mp"].lzma_lumps and BRANCHES["sdk2013mp"].lzma_pak
    assert "tf2classic" in BRANCHES["sdk2013mp"].folders and "tf" in BRANCHES["sdk2013mp"].folders
    assert BRANCHES["csgo"].lzma_pak is False and BRANCHES["source2004"].lzma_lumps is False
    folders = [f for b in BRANCHES.values() for f in b.folders]
    assert len(folders) == len(set(folders))  # a folder names one branch

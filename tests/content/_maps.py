"""Maps and games built in code for the content tests, and the open-deathmatch mod."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pytest

from sourcebsp import BspFile, LumpId
from sourcebsp.examples import build_example_map

from ..conftest import CORPUS, IN_CI, ROOT


def _games_dir() -> Path:
    """Where the real games are: ``SOURCEBSP_GAMES``, else ``games`` beside the corpus, else ``../shared/games``."""
    if os.environ.get("SOURCEBSP_GAMES"):
        return Path(os.environ["SOURCEBSP_GAMES"])
    beside_corpus = CORPUS.parent / "games"
    return beside_corpus if beside_corpus.is_dir() else ROOT.parent / "shared" / "games"


OPEN_DEATHMATCH = _games_dir() / "open-deathmatch"


def add_materials(bsp: BspFile, names: Iterable[str]) -> None:
    """Append texdata entries (and their string table / string data) naming ``names``."""
    strings = bsp.get_lump(LumpId.TEXDATA_STRING_DATA)
    table = np.asarray(bsp.get_lump(LumpId.TEXDATA_STRING_TABLE))
    texdata = np.asarray(bsp.get_lump(LumpId.TEXDATA))
    offsets = [strings.add(name) for name in names]
    new_table = np.concatenate([table, np.asarray(offsets, dtype=table.dtype)])
    rows = np.zeros(len(offsets), dtype=texdata.dtype)
    rows["name_string_table_id"] = np.arange(len(table), len(new_table))
    bsp.set_lump(LumpId.TEXDATA_STRING_TABLE, new_table)
    bsp.set_lump(LumpId.TEXDATA, np.concatenate([texdata, rows]))
    bsp.set_lump(LumpId.TEXDATA_STRING_DATA, strings)


def build_map(path: Path, *, materials: Iterable[str] = (), props: Iterable[str] = (),
              entities: Iterable[Mapping[str, Any]] = (), pak: Mapping[str, bytes] | None = None,
              worldspawn: Mapping[str, str] | None = None) -> Path:
    """The example map with extra texdata materials, static props, entities and pakfile files, saved at ``path``."""
    bsp = build_example_map()
    add_materials(bsp, materials)
    for index, model in enumerate(props):
        bsp.static_props.add(model, (float(index) * 32.0, 0.0, 8.0))
    for entity in entities:
        bsp.entities.add(dict(entity))
    if worldspawn:
        world = bsp.entities.worldspawn
        assert world is not None
        for key, value in worldspawn.items():
            world[key] = value
    for name, data in (pak or {}).items():
        bsp.pakfile.add(name, data)
    bsp.save(path)
    return path


def open_deathmatch_dir() -> Path:
    """The open-deathmatch mod (skips, or fails in CI, when it is not here)."""
    if not (OPEN_DEATHMATCH / "gameinfo.txt").is_file():
        if IN_CI:
            pytest.fail(f"the open-deathmatch mod is missing at {OPEN_DEATHMATCH}")
        pytest.skip("the open-deathmatch mod is not here")
    return OPEN_DEATHMATCH


def build_game(root: Path, *, vpk_files: Mapping[str, bytes] = {}, loose: Mapping[str, bytes] = {},
               custom: Mapping[str, bytes] = {}, base_installed: bool = True) -> Path:
    """A game in code: ``root/hl2/pak01_dir.vpk`` (stock), ``root/mymod`` with a gameinfo.txt,
    loose files and a ``custom/addon`` folder.  Returns the mod folder.

    ``base_installed=False``: the base game is named as another Steam app's folder
    (``|appid_243750|hl2``), which cannot be mounted here, and ``vpk_files`` are not written."""
    from sourcebsp.content.vpk import write_vpk

    base = root / "hl2"
    if base_installed:
        base.mkdir(parents=True)
        write_vpk(base / "hl2_misc_dir.vpk", dict(vpk_files))
    mod = root / "mymod"
    mod.mkdir(parents=True)
    (mod / "gameinfo.txt").write_text(
        '"GameInfo"\n{\n game "My Mod"\n FileSystem\n {\n  SteamAppId 243750\n  SearchPaths\n  {\n'
        '   game+mod+custom_mod |gameinfo_path|custom/*\n'
        '   mod+mod_write |gameinfo_path|.\n'
        '   game+game_write |gameinfo_path|.\n'
        '   gamebin |gameinfo_path|bin\n'
        + ('   game |all_source_engine_paths|hl2/hl2_misc.vpk\n'
           '   game |all_source_engine_paths|hl2\n' if base_installed else
           '   game |appid_243750|hl2/hl2_misc.vpk\n'
           '   game |appid_243750|hl2\n') +
        '   platform |appid_243750|platform\n'
        '  }\n }\n}\n')
    for name, data in loose.items():
        (mod / name).parent.mkdir(parents=True, exist_ok=True)
        (mod / name).write_bytes(data)
    for name, data in custom.items():
        target = mod / "custom" / "addon" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return mod

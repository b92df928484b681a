"""Maps built in code for the content tests: the example room plus what a test names."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pytest

from sourcebsp import BspFile, LumpId
from sourcebsp.examples import build_example_map

OPEN_DEATHMATCH = Path(os.environ.get("SOURCEBSP_GAMES", "/work/shared/games")) / "open-deathmatch"


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


@pytest.fixture
def open_deathmatch() -> Path:
    if not (OPEN_DEATHMATCH / "gameinfo.txt").is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the open-deathmatch mod is missing at {OPEN_DEATHMATCH}")
        pytest.skip("the open-deathmatch mod is not here")
    return OPEN_DEATHMATCH

"""The entity database: keys that name assets, and what a class loads by itself (srctools' ``@resources``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.content import GameFS, map_dependencies, mount
from sourcebsp.content.entitydb import ClassResources, asset_kind
from sourcebsp.errors import BspError

from ._maps import build_game, build_map

srctools_fgd = pytest.importorskip("srctools.fgd")
# srctools FileType value -> our kind, written out here rather than imported from the module under test.
KINDS = {"mdl": "model", "vmt": "material", "vtf": "texture", "wav": "sound", 2: "sound", 3: "particle-system",
         "pcf": "particle-file", 8: "soundscape", 9: "soundscape-file", 1: "soundscript", "nut": "vscript",
         "vcd": "scene", 7: "weapon-script", 0: "file", 6: "breakable-chunk"}


def srctools_answer(classname: str, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """srctools' own answer through its public API, with its own entity database and context."""
    from srctools.vmf import VMF

    entity = VMF().create_ent(classname)
    for key, value in keys:
        entity[key] = value
    answer = set()
    for file_type, name in srctools_fgd.EntityDef.engine_def(classname).get_resources(
            srctools_fgd.ResourceCtx(), ent=entity):
        if file_type.value in KINDS:
            answer.add((KINDS[file_type.value], name.split("#")[0] if file_type.value == "mdl" else name))
    return answer


@pytest.mark.parametrize("classname", ["npc_combine_s", "item_healthkit", "env_fire", "point_spotlight",
                                       "weapon_crowbar", "func_breakable", "team_control_point"])
def test_class_resources_match_srctools(classname: str) -> None:
    ours = ClassResources(GameFS())(classname, [("classname", classname), ("origin", "0 0 0")])
    assert set(ours) == srctools_answer(classname, [])
    assert len(ours) == len(set(ours))  # each once


def test_class_resources_known_facts() -> None:
    resources = ClassResources(GameFS())
    # HL2's CItem_HealthKit::Precache: its model and its touch sound.
    assert set(resources("item_healthkit", [])) == {("model", "models/items/healthkit.mdl"),
                                                   ("sound", "HealthKit.Touch")}
    assert ("model", "models/combine_soldier.mdl") in resources("npc_combine_s", [])
    assert resources("func_detail", []) == [] and resources("no_such_class", []) == []
    # Place keys do not change the answer (and are cached away): same list object back.
    first = resources("env_fire", [("origin", "0 0 0")])
    assert resources("ENV_FIRE", [("origin", "5 5 5"), ("targetname", "x")]) is first


def test_class_function_reads_the_door_model_safely(tmp_path: Path) -> None:
    # prop_door_rotating's class function opens the door's model; a hostile one is refused, not parsed.
    hostile = b"IDST" + b"\xff" * 404
    mod = build_game(tmp_path / "game", loose={"models/door.mdl": hostile})
    resources = ClassResources(mount(mod))
    with pytest.raises(BspError, match="prop_door_rotating"):
        resources("prop_door_rotating", [("model", "models/door.mdl")])
    path = build_map(tmp_path / "door.bsp", entities=[{"classname": "prop_door_rotating", "model": "models/door.mdl"}])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(mod))
    assert any("prop_door_rotating" in p for p in graph.problems)
    assert graph.get("models/door.mdl") is not None  # the key still names it


def test_class_implied_files_found_are_listed_and_missing_are_not(tmp_path: Path) -> None:
    mod = build_game(tmp_path / "game", loose={"materials/sprites/light_glow03.vmt": b'"Sprite" {}'})
    path = build_map(tmp_path / "m.bsp", entities=[{"classname": "point_spotlight", "targetname": "spot"}])
    with sourcebsp.open(path) as bsp:
        graph = map_dependencies(bsp, mount(mod))
        index = next(i for i, e in enumerate(bsp.get_lump(LumpId.ENTITIES)) if e.classname == "point_spotlight")
    found = graph.get("materials/sprites/light_glow03.vmt")
    assert found is not None and found.where == "folder" and found.optional
    assert found.referenced_by == [{"entity": index, "classname": "point_spotlight", "key": "@resources"}]
    # The other sprite it precaches is stock, not shipped here: not reported missing.
    assert graph.get("materials/sprites/glow_test02.vmt") is None


def test_asset_kind_by_database_and_pattern() -> None:
    assert asset_kind("prop_dynamic", "model", "models/a.mdl") == "model"
    assert asset_kind("ambient_generic", "message", "Some.Sound") == "sound"
    assert asset_kind("no_such_class", "whatever", "foo.vmt") == "material"
    assert asset_kind("prop_dynamic", "targetname", "x.mdl") is None


def test_class_resources_on_every_corpus_map(map_path: Path) -> None:
    """The same answer as srctools' for every entity of every corpus map."""
    resources = ClassResources(GameFS(), map_path.stem)
    with sourcebsp.open(map_path) as bsp:
        entities: Any = bsp.lump_or_none(LumpId.ENTITIES) or []
        for entity in entities:
            classname = (entity.classname or "").lower()
            if not classname or classname not in srctools_fgd.EntityDef.engine_classes():
                continue
            ours = resources(classname, entity.items())
            assert set(ours) == srctools_answer(classname, entity.items()), (map_path.name, classname)


def test_mounted_game_picks_the_database_tags(tmp_path: Path) -> None:
    # npc_antlionguard precaches materials/sprites/grubflare1.vmt only in the episodic games.
    def listed(folder_name: str) -> bool:
        folder = tmp_path / folder_name
        (folder / "materials/sprites").mkdir(parents=True)
        (folder / "gameinfo.txt").write_text('"GameInfo" { FileSystem { SearchPaths { game |gameinfo_path|. } } }')
        (folder / "materials/sprites/grubflare1.vmt").write_bytes(b'"Sprite" {}')
        path = build_map(tmp_path / f"{folder_name}.bsp", entities=[{"classname": "npc_antlionguard"}])
        with sourcebsp.open(path) as bsp:
            return map_dependencies(bsp, mount(folder)).get("materials/sprites/grubflare1.vmt") is not None

    assert listed("ep2") and not listed("hl2")
    assert srctools_answer("npc_antlionguard", []) == set(ClassResources(GameFS())("npc_antlionguard", []))

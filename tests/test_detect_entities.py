"""Detection by the entity classes only one game has (:attr:`Variant.entity_classes`), as
BSPSource's app definitions tell games (bspsrc-lib app/definitions/*Def.java): looked for only
when the header, the lumps, the record sizes and the static props leave several branches."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp.codecs.classnames import class_matches, found_classes
from sourcebsp.compression import Limits
from sourcebsp.examples.branches import example_branch_bytes
from sourcebsp.detection import Detection, refine_by_entities
from sourcebsp.variants import VARIANTS


def _with_entity(data: bytes, classname: str, variant: str) -> bytes:
    """The map with one more entity of ``classname`` (read as ``variant``: the bytes do not change)."""
    with sourcebsp.BspFile.from_bytes(data, variant=variant) as bsp:
        bsp.entities.add({"classname": classname, "origin": "0 0 64"})
        return bsp.to_bytes()


def _told(data: bytes, **kwargs: object) -> tuple[str, tuple[str, ...]]:
    with sourcebsp.BspFile.from_bytes(data, **kwargs) as bsp:  # type: ignore[arg-type]
        return bsp.variant.name, bsp.variant_alternatives


# (branch, one of its games' classes as a map spells it, what its example room is taken for without it)
_GUESSED = [
    ("alien_swarm", "asw_drone", ("csgo", ("alien_swarm",))),
    ("zeno_clash", "NPC_Zeno_FatherMother_Finale", ("orange_box", ("left4dead", "zeno_clash"))),
    ("zeno_clash", "item_healthFruit", ("orange_box", ("left4dead", "zeno_clash"))),
    ("portal2", "prop_weighted_cube", ("portal2", ("alien_swarm",))),
    ("dota2_v22", "ent_dota_fountain", ("infra", ("dota2_v22",))),
]


@pytest.mark.parametrize(("name", "classname", "guess"), _GUESSED)
def test_a_game_s_own_entity_tells_its_branch(name: str, classname: str, guess: tuple) -> None:
    plain = example_branch_bytes(name)
    assert _told(plain) == guess  # without it: the guess, as before
    data = _with_entity(plain, classname, name)
    assert _told(data) == (name, ())
    with sourcebsp.BspFile.from_bytes(data) as bsp:  # read as that branch, written back as it was
        assert bsp.entities.first(classname=classname) is not None
        assert bsp.to_bytes() == data and bsp.to_bytes(reencode=True) == data


def test_the_ship_told_by_its_entities_where_its_props_do_not(corpus_file) -> None:
    # A CS:S map (BSP 20) with v5 props of the plain size is not The Ship's (its records hold a
    # targetname: 188 bytes); with its props removed the lump tells no size: the Orange Box or The Ship.
    original = Path(corpus_file("css_2000.bsp")).read_bytes()
    assert _told(original) == ("orange_box", ())
    with sourcebsp.BspFile.from_bytes(original, variant="orange_box") as bsp:
        props = bsp.static_props
        props.remove(list(range(len(props.props))))
        data = bsp.to_bytes()
    assert _told(data) == ("orange_box", ("the_ship",))
    assert _told(_with_entity(data, "ship_trap", "orange_box")) == ("the_ship", ())
    assert _told(_with_entity(data, "pm_weapon_spawner", "orange_box")) == ("the_ship", ())  # Bloody Good Time's
    # A class of a branch the other steps ruled out tells nothing (Left 4 Dead writes no v5 props).
    assert _told(_with_entity(data, "info_director", "orange_box")) == ("orange_box", ("the_ship",))


def test_only_the_classname_counts() -> None:
    plain = example_branch_bytes("alien_swarm")
    with sourcebsp.BspFile.from_bytes(plain, variant="csgo") as bsp:
        bsp.entities.add({"classname": "info_target", "targetname": "asw_drone"})
        data = bsp.to_bytes()
    assert _told(data) == ("csgo", ("alien_swarm",))


def test_a_forced_branch_is_not_second_guessed() -> None:
    data = _with_entity(example_branch_bytes("alien_swarm"), "asw_drone", "csgo")
    assert _told(data, variant="csgo") == ("csgo", ())


def test_class_specs() -> None:
    text = (b'{\n"classname" "worldspawn"\n}\n{\n"classname" "ASW_Drone"\n"origin" "0 0 0"\n}\n'
            b'{\n"classname"  "npc_zeno_punk"\n}\n{\n"targetname" "prop_weighted_cube"\n}\n'
            b'{\n"classname" "prop_weighted_cube_x"\n}\n\0')
    specs = ("asw_", "npc_zeno_", "prop_weighted_cube", "info_director")
    assert found_classes(text, specs) == {"asw_", "npc_zeno_"}
    assert found_classes(memoryview(text), ()) == set()
    assert class_matches("NPC_Zeno_FatherMother_Finale", VARIANTS["zeno_clash"].entity_classes)
    assert not class_matches("npc_zombie", VARIANTS["zeno_clash"].entity_classes)
    # Bytes that are not UTF-8, a value running to the end: nothing, and no error.
    assert found_classes(b'"classname" "asw_\xff\xfe' + b"a" * 5000, specs) == set()


def test_refine_by_entities_reads_the_lump_only_when_a_candidate_has_classes() -> None:
    def never() -> bytes:
        raise AssertionError("read")

    assert refine_by_entities(Detection(VARIANTS["orange_box"], ()), never) == Detection(VARIANTS["orange_box"], ())
    found = Detection(VARIANTS["csgo"], ("console_v21",))  # neither has classes of its own
    assert refine_by_entities(found, never) == found
    found = Detection(VARIANTS["orange_box"], ("left4dead", "the_ship", "zeno_clash"))
    assert refine_by_entities(found, lambda: None) == found
    both = b'{\n"classname" "npc_zeno_punk"\n}\n{\n"classname" "ship_trap"\n}\n'
    # Two games' classes: the first of the table, the other still possible.
    assert refine_by_entities(found, lambda: both) == Detection(VARIANTS["the_ship"], ("zeno_clash",))


def _entity_entry(data: bytes) -> tuple[int, int]:
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        entry = bsp.entry("ENTITIES")
        return entry.fileofs, entry.filelen


def test_a_damaged_entity_lump_does_not_break_open() -> None:
    data = _with_entity(example_branch_bytes("alien_swarm"), "asw_drone", "csgo")
    offset, length = _entity_entry(data)
    # The lump's entry pointing past the end of the file: opens, guessed; reading the entities says why.
    broken = bytearray(data)
    broken[8:12] = (len(data) + 16).to_bytes(4, "little")
    with sourcebsp.BspFile.from_bytes(bytes(broken)) as bsp:
        assert (bsp.variant.name, bsp.variant_alternatives) == ("csgo", ("alien_swarm",))
        with pytest.raises(sourcebsp.BspError):
            bsp.entities
    # Marked LZMA-compressed (a fourCC) over bytes that are no LZMA block.
    broken = bytearray(data)
    broken[20:24] = (length * 4).to_bytes(4, "little")
    with sourcebsp.BspFile.from_bytes(bytes(broken)) as bsp:
        assert bsp.variant.name == "csgo"
        with pytest.raises(sourcebsp.BspError):
            bsp.entities
    # Garbage text: no class found, no error at open.
    broken = bytearray(data)
    broken[offset:offset + length] = b"{\"classname\xff" * (length // 12) + b"\0" * (length % 12)
    assert _told(bytes(broken)) == ("csgo", ("alien_swarm",))


def test_a_compressed_entity_lump_within_the_budget() -> None:
    data = _with_entity(example_branch_bytes("alien_swarm"), "asw_drone", "csgo")
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        packed = bsp.to_bytes(compression="lzma")
    with sourcebsp.BspFile.from_bytes(packed) as bsp:
        assert bsp.entry("ENTITIES").compressed
        assert (bsp.variant.name, bsp.variant_alternatives) == ("alien_swarm", ())
        used = bsp.decompressed_size
        assert used >= bsp.entry("ENTITIES").fourcc  # decompressed for detection...
        assert bsp.entities.first(classname="asw_drone") is not None
        assert bsp.decompressed_size == used  # ...once: the entities read the same block
    # Over the file's budget: detection skips the lump (the guess stands); reading it says why.
    with sourcebsp.BspFile.from_bytes(packed, limits=Limits(total_size=16)) as bsp:
        assert (bsp.variant.name, bsp.variant_alternatives) == ("csgo", ("alien_swarm",))
        with pytest.raises(sourcebsp.DecompressionLimitError):
            bsp.entities


# ---- the classes against BSPSource's app definitions (an independent list) ----------------------
_BSPSRC = Path("/work/.mirror/ata4+bspsrc/repo")
_DEFS = "bspsrc-lib/src/main/java/info/ata4/bspsrc/lib/app/definitions/"
_DEF_OF = {"left4dead": ["Left4DeadDef"], "the_ship": ["TheShipDef", "BloodyGoodTimeDef"],
           "zeno_clash": ["ZenoClashDef"], "black_mesa": ["BlackMesaDef"], "vindictus": ["VindictusMabinogiHeroesDef"],
           "portal2": ["Portal2Def"], "alien_swarm": ["AlienSwarmDef"], "dota2_v22": ["Dota2Def"],
           "dota2_v23": ["Dota2Def"], "dear_esther": ["DearEstherDef"]}
# The other games BSPSource knows at each BSP version, whose classes must not be a branch's own.
_SAME_VERSION = {20: ["HalfLife2Def", "HalfLife2EpisodeTwoDef", "PortalDef", "TeamFortress2Def", "GarrysModDef",
                      "CounterStrikeSourceDef", "DayOfDefeatSourceDef", "HalfLife2DeathmatchDef", "SynergyDef",
                      "DarkMessiahOfMightMagicDef", "ZombiePanicSourceDef", "NoMoreRoomInHellDef"],
                 21: ["CounterStrikeGlobalOffensiveDef", "InsurgencyDef", "Left4Dead2Def"]}


def _bspsrc_classes(definition: str) -> set[str]:
    try:
        text = subprocess.run(["git", "-C", str(_BSPSRC), "show", f"HEAD:{_DEFS}{definition}.java"],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("BSPSource's sources are not mirrored here")
    listed = text.split(".setEntities(", 1)[1].split(")", 1)[0]
    return {name.lower() for name in re.findall(r'"([^"]+)"', listed)}


@pytest.mark.parametrize("name", sorted(_DEF_OF))
def test_the_classes_are_bspsource_s_and_that_game_s_alone(name: str) -> None:
    variant = VARIANTS[name]
    assert variant.entity_classes
    own = set().union(*(_bspsrc_classes(d) for d in _DEF_OF[name]))
    for spec in variant.entity_classes:  # each one BSPSource lists for the game (a prefix: some of them)
        assert any(class_matches(cls, (spec,)) for cls in own), spec
    versions = {v & 0xFFFF for v in variant.versions}
    others = set().union(*(_bspsrc_classes(d) for v in versions for d in _SAME_VERSION.get(v, ())))
    for other, definitions in _DEF_OF.items():  # and the other branches of its headers
        if other != name and VARIANTS[other].versions & variant.versions and definitions != _DEF_OF[name]:
            others |= set().union(*(_bspsrc_classes(d) for d in definitions))
    clashing = {cls for cls in others if class_matches(cls, variant.entity_classes)}
    assert not clashing, clashing

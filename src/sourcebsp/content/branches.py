"""Which engine branches load LZMA compression, and which branch a map is for.

Two separate features: LZMA-compressed *lumps* (``lzma_header_t`` in place of
the lump data, the lump's fourCC holding the uncompressed size) and
LZMA-compressed *pakfile entries* (ZIP method 14).  What is known, and where
it comes from (Valve Developer Community, "BSP (Source)" and "ZIP" pages;
the TF2 mapping community's notes on ``bspzip -repack -compress``, added to
the Source 2013 Multiplayer tools with TF2's Gun Mettle update, 2015):

- Source 2013 Multiplayer (TF2, CS:S, DoD:S, HL2:DM, HLDM:S) and the games
  built on it or on TF2's engine (TF2 Classic, Open Fortress) load both;
- Strata Source loads both;
- Source SDK 2013 Singleplayer and the CS:GO branch do not load LZMA pak
  entries;
- engines older than BSP 20 know neither (the lump header came later);
- console maps (big-endian) ship with compressed lumps.

``None`` in the table means "not known": the rules then say nothing, or warn
(SB403), rather than guess.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocols import MapReader
from ..lump_ids import LumpId

__all__ = ["Branch", "BRANCHES", "map_branch"]


@dataclass(frozen=True)
class Branch:
    """An engine branch and what it loads."""

    id: str
    title: str
    lzma_lumps: bool | None
    lzma_pak: bool | None
    folders: frozenset[str] = frozenset()  # game folders (the folder holding gameinfo.txt)


def _branch(id: str, title: str, lumps: bool | None, pak: bool | None, folders: str = "") -> Branch:
    return Branch(id, title, lumps, pak, frozenset(folders.split()))


BRANCHES: dict[str, Branch] = {b.id: b for b in (
    _branch("source2004", "Source before BSP 20 (HL2 and CS:S before 2010, Bloodlines)", False, False),
    _branch("sdk2013sp", "Source SDK 2013 Singleplayer (HL2, its episodes, Portal, their mods)", None, False,
            "hl2 episodic ep2 portal lostcoast hl1"),
    _branch("sdk2013mp", "Source 2013 Multiplayer (TF2, CS:S, DoD:S, HL2:DM and games on it such as "
            "TF2 Classic and Open Fortress)", True, True, "tf cstrike dod hl2mp hl1mp tf2classic open_fortress"),
    _branch("csgo", "Left 4 Dead / Portal 2 / CS:GO branch", None, False,
            "left4dead left4dead2 portal2 csgo swarm"),
    _branch("strata", "Strata Source (Momentum Mod, Portal: Revolution)", True, True, "momentum revolution p2ce"),
    _branch("console", "Xbox 360 / PS3 builds", True, None),
)}

# Entity classes only the TF2 family, Counter-Strike and Day of Defeat have: on a BSP 20 map,
# those games run on the Source 2013 Multiplayer branch.
_MP_CLASSES = frozenset({"tf_gamerules", "team_control_point", "func_respawnroom", "func_regenerate", "item_teamflag",
                         "info_player_counterterrorist", "info_player_terrorist", "func_buyzone", "func_bomb_target",
                         "func_hostage_rescue"})
_MP_PREFIXES = ("tf_", "dod_")


def map_branch(bsp: MapReader, fs: Any = None) -> tuple[Branch | None, str]:
    """The branch a map is for and why: the mounted game's folder first, else what the map
    shows (BSP version, byte order, game-specific entity classes); ``(None, "")`` when unknown."""
    mod_dir = getattr(fs, "mod_dir", None)
    if mod_dir is not None:
        folder = mod_dir.name.lower()
        for branch in BRANCHES.values():
            if folder in branch.folders:
                return branch, f"the mounted game is {mod_dir.name}"
    if bsp.endian == ">":
        return BRANCHES["console"], "a big-endian (console) map"
    version = bsp.version
    if version < 20:
        return BRANCHES["source2004"], f"BSP {version}"
    if version == 25:
        return BRANCHES["strata"], "BSP 25"
    if 21 <= version <= 23:
        return BRANCHES["csgo"], f"BSP {version}"
    if version == 20:
        entities = bsp.lump_or_none(LumpId.ENTITIES)
        for entity in entities or ():
            name = (entity.classname or "").lower()
            if name in _MP_CLASSES or name.startswith(_MP_PREFIXES):
                return BRANCHES["sdk2013mp"], f"BSP 20 with {name} entities"
    return None, ""

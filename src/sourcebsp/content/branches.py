"""Which game a map is for, and whether it loads LZMA compression.

Two separate features: LZMA-compressed *lumps* (``lzma_header_t`` in place of
the lump data, the lump's fourCC holding the uncompressed size) and
LZMA-compressed *pakfile entries* (ZIP method 14).  What each game loads is a
fact of its engine branch, kept in the branch table
(:class:`sourcebsp.variants.Game`, listed by each :class:`~sourcebsp.variants.Variant`);
this module only picks the game of a map.
"""
from __future__ import annotations

from typing import Any

from ..codecs.classnames import class_matches
from ..lump_ids import LumpId
from ..protocols import MapReader
from ..variants import VARIANTS, Game

__all__ = ["Branch", "BRANCHES", "map_branch"]

Branch = Game  # the game families the content rules know, one per id

BRANCHES: dict[str, Branch] = {game.id: game for variant in VARIANTS.values() for game in variant.games}

# Entity classes only the TF2 family, Counter-Strike and Day of Defeat have: on a BSP 20 map,
# those games run on the Source 2013 Multiplayer branch.
# (codecs.classnames specs: a name, or a prefix ending in "_".)
_MP_CLASSES = ("tf_", "dod_", "team_control_point", "func_respawnroom", "func_regenerate", "item_teamflag",
               "info_player_counterterrorist", "info_player_terrorist", "func_buyzone", "func_bomb_target",
               "func_hostage_rescue")
_SDK2013MP = "sdk2013mp"


def map_branch(bsp: MapReader, fs: Any = None) -> tuple[Branch | None, str]:
    """The branch a map is for and why: the mounted game's folder first, else what the map
    shows (BSP version, byte order, game-specific entity classes); ``(None, "")`` when unknown."""
    mod_dir = getattr(fs, "mod_dir", None)
    if mod_dir is not None:
        folder = mod_dir.name.lower()
        for branch in BRANCHES.values():
            if folder in branch.folders:
                return branch, f"the mounted game is {mod_dir.name}"
    games = bsp.variant.games
    if len(games) == 1:
        big = ", big-endian" if bsp.endian == ">" else ""
        return games[0], f"a {bsp.variant.name} map (BSP {bsp.version}{big})"
    if any(game.id == _SDK2013MP for game in games):  # Source 2013: singleplayer or multiplayer, told by the entities
        entities = bsp.lump_or_none(LumpId.ENTITIES)
        for entity in entities or ():
            name = (entity.classname or "").lower()
            if class_matches(name, _MP_CLASSES):
                return BRANCHES[_SDK2013MP], f"BSP {bsp.version} with {name} entities"
    return None, ""

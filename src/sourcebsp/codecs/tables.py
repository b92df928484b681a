"""The lump tables of the built-in engine branches, composed from the families' declarations.

A table maps each lump to its versions and each version to what reads it: a
:class:`~sourcebsp.codecs.base.Record` (the lump a table of them), a
:class:`~sourcebsp.codecs.base.Deferred` codec or a codec.  Every table is composed
from the tables the codec modules declare (``geometry.LAYOUTS``,
``records.LIGHTING_V25``...), never by changing one; :mod:`sourcebsp.variants` names
the table each branch reads with, and :mod:`sourcebsp.codecs.counts` counts elements
from the same entries.  Nothing here imports numpy.

The recipes are data, so that a lump one codec module declares alone (the entities,
the pakfile, the game lump: :data:`SOLE_MODULES`) is found from that module, without
importing the others, until a table is needed whole.
"""
from __future__ import annotations

import functools
import importlib
from types import MappingProxyType
from typing import Any, Mapping

from .._loading import load_quietly
from ..lump_ids import LumpId
from .base import Layouts

__all__ = ["Recipe", "RECIPES", "SOLE_MODULES", "bare_table", "built", "compose", "names", "resolve", "sole_versions",
           "table", "tables"]


def compose(base: Layouts, *overrides: Layouts, remove: tuple[int, ...] = ()) -> Layouts:
    """A new layout table: ``base`` with each override's lump versions merged in.

    A lump no override touches keeps the base's read-only version table, so the
    branches built from SDK 2013 share most of theirs (fewer objects to make and
    for the collector to scan)."""
    merged: dict[int, Mapping[Any, Any]] = {
        lump: versions if isinstance(versions, MappingProxyType) else MappingProxyType(dict(versions))
        for lump, versions in base.items()}
    for override in overrides:
        for lump, versions in override.items():
            merged[lump] = MappingProxyType({**merged.get(lump, {}), **versions})
    for lump in remove:
        merged.pop(lump, None)
    return MappingProxyType(merged)


def resolve(versions: Mapping[Any, Any], lump_version: int | None) -> Any:
    """What reads a lump at ``lump_version``, from its version table: its own entry, else the
    table's entry for ``None`` (any other version), else the lump's one layout when it has a
    single one (some compilers leave junk in the field: Xbox 360 map flags), else None (raw)."""
    if lump_version in versions:
        return versions[lump_version]
    if None in versions:
        return versions[None]
    if versions and len(set(map(id, versions.values()))) == 1:
        return next(iter(versions.values()))
    return None


class Recipe:
    """How a table is composed: the table it starts from, the codec modules' tables merged
    into it in order (the module under :mod:`sourcebsp.codecs` and the table's name there),
    and the lumps it drops.  (A plain class: a named tuple's definition costs a start-up.)"""

    __slots__ = ("base", "parts", "remove")

    def __init__(self, base: str | None, parts: tuple[tuple[str, str], ...] = (), remove: tuple[int, ...] = ()) -> None:
        self.base = base
        self.parts = parts
        self.remove = remove


_SDK2013_PARTS = (("geometry", "LAYOUTS"), ("tree", "LAYOUTS"), ("brushes", "LAYOUTS"), ("textures", "LAYOUTS"),
                  ("displacements", "LAYOUTS"), ("records", "LIGHTING"), ("records", "OVERLAYS"),
                  ("gamelumps", "LAYOUTS"), ("entities", "LAYOUTS"), ("records", "VISIBILITY"),
                  ("pakfile", "LAYOUTS"), ("records", "PHYSICS"), ("records", "OCCLUSION"))

# Table name (Variant.layouts.table) -> recipe, each after the tables it starts from.
RECIPES: Mapping[str, Recipe] = MappingProxyType({
    "SDK2013": Recipe(None, _SDK2013_PARTS),
    # Before BSP 20 slots 51 and 52 were the console-only LIGHTMAPPAGES and LIGHTMAPPAGEINFOS,
    # whose layout is not documented.
    "SOURCE2004": Recipe("SDK2013", (("brushes", "LAYOUTS_V19"), ("tree", "LAYOUTS_V19"), ("records", "PHYSICS_V19")),
                         remove=(LumpId.LEAF_AMBIENT_INDEX_HDR, LumpId.LEAF_AMBIENT_INDEX)),
    "VAMPIRE": Recipe("SOURCE2004", (("geometry", "LAYOUTS_V17"), ("tree", "LAYOUTS_V17"))),
    # The leaked Half-Life 2 beta: its own dface_t at BSP 17 and 18, and dispinfo at 17; the 32-byte
    # leaf under lump version 0 as Vampire's (BSPSource reads dleaf_t v1 before BSP 19).
    "HL2_BETA18": Recipe("SOURCE2004", (("geometry", "LAYOUTS_HL2_BETA18"), ("tree", "LAYOUTS_V17"))),
    "HL2_BETA17": Recipe("HL2_BETA18", (("geometry", "LAYOUTS_HL2_BETA17"), ("displacements", "LAYOUTS_HL2_BETA17"))),
    "STRATA": Recipe("SDK2013", (("geometry", "LAYOUTS_V25"), ("tree", "LAYOUTS_V25"), ("brushes", "LAYOUTS_V25"),
                                 ("displacements", "LAYOUTS_V25"), ("records", "LIGHTING_V25"),
                                 ("records", "OVERLAYS_V25"), ("records", "PHYSICS_V25"),
                                 ("records", "PROPCOLLISION_V25"))),
    # BSP 21 branches that reuse slots 22-25 (see codecs/propcollision.py).
    "LEFT4DEAD2": Recipe("SDK2013", (("records", "PROPCOLLISION_L4D2"),)),
    "CSGO": Recipe("SDK2013", (("records", "PROPCOLLISION_CSGO"),)),
    # Dota 2 betas: their dbrushside_t is SDK 2013's with byte bevel, byte thin (Alien Swarm's, which
    # BSPSource reads from BSP 21 on as DBrushSideV0New); own ddispinfo_t per BSP version, doverlay_t.
    "DOTA2_V22": Recipe("SDK2013", (("displacements", "LAYOUTS_DOTA2_V22"), ("records", "OVERLAYS_DOTA2"))),
    "DOTA2_V23": Recipe("SDK2013", (("displacements", "LAYOUTS_DOTA2_V23"), ("records", "OVERLAYS_DOTA2"))),
    "INFRA": Recipe("SDK2013", remove=(LumpId.PRIMITIVES,)),
    "SOURCE_XBOX": Recipe("SOURCE2004", (("records", "LIGHTING_XBOX"),)),
    # Vindictus: wide records, its own ddispinfo_t (see codecs/displacements.py), game lump directory
    # and static props (a scale array before them).
    "VINDICTUS": Recipe("SDK2013", (("geometry", "LAYOUTS_VINDICTUS"), ("tree", "LAYOUTS_VINDICTUS"),
                                    ("gamelumps", "LAYOUTS_VINDICTUS"), ("displacements", "LAYOUTS_VINDICTUS"),
                                    ("brushes", "LAYOUTS_VINDICTUS"), ("records", "OVERLAYS_VINDICTUS"))),
    # Zeno Clash: a second name array in its static prop sub-lump, and its own v7 props.
    "ZENO_CLASH": Recipe("SDK2013", (("gamelumps", "LAYOUTS_ZENO_CLASH"),)),
    # Dark Messiah: its own texinfo_t, dmodel_t, game lump directory, static props, dworldlight_t.
    "DARK_MESSIAH": Recipe("SDK2013", (("textures", "LAYOUTS_DARK_MESSIAH"), ("tree", "LAYOUTS_DARK_MESSIAH"),
                                       ("gamelumps", "LAYOUTS_DARK_MESSIAH"), ("records", "LIGHTING_DARK_MESSIAH"))),
    # Respawn's rBSP: its own 128 lump ids (codecs/respawn.py), nothing of SDK 2013's but the
    # entities' text (the same id, 0, in both formats).
    "TITANFALL": Recipe(None, (("respawn", "LAYOUTS_TITANFALL"), ("entities", "LAYOUTS"))),
    "TITANFALL2": Recipe(None, (("respawn", "LAYOUTS_TITANFALL2"), ("entities", "LAYOUTS"))),
})

# Lumps one codec module declares alone, the same in every table that has them: read from that
# module until a table is needed whole, so that opening a map to read its entities, or saving it
# after an edit, does not import every codec module.  They are also the only built-in lumps
# whose bytes hold file offsets (see Variant.relocator).  A test holds every table to both.
SOLE_MODULES: Mapping[int, str] = MappingProxyType({LumpId.ENTITIES: "entities", LumpId.PAKFILE: "pakfile",
                                                    LumpId.GAME_LUMP: "gamelumps"})


def names() -> tuple[str, ...]:
    """The names of the built-in tables."""
    return tuple(RECIPES)


def _part(module: str, name: str) -> Layouts:
    found: Layouts = getattr(importlib.import_module(f"{__package__}.{module}"), name)
    return found


def _parts(name: str) -> tuple[tuple[str, str], ...]:
    """Every part of table ``name``, its base's first."""
    recipe = RECIPES[name]
    return (*(_parts(recipe.base) if recipe.base else ()), *recipe.parts)


_tables: dict[str, Layouts] = {}
_bare: dict[str, Layouts] = {}


def tables() -> Mapping[str, Layouts]:
    """Every built-in table by name, composed on first use."""
    if len(_tables) < len(RECIPES):
        load_quietly(lambda: [_composed(_tables, name, sole=True) for name in RECIPES])  # with the collector off
    return MappingProxyType(_tables)


def table(name: str) -> Layouts:
    """The built-in table ``name`` (KeyError when there is none)."""
    return tables()[name]


def bare_table(name: str) -> Layouts:
    """Table ``name`` without the lumps of :data:`SOLE_MODULES` (whose own codecs, without records,
    read them): what record sizes and counts need, composed without importing those modules (and
    without the tables it is not made from)."""
    return _bare.get(name) or load_quietly(lambda: _composed(_bare, name, sole=False))


def _composed(into: dict[str, Layouts], name: str, sole: bool) -> Layouts:
    """Table ``name`` (and the tables it starts from) composed into ``into``, once."""
    found = into.get(name)
    if found is None:
        recipe = RECIPES[name]
        base = _composed(into, recipe.base, sole) if recipe.base else {}
        parts = (_part(*part) for part in recipe.parts if sole or part[0] not in SOLE_MODULES.values())
        found = into[name] = compose(base, *parts, remove=recipe.remove)
    return found


def built() -> bool:
    """Whether the tables have been composed."""
    return len(_tables) == len(RECIPES)


@functools.lru_cache(maxsize=None)
def sole_versions(name: str, lump: int) -> Mapping[Any, Any]:
    """The versions of ``lump`` (one of :data:`SOLE_MODULES`) in table ``name``, from the parts
    of its own module alone; KeyError when the table has no such lump."""
    module = SOLE_MODULES[lump]
    return compose({}, *(_part(*part) for part in _parts(name) if part[0] == module))[lump]

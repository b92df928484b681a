"""Engine branches and games as data.

A :class:`Variant` is a frozen value: the header layout (byte order, lump_t
order) and, for each lump, the codec to use for each lump version.  Variants
are composed from the SDK 2013 tables without mutating them, and
:func:`detect_variant` is the one place that picks a variant for a file.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from .codecs import brushes, displacements, gamelumps, geometry, lighting, overlays, textures, tree
from .codecs import visibility
from .codecs import entities
from .codecs import pakfile
from .codecs import occlusion, physics, propcollision
from .codecs.base import ArrayCodec, Codec, Endian, Layouts
from .header import Header

__all__ = ["Variant", "VARIANTS", "detect_variant"]



def compose(base: Layouts, *overrides: Layouts, remove: tuple[int, ...] = ()) -> Layouts:
    """A new layout table: ``base`` with each override's lump versions merged in."""
    merged: dict[int, dict[Any, Any]] = {lump: dict(versions) for lump, versions in base.items()}
    for override in overrides:
        for lump, versions in override.items():
            merged[lump] = {**merged.get(lump, {}), **versions}
    for lump in remove:
        merged.pop(lump, None)
    return MappingProxyType({k: MappingProxyType(v) for k, v in merged.items()})


SDK2013 = compose(
    geometry.LAYOUTS,
    tree.LAYOUTS,
    brushes.LAYOUTS,
    textures.LAYOUTS,
    displacements.LAYOUTS,
    lighting.LAYOUTS,
    overlays.LAYOUTS,
    gamelumps.LAYOUTS,
    entities.LAYOUTS,
    visibility.LAYOUTS,
    pakfile.LAYOUTS,
    physics.LAYOUTS,
    occlusion.LAYOUTS,
)
SOURCE2004 = compose(SDK2013, brushes.LAYOUTS_V19, tree.LAYOUTS_V19, physics.LAYOUTS_V19,
                     remove=lighting.REMOVED_BEFORE_V20)
VAMPIRE = compose(SOURCE2004, geometry.LAYOUTS_V17, tree.LAYOUTS_V17)
STRATA = compose(
    SDK2013,
    geometry.LAYOUTS_V25,
    tree.LAYOUTS_V25,
    brushes.LAYOUTS_V25,
    displacements.LAYOUTS_V25,
    lighting.LAYOUTS_V25,
    overlays.LAYOUTS_V25,
    physics.LAYOUTS_V25,
    propcollision.LAYOUTS_V25,
)
# BSP 21 branches that reuse slots 22-25 (see codecs/propcollision.py).
LEFT4DEAD2 = compose(SDK2013, propcollision.LAYOUTS_L4D2)
CSGO = compose(SDK2013, propcollision.LAYOUTS_CSGO)


@dataclass(frozen=True)
class Variant:
    """One engine branch's reading of a BSP file."""

    name: str
    description: str
    layouts: Layouts
    endian: Endian = "<"

    def codec(self, lump: int, lump_version: int) -> Codec | None:
        """The codec for ``lump`` at ``lump_version``, or None to keep it raw.

        A table may give a layout for ``None``: any lump version it does not
        list.  Otherwise, when a lump has a single known layout, that layout
        is used whatever the lump version says, since some compilers leave
        junk in that field (Xbox 360 map flags, for one).
        """
        versions = self.layouts.get(lump)
        if not versions:
            return None
        if lump_version in versions:
            found = versions[lump_version]
        elif None in versions:
            found = versions[None]
        elif len(set(map(id, versions.values()))) == 1:
            found = next(iter(versions.values()))
        else:
            return None
        if isinstance(found, np.dtype):
            return ArrayCodec(found).with_byte_order(self.endian)
        return found  # type: ignore[no-any-return]


def _variant(name: str, description: str, layouts: Layouts, endian: Endian = "<") -> Variant:
    return Variant(name, description, layouts, endian)


VARIANTS: Mapping[str, Variant] = MappingProxyType(
    {
        v.name: v
        for v in (
            _variant("vampire", "Vampire: The Masquerade - Bloodlines (BSP 17)", VAMPIRE),
            _variant("source2004", "Source 2004: HL2, CS:S, DoD:S (BSP 18-19)", SOURCE2004),
            _variant("orange_box", "Orange Box / SDK 2013: TF2, GMod, HL2 (BSP 20)", SDK2013),
            _variant("orange_box_x360", "Orange Box on Xbox 360 (big-endian BSP 20)", SDK2013, ">"),
            _variant("left4dead2", "Left 4 Dead 2 (BSP 21, L4D2 lump_t order)", LEFT4DEAD2),
            _variant("csgo", "CS:GO, Portal 2, Alien Swarm (BSP 21)", CSGO),
            _variant("console_v21", "Portal 2 / CS:GO console (big-endian BSP 21)", SDK2013, ">"),
            _variant("v22_v24", "Dota 2 beta, Contagion and other BSP 22-24 branches", SDK2013),
            _variant("strata", "Strata Source: Momentum Mod, Portal: Revolution (BSP 25)", STRATA),
            _variant("v42", "BSP 42 (read with SDK 2013 layouts)", SDK2013),
        )
    }
)


def detect_variant(header: Header) -> Variant:
    """The variant a header belongs to: by byte order, version and lump_t order."""
    version, big = header.version, header.endian == ">"
    if version == 17:
        name = "vampire"
    elif version < 20:
        name = "source2004"
    elif version == 20:
        name = "orange_box_x360" if big else "orange_box"
    elif version == 21:
        name = "console_v21" if big else ("left4dead2" if header.lump_order == "l4d2" else "csgo")
    elif version < 25:
        name = "v22_v24"
    elif version == 25:
        name = "strata"
    else:
        name = "v42"
    return VARIANTS[name]

"""The example room in the file layout of any engine branch.

The room is built once, in the Orange Box layout (:mod:`.room`); for another
branch each lump is carried over into that branch's structs: the same records
field by field (a field the branch lacks is dropped, one it adds is zero), at
the lump version the branch's table reads, in its byte order, lump_t order and
BSP version; the static props in the layout its compilers write
(:attr:`~sourcebsp.variants.Variant.static_prop_layout`).  A lump the branch
has no slot for is left out.  This is how branches without a public map are
tested: the file is read back by sourcebsp and by other readers.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._io import atomic_write
from ..codecs.gamelumps import GameLumps
from ..codecs.staticprops import STATIC_PROP_LAYOUTS, StaticProps
from ..container import BspFile
from ..errors import UnsupportedError
from ..header import Header, LumpEntry
from ..lump_ids import NUM_LUMPS, LumpId
from ..variants import VARIANTS, Variant, get_variant
from .respawn import example_respawn_bytes
from .room import example_map_bytes

__all__ = ["branch_bytes", "example_branch_bytes", "example_description", "write_example_branch", "example_branches"]


@functools.lru_cache(maxsize=1)
def _room() -> bytes:
    return example_map_bytes()


def example_branches() -> list[str]:
    """The Source branches the example room can be written for: those whose every lump the room
    holds has a declared layout (none kept raw for want of one).  The rBSP branches have a
    room of their own (:mod:`.respawn`), which :func:`example_branch_bytes` writes too."""
    base = BspFile.from_bytes(_room())
    return [name for name, variant in VARIANTS.items()
            if variant.container == "source" and not _missing(base, variant)]


# Lumps the room can go without when a branch's layout of them is not declared: a map loads
# without its world lights (they light props and models, not the world's lightmaps).
_OPTIONAL = frozenset({LumpId.WORLDLIGHTS, LumpId.WORLDLIGHTS_HDR})


def _missing(base: BspFile, variant: Variant) -> list[str]:
    """Lumps of the room that ``variant`` writes but has no layout for (its own is not declared)."""
    base_layouts = base.variant.layouts
    return [base.lump_name(lump) for lump, entry in base.iter_lumps()
            if lump in base_layouts and lump not in variant.layouts and lump not in _OPTIONAL
            and variant.lump_versions.get(lump, entry.version) is not None]


def _carried(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``value``'s records in ``dtype``: common fields copied, the others zero."""
    if value.dtype == dtype:
        return value
    if not dtype.names and not value.dtype.names:  # indices widened (Vindictus's leaf faces, leaf brushes)
        return value.astype(dtype.newbyteorder("="))
    out = np.zeros(len(value), dtype.newbyteorder("="))
    for name in dtype.names or ():
        if name.endswith("styles"):
            out[name] = 255  # light styles a branch adds are unused (255), not style 0
    for name in set(value.dtype.names or ()) & set(dtype.names or ()):
        source, target = value[name], out[name]
        if bool(source.dtype.names) != bool(target.dtype.names):
            continue  # a table the branch keeps as bytes of its own layout (Vindictus's neighbours): zero
        if source.shape == target.shape:
            target[...] = source
        else:  # an array field of another length (Vampire's light styles): the common part
            common = tuple(slice(0, min(a, b)) for a, b in zip(source.shape[1:], target.shape[1:]))
            target[(slice(None), *common)] = source[(slice(None), *common)]
    return out


def _static_props(base: BspFile, variant: Variant, bsp_version: int) -> GameLumps:
    props = base.static_props
    game = GameLumps()
    layout = next((lay for lay in STATIC_PROP_LAYOUTS if lay.name == variant.static_prop_layout), None)
    if layout is None and variant.static_prop_versions:
        # A branch whose prop layout is not documented (Zeno Clash's v7): no props, rather than
        # props in a layout it does not write.
        for lump in base.game_lumps:
            if lump.id != "sprp":
                game.add(lump.id, lump.version, lump.value)
        return game
    if layout is None:
        layout = props.layout
    # A branch family's own arrays (Vindictus's scales, Zeno Clash's second name array) stay empty.
    empty = StaticProps.empty(layout.version, bsp_version, family=layout.family)
    carried = StaticProps(props.dictionary.copy(), props.leafs.astype(empty.leafs.dtype),
                          _carried(props.props, layout.dtype), layout, scales=empty.scales,
                          model_paths=empty.model_paths)
    for lump in base.game_lumps:
        if lump.id == "sprp":
            game.add("sprp", layout.version, carried, family=layout.family)
        else:
            game.add(lump.id, lump.version, lump.value)
    return game


def example_branch_bytes(variant: "str | Variant", *, bsp_version: int | None = None) -> bytes:
    """The example room as the bytes of a ``.bsp`` file of ``variant``'s layout, at
    ``bsp_version`` (default: the latest the branch writes).

    Raises
    ------
    UnsupportedError
        The branch keeps a lump of the room raw (its layout is not declared yet).
    """
    chosen = get_variant(variant)
    if chosen.container == "respawn":
        return example_respawn_bytes(chosen.name)
    return branch_bytes(BspFile.from_bytes(_room()), variant, bsp_version=bsp_version, what="the example map")


def example_description(variant: "str | Variant | None" = None) -> str:
    """What the example room of ``variant`` (None: the Orange Box map) holds, in words."""
    if variant is not None and get_variant(variant).container == "respawn":
        return ("a 512x512x256 room (one mesh of 12 triangles), a player start, a light, an oil drum prop, "
                "three collision brushes (one a func_brush's) and a trigger")
    return "a 512x512x256 room with a light, a player start, a func_button and a static prop"


def branch_bytes(base: BspFile, variant: "str | Variant", *, bsp_version: int | None = None,
                 what: str = "the map") -> bytes:
    """The Orange Box map ``base`` carried over into ``variant``'s layout (as
    :func:`example_branch_bytes` does the room): for testing a branch's layouts on maps that
    have what the room lacks (displacements, overlays)."""
    named = get_variant(variant)
    if bsp_version is None:
        bsp_version = max(named.versions) if named.versions else base.version
    chosen = named.at_version(bsp_version)
    missing = _missing(base, chosen)
    if missing:
        raise UnsupportedError(f"{what} cannot be written for {chosen.name}: the layouts of its "
                               f"{', '.join(missing)} are not declared yet")
    versions: dict[int, int] = {}
    for lump, entry in base.iter_lumps():
        found = chosen.lump_versions.get(lump, entry.version)  # as the branch's compiler writes it
        if found is not None and (lump in chosen.layouts or lump not in _OPTIONAL):
            versions[lump] = found
    entries = [LumpEntry(version=versions.get(i, 0)) for i in range(NUM_LUMPS)]
    header = Header(ident=chosen.ident, version=bsp_version, lumps=entries, map_revision=base.map_revision,
                    lump_order=chosen.lump_order or "std")
    # A branch told by lumps of its own gets them, one zero record per face (Xbox lightmap page
    # infos; their pages stay empty): the room has nothing to put there.
    for marker in sorted(chosen.marker_lumps):
        if getattr(chosen.codec(marker, 0), "dtype", None) is not None:
            versions[marker] = 0
    out = BspFile(header, variant=chosen)
    for index, version in versions.items():
        lump = LumpId(index)
        value: Any
        if lump == LumpId.GAME_LUMP:
            value = _static_props(base, chosen, bsp_version)
        elif lump in chosen.marker_lumps:
            value = np.zeros(len(base.faces), getattr(chosen.codec(lump, version), "dtype"))
        else:
            value = base.get_lump(lump)
            dtype = getattr(chosen.codec(lump, version), "dtype", None)
            if isinstance(value, np.ndarray) and dtype is not None:
                value = _carried(value, dtype)
        out.set_lump(lump, value)
    return out.to_bytes()


def write_example_branch(path: str | os.PathLike[str], variant: "str | Variant") -> Path:
    """Write the example room in ``variant``'s layout to ``path`` (atomically)."""
    return atomic_write(Path(path), example_branch_bytes(variant))

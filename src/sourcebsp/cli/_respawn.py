"""The CLI's Titanfall rBSP paths: ``info``, ``repack``, ``export``, ``props`` and ``pak`` of a map
:mod:`sourcebsp.respawn` reads (``entities`` and ``edit-entities`` have theirs in their modules).

Kept apart from the Source commands so that each of them gains only a two-line hook.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..errors import BspError, UnsupportedError
from ..opening import map_head
from ..respawn import RespawnBsp, is_respawn
from ..formats import describe_foreign
from ._common import CommandError

if TYPE_CHECKING:
    from ..converters import Units


def is_rbsp(path: str | os.PathLike[str]) -> bool:
    """True when the file at ``path`` starts as a Titanfall or Titanfall 2 map (False when unreadable:
    the Source path then reports the error as for any map)."""
    try:
        return is_respawn(map_head(path))  # a .bsp.bz2 unpacked only as far as its first bytes
    except OSError:
        return False


def describe(path: str, *, strict: bool = True) -> dict[str, Any]:
    """``info``'s report of an rBSP map, with the keys of a Source map's (see ``cli.info.describe``)."""
    bsp = RespawnBsp.open(path)
    damaged: list[dict[str, Any]] = []
    lumps = []
    for index, entry in bsp.iter_lumps():
        name, length = bsp.lump_name(index), len(bsp.raw(index))
        broken = False
        try:
            count = bsp.count(index)
        except BspError as exc:
            if strict:
                raise
            count, broken = None, True
            damaged.append({"part": name, "lump": name, "offset": exc.offset, "error": str(exc)})
        lumps.append({"index": index, "name": name, "version": entry.version, "offset": entry.fileofs,
                      "length": length, "compressed": False, "uncompressed_length": length, "count": count,
                      "damaged": broken,
                      **({"external": True} if bsp.is_external(index) else {})})
    entity_count = None
    try:
        entity_count = len(bsp.entities) + sum(map(len, bsp.partition_entities().values()))
    except BspError as exc:
        if strict:
            raise
        damaged.append({"part": "ENTITIES", "lump": "ENTITIES", "offset": exc.offset, "error": str(exc)})
    game_lumps = []
    try:
        game_lumps = [{"id": name, "version": version, "length": length, "compressed": False}
                      for name, version, length in bsp.game_lump_directory()]
    except BspError as exc:
        if strict:
            raise
        damaged.append({"part": "GAME_LUMP", "lump": "GAME_LUMP", "offset": exc.offset, "error": str(exc)})
    return {
        "path": str(path), "ident": "rBSP", "endianness": "little", "version": bsp.version,
        "variant": bsp.variant.name, "variant_description": bsp.variant.description, "variant_guessed": False,
        "variant_alternatives": [], "lump_order": "std", "map_revision": bsp.map_revision,
        "file_size": bsp.file_size, "entity_count": entity_count, "game_lumps": game_lumps, "lumps": lumps,
        "entity_partitions": bsp.partitions, "entity_files": sorted(bsp.ent_files), "damaged": damaged,
    }


def repack(source: str, output: str, *, reencode: bool, compression: str, overwrite: bool) -> str:
    """Write an rBSP map again (and its lump and ``.ent`` files); the line ``repack`` prints."""
    if compression != "keep":
        raise UnsupportedError("Titanfall maps are not LZMA-compressed: --compress and --decompress are for "
                               "Source maps")
    bsp = RespawnBsp.open(source)
    if reencode:
        bsp.reencode()
    size = bsp.save(output, overwrite=overwrite).stat().st_size  # the .bsp_lump and .ent files beside OUTPUT too
    return (f"{output}: copied{' and re-encoded' if reencode else ''}, {bsp.file_size:,} -> {size:,} bytes, "
            f"{len(bsp.external)} external lump files, {len(bsp.ent_files)} .ent files")


def props(path: str) -> dict[str, Any]:
    """``props``' report of a Titanfall map: its ``sprp`` props (v12 or v13), one plain record each."""
    bsp = RespawnBsp.open(path)
    if bsp.game_sub_lump("sprp") is None:
        return {"layout": bsp.variant.name, "version": None, "description": "no static props", "models": [],
                "props": []}
    found = bsp.static_props
    columns = {name: found.props[name].tolist() for name in found.props.dtype.names or ()}
    names = found.names
    records = [{"index": index, "model": names[prop_type],
                **{name: column[index] for name, column in columns.items()}}
               for index, prop_type in enumerate(columns["prop_type"])]
    return {"layout": bsp.variant.name, "version": found.version,
            "description": f"{bsp.variant.description}: StaticPropv{found.version}",
            "models": names, "props": records}

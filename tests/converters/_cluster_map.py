"""The example map with its ceiling slab made a second open leaf, in a cluster of the caller's choosing."""
from __future__ import annotations

from sourcebsp.codecs.entities import Entities, Entity
from sourcebsp.container import BspFile
from sourcebsp.examples.room import build_example_map
from sourcebsp.lump_ids import LumpId

ROOM_LEAF, CEILING_LEAF = 4, 3  # the example map's open room, and the solid slab above it


def room_with(cluster: int, area: int | None = None, sky_camera: bool = False) -> BspFile:
    """The example map with its ceiling slab made an open leaf of cluster ``cluster``."""
    bsp = build_example_map()
    leafs = bsp.get_lump(LumpId.LEAFS).copy()
    assert leafs["cluster"][ROOM_LEAF] == 0 and leafs["contents"][CEILING_LEAF] == 1
    leafs["contents"][CEILING_LEAF] = 0
    leafs["cluster"][CEILING_LEAF] = cluster
    if area is not None:
        leafs["area_flags"][CEILING_LEAF] = area
    bsp.set_lump(LumpId.LEAFS, leafs)
    if sky_camera:
        listed = list(bsp.get_lump(LumpId.ENTITIES))
        listed.append(Entity([("classname", "sky_camera"), ("origin", "0 0 128")]))
        bsp.set_lump(LumpId.ENTITIES, Entities(listed, bsp_version=20))
    return BspFile.from_bytes(bsp.to_bytes())

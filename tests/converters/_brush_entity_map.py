"""A map built in code: the example room plus brush entities of one box each, placed as asked.

Built with the example map's own builder (``sourcebsp.examples.room``), so the
lumps are what vbsp writes for such entities: each entity's box stored around
its origin, unturned, with its own model, faces and tree.
"""
from __future__ import annotations

from typing import Sequence

from sourcebsp.codecs.entities import Entities, Entity
from sourcebsp.codecs.occlusion import Occlusion
from sourcebsp.codecs.records import MAP_FLAGS
from sourcebsp.codecs.physics import PhysCollide, PhysDisp
from sourcebsp.container import BspFile
from sourcebsp.examples import room
from sourcebsp.examples.helpers import Box
from sourcebsp.header import Header, LumpEntry
from sourcebsp.lump_ids import NUM_LUMPS, LumpId

import numpy as np


def room_builder() -> room._MapBuilder:
    """The example room's builder with its world and button: add brushes and models, then :func:`room_map`."""
    builder = room._MapBuilder()
    for material in room._MATERIALS:
        builder.texdata_of(material)
    room._world(builder)
    room._button(builder)
    return builder


def box_entity(builder: room._MapBuilder, box: Box, classname: str, origin: tuple[float, float, float],
               pairs: Sequence[tuple[str, str]] = ()) -> Entity:
    """A brush entity of one ``box`` brush (its own model, stored around ``origin``) and its keys."""
    brush = builder.box_brush(box, {cut: room.BUTTON_MATERIAL for cut in room._CUTS})
    face_sides = {cut: builder.side_of(brush, *cut) for cut in room._CUTS}
    model = builder.box_model(box, solid_inside=True, face_sides=face_sides, brushes=[brush], bounds=box,
                              origin=origin)
    return Entity([("classname", classname), ("model", f"*{model}"), ("origin", " ".join(f"{v:g}" for v in origin)),
                   *pairs])


def brush_entity_map(entities: Sequence[tuple[str, tuple[float, float, float], str | None]], box: Box) -> BspFile:
    """The example room plus one brush entity per ``(classname, origin, angles or None)``, each ``box``."""
    builder = room_builder()
    listed = list(room._entities())
    for classname, origin, angles in entities:
        listed.append(box_entity(builder, box, classname, origin, [("angles", angles)] if angles is not None else []))
    return room_map(builder, listed)


def room_map(builder: room._MapBuilder, listed: list[Entity]) -> BspFile:
    """The map of a filled example-room builder with the entities ``listed``, written and read back."""
    lumps = {}
    lumps.update(room._tree(builder))
    lumps.update(room._geometry(builder))
    lumps.update(room._textures(builder))
    lumps.update(room._ambient_and_lights(builder))
    lumps.update({
        LumpId.ENTITIES: Entities(listed, bsp_version=20),
        LumpId.GAME_LUMP: room._game_lumps(builder),
        LumpId.OCCLUSION: Occlusion(),
        LumpId.PHYSCOLLIDE: PhysCollide([], None),
        LumpId.PHYSDISP: PhysDisp(),
        LumpId.MAP_FLAGS: np.zeros(1, MAP_FLAGS),
        LumpId.PAKFILE: room._empty_pakfile(),
    })
    entries = [LumpEntry(version=room._LUMP_VERSIONS.get(LumpId(i), 0)) for i in range(NUM_LUMPS)]
    bsp = BspFile(Header(ident=b"VBSP", version=20, lumps=entries, map_revision=1))
    for lump, value in lumps.items():
        bsp.set_lump(lump, value)
    return BspFile.from_bytes(bsp.to_bytes())

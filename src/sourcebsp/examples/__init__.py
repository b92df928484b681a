"""An example map built in code: a closed, lit room, written with sourcebsp's own codecs.

:func:`build_example_map` gives it as a :class:`~sourcebsp.BspFile` (BSP 20,
the Orange Box / SDK 2013 variant, little-endian); :func:`write_example_map`
saves it.  Nothing is read from disk, so it works on a fresh install with no
map at hand::

    >>> from sourcebsp.examples import build_example_map
    >>> bsp = build_example_map()
    >>> [e.classname for e in bsp.entities]
    ['worldspawn', 'light', 'info_player_start', 'func_button']

What the map holds is what vbsp, vvis and vrad write for the same Hammer map:

* **World** (model 0): a hollow room, :data:`ROOM` (512 x 512 x 256 units
  inside), closed by six wall brushes :data:`WALL_THICKNESS` units thick
  (``CONTENTS_SOLID``).  The sides that face the room are textured
  :data:`WALL_MATERIAL`; the other sides, whose faces are never drawn,
  ``tools/toolsnodraw``.  Only the six faces that look into the room are
  emitted.
* **Brush entity**: a ``func_button`` whose model ``*1`` is one box brush on
  the east wall, with its own faces, head node and leaves.  As vbsp does for an
  entity with an ``origin``, its geometry is stored relative to that origin.
* **Point entities**: ``worldspawn`` (``world_mins``, ``world_maxs``,
  ``skyname``, ``mapversion``), a ``light`` and an ``info_player_start``.
* **Static prop**: one ``models/props_c17/oildrum001.mdl`` on the floor, in
  the ``sprp`` game lump (version 10) with its leaf list.
* **BSP tree**: planes in pairs (plane ``i ^ 1`` is plane ``i`` flipped; the
  even one faces the positive axis), nodes on the even planes, leaves that
  partition space: leaf 0 is the dummy solid leaf (cluster -1, where vbsp
  leaves the 0 of its zero-filled array), the room is one empty
  leaf (cluster 0, area 1), everything else in the world is solid (cluster
  -1, area 0).  A model's tree cuts its volume with the six planes of its
  box, one node per plane, each peeling off one leaf.
* **Visibility**: one cluster that sees and hears itself.
* **Lighting**: 16 world units per luxel (``lightmap_vecs`` of 1/16), one
  light style; each sample is the direct light of the ``light`` entity
  (Lambert, inverse-square falloff as vrad's ``_quadratic_attn 1``, no
  shadows) plus a constant fill standing in for bounced light.  The world
  light, the leaf ambient cubes (one sample per empty leaf) and the face
  average colours agree with it.

What it lacks: collision models for vphysics (the ``PHYSCOLLIDE`` lump holds
only its terminator, so physics objects would fall through the world; player
movement uses the brushes), cubemaps, HDR lighting and detail props.
"""
from __future__ import annotations

from .room import (
    BUTTON_BOX,
    BUTTON_MATERIAL,
    BUTTON_ORIGIN,
    LIGHT_COLOR,
    LIGHT_ORIGIN,
    NODRAW_MATERIAL,
    PLAYER_START,
    PROP_ANGLES,
    PROP_BOUNDS,
    PROP_MODEL,
    PROP_ORIGIN,
    ROOM,
    WALL_MATERIAL,
    WALL_THICKNESS,
    WORLD_BOUNDS,
    build_example_map,
    example_map_bytes,
    write_example_map,
)

__all__ = [
    "build_example_map",
    "example_map_bytes",
    "write_example_map",
    "ROOM",
    "WALL_THICKNESS",
    "WORLD_BOUNDS",
    "PLAYER_START",
    "LIGHT_ORIGIN",
    "LIGHT_COLOR",
    "BUTTON_ORIGIN",
    "BUTTON_BOX",
    "PROP_MODEL",
    "PROP_ORIGIN",
    "PROP_ANGLES",
    "PROP_BOUNDS",
    "WALL_MATERIAL",
    "BUTTON_MATERIAL",
    "NODRAW_MATERIAL",
]

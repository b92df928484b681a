"""Engine bit flags, declared once: brush contents, surface flags, static-prop flags.

* :class:`Contents`: ``CONTENTS_*`` of ``public/bspflags.h`` (``dbrush_t.contents``,
  ``dleaf_t.contents``).  Bit ``0x400`` is ``CONTENTS_UNUSED6`` in Source SDK 2013 and
  ``CONTENTS_BLOCKLIGHT`` in later branches; it is named after its later use.
* :class:`Surf`: ``SURF_*`` of ``public/bspflags.h`` (``texinfo_t.flags``).
* :class:`StaticPropFlags`: ``STATIC_PROP_*`` of ``public/gamebspfile.h``
  (``StaticPropLump_t.m_Flags``).

The module-level ``CONTENTS_*``, ``SURF_*`` and ``STATIC_PROP_*`` names are the same
members under their C names, for code that reads like the SDK.  This module imports
nothing from the package: every layer may use it.
"""
from __future__ import annotations

from enum import IntFlag

__all__ = ["Contents", "Surf", "StaticPropFlags"]


class Contents(IntFlag):
    """``CONTENTS_*`` bits of a brush or leaf (bspflags.h)."""

    EMPTY = 0
    SOLID = 0x1  # an eye is never valid in a solid
    WINDOW = 0x2  # translucent, but not watery (glass)
    AUX = 0x4
    GRATE = 0x8  # alpha-tested grate textures: bullets and sight pass, solids do not
    SLIME = 0x10
    WATER = 0x20
    BLOCKLOS = 0x40  # blocks AI line of sight
    OPAQUE = 0x80  # cannot be seen through (may be non-solid)
    TESTFOGVOLUME = 0x100
    UNUSED = 0x200
    BLOCKLIGHT = 0x400  # SDK 2013: CONTENTS_UNUSED6
    TEAM1 = 0x800
    TEAM2 = 0x1000
    IGNORE_NODRAW_OPAQUE = 0x2000
    MOVEABLE = 0x4000
    AREAPORTAL = 0x8000
    PLAYERCLIP = 0x10000
    MONSTERCLIP = 0x20000
    CURRENT_0 = 0x40000
    CURRENT_90 = 0x80000
    CURRENT_180 = 0x100000
    CURRENT_270 = 0x200000
    CURRENT_UP = 0x400000
    CURRENT_DOWN = 0x800000
    ORIGIN = 0x1000000  # removed before a brush entity is compiled
    MONSTER = 0x2000000
    DEBRIS = 0x4000000
    DETAIL = 0x8000000  # brushes added after the vis leafs
    TRANSLUCENT = 0x10000000
    LADDER = 0x20000000
    HITBOX = 0x40000000


class Surf(IntFlag):
    """``SURF_*`` bits of a texinfo (bspflags.h)."""

    NONE = 0
    LIGHT = 0x1  # value holds the light strength
    SKY2D = 0x2  # draw the 2D sky only
    SKY = 0x4  # not drawn, adds to the skybox
    WARP = 0x8  # turbulent water warp
    TRANS = 0x10
    NOPORTAL = 0x20  # no portal may be placed on it
    TRIGGER = 0x40
    NODRAW = 0x80  # the texture is not referenced
    HINT = 0x100  # a primary BSP splitter
    SKIP = 0x200  # ignored, allowing non-closed brushes
    NOLIGHT = 0x400
    BUMPLIGHT = 0x800  # three extra lightmaps for bump mapping
    NOSHADOWS = 0x1000
    NODECALS = 0x2000
    NOCHOP = 0x4000
    HITBOX = 0x8000


class StaticPropFlags(IntFlag):
    """``STATIC_PROP_*`` bits of a static prop (gamebspfile.h, Source 2013 and older)."""

    NONE = 0
    FADES = 0x1
    USE_LIGHTING_ORIGIN = 0x2
    NO_DRAW = 0x4  # set at run time from the DX level
    IGNORE_NORMALS = 0x8
    NO_SHADOW = 0x10
    SCREEN_SPACE_FADE = 0x20  # CS:GO: STATIC_PROP_MARKED_FOR_FAST_REFLECTION
    NO_PER_VERTEX_LIGHTING = 0x40
    NO_SELF_SHADOWING = 0x80
    NO_PER_TEXEL_LIGHTING = 0x100  # no lightmap in vrad (TF2 lightmapped props)


# The C names (bspflags.h / gamebspfile.h spelling) of the members above.
CONTENTS_EMPTY = Contents.EMPTY
CONTENTS_SOLID = Contents.SOLID
CONTENTS_DETAIL = Contents.DETAIL
CONTENTS_LADDER = Contents.LADDER
CONTENTS_AREAPORTAL = Contents.AREAPORTAL
SURF_LIGHT = Surf.LIGHT
SURF_SKY2D = Surf.SKY2D
SURF_SKY = Surf.SKY
SURF_WARP = Surf.WARP
SURF_TRANS = Surf.TRANS
SURF_NOPORTAL = Surf.NOPORTAL
SURF_TRIGGER = Surf.TRIGGER
SURF_NODRAW = Surf.NODRAW
SURF_HINT = Surf.HINT
SURF_SKIP = Surf.SKIP
SURF_NOLIGHT = Surf.NOLIGHT
SURF_BUMPLIGHT = Surf.BUMPLIGHT
STATIC_PROP_USE_LIGHTING_ORIGIN = StaticPropFlags.USE_LIGHTING_ORIGIN
STATIC_PROP_NO_PER_TEXEL_LIGHTING = StaticPropFlags.NO_PER_TEXEL_LIGHTING

__all__ += [
    "CONTENTS_EMPTY", "CONTENTS_SOLID", "CONTENTS_DETAIL", "CONTENTS_LADDER", "CONTENTS_AREAPORTAL",
    "SURF_LIGHT", "SURF_SKY2D", "SURF_SKY", "SURF_WARP", "SURF_TRANS", "SURF_NOPORTAL", "SURF_TRIGGER",
    "SURF_NODRAW", "SURF_HINT", "SURF_SKIP", "SURF_NOLIGHT", "SURF_BUMPLIGHT", "STATIC_PROP_USE_LIGHTING_ORIGIN",
    "STATIC_PROP_NO_PER_TEXEL_LIGHTING",
]

"""sourcebsp.flags: engine bit flags, checked against srctools' own enums (an independent reading of bspflags.h)."""
from __future__ import annotations

from srctools.bsp import BrushContents, StaticPropFlags as SrctoolsPropFlags, SurfFlags

from sourcebsp import flags
from sourcebsp.flags import Contents, StaticPropFlags, Surf

# Our name -> srctools' name, where they differ.
CONTENTS_NAMES = {"BLOCKLOS": "MIST", "TESTFOGVOLUME": "TEST_FOG_VOLUME", "MOVEABLE": "MOVABLE",
                  "PLAYERCLIP": "PLAYER_CLIP", "MONSTERCLIP": "NPC_CLIP", "MONSTER": "NPC",
                  "UNUSED": "9", "BLOCKLIGHT": "10"}
SURF_NAMES = {"SKY2D": "SKYBOX_2D", "SKY": "SKYBOX_3D", "WARP": "WATER_WARP", "TRANS": "TRANSLUCENT",
              "NOSHADOWS": "NO_SHADOWS", "NODECALS": "NO_DECALS", "NOCHOP": "NO_SUBDIVIDE"}
PROP_NAMES = {"FADES": "DOES_FADE", "USE_LIGHTING_ORIGIN": "HAS_LIGHTING_ORIGIN", "NO_DRAW": "DISABLE_DRAW",
              "NO_PER_TEXEL_LIGHTING": "NO_LIGHTMAP"}


def test_contents_match_srctools():
    for member in Contents:
        theirs = BrushContents.__members__[CONTENTS_NAMES.get(member.name, member.name)]
        assert int(member) == theirs.value, member.name
    assert len(Contents) == 31 and Contents.EMPTY == 0  # bits 0..30 (a zero flag is not iterated)


def test_surface_flags_match_srctools():
    for member in Surf:
        assert int(member) == SurfFlags.__members__[SURF_NAMES.get(member.name, member.name)].value, member.name


def test_static_prop_flags_match_srctools():
    for member in StaticPropFlags:
        theirs = SrctoolsPropFlags.__members__[PROP_NAMES.get(member.name, member.name)]
        assert int(member) == theirs.value, member.name


def test_c_names_are_the_members():
    assert flags.SURF_NODRAW is Surf.NODRAW and flags.CONTENTS_SOLID is Contents.SOLID
    assert flags.STATIC_PROP_NO_PER_TEXEL_LIGHTING is StaticPropFlags.NO_PER_TEXEL_LIGHTING
    for name in flags.__all__:
        assert hasattr(flags, name)

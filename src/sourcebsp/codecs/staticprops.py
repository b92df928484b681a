"""Static props, detail props and detail prop lighting: sub-lumps of the game lump.

gamebspfile.h structs:

* ``sprp`` (GAMELUMP_STATIC_PROPS): ``StaticPropDictLump_t`` (char
  m_Name[128]) after an int count; ``StaticPropLeafLump_t`` (unsigned short
  m_Leaf; unsigned int in Strata BSP 25 maps' versions 12 and 13) after an int
  count; ``StaticPropLump_t`` after an int count.  The prop struct changed with
  almost every version and several engine branches gave different structs the
  same number, so a layout is chosen by the version, the BSP version and the
  record size that the rest of the lump implies (:data:`STATIC_PROP_LAYOUTS`).
  Two branches hold more in this sub-lump (their own codec, :class:`StaticPropsCodec`
  with a ``family``): Vindictus a scale array before the props from version 6
  (BSPSource's StaticPropLumpReader, bsp_tool's nexon branches), Zeno Clash a
  second name array after the model dictionary (BSPSource's).
* ``dprp`` (GAMELUMP_DETAIL_PROPS): ``DetailObjectDictLump_t`` (char
  m_Name[128]), ``DetailSpriteDictLump_t`` (version 4), ``DetailObjectLump_t``,
  each after an int count.
* ``dplt`` / ``dplh`` (GAMELUMP_DETAIL_PROP_LIGHTING(_HDR)):
  ``DetailPropLightstylesLump_t`` after an int count.

Decoded arrays are copies (these sub-lumps are small), so they can be edited
in place; the game lump encodes them again when the map is saved.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from ..errors import BspFormatError, LumpSizeError, TruncatedError, UnsupportedError
from .arrays import COLOR_RGB_EXP32
from .base import Endian, LumpContext, vec3

__all__ = [
    "STATIC_PROP_NAME_LENGTH",
    "StaticPropLayout",
    "STATIC_PROP_LAYOUTS",
    "static_prop_layouts",
    "select_static_prop_layout",
    "StaticProp",
    "StaticProps",
    "StaticPropsCodec",
    "STATIC_PROP_SCALE",
    "DETAIL_SPRITE",
    "DETAIL_OBJECT",
    "DETAIL_PROP_LIGHTSTYLE",
    "DetailProps",
    "DetailPropsCodec",
    "DetailPropLightingCodec",
]

STATIC_PROP_NAME_LENGTH = 128  # STATIC_PROP_NAME_LENGTH, also DETAIL_NAME_LENGTH
NAME = np.dtype(f"S{STATIC_PROP_NAME_LENGTH}")  # char m_Name[128], NUL-padded

# ---- StaticPropLump_t, one dtype per layout ---------------------------------------

_HEAD = [
    vec3("origin"),  # Vector m_Origin
    vec3("angles"),  # QAngle m_Angles (pitch, yaw, roll)
    ("prop_type", "<u2"),  # unsigned short m_PropType (index into the model dictionary)
    ("first_leaf", "<u2"),  # unsigned short m_FirstLeaf (index into the leaf array)
    ("leaf_count", "<u2"),  # unsigned short m_LeafCount
    ("solid", "u1"),  # unsigned char m_Solid (SOLID_NONE 0, SOLID_BBOX 2, SOLID_VPHYSICS 6)
]
_FLAGS_BYTE = [("flags", "u1")]  # unsigned char m_Flags (STATIC_PROP_*)
_TAIL_V4 = [
    ("skin", "<i4"),  # int m_Skin
    ("fade_min_dist", "<f4"),  # float m_FadeMinDist
    ("fade_max_dist", "<f4"),  # float m_FadeMaxDist
    vec3("lighting_origin"),  # Vector m_LightingOrigin
]
_FADE_SCALE = [("forced_fade_scale", "<f4")]  # float m_flForcedFadeScale (since v5)
_DX_LEVELS = [
    ("min_dx_level", "<u2"),  # unsigned short m_nMinDXLevel (v6, v7)
    ("max_dx_level", "<u2"),  # unsigned short m_nMaxDXLevel
]
_CPU_GPU_LEVELS = [
    ("min_cpu_level", "u1"),  # unsigned char m_nMinCPULevel (since v8)
    ("max_cpu_level", "u1"),  # unsigned char m_nMaxCPULevel
    ("min_gpu_level", "u1"),  # unsigned char m_nMinGPULevel
    ("max_gpu_level", "u1"),  # unsigned char m_nMaxGPULevel
]
_DIFFUSE = [("diffuse_modulation", "u1", (4,))]  # color32 m_DiffuseModulation (r, g, b, a)
_DISABLE_X360 = [
    ("disable_x360", "u1"),  # bool m_bDisableX360 (v9, v10)
    ("padding_x360", "u1", (3,)),  # struct padding after the bool
]
_FLAGS_EX = [("flags_ex", "<u4")]  # unsigned int m_FlagsEx (STATIC_PROP_FLAGS_EX_*)
_UNIFORM_SCALE = [("uniform_scale", "<f4")]  # float m_flUniformScale
_TARGETNAME = [("targetname", NAME)]  # char m_TargetName[128] (The Ship, Bloody Good Time)

STATIC_PROP_V4 = np.dtype(_HEAD + _FLAGS_BYTE + _TAIL_V4)  # 56 bytes
STATIC_PROP_V5 = np.dtype(_HEAD + _FLAGS_BYTE + _TAIL_V4 + _FADE_SCALE)  # 60
STATIC_PROP_V6 = np.dtype(_HEAD + _FLAGS_BYTE + _TAIL_V4 + _FADE_SCALE + _DX_LEVELS)  # 64
# Old Left 4 Dead v7: v6 plus the diffuse modulation.
STATIC_PROP_V7_L4D = np.dtype(STATIC_PROP_V6.descr + _DIFFUSE)  # 68
STATIC_PROP_V8 = np.dtype(_HEAD + _FLAGS_BYTE + _TAIL_V4 + _FADE_SCALE + _CPU_GPU_LEVELS + _DIFFUSE)  # 68
STATIC_PROP_V9 = np.dtype(STATIC_PROP_V8.descr + _DISABLE_X360)  # 72
# CS:GO branch (CS:GO, Insurgency, Strata): v9 plus m_FlagsEx, then the scale.
STATIC_PROP_V10_CSGO = np.dtype(STATIC_PROP_V9.descr + _FLAGS_EX)  # 76
STATIC_PROP_V11_CSGO = np.dtype(STATIC_PROP_V10_CSGO.descr + _UNIFORM_SCALE)  # 80
STATIC_PROP_V13_STRATA = np.dtype(
    STATIC_PROP_V10_CSGO.descr + [("non_uniform_scale", "<f4", (3,))]  # Vector m_vecScale
)  # 88
# Source 2013 (TF2, HL2, GMod; also TF2's short-lived v7): the flags byte became
# alignment padding and an int m_Flags follows the DX levels, then the
# lightmap resolution of lightmapped props.
STATIC_PROP_V10_SDK2013 = np.dtype(
    _HEAD
    + [("padding_flags", "u1")]  # alignment padding before int m_Skin (was unsigned char m_Flags)
    + _TAIL_V4
    + _FADE_SCALE
    + _DX_LEVELS
    + [
        ("flags", "<u4"),  # int m_Flags (STATIC_PROP_*)
        ("lightmap_resolution_x", "<u2"),  # unsigned short m_nLightmapResolutionX
        ("lightmap_resolution_y", "<u2"),  # unsigned short m_nLightmapResolutionY
    ]
)  # 72
# Black Mesa: Source 2013 v10 plus the diffuse modulation (then m_FlagsEx).
STATIC_PROP_V11_MESA_LITE = np.dtype(STATIC_PROP_V10_SDK2013.descr + _DIFFUSE)  # 76
STATIC_PROP_V11_MESA = np.dtype(STATIC_PROP_V11_MESA_LITE.descr + _FLAGS_EX)  # 80
STATIC_PROP_V5_SHIP = np.dtype(STATIC_PROP_V5.descr + _TARGETNAME)  # 188
STATIC_PROP_V6_BGT = np.dtype(STATIC_PROP_V6.descr + _TARGETNAME)  # 192
# Zeno Clash v7: v6 plus an int of unknown meaning (BSPSource's DStaticPropV7ZC, 68 bytes: the size
# of early Left 4 Dead's v7, whose last four bytes are the diffuse modulation).
STATIC_PROP_V7_ZENO_CLASH = np.dtype(STATIC_PROP_V6.descr + [("unknown", "<i4")])  # 68
# Dear Esther v9 (BSPSource's DStaticPropV9DE): v8's fields with four unknown bytes before the skin,
# a byte before the diffuse modulation (so it sits unaligned, at 69) and three after.  BSPSource
# skips the lighting origin as invalid in the maps it saw; it is kept here as stored.
STATIC_PROP_V9_DEAR_ESTHER = np.dtype(
    _HEAD + _FLAGS_BYTE + [("unknown", "u1", (4,))] + _TAIL_V4 + _FADE_SCALE + _CPU_GPU_LEVELS
    + [("padding_levels", "u1")] + _DIFFUSE + [("padding_tail", "u1", (3,))]
)  # 76
# Dark Messiah v6: v6 plus 72 bytes of unknown meaning (BSPSource's DStaticPropV6DM, 136 bytes;
# bsp_tool's arkane branch leaves its props as a TODO).
STATIC_PROP_V6_DARK_MESSIAH = np.dtype(STATIC_PROP_V6.descr + [("unknown", "u1", (72,))])  # 136
# Vindictus's latest v8: v6 plus 8 bytes of unknown meaning (bsp_tool's nexon.vindictus StaticPropv8,
# "new in March 2025"; BSPSource has no Vindictus v8).
STATIC_PROP_V8_VINDICTUS = np.dtype(STATIC_PROP_V6.descr + [("unknown", "u1", (8,))])  # 72

# Vindictus's scale array, between the leaves and the props from version 6 on (BSPSource's
# StaticPropLumpReader.readVindictusScaling, bsp_tool's nexon.vindictus69 StaticPropScale "i3f"):
# the index of a prop and its scale along each axis; a prop without an entry has scale 1.
STATIC_PROP_SCALE = np.dtype(
    [
        ("prop", "<i4"),  # int: index of the scaled prop in the prop array
        vec3("scale"),  # Vector: scale along x, y, z
    ]
)  # 16 bytes
# The sub-lump's arrays besides the props, by branch family: Vindictus's scale array (from this
# static prop version on), Zeno Clash's second name array (after the model dictionary, read and
# skipped by BSPSource's StaticPropLumpReader as "model path strings in Zeno Clash").
_SCALES_SINCE = {"vindictus": 6}
_MODEL_PATHS = frozenset({"zeno_clash"})


class StaticPropLayout(NamedTuple):
    """One ``StaticPropLump_t`` layout: the lump version it is stored under and its dtype.

    ``bsp_versions`` (inclusive range) says where the layout is preferred
    when two layouts share a version and a size.
    """

    name: str
    version: int
    dtype: np.dtype
    description: str
    bsp_versions: tuple[int, int] = (0, 1 << 30)
    # The branch family whose sub-lumps alone hold it ("": any); see StaticPropsCodec.
    family: str = ""

    @property
    def size(self) -> int:
        return self.dtype.itemsize

    def prefers(self, bsp_version: int) -> bool:
        return self.bsp_versions[0] <= bsp_version <= self.bsp_versions[1]


# In order of preference among layouts of one version (the first is also the
# layout of an empty lump).
STATIC_PROP_LAYOUTS: tuple[StaticPropLayout, ...] = (
    StaticPropLayout("v4", 4, STATIC_PROP_V4, "HL2 2004 beta maps, Vampire: The Masquerade - Bloodlines"),
    StaticPropLayout("v5", 5, STATIC_PROP_V5, "HL2, CS:S, DoD:S (adds forced fade scale)"),
    StaticPropLayout("v5_ship", 5, STATIC_PROP_V5_SHIP, "The Ship (v5 plus a targetname)"),
    StaticPropLayout("v6", 6, STATIC_PROP_V6, "Orange Box, Xbox 360 (adds min/max DX level)"),
    StaticPropLayout("v6_bgt", 6, STATIC_PROP_V6_BGT, "Bloody Good Time (v6 plus a targetname)"),
    StaticPropLayout("v6_dark_messiah", 6, STATIC_PROP_V6_DARK_MESSIAH,
                     "Dark Messiah (v6 plus 72 unknown bytes)", family="dark_messiah"),
    StaticPropLayout("v6_vindictus", 6, STATIC_PROP_V5, "Vindictus v6: the v5 record after a scale array",
                     family="vindictus"),
    StaticPropLayout("v7_l4d", 7, STATIC_PROP_V7_L4D, "early Left 4 Dead (v6 plus diffuse modulation)"),
    StaticPropLayout("v7_zeno_clash", 7, STATIC_PROP_V7_ZENO_CLASH, "Zeno Clash (v6 plus an unknown int)",
                     family="zeno_clash"),
    StaticPropLayout("v7_vindictus", 7, STATIC_PROP_V6, "Vindictus v7: the v6 record after a scale array",
                     family="vindictus"),
    StaticPropLayout("v8_vindictus", 8, STATIC_PROP_V8_VINDICTUS,
                     "Vindictus v8: v6 plus 8 unknown bytes, after a scale array", family="vindictus"),
    StaticPropLayout("v7_sdk2013", 7, STATIC_PROP_V10_SDK2013, "TF2 / Xbox 360 v7, the Source 2013 v10 layout"),
    StaticPropLayout("v8", 8, STATIC_PROP_V8, "Left 4 Dead (CPU/GPU levels replace DX levels)"),
    StaticPropLayout("v9", 9, STATIC_PROP_V9, "Left 4 Dead 2, Portal 2 (adds disable X360)"),
    StaticPropLayout("v9_dear_esther", 9, STATIC_PROP_V9_DEAR_ESTHER, "Dear Esther (v8 with unknown and padding bytes)"),
    StaticPropLayout("v10_sdk2013", 10, STATIC_PROP_V10_SDK2013,
                     "Source 2013: TF2, HL2, GMod (int flags, lightmap resolution)", (0, 20)),
    StaticPropLayout("v10_csgo", 10, STATIC_PROP_V10_CSGO, "CS:GO before prop scaling, Insurgency (adds flags ex)",
                     (21, 1 << 30)),
    StaticPropLayout("v11_csgo", 11, STATIC_PROP_V11_CSGO, "CS:GO (adds uniform scale)", (21, 1 << 30)),
    StaticPropLayout("v11_mesa", 11, STATIC_PROP_V11_MESA, "Black Mesa (SDK 2013 v10, diffuse, flags ex)",
                     (20, 20)),
    StaticPropLayout("v11_mesa_lite", 11, STATIC_PROP_V11_MESA_LITE,
                     "early Black Mesa (SDK 2013 v10 plus diffuse modulation)"),
    StaticPropLayout("v12_strata", 12, STATIC_PROP_V11_CSGO, "Strata Source (CS:GO v11, 32-bit leaf indices)"),
    StaticPropLayout("v13_strata", 13, STATIC_PROP_V13_STRATA, "Strata Source (non-uniform scale)"),
)


def static_prop_layouts(version: int, family: str = "") -> list[StaticPropLayout]:
    """The layouts of ``version`` a sub-lump of ``family`` may hold: the family's own first, then
    those of any branch."""
    return ([layout for layout in STATIC_PROP_LAYOUTS if layout.version == version and layout.family == family]
            + [layout for layout in STATIC_PROP_LAYOUTS
               if family and layout.version == version and not layout.family])


def select_static_prop_layout(version: int, bsp_version: int, count: int, available: int,
                              *, lump: str | None = None, offset: int | None = None,
                              family: str = "") -> StaticPropLayout:
    """The layout whose records fill ``available`` bytes exactly with ``count`` props.

    A branch family's own layouts come first (Vindictus's, Zeno Clash's; they are never
    taken for other sub-lumps); then layouts preferred for ``bsp_version``; when none of
    those fits, any layout of the version that fits is taken.
    """
    known = static_prop_layouts(version, family)
    if not known:
        raise UnsupportedError(
            f"static prop lump version {version} is not one of the known versions "
            f"{sorted({lay.version for lay in STATIC_PROP_LAYOUTS})}",
            lump=lump, offset=offset,
        )
    preferred = sorted(known, key=lambda lay: (not lay.family, not lay.prefers(bsp_version)))
    if count == 0:
        if available == 0:
            return preferred[0]
    elif available % count == 0:
        fits = [lay for lay in preferred if lay.size * count == available]
        if fits:
            return fits[0]
    sizes = ", ".join(f"{lay.size} ({lay.name})" for lay in known)
    per_prop = f"{available / count:g} bytes per prop" if count else "no props"
    raise LumpSizeError(
        f"no static prop layout fits: version {version} with {count} props leaves {available} bytes "
        f"({per_prop}); the known layouts of version {version} have {sizes} bytes",
        lump=lump, offset=offset, available=available,
    )


def _leaf_dtype(version: int, bsp_version: int, endian: Endian) -> np.dtype:
    # Strata Source widened StaticPropLeafLump_t to 32 bits with its BSP 25 lumps.
    wide = bsp_version >= 25 and version >= 12
    return np.dtype(endian + ("u4" if wide else "u2"))


def _decode_name(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _encode_name(name: str) -> bytes:
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) >= STATIC_PROP_NAME_LENGTH or b"\0" in raw:
        raise ValueError(f"a model name has at most {STATIC_PROP_NAME_LENGTH - 1} bytes and no NUL: {name!r}")
    return raw


def _python(value: Any) -> Any:
    """A JSON-ready Python value from a numpy field value."""
    if isinstance(value, bytes):
        return _decode_name(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


class _Reader:
    """Counted arrays read one after another, with errors naming file offsets."""

    def __init__(self, data: memoryview, ctx: LumpContext) -> None:
        self.data, self.ctx, self.pos = data, ctx, 0

    def error(self, cls: type[BspFormatError], message: str, at: int, **kw: int) -> BspFormatError:
        return cls(message, lump=self.ctx.name, offset=self.ctx.file_offset + at, **kw)

    def count(self, what: str) -> int:
        if self.pos + 4 > len(self.data):
            raise self.error(TruncatedError, f"the {what} count at +{self.pos} runs past the "
                                             f"{len(self.data)}-byte lump", self.pos,
                             needed=self.pos + 4, available=len(self.data))
        value: int = struct.unpack_from(self.ctx.endian + "i", self.data, self.pos)[0]
        if value < 0:
            raise self.error(BspFormatError, f"negative {what} count {value}", self.pos)
        self.pos += 4
        return value

    def array(self, dtype: np.dtype, count: int, what: str) -> np.ndarray:
        needed = self.pos + dtype.itemsize * count
        if needed > len(self.data):
            raise self.error(TruncatedError, f"{count} {what} of {dtype.itemsize} bytes at +{self.pos} "
                                             f"run past the {len(self.data)}-byte lump", self.pos,
                             needed=needed, available=len(self.data))
        out = np.frombuffer(self.data, dtype, count, self.pos).copy()
        self.pos = needed
        return out

    def rest(self) -> int:
        return len(self.data) - self.pos


def _counted(array: np.ndarray, endian: str) -> bytes:
    return np.array([len(array)], endian + "i4").tobytes() + np.ascontiguousarray(array).tobytes()


# ---- static props --------------------------------------------------------------------


@dataclass(frozen=True)
class StaticProp:
    """One static prop with its model name; ``record`` is the row of :attr:`StaticProps.props`."""

    index: int
    model: str
    record: np.void

    @property
    def origin(self) -> tuple[float, float, float]:
        return tuple(float(v) for v in self.record["origin"])  # type: ignore[return-value]

    @property
    def angles(self) -> tuple[float, float, float]:
        return tuple(float(v) for v in self.record["angles"])  # type: ignore[return-value]

    @property
    def skin(self) -> int:
        return int(self.record["skin"])

    @property
    def solid(self) -> int:
        return int(self.record["solid"])


# Values of a new prop where zero would be wrong: what vbsp writes for a
# prop_static with Hammer's default keys (as in the corpus maps).
_NEW_PROP_DEFAULTS: dict[str, Any] = {
    "solid": 6,  # SOLID_VPHYSICS
    "forced_fade_scale": 1.0,
    "diffuse_modulation": (255, 255, 255, 255),
    "uniform_scale": 1.0,
    "non_uniform_scale": (1.0, 1.0, 1.0),
}


class StaticProps:
    """The decoded ``sprp`` game lump.

    Attributes
    ----------
    dictionary : numpy.ndarray
        The model dictionary as stored (``S128``: 128-byte NUL-padded names).
    leafs : numpy.ndarray
        Leaf indices; prop *i* is in ``leafs[first_leaf : first_leaf + leaf_count]``.
    props : numpy.ndarray
        One record per prop, in the dtype of :attr:`layout`.
    layout : StaticPropLayout
        The ``StaticPropLump_t`` layout of the lump.
    scales : numpy.ndarray or None
        Vindictus's scale array (:data:`STATIC_PROP_SCALE`: a prop index and its
        scale along each axis), None in the sub-lumps of other branches.
    model_paths : numpy.ndarray or None
        Zeno Clash's second name array (``S128``), None in other branches' sub-lumps.

    Edits of the arrays, or through :meth:`add`, :meth:`move` and
    :meth:`remove`, are written when the map is saved.
    """

    def __init__(self, dictionary: np.ndarray, leafs: np.ndarray, props: np.ndarray,
                 layout: StaticPropLayout, *, lump: str | None = None, props_offset: int | None = None,
                 scales: np.ndarray | None = None, model_paths: np.ndarray | None = None) -> None:
        self.dictionary = dictionary
        self.leafs = leafs
        self.props = props
        self.layout = layout
        self.scales = scales
        self.model_paths = model_paths
        # Where the props were read from, for errors found later (lump name, file offset).
        self._lump = lump
        self._props_offset = props_offset

    def _error(self, message: str, prop: int) -> BspFormatError:
        offset = None if self._props_offset is None else self._props_offset + prop * self.layout.size
        return BspFormatError(message, lump=self._lump, offset=offset)

    @classmethod
    def empty(cls, version: int = 10, bsp_version: int = 20, endian: Endian = "<",
              family: str = "") -> "StaticProps":
        """A lump without props, in the preferred layout of ``version`` for ``bsp_version`` (and
        the arrays a branch ``family`` adds, empty)."""
        layout = select_static_prop_layout(version, bsp_version, 0, 0, family=family)
        return cls(np.zeros(0, NAME), np.zeros(0, _leaf_dtype(version, bsp_version, endian)),
                   np.zeros(0, layout.dtype.newbyteorder(endian)), layout,
                   scales=np.zeros(0, STATIC_PROP_SCALE.newbyteorder(endian)) if _has_scales(family, version) else None,
                   model_paths=np.zeros(0, NAME) if family in _MODEL_PATHS else None)

    def scale_vectors(self) -> np.ndarray:
        """Every prop's scale along x, y and z, ``(N, 3)`` float64: Vindictus's scale array, 1
        where it names no prop (and for other branches).  When the array names a prop twice, the
        last entry is taken, as BSPSource reads it into a map; entries for no prop are ignored."""
        out = np.ones((len(self.props), 3))
        if self.scales is not None and len(self.scales):
            at = self.scales["prop"].astype(np.int64)[::-1]
            values = self.scales["scale"].astype(np.float64)[::-1]
            valid = (at >= 0) & (at < len(self.props))
            props, first = np.unique(at[valid], return_index=True)  # first of the reversed: the last
            out[props] = values[valid][first]
        return out

    def scale_of(self, index: int) -> tuple[float, float, float]:
        """Prop ``index``'s scale along x, y and z (see :meth:`scale_vectors`)."""
        index = range(len(self.props))[index]
        return tuple(float(v) for v in self.scale_vectors()[index])  # type: ignore[return-value]

    def __repr__(self) -> str:
        return (f"<StaticProps {self.layout.name}: {len(self.props)} props, {len(self.dictionary)} models, "
                f"{len(self.leafs)} leafs>")

    def __len__(self) -> int:
        return len(self.props)

    def __iter__(self) -> Iterator[StaticProp]:
        return self.iter_props()

    def __getitem__(self, index: int) -> StaticProp:
        index = range(len(self.props))[index]
        return StaticProp(index, self.model_names()[index], self.props[index])

    @property
    def version(self) -> int:
        return self.layout.version

    @property
    def names(self) -> list[str]:
        """The model dictionary as text."""
        return [_decode_name(bytes(n)) for n in self.dictionary]

    def model_names(self) -> list[str]:
        """The model name of every prop, in prop order."""
        names = self.names
        types = self.props["prop_type"]
        bad = np.flatnonzero(types >= len(names))
        if len(bad):
            raise self._error(
                f"static prop {int(bad[0])} uses model {int(types[bad[0]])} of a {len(names)}-name dictionary",
                int(bad[0]),
            )
        return [names[t] for t in types.tolist()]

    def iter_props(self) -> Iterator[StaticProp]:
        """Every prop with its model name."""
        for index, (model, record) in enumerate(zip(self.model_names(), self.props)):
            yield StaticProp(index, model, record)

    def indices_of(self, model: str) -> np.ndarray:
        """Indices of the props that use ``model``."""
        matches = [i for i, name in enumerate(self.names) if name.lower() == model.lower()]
        return np.flatnonzero(np.isin(self.props["prop_type"], matches))

    def leafs_of(self, index: int) -> np.ndarray:
        """The leaf indices prop ``index`` is in."""
        record = self.props[index]
        start = int(record["first_leaf"])
        return self.leafs[start : start + int(record["leaf_count"])]

    def to_dict(self, index: int) -> dict[str, Any]:
        """One prop as plain data: its model name and every named field but padding."""
        return self._record_dict(index, self.model_names()[index])

    def to_records(self) -> list[dict[str, Any]]:
        """Every prop as plain data (see :meth:`to_dict`), ready for JSON."""
        return [self._record_dict(i, model) for i, model in enumerate(self.model_names())]

    def _record_dict(self, index: int, model: str) -> dict[str, Any]:
        record = self.props[index]
        out: dict[str, Any] = {"index": index, "model": model}
        for name in self.props.dtype.names or ():
            if not name.startswith("padding"):
                out[name] = _python(record[name])
        return out

    # ---- edits ------------------------------------------------------------------------
    def name_index(self, model: str, *, add: bool = True) -> int:
        """The dictionary index of ``model``, appending it when absent and ``add`` is true."""
        raw = _encode_name(model)
        for index, existing in enumerate(self.dictionary):
            if bytes(existing).split(b"\0", 1)[0] == raw:
                return index
        if not add:
            raise KeyError(model)
        if len(self.dictionary) >= 1 << 16:
            raise ValueError("the model dictionary is full (prop_type is 16-bit)")
        self.dictionary = np.concatenate([self.dictionary, np.array([raw], NAME)])
        return len(self.dictionary) - 1

    def move(self, index: int, origin: Sequence[float] | None = None, angles: Sequence[float] | None = None,
             *, lighting_origin: Sequence[float] | None = None) -> None:
        """Place prop ``index`` at ``origin`` and/or turn it to ``angles``.

        The lighting origin is used by the engine only with the flag
        :data:`sourcebsp.flags.STATIC_PROP_USE_LIGHTING_ORIGIN` (an ``info_lighting``); it stays
        unless given.  The prop keeps its leaf list: use :meth:`set_leafs`
        when it moves to other leaves.
        """
        record = self.props[index : index + 1]
        if origin is not None:
            record["origin"] = np.asarray(origin, np.float64)
        if angles is not None:
            record["angles"] = np.asarray(angles, np.float64)
        if lighting_origin is not None:
            record["lighting_origin"] = np.asarray(lighting_origin, np.float64)

    def add(self, model: str, origin: Sequence[float], angles: Sequence[float] = (0.0, 0.0, 0.0), *,
            leafs: Sequence[int] = (), **fields: Any) -> int:
        """Append a prop of ``model`` (added to the dictionary if new); returns its index.

        ``fields`` sets any other field of the layout (``skin``, ``solid``,
        ``flags``, ``fade_min_dist``, ``lighting_origin``, ...).  ``leafs`` are the indices of the leaves the prop is in
        (the engine draws a static prop only from the leaves it lists).
        """
        names = self.props.dtype.names or ()
        unknown = sorted(set(fields) - set(names))
        if unknown:
            raise ValueError(f"layout {self.layout.name} has no field {', '.join(unknown)}")
        row = np.zeros(1, self.props.dtype)
        for name, default in _NEW_PROP_DEFAULTS.items():
            if name in names:
                row[name] = default
        row["prop_type"] = self.name_index(model)
        row["origin"] = origin
        row["angles"] = angles
        for name, value in fields.items():
            row[name] = value
        self.props = np.concatenate([self.props, row])
        self.set_leafs(len(self.props) - 1, leafs)
        return len(self.props) - 1

    def set_leafs(self, index: int, leafs: Sequence[int]) -> None:
        """Replace the leaf list of prop ``index`` (other props' lists are kept)."""
        new = np.asarray(leafs, self.leafs.dtype).ravel()
        record = self.props[index : index + 1]
        start, count = int(record["first_leaf"][0]), int(record["leaf_count"][0])
        if count == 0:
            start = len(self.leafs)
        if len(self.leafs) - count + len(new) > 0xFFFF + 1 or len(new) > 0xFFFF:
            raise ValueError("the static prop leaf array is full (first_leaf is 16-bit)")
        self.leafs = np.concatenate([self.leafs[:start], new, self.leafs[start + count :]])
        firsts = self.props["first_leaf"].astype(np.int64)
        later = (firsts >= start + count) & (self.props["leaf_count"] > 0)
        later[index] = False
        firsts[later] += len(new) - count
        self.props["first_leaf"] = firsts
        record["first_leaf"] = start
        record["leaf_count"] = len(new)

    def remove(self, indices: int | Sequence[int] | np.ndarray) -> None:
        """Remove props (and their leaf lists); the model dictionary is kept as it is."""
        keep = np.ones(len(self.props), bool)
        keep[np.asarray(indices, np.int64)] = False
        kept = self.props[keep]
        counts = kept["leaf_count"].astype(np.int64)
        starts = kept["first_leaf"].astype(np.int64)
        past = np.flatnonzero(starts + counts > len(self.leafs))
        if len(past):
            raise self._error(f"a static prop's leaf list runs past the {len(self.leafs)}-entry leaf array",
                              int(np.flatnonzero(keep)[past[0]]))
        firsts = np.cumsum(counts) - counts
        picks = np.repeat(starts - firsts, counts) + np.arange(int(counts.sum()))
        self.leafs = self.leafs[picks]
        kept["first_leaf"] = firsts
        if self.scales is not None:  # the scales of removed props go; the others follow their prop
            at = self.scales["prop"].astype(np.int64)
            valid = (at >= 0) & (at < len(keep))
            survives = valid & keep[np.where(valid, at, 0)]
            scales = self.scales[survives]
            scales["prop"] = (np.cumsum(keep) - 1)[at[survives]]
            self.scales = scales
        self.props = kept


def _has_scales(family: str, version: int) -> bool:
    return family in _SCALES_SINCE and version >= _SCALES_SINCE[family]


class StaticPropsCodec:
    """``sprp``: model dictionary, leaf array, props (layout chosen per lump).

    ``family`` names a branch whose sub-lump holds more: ``"vindictus"`` (a scale
    array before the props, from version 6) or ``"zeno_clash"`` (a second name
    array after the model dictionary); its own prop layouts are tried first.
    Encoding writes the arrays the value holds, whatever the family.
    """

    mutable = True

    def __init__(self, family: str = "") -> None:
        self.family = family

    def decode(self, data: memoryview, ctx: LumpContext) -> StaticProps:
        read = _Reader(data, ctx)
        dictionary = read.array(NAME, read.count("model dictionary"), "model names")
        model_paths = None
        if self.family in _MODEL_PATHS:
            model_paths = read.array(NAME, read.count("model path"), "model paths")
        leafs = read.array(_leaf_dtype(ctx.version, ctx.bsp_version, ctx.endian), read.count("leaf"), "leafs")
        scales = None
        if _has_scales(self.family, ctx.version):
            scales_at = read.pos + 4
            scales = read.array(STATIC_PROP_SCALE.newbyteorder(ctx.endian), read.count("static prop scale"),
                                "static prop scales")
        count_at = read.pos
        count = read.count("static prop")
        layout = select_static_prop_layout(ctx.version, ctx.bsp_version, count, read.rest(),
                                           lump=ctx.name, offset=ctx.file_offset + count_at, family=self.family)
        props = read.array(layout.dtype.newbyteorder(ctx.endian), count, "static props")
        if scales is not None:
            bad = np.flatnonzero((scales["prop"] < 0) | (scales["prop"] >= count))
            if len(bad):
                raise read.error(BspFormatError, f"static prop scale {int(bad[0])} is for prop "
                                                 f"{int(scales['prop'][bad[0]])} of {count}",
                                 scales_at + int(bad[0]) * STATIC_PROP_SCALE.itemsize)
        return StaticProps(dictionary, leafs, props, layout, lump=ctx.name,
                           props_offset=ctx.file_offset + count_at + 4, scales=scales, model_paths=model_paths)

    def encode(self, value: StaticProps, ctx: LumpContext) -> bytes:
        endian = ctx.endian
        props = np.ascontiguousarray(value.props, value.layout.dtype.newbyteorder(endian))
        leafs = np.ascontiguousarray(value.leafs, value.leafs.dtype.newbyteorder(endian))
        parts = [_counted(np.asarray(value.dictionary, NAME), endian)]
        if value.model_paths is not None:
            parts.append(_counted(np.asarray(value.model_paths, NAME), endian))
        parts.append(_counted(leafs, endian))
        if value.scales is not None:
            parts.append(_counted(np.asarray(value.scales, STATIC_PROP_SCALE.newbyteorder(endian)), endian))
        parts.append(_counted(props, endian))
        return b"".join(parts)

    def count(self, value: StaticProps) -> int:
        return len(value)


# ---- detail props --------------------------------------------------------------------

DETAIL_SPRITE = np.dtype(
    [
        ("ul", "<f4", (2,)),  # Vector2D m_UL (upper left corner)
        ("lr", "<f4", (2,)),  # Vector2D m_LR (lower right corner)
        ("tex_ul", "<f4", (2,)),  # Vector2D m_TexUL (texture coordinates of the upper left)
        ("tex_lr", "<f4", (2,)),  # Vector2D m_TexLR (texture coordinates of the lower right)
    ]
)  # 32 bytes: DetailSpriteDictLump_t

DETAIL_OBJECT = np.dtype(
    [
        vec3("origin"),  # Vector m_Origin
        vec3("angles"),  # QAngle m_Angles
        ("detail_model", "<u2"),  # unsigned short m_DetailModel (model or sprite dictionary index)
        ("leaf", "<u2"),  # unsigned short m_Leaf
        ("lighting", COLOR_RGB_EXP32),  # ColorRGBExp32 m_Lighting
        ("light_styles", "<u4"),  # unsigned int m_LightStyles (first entry in dplt/dplh)
        ("light_style_count", "u1"),  # unsigned char m_LightStyleCount
        ("sway_amount", "u1"),  # unsigned char m_SwayAmount
        ("shape_angle", "u1"),  # unsigned char m_ShapeAngle
        ("shape_size", "u1"),  # unsigned char m_ShapeSize
        ("orientation", "u1"),  # unsigned char m_Orientation (DetailPropOrientation_t)
        ("padding2", "u1", (3,)),  # unsigned char m_Padding2[3]
        ("type", "u1"),  # unsigned char m_Type (DetailPropType_t: model, sprite, shapes)
        ("padding3", "u1", (3,)),  # unsigned char m_Padding3[3]
        ("scale", "<f4"),  # float m_flScale (sprites)
    ]
)  # 52 bytes: DetailObjectLump_t

DETAIL_PROP_LIGHTSTYLE = np.dtype(
    [
        ("lighting", COLOR_RGB_EXP32),  # ColorRGBExp32 m_Lighting
        ("style", "u1"),  # unsigned char m_Style
    ]
)  # 5 bytes: DetailPropLightstylesLump_t

# The sprite dictionary exists from version 4 (GAMELUMP_DETAIL_PROPS_VERSION);
# earlier versions (Bloodlines' v2) hold only the model dictionary and the props.
_DETAIL_SPRITES_SINCE = 4


@dataclass
class DetailProps:
    """The decoded ``dprp`` game lump.  ``sprites`` is None before version 4."""

    dictionary: np.ndarray
    sprites: np.ndarray | None
    props: np.ndarray

    def __len__(self) -> int:
        return len(self.props)

    @property
    def names(self) -> list[str]:
        return [_decode_name(bytes(n)) for n in self.dictionary]


class DetailPropsCodec:
    """``dprp``: detail model dictionary, sprite dictionary, detail props."""

    mutable = True

    def decode(self, data: memoryview, ctx: LumpContext) -> DetailProps:
        read = _Reader(data, ctx)
        dictionary = read.array(NAME, read.count("detail model dictionary"), "model names")
        sprites = None
        if ctx.version >= _DETAIL_SPRITES_SINCE:
            sprites = read.array(DETAIL_SPRITE.newbyteorder(ctx.endian), read.count("detail sprite"), "sprites")
        props = read.array(DETAIL_OBJECT.newbyteorder(ctx.endian), read.count("detail prop"), "detail props")
        if read.rest():
            raise read.error(LumpSizeError, f"{read.rest()} bytes follow the last detail prop", read.pos,
                             available=len(data))
        return DetailProps(dictionary, sprites, props)

    def encode(self, value: DetailProps, ctx: LumpContext) -> bytes:
        endian = ctx.endian
        parts = [_counted(np.asarray(value.dictionary, NAME), endian)]
        if value.sprites is not None:
            parts.append(_counted(np.asarray(value.sprites, DETAIL_SPRITE.newbyteorder(endian)), endian))
        parts.append(_counted(np.asarray(value.props, DETAIL_OBJECT.newbyteorder(endian)), endian))
        return b"".join(parts)

    def count(self, value: DetailProps) -> int:
        return len(value)


class DetailPropLightingCodec:
    """``dplt`` / ``dplh``: the light style samples of detail props, as one array."""

    mutable = True

    def decode(self, data: memoryview, ctx: LumpContext) -> np.ndarray:
        read = _Reader(data, ctx)
        samples = read.array(DETAIL_PROP_LIGHTSTYLE, read.count("detail prop light style"), "light styles")
        if read.rest():
            raise read.error(LumpSizeError, f"{read.rest()} bytes follow the last light style", read.pos,
                             available=len(data))
        return samples

    def encode(self, value: np.ndarray, ctx: LumpContext) -> bytes:
        return _counted(np.asarray(value, DETAIL_PROP_LIGHTSTYLE), ctx.endian)

    def count(self, value: np.ndarray) -> int:
        return len(value)

"""Lighting lumps: lightmap samples (LDR and HDR), world lights (LDR and HDR),
leaf ambient index and leaf ambient lighting (LDR and HDR).

bspfile.h structs: ``ColorRGBExp32``, ``dworldlight_t`` (version 0 without and
version 1 with ``shadow_cast_offset``), ``dleafambientindex_t``,
``dleafambientlighting_t``.
"""
from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from ..lump_ids import LumpId
from .arrays import COLOR_RGB_EXP32
from .base import Layouts, LumpContext, vec3

_WORLDLIGHT_TAIL = [
    ("cluster", "<i4"),  # int cluster
    ("type", "<i4"),  # emittype_t type
    ("style", "<i4"),  # int style
    ("stopdot", "<f4"),  # float stopdot (start of penumbra for emit_spotlight)
    ("stopdot2", "<f4"),  # float stopdot2 (end of penumbra)
    ("exponent", "<f4"),  # float exponent
    ("radius", "<f4"),  # float radius (cutoff distance)
    ("constant_attn", "<f4"),  # float constant_attn
    ("linear_attn", "<f4"),  # float linear_attn
    ("quadratic_attn", "<f4"),  # float quadratic_attn
    ("flags", "<i4"),  # int flags (DWL_FLAGS_*)
    ("texinfo", "<i4"),  # int texinfo
    ("owner", "<i4"),  # int owner (entity that made this light)
]
WORLDLIGHT_V0 = np.dtype(
    [vec3("origin"), vec3("intensity"), vec3("normal")] + _WORLDLIGHT_TAIL
)  # 88 bytes
WORLDLIGHT = np.dtype(
    [vec3("origin"), vec3("intensity"), vec3("normal"), vec3("shadow_cast_offset")]
    + _WORLDLIGHT_TAIL
)  # 100 bytes

# Dark Messiah: SDK 2013's version 0 record and one more unsigned int, per bsp_tool's only note on
# it (arkane.dark_messiah_mp: "sdk_2013 + uint32 illuminate_players (0, 1, 2 enum)", its sdk_2013
# record being the 88-byte version 0 one).  BSPSource reads no world lights, so there is no second
# source: the field's place (last) and name are that note's.
WORLDLIGHT_DARK_MESSIAH = np.dtype(
    WORLDLIGHT_V0.descr + [("illuminate_players", "<u4")]  # unsigned int illuminate_players (0, 1, 2)
)  # 92 bytes

LEAF_AMBIENT_INDEX = np.dtype(
    [
        ("ambient_sample_count", "<u2"),  # unsigned short ambientSampleCount
        ("first_ambient_sample", "<u2"),  # unsigned short firstAmbientSample
    ]
)  # 4 bytes
LEAF_AMBIENT_INDEX_V25 = np.dtype(
    [("ambient_sample_count", "<u4"), ("first_ambient_sample", "<u4")]
)  # 8 bytes

# The per-leaf CompressedLightCube that early BSP 20 maps (CS:S 2007) store in
# lump 56 in place of dleafambientlighting_t, writing junk in its lump version.
LEAF_AMBIENT_CUBE = np.dtype([("cube", COLOR_RGB_EXP32, (6,))])  # 24 bytes

LEAF_AMBIENT_LIGHTING = np.dtype(
    [
        ("cube", COLOR_RGB_EXP32, (6,)),  # CompressedLightCube cube
        ("x", "u1"),  # byte x (fixed point fraction of the leaf bounds)
        ("y", "u1"),  # byte y
        ("z", "u1"),  # byte z
        ("pad", "u1"),  # byte pad
    ]
)  # 28 bytes


def rgbexp_to_float(samples: np.ndarray) -> np.ndarray:
    """Linear float RGB (shape ``(..., 3)``) from ``ColorRGBExp32`` samples.

    The engine's ``TexLightToLinear``: ``component / 255 * 2 ** exponent``.
    """
    rgb = np.stack([samples["r"], samples["g"], samples["b"]], axis=-1).astype(np.float32)
    scale = np.ldexp(np.float32(1.0 / 255.0), samples["exponent"].astype(np.int32))
    return rgb * scale[..., None].astype(np.float32)


@dataclass
class Lightmaps:
    """The lightmap lump: ``ColorRGBExp32`` samples addressed by ``dface_t.lightofs / 4``.

    ``tail`` keeps the bytes after the last whole sample (CS:GO maps end
    their lighting lump with a few), so that encoding gives the lump back.
    """

    samples: np.ndarray
    tail: bytes = b""

    def __len__(self) -> int:
        return len(self.samples)

    def to_float(self) -> np.ndarray:
        """All samples as linear float RGB, shape ``(n, 3)``."""
        return rgbexp_to_float(self.samples)


class LightmapsCodec:
    def decode(self, data: memoryview, ctx: LumpContext) -> Lightmaps:
        whole = len(data) // 4 * 4
        samples = np.frombuffer(data[:whole], COLOR_RGB_EXP32)
        return Lightmaps(samples, bytes(data[whole:]))

    def encode(self, value: Lightmaps, ctx: LumpContext) -> bytes:
        return np.ascontiguousarray(value.samples, COLOR_RGB_EXP32).tobytes() + value.tail

    def count(self, value: Lightmaps) -> int:
        return len(value)


_LIGHTMAPS = LightmapsCodec()

LAYOUTS: Layouts = {
    # Lump versions 0 and 1 both hold ColorRGBExp32 samples.
    LumpId.LIGHTING: {0: _LIGHTMAPS, 1: _LIGHTMAPS},
    LumpId.LIGHTING_HDR: {0: _LIGHTMAPS, 1: _LIGHTMAPS},
    LumpId.WORLDLIGHTS: {0: WORLDLIGHT_V0, 1: WORLDLIGHT},
    LumpId.WORLDLIGHTS_HDR: {0: WORLDLIGHT_V0, 1: WORLDLIGHT},
    LumpId.LEAF_AMBIENT_INDEX: {0: LEAF_AMBIENT_INDEX},
    LumpId.LEAF_AMBIENT_INDEX_HDR: {0: LEAF_AMBIENT_INDEX},
    # None: any other lump version (the early form stores junk there).
    LumpId.LEAF_AMBIENT_LIGHTING: {1: LEAF_AMBIENT_LIGHTING, None: LEAF_AMBIENT_CUBE},
    LumpId.LEAF_AMBIENT_LIGHTING_HDR: {1: LEAF_AMBIENT_LIGHTING, None: LEAF_AMBIENT_CUBE},
}
LAYOUTS_V25: Layouts = {
    LumpId.LEAF_AMBIENT_INDEX: {0: LEAF_AMBIENT_INDEX, 1: LEAF_AMBIENT_INDEX_V25},
    LumpId.LEAF_AMBIENT_INDEX_HDR: {0: LEAF_AMBIENT_INDEX, 1: LEAF_AMBIENT_INDEX_V25},
}
LAYOUTS_DARK_MESSIAH: Layouts = {LumpId.WORLDLIGHTS: {0: WORLDLIGHT_DARK_MESSIAH},
                                 LumpId.WORLDLIGHTS_HDR: {0: WORLDLIGHT_DARK_MESSIAH}}
# Before BSP 20 slots 51 and 52 were the console-only LIGHTMAPPAGES and
# LIGHTMAPPAGEINFOS, whose layout is not documented.
REMOVED_BEFORE_V20 = (LumpId.LEAF_AMBIENT_INDEX_HDR, LumpId.LEAF_AMBIENT_INDEX)

# Half-Life 2 on the original Xbox keeps its lightmaps in pages: LUMP_LIGHTMAPPAGES (51, their
# texels, layout not documented: raw) and LUMP_LIGHTMAPPAGEINFOS (52), one record per face
# (bsp_tool's valve.source_xbox: LightmapPageInfo "2h4s"; field meanings not known).
LIGHTMAP_PAGE_INFO = np.dtype(
    [
        ("unknown_1", "<i2"),  # short, 0 for the first faces
        ("unknown_2", "<i2"),  # short
        ("unknown_3", "u1", (4,)),  # 4 bytes (an average colour?)
    ]
)  # 8 bytes
LAYOUTS_XBOX: Layouts = {LumpId.LEAF_AMBIENT_INDEX: {0: LIGHTMAP_PAGE_INFO}}

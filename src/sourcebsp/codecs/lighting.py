"""Lighting lumps: lightmap samples (LDR and HDR), world lights (LDR and HDR),
leaf ambient index and leaf ambient lighting (LDR and HDR); the records are declared
in :mod:`sourcebsp.codecs.records` (without numpy).

bspfile.h structs: ``ColorRGBExp32``, ``dworldlight_t`` (version 0 without and
version 1 with ``shadow_cast_offset``), ``dleafambientindex_t``,
``dleafambientlighting_t``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import COLOR_RGB_EXP32, LumpContext


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


LIGHTMAPS_CODEC = LightmapsCodec()

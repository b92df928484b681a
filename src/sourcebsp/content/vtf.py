"""Textures (VTF), read through srctools' ``srctools.vtf``.

The one module that decodes VTF files: swap it here.  A texture is read
from its bytes (:func:`read_vtf`), a mipmap is chosen by size
(:meth:`VtfTexture.mip_at_most` for a picture no larger than a size,
:meth:`VtfTexture.mip_at_least` for the least detail that still covers
one) and decoded to RGBA (:meth:`VtfTexture.rgba`, a Pillow image).
Files come from strangers: whatever srctools raises on a file it cannot
read becomes a :class:`BspFormatError` naming the file (srctools missing:
:class:`~sourcebsp.errors.MissingExtraError`).
"""
from __future__ import annotations

import io
import struct
from typing import TYPE_CHECKING

import numpy as np

from .._extras import needs_extra
from ..errors import BspFormatError

if TYPE_CHECKING:
    from PIL.Image import Image
    from srctools.vtf import VTF

__all__ = ["VtfTexture", "read_vtf", "srgb_to_linear"]

# What srctools raises on files it cannot read (it has no single error class); BufferError: a
# mipmap shorter than its size says.
_DECODE_ERRORS = (ValueError, KeyError, IndexError, EOFError, OSError, NotImplementedError, TypeError,
                  AttributeError, ArithmeticError, UnicodeError, BufferError, struct.error)


class VtfTexture:
    """One VTF file: its size, its mipmaps, each decoded on demand."""

    def __init__(self, vtf: "VTF", name: str = "") -> None:
        self._vtf = vtf
        self.name = name

    @property
    def width(self) -> int:
        return int(self._vtf.width)

    @property
    def height(self) -> int:
        return int(self._vtf.height)

    @property
    def mipmaps(self) -> int:
        """How many mipmaps the file holds (1: the full-size image only)."""
        return int(self._vtf.mipmap_count)

    def mip_size(self, mip: int) -> tuple[int, int]:
        """Width and height of mipmap ``mip`` (0: the full-size image)."""
        return self.width >> mip, self.height >> mip

    def mip_at_most(self, size: int) -> int:
        """The largest mipmap no wider and no taller than ``size`` (the smallest one when none is)."""
        mip = 0
        while mip + 1 < self.mipmaps and max(self.mip_size(mip)) > size:
            mip += 1
        return mip

    def mip_at_least(self, size: int) -> int:
        """The smallest mipmap at least ``size`` wide and tall (the full-size image when none is smaller)."""
        mip = 0
        while mip + 1 < self.mipmaps and min(self.mip_size(mip + 1)) >= size:
            mip += 1
        return mip

    def rgba(self, mip: int = 0) -> "Image":
        """Mipmap ``mip`` decoded, as an RGBA Pillow image; :class:`BspFormatError` when it cannot be."""
        try:
            return self._vtf.get(mipmap=mip).to_PIL().convert("RGBA")
        except _DECODE_ERRORS as exc:
            raise BspFormatError(f"cannot decode the texture {self.name}: {exc}") from exc


def read_vtf(data: bytes, name: str = "") -> VtfTexture:
    """The VTF file ``data`` (its header read, no mipmap decoded yet); :class:`BspFormatError` when it is not one."""
    with needs_extra("reading textures", "deps"):
        from srctools.vtf import VTF
    try:
        return VtfTexture(VTF.read(io.BytesIO(data)), name)
    except _DECODE_ERRORS as exc:
        raise BspFormatError(f"cannot read the texture {name}: {exc}") from exc


def srgb_to_linear(srgb: np.ndarray) -> np.ndarray:
    """sRGB colour values in [0, 1] to linear light (the sRGB transfer function undone), in their dtype."""
    linear: np.ndarray = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    return linear

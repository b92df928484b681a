"""sourcebsp: read, edit, write and convert Valve Source engine BSP maps."""
from __future__ import annotations

from .codecs.base import RawLump
from .codecs.lighting import rgbexp_to_float
from .compression import DecompressionLimitError, Limits
from .container import BspFile, ClosedMapError, open_bsp
from .errors import (
    BspError,
    BspFormatError,
    CompressionError,
    LumpSizeError,
    TruncatedError,
    UnsupportedError,
)
from .lump_ids import LumpId
from .variants import Variant, register_codec, register_variant, variant_names

open = open_bsp  # noqa: A001 - ``sourcebsp.open(path)`` mirrors ``BspFile.open``

__version__ = "0.1.0"
__all__ = [
    "BspFile",
    "open",
    "open_bsp",
    "LumpId",
    "RawLump",
    "rgbexp_to_float",
    "BspError",
    "BspFormatError",
    "TruncatedError",
    "LumpSizeError",
    "CompressionError",
    "UnsupportedError",
    "ClosedMapError",
    "DecompressionLimitError",
    "Limits",
    "Variant",
    "register_codec",
    "register_variant",
    "variant_names",
]

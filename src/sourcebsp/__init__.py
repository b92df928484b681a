"""sourcebsp: read, edit, write and convert Valve Source engine BSP maps.

The names below are loaded on first use (PEP 562), so ``import sourcebsp``
and the ``sourcebsp`` command's ``--help`` and ``--version`` do not import
numpy; ``sourcebsp.open`` and the rest load what they need (numpy with the
first lump that is a table of records).
"""
from __future__ import annotations

from .errors import (
    BspError,
    BspFormatError,
    CompressionError,
    LumpSizeError,
    MissingExtraError,
    NotSourceMapError,
    TruncatedError,
    UnsupportedError,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from .codecs.base import RawLump
    from .codecs.lighting import rgbexp_to_float
    from .compression import DecompressionLimitError, Limits
    from .container import BspFile, ClosedMapError, open_bsp
    from .opening import open, open_map, open_named  # noqa: A001 - the one way in: any map, by its first bytes
    from .protocols import MapReader
    from .respawn import RespawnBsp
    from .lump_ids import LumpId
    from .variants import Variant, register_codec, register_variant, variant_names

__version__ = "0.1.0"
__all__ = [
    "BspFile",
    "RespawnBsp",
    "MapReader",
    "open",
    "open_map",
    "open_named",
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
    "MissingExtraError",
    "NotSourceMapError",
    "ClosedMapError",
    "DecompressionLimitError",
    "Limits",
    "Variant",
    "register_codec",
    "register_variant",
    "variant_names",
]

# public name -> (module, name there), imported on first use
_LAZY = {name: (module, name) for module, names in {
    ".container": ("BspFile", "ClosedMapError", "open_bsp"),
    ".lump_ids": ("LumpId",),
    ".respawn": ("RespawnBsp",),
    ".opening": ("open", "open_map", "open_named"),
    ".protocols": ("MapReader",),
    ".codecs.base": ("RawLump",),
    ".codecs.lighting": ("rgbexp_to_float",),
    ".compression": ("DecompressionLimitError", "Limits"),
    ".variants": ("Variant", "register_codec", "register_variant", "variant_names"),
}.items() for name in names}

if not TYPE_CHECKING:  # type checkers see the imports above, and no catch-all attribute
    def __getattr__(name: str) -> Any:
        try:
            module, attribute = _LAZY[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        import importlib

        from ._loading import load_quietly

        # The container and what it imports (numpy comes later, with the first table of records).
        value = load_quietly(lambda: getattr(importlib.import_module(module, __name__), attribute))
        globals()[name] = value  # later lookups do not come here again
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_LAZY))

"""Element counts of lumps without numpy: all that ``sourcebsp info`` counts.

Each entry of a built-in lump table (:mod:`sourcebsp.codecs.tables`) counts a lump's
elements from its bytes itself: a :class:`~sourcebsp.codecs.base.Record` by its size,
the codecs that need numpy (:class:`~sourcebsp.codecs.base.Deferred`: visibility,
lightmaps, occlusion, physics) and the texture string data by walking the headers
their codecs read.  None of it needs numpy, whose import is most of an ``info`` process.

A count is given only where it checks all that the lump's codec checks; for anything
else (a length the record does not divide, an offset out of range, a table not known
here) :data:`UNKNOWN` sends the caller to the codec, which decodes the lump with numpy
and raises the error it always did.  The entities, the pakfile and the game lump are
read by their own codecs, which need no numpy (``"codec"``).
"""
from __future__ import annotations

from typing import Any, Protocol, Union

from ..header import Endian
from . import tables

__all__ = ["CountsBytes", "Kind", "UNKNOWN", "count_from_bytes", "lookup"]


class CountsBytes(Protocol):
    """A lump table's entry that counts the elements of a lump's bytes (None: its codec decides)."""

    def count_bytes(self, data: memoryview, endian: Endian) -> int | None: ...


# An entry that counts (a Record, a Deferred codec, the string data codec), or "codec" (read
# by its own numpy-free codec) or "raw" (no codec: the lump stays raw).
Kind = Union[CountsBytes, str]
UNKNOWN: Any = object()  # no count without the codec


def lookup(table: str, lump: int, lump_version: int) -> Kind | None:
    """What the built-in layout table ``table`` reads ``lump`` at ``lump_version`` with, as
    :meth:`sourcebsp.variants.Variant.codec` resolves it: an entry that counts, ``"codec"``,
    ``"raw"``, or None (a table not known here)."""
    if table not in tables.RECIPES:
        return None
    try:
        # The entities, pakfile and game lump from their own modules, the rest without them.
        versions = (tables.sole_versions(table, lump) if lump in tables.SOLE_MODULES
                    else tables.bare_table(table)[lump])
    except KeyError:
        return "raw"
    found = tables.resolve(versions, lump_version)
    if found is None:
        return "raw"
    return found if hasattr(found, "count_bytes") else "codec"


def count_from_bytes(kind: Kind, data: memoryview, endian: Endian) -> Any:
    """The element count a lump of ``kind`` decodes to (what its codec's ``count`` gives),
    from its uncompressed bytes; :data:`UNKNOWN` where its codec would raise or decide."""
    counted = None if isinstance(kind, str) else kind.count_bytes(data, endian)
    return UNKNOWN if counted is None else counted

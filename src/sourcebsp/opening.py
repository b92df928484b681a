"""``sourcebsp.open``: any map, in the container its first bytes call for.

A Titanfall or Titanfall 2 map (``rBSP``, plain or ``.bsp.bz2``) opens as a
:class:`~sourcebsp.respawn.RespawnBsp`, every other as a Source
:class:`~sourcebsp.BspFile`; both are a :class:`~sourcebsp.protocols.MapReader`.
The branch table (:mod:`sourcebsp.variants`) says which container reads a
branch; a ``variant`` named by the caller must be one that container reads.
"""
from __future__ import annotations

import io
import os
import warnings
from typing import TYPE_CHECKING

from .compression import is_bzip2
from .container import BspFile
from .detection import detect_respawn
from .errors import UnsupportedError
from .respawn import RespawnBsp
from .variants import Variant, chosen_variant

if TYPE_CHECKING:
    from .compression import Limits
    from .protocols import MapReader

__all__ = ["HEAD_INPUT_LIMIT", "map_head", "open", "open_map", "open_named"]

#: How much of a ``.bsp.bz2`` :func:`map_head` reads at most to unpack a map's first bytes
#: (a bzip2 block is at most 900 kB of input, a little more when it does not compress).
HEAD_INPUT_LIMIT = 2 << 20


def map_head(path: str | os.PathLike[str], size: int = 8) -> bytes:
    """The first ``size`` bytes of the map at ``path``: of the map a ``.bsp.bz2`` holds, unpacked
    only that far (``b""`` when its bzip2 data is damaged there)."""
    with io.open(path, "rb") as handle:
        head = handle.read(size)
        if not is_bzip2(head):
            return head
        import bz2  # only for a packed map: ``info`` of a plain one loads no more than it needs

        decompressor = bz2.BZ2Decompressor()
        out, chunk, read = b"", head + handle.read(1 << 16), 0
        while chunk and read + len(chunk) <= HEAD_INPUT_LIMIT:
            read += len(chunk)
            try:
                out += decompressor.decompress(chunk, max_length=size - len(out))
            except (OSError, EOFError, ValueError):
                return b""
            if len(out) >= size or decompressor.eof:
                break
            chunk = handle.read(1 << 16)
        return out[:size]


def open(path: str | os.PathLike[str], variant: "str | Variant | None" = None, *,  # noqa: A001
         limits: "Limits | None" = None) -> "MapReader":
    """Open the map at ``path``, of any branch of the table.

    Parameters
    ----------
    path
        A ``.bsp`` (or ``.bsp.bz2``, unpacked in memory within ``limits.bzip2_size``).
    variant
        The engine branch to read it as (a name of :func:`sourcebsp.variant_names` or a
        :class:`~sourcebsp.variants.Variant`; or a :class:`~sourcebsp.variants.reading_as`
        block's); detected from the file when None.
    limits
        Decompression budgets, for trusted maps larger than the defaults allow.

    Returns
    -------
    MapReader
        A :class:`~sourcebsp.BspFile` for a Source map, a :class:`~sourcebsp.RespawnBsp` for a
        Titanfall one (``isinstance`` tells them apart where a script needs what only one has,
        such as a Source map's BSP tree queries).

    Raises
    ------
    UnsupportedError
        ``variant`` names a branch of the other container than the file's.
    NotSourceMapError
        Not a map of any branch (a Quake or GoldSrc BSP, another kind of file).
    """
    chosen = chosen_variant(variant)
    if detect_respawn(map_head(path)) is not None:
        return RespawnBsp.open(path, variant=chosen, limits=limits)  # which refuses a Source branch's name
    if chosen is not None and chosen.container == "respawn":
        raise UnsupportedError(f"variant {chosen.name!r} is a Respawn rBSP branch, but {os.fspath(path)!r} is "
                               f"not an rBSP map", offset=0)
    return BspFile.open(path, variant=chosen, limits=limits)


def _deprecated(old: str) -> None:
    warnings.warn(f"sourcebsp.{old} is deprecated: sourcebsp.open(path) opens every map", DeprecationWarning,
                  stacklevel=3)


def open_map(path: str | os.PathLike[str], *, variant: "str | Variant | None" = None,
             limits: "Limits | None" = None) -> "MapReader":
    """Deprecated: :func:`open` (which this was before it became the one way in)."""
    _deprecated("open_map")
    return open(path, variant, limits=limits)


def open_named(path: str | os.PathLike[str], *, variant: "str | Variant | None" = None,
               limits: "Limits | None" = None) -> "MapReader":
    """Deprecated: :func:`open`."""
    _deprecated("open_named")
    return open(path, variant, limits=limits)

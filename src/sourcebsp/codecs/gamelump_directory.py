"""The game lump's directory (``dgamelumpheader_t`` and ``dgamelump_t``, gamebspfile.h).

Apart from the game lump's codec so that reading which sub-lumps a map has
(branch detection reads the static prop version when a map is opened), or
moving the lump when a map is saved, imports neither numpy nor the sub-lump
codecs.
"""
from __future__ import annotations

import struct
from typing import Literal

from ..errors import TruncatedError
from .base import Endian, LumpContext, fields_struct

__all__ = ["GAMELUMP_FIELDS", "DirectoryRow", "id_to_str", "str_to_id", "read_directory", "packed_directory", "sub_lump_versions"]

# dgamelump_t, 16 bytes, as (field, struct code) pairs.  Read with ``struct``, so that moving
# the lump when a map is saved imports neither numpy nor the static prop layouts.
GAMELUMP_FIELDS = (
    ("id", "i"),  # GameLumpId_t id (four characters as a big-endian int, e.g. 'sprp')
    ("flags", "H"),  # unsigned short flags
    ("version", "H"),  # unsigned short version
    ("fileofs", "i"),  # int fileofs
    ("filelen", "i"),  # int filelen (uncompressed size)
)


def id_to_str(value: int) -> str:
    return int(value).to_bytes(4, "big", signed=True).decode("latin-1")


def str_to_id(name: str) -> int:
    return int.from_bytes(name.encode("latin-1"), "big", signed=True)


DirectoryRow = tuple[int, int, int, int, int]  # a dgamelump_t as (id, flags, version, fileofs, filelen)


def read_directory(data: memoryview, ctx: LumpContext) -> tuple[list[DirectoryRow], int, Literal["zero", "end"] | None, bool]:
    """The directory's rows (the dummy entry included), its size in bytes, its dummy entry
    and whether its offsets count from the lump rather than from the file."""
    if len(data) < 4:
        raise TruncatedError(
            f"game lump of {len(data)} bytes has no lumpCount",
            lump=ctx.name, offset=ctx.file_offset, needed=4, available=len(data),
        )
    count: int = struct.unpack_from(ctx.endian + "i", data)[0]
    needed = 4 + 16 * count
    if count < 0 or needed > len(data):
        raise TruncatedError(
            f"game lump directory of {count} entries needs {needed} bytes, the lump has {len(data)}",
            lump=ctx.name, offset=ctx.file_offset, needed=needed, available=len(data),
        )
    rows: list[DirectoryRow] = list(fields_struct(GAMELUMP_FIELDS, ctx.endian).iter_unpack(data[4:needed]))
    terminator: Literal["zero", "end"] | None = None
    if count and rows[-1][0] == 0 and rows[-1][4] == 0:
        terminator = "zero" if rows[-1][3] == 0 else "end"
    real = rows[:-1] if terminator else rows
    # Offsets below the end of the directory, counted from the file, can only be
    # relative to the lump (this also holds in a .lmp file, where the lump is at 20).
    relative = any(filelen > 0 and fileofs < ctx.file_offset + needed for _, _, _, fileofs, filelen in real)
    return rows, needed, terminator, relative


def sub_lump_versions(data: memoryview, ctx: LumpContext) -> dict[str, int]:
    """The version of each sub-lump, by id (``{"sprp": 10, "dprp": 4}``), from the directory
    alone: what branch detection reads without decoding anything."""
    rows = read_directory(data, ctx)[0]
    return {id_to_str(row[0]): row[2] for row in rows if row[0]}


def packed_directory(rows: list[DirectoryRow], endian: Endian) -> bytes:
    record = fields_struct(GAMELUMP_FIELDS, endian)
    return b"".join([struct.pack(endian + "i", len(rows)), *(record.pack(*row) for row in rows)])

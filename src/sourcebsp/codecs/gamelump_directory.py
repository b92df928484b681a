"""The game lump's directory (``dgamelumpheader_t`` and ``dgamelump_t``, gamebspfile.h).

Apart from the game lump's codec so that reading which sub-lumps a map has
(branch detection reads the static prop version when a map is opened), or
moving the lump when a map is saved, imports neither numpy nor the sub-lump
codecs.
"""
from __future__ import annotations

import struct
from typing import Literal, NamedTuple

from ..errors import TruncatedError
from .base import Endian, LumpContext, fields_struct

__all__ = ["GAMELUMP_FIELDS", "GAMELUMP_DIRECTORY", "GAMELUMP_DIRECTORY_DARK_MESSIAH", "GAMELUMP_DIRECTORY_VINDICTUS", "DirectoryLayout", "Fields",
           "DirectoryRow", "id_to_str", "str_to_id", "read_directory", "packed_directory", "sub_lump_versions",
           "static_prop_record"]

# dgamelump_t, 16 bytes, as (field, struct code) pairs.  Read with ``struct``, so that moving
# the lump when a map is saved imports neither numpy nor the static prop layouts.
GAMELUMP_FIELDS = (
    ("id", "i"),  # GameLumpId_t id (four characters as a big-endian int, e.g. 'sprp')
    ("flags", "H"),  # unsigned short flags
    ("version", "H"),  # unsigned short version
    ("fileofs", "i"),  # int fileofs
    ("filelen", "i"),  # int filelen (uncompressed size)
)
Fields = tuple[tuple[str, str], ...]


class DirectoryLayout(NamedTuple):
    """A branch's ``dgamelumpheader_t`` (``lumpCount`` first) and ``dgamelump_t``."""

    header: Fields
    row: Fields


GAMELUMP_DIRECTORY = DirectoryLayout((("lump_count", "i"),), GAMELUMP_FIELDS)
# Dark Messiah's: one more int in the header and in each dgamelump_t (after filelen), meaning
# unknown, kept (bsp_tool's arkane branch: DarkMessiahSPGameLump, GameLumpHeader "4s2H3i").
# Vindictus's dgamelump_t: flags and version as ints (bsp_tool's nexon.vindictus69: "4s4i").
GAMELUMP_DIRECTORY_VINDICTUS = DirectoryLayout((("lump_count", "i"),), (("id", "i"), ("flags", "i"), ("version", "i"),
                                                                       ("fileofs", "i"), ("filelen", "i")))
GAMELUMP_DIRECTORY_DARK_MESSIAH = DirectoryLayout((("lump_count", "i"), ("unknown", "i")),
                                                  (*GAMELUMP_FIELDS, ("unknown", "i")))


def id_to_str(value: int) -> str:
    return int(value).to_bytes(4, "big", signed=True).decode("latin-1")


def str_to_id(name: str) -> int:
    return int.from_bytes(name.encode("latin-1"), "big", signed=True)


# A dgamelump_t as (id, flags, version, fileofs, filelen, *a branch's extra fields).
DirectoryRow = tuple[int, ...]


def read_directory(data: memoryview, ctx: LumpContext, layout: DirectoryLayout = GAMELUMP_DIRECTORY
                   ) -> tuple[list[DirectoryRow], int, Literal["zero", "end"] | None, bool, tuple[int, ...]]:
    """The directory's rows (the dummy entry included), its size in bytes, its dummy entry,
    whether its offsets count from the lump rather than from the file, and the header's
    fields after ``lumpCount``."""
    head_struct = fields_struct(layout.header, ctx.endian)
    if len(data) < head_struct.size:
        raise TruncatedError(
            f"game lump of {len(data)} bytes has no {head_struct.size}-byte dgamelumpheader_t",
            lump=ctx.name, offset=ctx.file_offset, needed=head_struct.size, available=len(data),
        )
    count, *head = head_struct.unpack_from(data)
    record = fields_struct(layout.row, ctx.endian)
    needed = head_struct.size + record.size * count
    if count < 0 or needed > len(data):
        raise TruncatedError(
            f"game lump directory of {count} entries needs {needed} bytes, the lump has {len(data)}",
            lump=ctx.name, offset=ctx.file_offset, needed=needed, available=len(data),
        )
    rows: list[DirectoryRow] = list(record.iter_unpack(data[head_struct.size:needed]))
    terminator: Literal["zero", "end"] | None = None
    if count and rows[-1][0] == 0 and rows[-1][4] == 0:
        terminator = "zero" if rows[-1][3] == 0 else "end"
    real = rows[:-1] if terminator else rows
    # Offsets below the end of the directory, counted from the file, can only be
    # relative to the lump (this also holds in a .lmp file, where the lump is at 20).
    relative = any(row[4] > 0 and row[3] < ctx.file_offset + needed for row in real)
    return rows, needed, terminator, relative, tuple(head)


def sub_lump_versions(data: memoryview, ctx: LumpContext) -> dict[str, int]:
    """The version of each sub-lump, by id (``{"sprp": 10, "dprp": 4}``), from the directory
    alone: what branch detection reads without decoding anything."""
    rows = read_directory(data, ctx)[0]
    return {id_to_str(row[0]): row[2] for row in rows if row[0]}


_STATIC_PROP_NAME = 128  # char m_Name[STATIC_PROP_NAME_LENGTH]


def static_prop_record(data: memoryview, ctx: LumpContext) -> tuple[int, int] | None:
    """The ``sprp`` sub-lump's version and the size of its prop records, as the mainline layout
    of the sub-lump (names, leaves, props, each after an int count) implies them; None when
    there is no such sub-lump, it is compressed or empty of props, or the counts do not fit the
    lump (what branch detection reads, without numpy)."""
    rows, _, _, relative, _ = read_directory(data, ctx)
    row = next((r for r in rows if r[0] and id_to_str(r[0]) == "sprp"), None)
    if row is None or row[1] & 1 or row[4] <= 0:  # GAMELUMPFLAG_COMPRESSED, or empty
        return None
    start = row[3] - (0 if relative else ctx.file_offset)
    end = start + row[4]
    if start < 0 or end > len(data):
        return None
    count = struct.Struct(ctx.endian + "i")
    pos = start
    for width in (_STATIC_PROP_NAME, 2):  # the model names, the leaves (unsigned short)
        if pos + 4 > end:
            return None
        n = count.unpack_from(data, pos)[0]
        pos += 4 + n * width
        if n < 0 or pos > end:
            return None
    if pos + 4 > end:
        return None
    props = count.unpack_from(data, pos)[0]
    rest = end - pos - 4
    if props <= 0 or rest % props:
        return None
    return row[2], rest // props


def packed_directory(rows: list[DirectoryRow], endian: Endian, layout: DirectoryLayout = GAMELUMP_DIRECTORY,
                     head: tuple[int, ...] = ()) -> bytes:
    head_struct, record = fields_struct(layout.header, endian), fields_struct(layout.row, endian)
    head = head if len(head) == len(layout.header) - 1 else (0,) * (len(layout.header) - 1)
    return b"".join([head_struct.pack(len(rows), *head), *(record.pack(*row) for row in rows)])

"""The game lump (lump 35): a directory of game-specific sub-lumps.

bspfile.h / gamebspfile.h: ``dgamelumpheader_t`` (int lumpCount) followed by
``dgamelump_t`` {int id; unsigned short flags; unsigned short version; int
fileofs; int filelen}.  ``fileofs`` is absolute in PC maps and relative to the
game lump on some console maps.  A sub-lump with ``GAMELUMPFLAG_COMPRESSED``
holds Valve LZMA data; its ``filelen`` is the uncompressed size and its stored
size is the distance to the next entry's offset, which is why compressed game
lumps end with a dummy entry.

This module keeps every sub-lump as bytes; static and detail props are
decoded from these bytes by their own codecs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Literal

import numpy as np

from ..compression import lzma_compress, lzma_decompress
from ..errors import TruncatedError
from ..lump_ids import LumpId
from .base import LumpContext

GAMELUMP_COMPRESSED = 0x0001  # GAMELUMPFLAG_COMPRESSED

GAMELUMP = np.dtype(
    [
        ("id", "<i4"),  # GameLumpId_t id (four characters as a big-endian int, e.g. 'sprp')
        ("flags", "<u2"),  # unsigned short flags
        ("version", "<u2"),  # unsigned short version
        ("fileofs", "<i4"),  # int fileofs
        ("filelen", "<i4"),  # int filelen (uncompressed size)
    ]
)  # 16 bytes


def id_to_str(value: int) -> str:
    return int(value).to_bytes(4, "big", signed=True).decode("latin-1")


def str_to_id(name: str) -> int:
    return int.from_bytes(name.encode("latin-1"), "big", signed=True)


class GameLump:
    """One game lump: its id, flags, version and uncompressed data."""

    def __init__(self, id: str, flags: int, version: int, data: bytes, stored: bytes | None = None) -> None:
        self.id = id
        self.flags = flags
        self.version = version
        self._data = data
        # The bytes as found in the file (compressed or not), reused while data is unchanged.
        self._stored = stored

    def __repr__(self) -> str:
        return f"GameLump({self.id!r}, version={self.version}, {len(self._data)} bytes, flags={self.flags})"

    @property
    def data(self) -> bytes:
        return self._data

    @data.setter
    def data(self, value: bytes) -> None:
        self._data = bytes(value)
        self._stored = None

    @property
    def compressed(self) -> bool:
        return bool(self.flags & GAMELUMP_COMPRESSED)

    def stored_bytes(self) -> bytes:
        if self._stored is None:
            self._stored = lzma_compress(self._data) if self.compressed and self._data else self._data
        return self._stored

    def set_compressed(self, compressed: bool) -> None:
        if compressed != self.compressed:
            self.flags ^= GAMELUMP_COMPRESSED
            self._stored = None


@dataclass
class GameLumps:
    """The decoded game lump directory."""

    lumps: list[GameLump] = field(default_factory=list)
    relative_offsets: bool = False
    # The dummy entry after compressed game lumps: None, all-zero, or pointing at the end.
    terminator: Literal["zero", "end"] | None = None

    def __len__(self) -> int:
        return len(self.lumps)

    def __iter__(self) -> Iterator[GameLump]:
        return iter(self.lumps)

    def __contains__(self, id: str) -> bool:
        return any(g.id == id for g in self.lumps)

    def __getitem__(self, id: str) -> GameLump:
        for lump in self.lumps:
            if lump.id == id:
                return lump
        raise KeyError(id)

    def ids(self) -> list[str]:
        return [g.id for g in self.lumps]

    def set_compressed(self, compressed: bool) -> None:
        """Compress every game lump one by one (as bspzip does), or none."""
        for lump in self.lumps:
            lump.set_compressed(compressed and bool(lump.data))
        any_compressed = any(g.compressed for g in self.lumps)
        self.terminator = "end" if any_compressed else None


class GameLumpCodec:
    mutable = True

    def decode(self, data: memoryview, ctx: LumpContext) -> GameLumps:
        if len(data) < 4:
            raise TruncatedError(
                f"game lump of {len(data)} bytes has no lumpCount",
                lump=ctx.name, offset=ctx.file_offset, needed=4, available=len(data),
            )
        count = int(np.frombuffer(data, ctx.endian + "i4", 1)[0])
        needed = 4 + 16 * count
        if count < 0 or needed > len(data):
            raise TruncatedError(
                f"game lump directory of {count} entries needs {needed} bytes, the lump has {len(data)}",
                lump=ctx.name, offset=ctx.file_offset, needed=needed, available=len(data),
            )
        table = np.frombuffer(data, GAMELUMP.newbyteorder(ctx.endian), count, 4)
        terminator: Literal["zero", "end"] | None = None
        if count and table["id"][-1] == 0 and table["filelen"][-1] == 0:
            terminator = "zero" if table["fileofs"][-1] == 0 else "end"
        real = table[:-1] if terminator else table
        # Offsets below the lump's own position can only be relative to it.
        relative = bool(len(real) and (real["fileofs"][real["filelen"] > 0] < ctx.file_offset).any())
        base = 0 if relative else ctx.file_offset
        lumps = []
        for index, row in enumerate(real):
            start = int(row["fileofs"]) - base
            compressed = bool(row["flags"] & GAMELUMP_COMPRESSED)
            if compressed and row["filelen"] > 0:
                later = [int(o) - base for o in table["fileofs"][index + 1 :] if int(o) - base > start]
                end = later[0] if later else len(data)
            else:
                end = start + int(row["filelen"])
            name = id_to_str(row["id"])
            if row["filelen"] and (start < needed or end > len(data) or end < start):
                raise TruncatedError(
                    f"game lump {name!r} at {int(row['fileofs'])} ({end - start} bytes) lies outside "
                    f"the {len(data)}-byte game lump",
                    lump=ctx.name, offset=ctx.file_offset + 4 + 16 * index,
                    needed=end, available=len(data),
                )
            stored = bytes(data[start:end]) if row["filelen"] else b""
            content = (
                lzma_decompress(stored, lump=f"{ctx.name}/{name}", offset=ctx.file_offset + start,
                                expected_size=int(row["filelen"]))
                if compressed and stored
                else stored
            )
            lumps.append(GameLump(name, int(row["flags"]), int(row["version"]), content, stored))
        return GameLumps(lumps, relative, terminator)

    def encode(self, value: GameLumps, ctx: LumpContext) -> bytes:
        count = len(value.lumps) + (1 if value.terminator else 0)
        table = np.zeros(count, GAMELUMP.newbyteorder(ctx.endian))
        base = 0 if value.relative_offsets else ctx.file_offset
        position = 4 + 16 * count
        blobs = []
        for row, lump in zip(table, value.lumps):
            stored = lump.stored_bytes()
            row["id"] = str_to_id(lump.id)
            row["flags"] = lump.flags
            row["version"] = lump.version
            row["fileofs"] = base + position
            row["filelen"] = len(lump.data)
            blobs.append(stored)
            position += len(stored)
        if value.terminator == "end":
            table[-1]["fileofs"] = base + position
        head = np.array([count], ctx.endian + "i4").tobytes()
        return head + table.tobytes() + b"".join(blobs)

    def count(self, value: GameLumps) -> int:
        return len(value)


LAYOUTS = {LumpId.GAME_LUMP: {0: GameLumpCodec()}}


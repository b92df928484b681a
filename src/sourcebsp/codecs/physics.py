"""Physics lumps: collision models (lump 29) and displacement collision (lump 28).

bspfile.h: lump 29 (``LUMP_PHYSCOLLIDE``) is a sequence of ``dphysmodel_t``
{int modelIndex; int dataSize; int keydataSize; int solidCount}, each followed
by ``solidCount`` collision solids (an int size, then that many bytes: the
vphysics binary that a ``.phy`` file also holds) and ``keydataSize`` bytes of
key data text (``solid { "index" "0" "mass" ... }`` blocks, NUL-terminated).
The sequence ends with a header whose modelIndex is -1 (vbsp writes
``-1, -1, 0, 0``).  BSP 19 and older maps kept a second copy of the same
structure in lump 49 (``LUMP_PHYSCOLLIDESURFACE``), read with the same codec.

Lump 28 (``LUMP_PHYSDISP``) is ``dphysdisp_t`` {unsigned short
numDisplacements} followed by ``unsigned short dataSize[numDisplacements]``
and the displacements' collision blobs back to back; Strata Source lump
version 2 widens the count and the sizes to unsigned int.

Solids and displacement blobs stay bytes: their layout belongs to vphysics,
not to the BSP format.  Decoded, they are read-only views of the map, as the
other lumps' arrays are: nothing is copied until written (``bytes(solid)``).
Sizes inside both lumps are in the map's byte order.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import numpy as np

from ..errors import BspFormatError, LumpSizeError, TruncatedError
from .base import LumpContext, Record
from .records import COUNT, PHYSDISP_SIZE, PHYSDISP_SIZE_V2, PHYSMODEL

__all__ = [
    "PhysModel",
    "PhysCollide",
    "PhysCollideCodec",
    "PhysDisp",
    "PhysDispCodec",
    "KeyBlock",
    "parse_keydata",
]

_TERMINATOR_INDEX = -1
# Key data is ASCII in practice; Latin-1 maps every byte to one character, so
# any byte survives decode then encode.
_KEYDATA_ENCODING = "latin-1"


# ---- key data text ----------------------------------------------------------------
KeyBlock = tuple[str, list[tuple[str, str]]]  # (block name, [(key, value), ...])

# Compiled on first use (``re`` keeps it): decoding the lump does not parse its text.
_KEY_TOKEN = r'\s*(?:(?P<open>\{)|(?P<close>\})|"(?P<string>[^"]*)"|(?P<word>[^\s{}"]+))'


def parse_keydata(text: str) -> list[KeyBlock]:
    """Parse physics key data into ``[(block name, [(key, value), ...]), ...]``.

    The text is a sequence of ``name { "key" "value" ... }`` blocks (``solid``,
    ``staticsolid``, ``fluid``, ``materialtable``, ``virtualterrain`` ...);
    keys may repeat and keep their order.

    Raises
    ------
    BspFormatError
        The text is not a sequence of such blocks (the message gives the
        character position).
    """
    token = re.compile(_KEY_TOKEN)
    blocks: list[KeyBlock] = []
    position, end = 0, len(text.rstrip())
    while position < end:
        match = token.match(text, position)
        if match is None or match["word"] is None and match["string"] is None:
            raise BspFormatError(f"physics key data: expected a block name at character {position}")
        name = match["word"] if match["word"] is not None else match["string"]
        position = match.end()
        match = token.match(text, position)
        if match is None or match["open"] is None:
            raise BspFormatError(f"physics key data: expected '{{' after {name!r} at character {position}")
        position = match.end()
        pairs: list[tuple[str, str]] = []
        while True:
            match = token.match(text, position)
            if match is None:
                raise BspFormatError(f"physics key data: block {name!r} is not closed (character {position})")
            position = match.end()
            if match["close"] is not None:
                break
            if match["string"] is None:
                raise BspFormatError(f"physics key data: expected a quoted key in {name!r} at character {match.start()}")
            key = match["string"]
            value = token.match(text, position)
            if value is None or value["string"] is None:
                raise BspFormatError(f"physics key data: key {key!r} in {name!r} has no quoted value "
                                     f"(character {position})")
            position = value.end()
            pairs.append((key, value["string"]))
        blocks.append((name, pairs))
    return blocks


# ---- lump 29: collision models ----------------------------------------------------
@dataclass
class PhysModel:
    """The collision model of one brush model (``dphysmodel_t`` and what follows it).

    Attributes
    ----------
    model_index : int
        Index into the MODELS lump (0 is the world).
    solids : list of bytes-like
        The collision solids, each without its size field: read-only
        ``memoryview`` s of the map when decoded (``bytes(solid)`` for a
        copy to keep or hash), any bytes when set.
    keydata : str
        The key data text, up to its NUL terminator.
    keydata_tail : bytes
        The bytes after the text: its NUL terminator and any padding, as found.
    """

    model_index: int
    solids: list[bytes | memoryview] = field(default_factory=list)
    keydata: str = ""
    keydata_tail: bytes = b"\x00"

    def blocks(self) -> list[KeyBlock]:
        """The key data parsed with :func:`parse_keydata`."""
        return parse_keydata(self.keydata)

    def __getstate__(self) -> dict[str, object]:
        # Views of the map cannot be pickled or deep-copied: a copy holds its solids' bytes.
        return {**self.__dict__, "solids": [bytes(solid) for solid in self.solids]}

    def keydata_bytes(self) -> bytes:
        try:
            return self.keydata.encode(_KEYDATA_ENCODING) + self.keydata_tail
        except UnicodeEncodeError as e:
            raise BspFormatError(f"key data of model {self.model_index} has a character outside "
                                 f"Latin-1: {e.object[e.start:e.end]!r}") from e

    def data_size(self) -> int:
        """``dataSize``: the solids with their int size fields."""
        return sum(4 + len(solid) for solid in self.solids)


@dataclass
class PhysCollide:
    """The decoded PHYSCOLLIDE lump: collision models in file order.

    ``terminator`` holds the ``modelIndex == -1`` header and every byte after
    it exactly as found; None (or empty while there are models) writes the
    standard ``-1, -1, 0, 0``.
    """

    models: list[PhysModel] = field(default_factory=list)
    terminator: bytes | None = None

    def __len__(self) -> int:
        return len(self.models)

    def __iter__(self) -> Iterator[PhysModel]:
        return iter(self.models)

    def __getitem__(self, index: int) -> PhysModel:
        return self.models[index]

    def get(self, model_index: int) -> PhysModel | None:
        """The collision model of brush model ``model_index``, or None."""
        return next((m for m in self.models if m.model_index == model_index), None)

    def model_indices(self) -> np.ndarray:
        return np.array([m.model_index for m in self.models], dtype=np.int64)

    def num_solids(self) -> int:
        return sum(len(m.solids) for m in self.models)


class PhysCollideCodec:
    """``dphysmodel_t`` sequences: lump 29, and lump 49 before BSP 20."""

    mutable = True

    def decode(self, data: memoryview, ctx: LumpContext) -> PhysCollide:
        header_record = PHYSMODEL.struct(ctx.endian)
        size_record = COUNT.struct(ctx.endian)
        length, base = len(data), ctx.file_offset
        if length == 0:
            return PhysCollide([], b"")
        models: list[PhysModel] = []
        position = 0
        while True:
            if position + PHYSMODEL.size > length:
                what = ("ends without the modelIndex -1 terminator" if position == length
                        else f"has {length - position} bytes left, not a whole 16-byte dphysmodel_t")
                raise TruncatedError(f"the collision model list {what} (after {len(models)} models)",
                                     lump=ctx.name, offset=base + position,
                                     needed=position + PHYSMODEL.size, available=length)
            index, data_size, keydata_size, solid_count = header_record.unpack_from(data, position)
            if index == _TERMINATOR_INDEX:
                return PhysCollide(models, bytes(data[position:]))
            if index < 0 or data_size < 0 or keydata_size < 0 or solid_count < 0:
                raise BspFormatError(
                    f"dphysmodel_t #{len(models)} has a negative field (modelIndex {index}, dataSize "
                    f"{data_size}, keydataSize {keydata_size}, solidCount {solid_count})",
                    lump=ctx.name, offset=base + position,
                )
            start = position + PHYSMODEL.size
            end = start + data_size + keydata_size
            if end > length:
                raise TruncatedError(
                    f"collision model {index} declares {data_size} + {keydata_size} bytes at {start}, "
                    f"past the end of the {length}-byte lump",
                    lump=ctx.name, offset=base + start, needed=end, available=length,
                )
            solids, solids_end = self._solids(data, start, start + data_size, solid_count, size_record, index, ctx)
            if solids_end != start + data_size:
                raise BspFormatError(
                    f"collision model {index}: its {solid_count} solids take {solids_end - start} bytes, "
                    f"dataSize says {data_size}",
                    lump=ctx.name, offset=base + position,
                )
            raw_keydata = bytes(data[solids_end:end])
            nul = raw_keydata.find(b"\x00")
            text, tail = (raw_keydata, b"") if nul < 0 else (raw_keydata[:nul], raw_keydata[nul:])
            models.append(PhysModel(index, solids, text.decode(_KEYDATA_ENCODING), tail))
            position = end

    @staticmethod
    def _solids(data: memoryview, start: int, limit: int, count: int, size_record: struct.Struct,
                index: int, ctx: LumpContext) -> tuple[list[bytes | memoryview], int]:
        # Views, not copies: copying the solids was half the decode of a large map.
        solids: list[bytes | memoryview] = []
        position = start
        for number in range(count):
            if position + 4 > limit:
                raise TruncatedError(
                    f"collision model {index}: solid {number} of {count} has no size field inside dataSize",
                    lump=ctx.name, offset=ctx.file_offset + position, needed=position + 4, available=limit,
                )
            size: int = size_record.unpack_from(data, position)[0]
            position += 4
            if size < 0 or position + size > limit:
                raise TruncatedError(
                    f"collision model {index}: solid {number} of {size} bytes runs past dataSize",
                    lump=ctx.name, offset=ctx.file_offset + position - 4,
                    needed=position + max(size, 0), available=limit,
                )
            solids.append(data[position : position + size])
            position += size
        return solids, position

    def encode(self, value: PhysCollide, ctx: LumpContext) -> bytes:
        header_record = PHYSMODEL.struct(ctx.endian)
        size_record = COUNT.struct(ctx.endian)
        parts: list[bytes] = []
        for model in value.models:
            keydata = model.keydata_bytes()
            parts.append(header_record.pack(model.model_index, model.data_size(), len(keydata), len(model.solids)))
            for solid in model.solids:
                parts.append(size_record.pack(len(solid)))
                parts.append(bytes(solid))
            parts.append(keydata)
        terminator = value.terminator
        if terminator is None or (not terminator and value.models):
            terminator = header_record.pack(_TERMINATOR_INDEX, -1, 0, 0)
        parts.append(terminator)
        return b"".join(parts)

    def count(self, value: PhysCollide) -> int:
        return len(value.models)


# ---- lump 28: displacement collision ----------------------------------------------
@dataclass
class PhysDisp:
    """The decoded PHYSDISP lump: one collision blob per displacement.

    ``sizes[i]`` is ``dataSize[i]``; ``data`` holds the blobs back to back
    (a read-only view of the file when decoded).  ``disp[i]`` gives blob i.
    ``has_count`` is False for a lump of zero bytes (older compilers wrote
    none, even for maps with displacements); it is written back as zero bytes
    while it stays empty.
    """

    sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    data: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    has_count: bool = True

    @classmethod
    def from_blobs(cls, blobs: Iterable[bytes]) -> "PhysDisp":
        items = [bytes(b) for b in blobs]
        return cls(np.array([len(b) for b in items], np.int64),
                   np.frombuffer(b"".join(items), np.uint8).copy())

    @property
    def offsets(self) -> np.ndarray:
        """Start of each blob within :attr:`data`."""
        sizes = np.asarray(self.sizes, np.int64)
        return np.concatenate(([0], np.cumsum(sizes)[:-1])) if len(sizes) else sizes

    def __len__(self) -> int:
        return len(self.sizes)

    def __getitem__(self, index: int) -> bytes:
        start = int(self.offsets[index])
        return self.data[start : start + int(self.sizes[index])].tobytes()

    def __iter__(self) -> Iterator[bytes]:
        data = self.data
        for start, size in zip(self.offsets.tolist(), np.asarray(self.sizes).tolist()):
            yield data[start : start + size].tobytes()


class PhysDispCodec:
    """``dphysdisp_t``: a count, the sizes, the blobs (16-bit or 32-bit fields)."""

    mutable = True

    def __init__(self, field: str | Record) -> None:
        self.record = field if isinstance(field, Record) else Record(field)  # numDisplacements and dataSize[]
        self.field = self.record.dtype

    def __repr__(self) -> str:
        return f"PhysDispCodec({self.field.itemsize * 8}-bit sizes)"

    def decode(self, data: memoryview, ctx: LumpContext) -> PhysDisp:
        field_dtype = self.field.newbyteorder(ctx.endian)
        width, length = field_dtype.itemsize, len(data)
        if length == 0:
            return PhysDisp(has_count=False)
        if length < width:
            raise TruncatedError(f"lump of {length} bytes has no {width}-byte numDisplacements",
                                 lump=ctx.name, offset=ctx.file_offset, needed=width, available=length)
        count: int = self.record.struct(ctx.endian).unpack_from(data)[0]
        table_end = width * (1 + count)
        if table_end > length:
            raise TruncatedError(
                f"numDisplacements {count} needs a {width * count}-byte size table, the lump has "
                f"{length - width} bytes after the count",
                lump=ctx.name, offset=ctx.file_offset + width, needed=table_end, available=length,
            )
        sizes = np.frombuffer(data, field_dtype, count, width)
        end = table_end + int(sizes.sum(dtype=np.int64))
        if end > length:
            raise TruncatedError(
                f"the {count} displacement blobs need {end - table_end} bytes, the lump has "
                f"{length - table_end} after the size table",
                lump=ctx.name, offset=ctx.file_offset + table_end, needed=end, available=length,
            )
        if end < length:
            raise LumpSizeError(
                f"{length - end} unexpected bytes after the last displacement blob",
                lump=ctx.name, offset=ctx.file_offset + end, needed=end, available=length,
            )
        return PhysDisp(sizes, np.frombuffer(data, np.uint8, end - table_end, table_end))

    def encode(self, value: PhysDisp, ctx: LumpContext) -> bytes:
        field_dtype = self.field.newbyteorder(ctx.endian)
        sizes = np.asarray(value.sizes, np.int64)
        limit = np.iinfo(self.field).max
        if len(sizes) > limit or (len(sizes) and (sizes.min() < 0 or sizes.max() > limit)):
            raise BspFormatError(f"{len(sizes)} displacements or a blob size does not fit the "
                                 f"{self.field.itemsize * 8}-bit fields of lump version {ctx.version}",
                                 lump=ctx.name)
        blobs = np.ascontiguousarray(value.data, np.uint8)
        if int(sizes.sum()) != len(blobs):
            raise BspFormatError(f"the sizes add up to {int(sizes.sum())} bytes, data holds {len(blobs)}",
                                 lump=ctx.name)
        if not value.has_count and not len(sizes):
            return b""
        return np.array(len(sizes), field_dtype).tobytes() + sizes.astype(field_dtype).tobytes() + blobs.tobytes()

    def count(self, value: PhysDisp) -> int:
        return len(value)


PHYSCOLLIDE_CODEC = PhysCollideCodec()
PHYSDISP_CODEC = PhysDispCodec(PHYSDISP_SIZE)
PHYSDISP_V2_CODEC = PhysDispCodec(PHYSDISP_SIZE_V2)  # Strata Source LUMP_PHYSDISP_VERSION 2

"""The game lump (lump 35): a directory of game-specific sub-lumps.

bspfile.h / gamebspfile.h: ``dgamelumpheader_t`` (int lumpCount) followed by
``dgamelump_t`` {int id; unsigned short flags; unsigned short version; int
fileofs; int filelen}.  ``fileofs`` is absolute in PC maps and relative to the
game lump on some console maps.  A sub-lump with ``GAMELUMP_COMPRESSED``
holds Valve LZMA data; its ``filelen`` is the uncompressed size and its stored
size is the distance to the next entry's offset, which is why compressed game
lumps end with a dummy entry.

Every sub-lump keeps its bytes; :attr:`GameLump.value` decodes them on first
use with the codec registered for its id in :data:`SUB_CODECS` (static props,
detail props, detail prop lighting).  A sub-lump whose value was loaded is
encoded again from that value when the map is saved; when that gives the
original bytes back, a compressed sub-lump keeps its original LZMA stream.
"""
from __future__ import annotations

import enum
import functools
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterator, Literal, Mapping

from ..compression import lzma_compress, lzma_decompress
from ..errors import TruncatedError
from ..lump_ids import LumpId
from .base import Codec, Endian, LumpContext, RawLump, fields_dtype, fields_struct
from .gamelump_directory import (GAMELUMP_DIRECTORY, GAMELUMP_DIRECTORY_DARK_MESSIAH, GAMELUMP_DIRECTORY_VINDICTUS,
                                 GAMELUMP_FIELDS, DirectoryLayout,
                                 DirectoryRow, id_to_str, packed_directory, read_directory, str_to_id,
                                 sub_lump_versions)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "GAMELUMP_COMPRESSED",
    "GAMELUMP",
    "GAMELUMP_FIELDS",
    "SUB_CODECS",
    "GameLump",
    "GameLumps",
    "GameLumpCodec",
    "id_to_str",
    "str_to_id",
    "sub_lump_versions",
]

GAMELUMP_COMPRESSED = 0x0001  # GAMELUMPFLAG_COMPRESSED

if TYPE_CHECKING:
    GAMELUMP: np.dtype  # the same record for numpy, made on first use
    SUB_CODECS: Mapping[str, Codec]


@functools.lru_cache(maxsize=None)
def _sub_codecs(family: str = "") -> Mapping[str, Codec]:
    """The codecs of the sub-lumps sourcebsp understands, by game lump id (gamebspfile.h
    GAMELUMP_STATIC_PROPS, GAMELUMP_DETAIL_PROPS, GAMELUMP_DETAIL_PROP_LIGHTING(_HDR));
    also :data:`SUB_CODECS`.  ``family``: a branch whose static prop sub-lump holds more
    (:class:`~sourcebsp.codecs.staticprops.StaticPropsCodec`).  Their module is imported on
    first use."""
    from . import staticprops  # a seam: numpy-bound, and a map's game lump directory needs none of it

    return MappingProxyType({
        "sprp": staticprops.StaticPropsCodec(family),
        "dprp": staticprops.DetailPropsCodec(),
        "dplt": staticprops.DetailPropLightingCodec(),
        "dplh": staticprops.DetailPropLightingCodec(),
    })


def __getattr__(name: str) -> Any:
    if name == "GAMELUMP":
        value: Any = fields_dtype(GAMELUMP_FIELDS)
    elif name == "SUB_CODECS":
        value = _sub_codecs()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


class _Unset(enum.Enum):
    """A sub-lump's value before it is decoded: one member, the same after pickling or deepcopy
    (a copied ``object()`` sentinel would be another object, and read as a decoded value)."""

    UNSET = 0


_UNSET: Any = _Unset.UNSET


class GameLump:
    """One game lump: its id, flags, version and uncompressed data.

    ``data`` is the uncompressed content; ``value`` the decoded content (a
    codec's object, or a :class:`RawLump` for ids without a codec).  Once
    ``value`` has been read, ``data`` is encoded from it, so in-place edits
    of the value are what gets saved.
    """

    def __init__(self, id: str, flags: int, version: int, data: bytes | memoryview, stored: bytes | None = None,
                 *, context: LumpContext | None = None, family: str = "") -> None:
        self.id = id
        self.family = family  # the branch family whose sub-lump codecs read it (see _sub_codecs)
        self.flags = flags
        self.version = version
        self._data = bytes(data)
        # The bytes as found in the file (compressed or not) and the content they hold.
        self._stored = stored
        self._stored_plain: bytes | None = self._data if stored is not None else None
        self._value: Any = _UNSET
        self._context = context
        self.extra: tuple[int, ...] = ()  # a branch's extra directory fields (Dark Messiah's), kept as found

    def __repr__(self) -> str:
        state = ", decoded" if self.is_decoded else ""
        return (f"GameLump({self.id!r}, version={self.version}, {len(self._data)} bytes, "
                f"flags={self.flags}{state})")

    @property
    def codec(self) -> Codec | None:
        """The codec of this sub-lump's id, or None."""
        return _sub_codecs(self.family).get(self.id)

    def context(self, endian: Endian | None = None) -> LumpContext:
        """Where this sub-lump lives, for its codec (offsets, versions, byte order)."""
        base = self._context or LumpContext(
            lump=int(LumpId.GAME_LUMP), name=f"GAME_LUMP/{self.id}", version=self.version,
            bsp_version=20, endian="<", file_offset=0,
        )
        return base._replace(version=self.version, endian=endian or base.endian)

    @property
    def is_decoded(self) -> bool:
        return self._value is not _UNSET

    @property
    def value(self) -> Any:
        """The decoded sub-lump, decoded on first access."""
        if self._value is _UNSET:
            codec = self.codec
            if codec is None:
                self._value = RawLump(self._data, f"no codec for game lump {self.id!r}")
            else:
                self._value = codec.decode(memoryview(self._data), self.context())
        return self._value

    @value.setter
    def value(self, value: Any) -> None:
        self._value = value

    def encode(self, endian: Endian | None = None) -> bytes:
        """The uncompressed content: encoded from ``value`` if it was loaded."""
        if self._value is _UNSET:
            return self._data
        if isinstance(self._value, RawLump):
            return bytes(self._value.data)
        codec = self.codec
        if codec is None:
            raise TypeError(f"game lump {self.id!r} has no codec to encode a {type(self._value).__name__}")
        return codec.encode(self._value, self.context(endian))

    @property
    def data(self) -> bytes:
        return self.encode()

    @data.setter
    def data(self, value: bytes) -> None:
        self._data = bytes(value)
        self._value = _UNSET

    @property
    def compressed(self) -> bool:
        return bool(self.flags & GAMELUMP_COMPRESSED)

    def stored_bytes(self, plain: bytes | None = None) -> bytes:
        """The bytes to write for ``plain`` (default: the current content)."""
        if plain is None:
            plain = self.encode()
        if not self.compressed or not plain:
            return plain
        # Recompressing would not reproduce the original stream: reuse it while
        # the content is unchanged.
        if self._stored is None or self._stored_plain != plain:
            self._stored, self._stored_plain = lzma_compress(plain), plain
        return self._stored

    def set_compressed(self, compressed: bool) -> None:
        if compressed != self.compressed:
            self.flags ^= GAMELUMP_COMPRESSED
            self._stored = self._stored_plain = None


class GameLumps:
    """The decoded game lump directory.

    ``terminator`` is the dummy entry after compressed game lumps: None,
    all-zero (``"zero"``) or pointing at the end (``"end"``).  A plain class
    rather than a dataclass, so that saving a map imports no ``dataclasses``.
    """

    def __init__(self, lumps: list[GameLump] | None = None, relative_offsets: bool = False,
                 terminator: Literal["zero", "end"] | None = None) -> None:
        self.lumps: list[GameLump] = [] if lumps is None else lumps
        self.relative_offsets = relative_offsets
        self.terminator: Literal["zero", "end"] | None = terminator
        self.terminator_extra: tuple[int, ...] = ()  # the dummy entry's extra fields (Dark Messiah's)
        self.header_extra: tuple[int, ...] = ()  # dgamelumpheader_t's fields after lumpCount (Dark Messiah's)

    def __eq__(self, other: object) -> bool:
        return type(other) is GameLumps and ((self.lumps, self.relative_offsets, self.terminator)
                                             == (other.lumps, other.relative_offsets, other.terminator))

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (f"GameLumps(lumps={self.lumps!r}, relative_offsets={self.relative_offsets!r}, "
                f"terminator={self.terminator!r})")

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

    def get(self, id: str) -> GameLump | None:
        """The game lump with this id, or None."""
        return next((g for g in self.lumps if g.id == id), None)

    def ids(self) -> list[str]:
        return [g.id for g in self.lumps]

    def add(self, id: str, version: int, value: Any, *, flags: int = 0,
            context: LumpContext | None = None, family: str = "") -> GameLump:
        """Append a game lump holding ``value`` (bytes, or a decoded value for its codec; ``family``:
        the branch whose sub-lump codecs read bytes, see :class:`GameLumpCodec`)."""
        if id in self:
            raise KeyError(f"the map already has a {id!r} game lump")
        if len(id.encode("latin-1")) != 4:
            raise ValueError(f"a game lump id has four characters, not {id!r}")
        lump = GameLump(id, flags, version, b"", context=context, family=family)
        if isinstance(value, (bytes, bytearray, memoryview)):
            lump.data = bytes(value)
        else:
            lump.value = value
        if lump.compressed and self.terminator is None:
            self.terminator = "end"
        self.lumps.append(lump)
        return lump

    def set_compressed(self, compressed: bool) -> None:
        """Compress every game lump one by one (as bspzip does), or none."""
        for lump in self.lumps:
            lump.set_compressed(compressed and bool(lump.data))
        any_compressed = any(g.compressed for g in self.lumps)
        self.terminator = "end" if any_compressed else None


class GameLumpCodec:
    """The game lump, its directory in ``layout`` (a branch's own ``dgamelumpheader_t`` and
    ``dgamelump_t``)."""

    mutable = True

    def __init__(self, layout: DirectoryLayout = GAMELUMP_DIRECTORY, family: str = "") -> None:
        self.layout = layout
        self.family = family  # a branch whose sub-lumps hold more (Vindictus's, Zeno Clash's static props)
        self.head_size = fields_struct(layout.header, "<").size
        self.row_size = fields_struct(layout.row, "<").size

    def decode(self, data: memoryview, ctx: LumpContext) -> GameLumps:
        rows, needed, terminator, relative, head = read_directory(data, ctx, self.layout)
        base = 0 if relative else ctx.file_offset
        lumps = []
        for index, (lump_id, flags, version, fileofs, filelen, *extra) in enumerate(
                rows[:-1] if terminator else rows):
            start = fileofs - base
            compressed = bool(flags & GAMELUMP_COMPRESSED)
            if compressed and filelen > 0:
                later = [row[3] - base for row in rows[index + 1 :] if row[3] - base > start]
                end = later[0] if later else len(data)
            else:
                end = start + filelen
            name = id_to_str(lump_id)
            if filelen and (start < needed or end > len(data) or end < start):
                raise TruncatedError(
                    f"game lump {name!r} at {fileofs} ({end - start} bytes) lies outside "
                    f"the {len(data)}-byte game lump",
                    lump=ctx.name, offset=ctx.file_offset + self.head_size + self.row_size * index,
                    needed=end, available=len(data),
                )
            stored = bytes(data[start:end]) if filelen else b""
            content = (
                lzma_decompress(stored, lump=f"{ctx.name}/{name}", offset=ctx.file_offset + start,
                                expected_size=filelen)
                if compressed and stored
                else stored
            )
            if compressed and stored:
                # Offsets inside decompressed data do not exist in the file: say so.
                sub = ctx._replace(
                    name=f"{ctx.name}/{name} (LZMA data at file offset {ctx.file_offset + start}, "
                              f"offsets are positions in the decompressed data)",
                    version=version, file_offset=0,
                )
            else:
                sub = ctx._replace(name=f"{ctx.name}/{name}", version=version, file_offset=ctx.file_offset + start)
            lump = GameLump(name, flags, version, content, stored, context=sub, family=self.family)
            lump.extra = tuple(extra)
            lumps.append(lump)
        games = GameLumps(lumps, relative, terminator)
        games.header_extra = head
        if terminator:
            games.terminator_extra = tuple(rows[-1][5:])
        return games

    def relocated(self, data: memoryview, ctx: LumpContext, file_offset: int) -> bytes | None:
        """The lump moved to ``file_offset``: every offset into it moves with it; the others
        (zero for none, or junk beside an empty sub-lump) stay as they are.  None when the
        offsets count from the lump."""
        rows, needed, _, relative, head = read_directory(data, ctx, self.layout)
        if relative:
            return None
        shift = file_offset - ctx.file_offset
        low, high = ctx.file_offset + needed, ctx.file_offset + len(data)  # the end: a dummy entry's
        moved = [(*row[:3], row[3] + shift if low <= row[3] <= high else row[3], *row[4:]) for row in rows]
        return b"".join((packed_directory(moved, ctx.endian, self.layout, head), data[needed:]))

    def encode(self, value: GameLumps, ctx: LumpContext) -> bytes:
        count = len(value.lumps) + (1 if value.terminator else 0)
        base = 0 if value.relative_offsets else ctx.file_offset
        position = self.head_size + self.row_size * count
        rows: list[DirectoryRow] = []
        padding = (0,) * (len(self.layout.row) - 5)  # extra fields of a lump added by the user
        blobs = []
        for lump in value.lumps:
            plain = lump.encode(ctx.endian)
            stored = lump.stored_bytes(plain)
            extra = lump.extra if len(lump.extra) == len(padding) else padding
            rows.append((str_to_id(lump.id), lump.flags, lump.version, base + position, len(plain), *extra))
            blobs.append(stored)
            position += len(stored)
        if value.terminator:
            last = value.terminator_extra if len(value.terminator_extra) == len(padding) else padding
            rows.append((0, 0, 0, base + position if value.terminator == "end" else 0, 0, *last))
        return packed_directory(rows, ctx.endian, self.layout, value.header_extra) + b"".join(blobs)

    def count(self, value: GameLumps) -> int:
        return len(value)


LAYOUTS = {LumpId.GAME_LUMP: {0: GameLumpCodec()}}
LAYOUTS_DARK_MESSIAH = {LumpId.GAME_LUMP: {0: GameLumpCodec(GAMELUMP_DIRECTORY_DARK_MESSIAH, "dark_messiah")}}
LAYOUTS_VINDICTUS = {LumpId.GAME_LUMP: {0: GameLumpCodec(GAMELUMP_DIRECTORY_VINDICTUS, "vindictus")}}
LAYOUTS_ZENO_CLASH = {LumpId.GAME_LUMP: {0: GameLumpCodec(GAMELUMP_DIRECTORY, "zeno_clash")}}

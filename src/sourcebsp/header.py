"""The BSP header: ident, version, the 64-entry lump directory, map revision.

``dheader_t`` in ``bspfile.h``.  Two directory layouts exist: the standard
``lump_t`` {fileofs, filelen, version, fourCC} and the one Left 4 Dead 2 uses
{version, fileofs, filelen, fourCC}.  Which one a file uses is not written
anywhere, so :func:`read_header` tries both and keeps the one whose entries
are consistent with the file size.
"""
from __future__ import annotations

import operator
import struct
from itertools import chain
from typing import Collection, Iterable, Literal, NamedTuple

from .errors import BspFormatError, NotSourceMapError, TruncatedError, UnsupportedError
from .formats import describe_foreign
from .lump_ids import NUM_LUMPS, lump_name

__all__ = [
    "Endian",
    "HEADER_SIZE",
    "IDENTS",
    "LumpEntry",
    "Header",
    "read_header",
    "header_struct",
]

Endian = Literal["<", ">"]  # the file's byte order: "<" PC, ">" consoles
LumpOrder = Literal["std", "l4d2"]

# The ident as the four bytes at the start of the file, and the byte order it implies.
IDENTS: dict[bytes, Endian] = {b"VBSP": "<", b"PSBV": ">"}

_LUMP_FIELDS: dict[LumpOrder, tuple[str, ...]] = {
    # lump_t: int fileofs; int filelen; int version; char fourCC[4]
    "std": ("fileofs", "filelen", "version", "fourcc"),
    # Left 4 Dead 2's lump_t: int version; int fileofs; int filelen; char fourCC[4]
    "l4d2": ("version", "fileofs", "filelen", "fourcc"),
}


def header_struct(endian: Endian = "<") -> struct.Struct:
    """``dheader_t`` (1036 bytes): ``int ident`` as its four bytes, ``int version``,
    ``lump_t lumps[64]`` as four ints each (in the order ``_LUMP_FIELDS`` gives for the
    directory's layout), ``int mapRevision``.

    ``fourCC`` is read as an integer: for an LZMA-compressed lump it holds the
    uncompressed size, in the file's byte order.  A single record of ints: the
    standard library reads it in one call, where numpy's per-call cost would be
    most of the work.
    """
    return _HEADER_STRUCTS[endian]


_HEADER_STRUCTS = {endian: struct.Struct(f"{endian}4s i {4 * NUM_LUMPS}i i") for endian in ("<", ">")}

HEADER_SIZE = header_struct().size  # 1036


class LumpEntry(NamedTuple):
    """One ``lump_t`` of the directory (a named tuple: 64 are made for every map read)."""

    fileofs: int = 0
    filelen: int = 0
    version: int = 0
    fourcc: int = 0

    @property
    def compressed(self) -> bool:
        """True when the lump is LZMA-compressed (fourCC holds its real size)."""
        return self.fourcc != 0 and self.filelen > 0


class Header:
    """The decoded header.  ``lumps`` always has 64 entries.

    A plain class rather than a dataclass: ``dataclasses`` imports ``inspect``,
    a large part of a process that reads only the entities or the pakfile.
    """

    __slots__ = ("ident", "version", "lumps", "map_revision", "lump_order")

    def __init__(self, ident: bytes = b"VBSP", version: int = 20, lumps: list[LumpEntry] | None = None,
                 map_revision: int = 0, lump_order: LumpOrder = "std") -> None:
        self.ident = ident
        self.version = version
        self.lumps: list[LumpEntry] = [LumpEntry()] * NUM_LUMPS if lumps is None else lumps
        self.map_revision = map_revision
        self.lump_order: LumpOrder = lump_order

    def _fields(self) -> tuple[bytes, int, list[LumpEntry], int, LumpOrder]:
        return self.ident, self.version, self.lumps, self.map_revision, self.lump_order

    def __eq__(self, other: object) -> bool:
        return type(other) is Header and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (f"Header(ident={self.ident!r}, version={self.version!r}, lumps={self.lumps!r}, "
                f"map_revision={self.map_revision!r}, lump_order={self.lump_order!r})")

    @property
    def endian(self) -> Endian:
        return IDENTS[self.ident]

    def to_bytes(self) -> bytes:
        if self.lump_order == "std":
            directory: Iterable[int] = chain.from_iterable(self.lumps)  # LumpEntry's fields are lump_t's, in order
        else:
            in_file_order = operator.attrgetter(*_LUMP_FIELDS[self.lump_order])
            directory = chain.from_iterable(map(in_file_order, self.lumps))
        return header_struct(self.endian).pack(self.ident, self.version, *directory, self.map_revision)

    def with_entry(self, index: int, **changes: int) -> "Header":
        lumps = list(self.lumps)
        lumps[index] = lumps[index]._replace(**changes)
        return Header(self.ident, self.version, lumps, self.map_revision, self.lump_order)


def _inconsistencies(entries: list[LumpEntry], file_size: int) -> int:
    """How many directory fields cannot be right for a file of this size.

    Read in the wrong order, offsets land inside the header and the version
    column fills with offsets or lengths; a truncated file only adds lumps
    running past its end, so the right order still scores lowest.
    """
    bad = 0
    for fileofs, filelen, version, _ in entries:
        if fileofs < 0 or filelen < 0 or (filelen and (fileofs < HEADER_SIZE or fileofs + filelen > file_size)):
            bad += 1
        if not 0 <= version <= 255:  # lump versions are small numbers (a compiler may leave junk in one or two)
            bad += 1
    return bad


def _entries(directory: list[int], order: LumpOrder) -> list[LumpEntry]:
    """The 64 entries of the directory's ints, read in the given layout."""
    rows = zip(*[iter(directory)] * 4)
    if order == "std":
        return list(map(LumpEntry._make, rows))
    return [LumpEntry(fileofs, filelen, version, fourcc) for version, fileofs, filelen, fourcc in rows]


def read_header(data: memoryview | bytes, file_size: int | None = None,
                versions: Collection[int] | None = None, *, past_end_ok: bool = False) -> Header:
    """Read and validate the header at the start of ``data``.

    ``versions`` are the BSP versions to accept (None: any).  Which versions
    sourcebsp reads is a fact of the branch table, not of the directory: the
    container passes :func:`sourcebsp.variants.supported_versions`.
    ``past_end_ok`` accepts lumps that run past the end of a file cut short
    (the container reads the whole ones, and raises TruncatedError for the
    others when read).

    Raises
    ------
    TruncatedError
        The data is shorter than the header, or a lump runs past its end.
    UnsupportedError
        The ident or version is not one sourcebsp reads.
    BspFormatError
        A lump has a negative offset or length, or overlaps the header.
    """
    size = len(data) if file_size is None else file_size
    ident = bytes(data[:4])
    if ident not in IDENTS:
        foreign = describe_foreign(bytes(data[:64]))
        if foreign is not None:
            raise NotSourceMapError(foreign, offset=0)
    if len(data) < 8:
        raise TruncatedError(
            f"file is {len(data)} bytes, shorter than a BSP ident and version",
            offset=0, needed=8, available=len(data),
        )
    ident = bytes(data[:4])
    if ident not in IDENTS:
        raise UnsupportedError(
            f"unknown ident {ident.decode('latin-1') if ident.isalnum() else ident.hex(' ')}: "
            "not a Source BSP file (expected VBSP or PSBV)",
            offset=0,
        )
    endian = IDENTS[ident]
    version: int = struct.unpack_from(endian + "i", data, 4)[0]
    if versions is not None and version not in versions:
        raise UnsupportedError(
            f"BSP version {version} is not supported "
            f"(supported: {', '.join(map(str, sorted(versions)))})",
            offset=4,
        )
    if len(data) < HEADER_SIZE:
        raise TruncatedError(
            f"file is {len(data)} bytes, shorter than the {HEADER_SIZE}-byte header",
            offset=len(data), needed=HEADER_SIZE, available=len(data),
        )
    ident, version, *directory, map_revision = header_struct(endian).unpack_from(data)
    # Try both directory layouts; keep the one that fits the file (ties: standard, so a
    # standard one that fits leaves nothing to compare).
    candidates: list[tuple[int, LumpOrder, list[LumpEntry]]] = []
    orders: tuple[LumpOrder, ...] = ("std", "l4d2")
    for order in orders:
        entries = _entries(directory, order)
        candidates.append((_inconsistencies(entries, size), order, entries))
        if candidates[0][0] == 0:
            break
    candidates.sort(key=lambda c: (c[0], c[1] != "std"))
    _, order, entries = candidates[0]
    header = Header(ident, version, entries, map_revision, order)
    _check_entries(header, size, past_end_ok)
    return header


def _check_entries(header: Header, file_size: int, past_end_ok: bool = False) -> None:
    for index, (fileofs, filelen, _, _) in enumerate(header.lumps):
        if filelen == 0 or (HEADER_SIZE <= fileofs and 0 < filelen and fileofs + filelen <= file_size):
            continue
        name = lump_name(index, header.version)
        if fileofs < 0 or filelen < 0:
            raise BspFormatError(
                f"directory entry has negative offset {fileofs} or length {filelen}",
                lump=name, offset=8 + 16 * index,
            )
        if fileofs < HEADER_SIZE:
            raise BspFormatError(
                f"lump starts at {fileofs}, inside the {HEADER_SIZE}-byte header",
                lump=name, offset=fileofs,
            )
        if past_end_ok:
            continue
        raise TruncatedError(
            f"lump of {filelen} bytes at {fileofs} runs past the end of the {file_size}-byte file",
            lump=name, offset=fileofs, needed=fileofs + filelen, available=file_size,
        )

"""The BSP header: ident, version, the 64-entry lump directory, map revision.

``dheader_t`` in ``bspfile.h``.  Two directory layouts exist: the standard
``lump_t`` {fileofs, filelen, version, fourCC} and the one Left 4 Dead 2 uses
{version, fileofs, filelen, fourCC}.  Which one a file uses is not written
anywhere, so :func:`read_header` tries both and keeps the one whose entries
are consistent with the file size.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace
from typing import Collection, Literal, NamedTuple

import numpy as np

from .errors import BspFormatError, TruncatedError, UnsupportedError
from .lump_ids import NUM_LUMPS, lump_name

__all__ = [
    "Endian",
    "HEADER_SIZE",
    "IDENTS",
    "LumpEntry",
    "Header",
    "read_header",
    "header_dtype",
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


def header_dtype(endian: Endian = "<", order: LumpOrder = "std") -> np.dtype:
    """``dheader_t`` as a numpy dtype (1036 bytes).

    ``fourCC`` is read as an integer: for an LZMA-compressed lump it holds the
    uncompressed size, in the file's byte order.
    """
    # Built once per (byte order, lump_t order): making a dtype costs more than reading a header.
    found = _HEADER_DTYPES.get((endian, order))
    if found is None:
        found = _HEADER_DTYPES[(endian, order)] = _make_header_dtype(endian, order)
    return found


_HEADER_DTYPES: dict[tuple[str, str], np.dtype] = {}


def _make_header_dtype(endian: Endian, order: LumpOrder) -> np.dtype:
    lump_t = np.dtype([(name, endian + "i4") for name in _LUMP_FIELDS[order]])
    return np.dtype(
        [
            ("ident", "S4"),  # int ident ("VBSP" / "PSBV")
            ("version", endian + "i4"),  # int version
            ("lumps", lump_t, (NUM_LUMPS,)),  # lump_t lumps[HEADER_LUMPS]
            ("map_revision", endian + "i4"),  # int mapRevision
        ]
    )


HEADER_SIZE = header_dtype().itemsize  # 1036
SUPPORTED_VERSIONS = frozenset({17, 18, 19, 20, 21, 22, 23, 24, 25, 42})


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


@dataclass
class Header:
    """The decoded header.  ``lumps`` always has 64 entries."""

    ident: bytes = b"VBSP"
    version: int = 20
    lumps: list[LumpEntry] = field(default_factory=lambda: [LumpEntry()] * NUM_LUMPS)
    map_revision: int = 0
    lump_order: LumpOrder = "std"

    @property
    def endian(self) -> Endian:
        return IDENTS[self.ident]

    def to_bytes(self) -> bytes:
        dtype = header_dtype(self.endian, self.lump_order)
        record = np.zeros((), dtype)
        record["ident"] = self.ident
        record["version"] = self.version
        record["map_revision"] = self.map_revision
        if self.lump_order == "std":
            record["lumps"] = self.lumps  # LumpEntry's fields are lump_t's, in its order
        else:
            in_file_order = operator.attrgetter(*_LUMP_FIELDS[self.lump_order])
            record["lumps"] = [in_file_order(entry) for entry in self.lumps]
        return record.tobytes()

    def with_entry(self, index: int, **changes: int) -> "Header":
        lumps = list(self.lumps)
        lumps[index] = lumps[index]._replace(**changes)
        return replace(self, lumps=lumps)


def _inconsistencies(table: np.ndarray, file_size: int) -> int:
    """How many directory fields cannot be right for a file of this size.

    Read in the wrong order, offsets land inside the header and the version
    column fills with offsets or lengths; a truncated file only adds lumps
    running past its end, so the right order still scores lowest.
    """
    ofs = table["fileofs"].astype(np.int64)
    length = table["filelen"].astype(np.int64)
    version = table["version"].astype(np.int64)
    bad = (ofs < 0) | (length < 0)
    nonempty = length > 0
    bad |= nonempty & ((ofs < HEADER_SIZE) | (ofs + length > file_size))
    # Lump versions are small numbers (a compiler may leave junk in one or two).
    implausible = (version < 0) | (version > 255)
    return int(bad.sum() + implausible.sum())


def read_header(data: memoryview | bytes, file_size: int | None = None,
                versions: Collection[int] = SUPPORTED_VERSIONS) -> Header:
    """Read and validate the header at the start of ``data``.

    ``versions`` are the BSP versions to accept (the container passes those
    its variant table knows, registered ones included).

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
    version = int(np.frombuffer(data, endian + "i4", 1, 4)[0])
    if version not in versions:
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
    # Try both directory layouts; keep the one that fits the file (ties: standard, so a
    # standard one that fits leaves nothing to compare).
    candidates: list[tuple[int, LumpOrder, np.void]] = []
    orders: tuple[LumpOrder, ...] = ("std", "l4d2")
    for order in orders:
        record = np.frombuffer(data, header_dtype(endian, order), 1)[0]
        candidates.append((_inconsistencies(record["lumps"], size), order, record))
        if candidates[0][0] == 0:
            break
    candidates.sort(key=lambda c: (c[0], c[1] != "std"))
    _, order, record = candidates[0]
    table = record["lumps"]
    # Whole columns to Python ints at once (a field read per row costs ~1 us each).
    columns = (table[name].tolist() for name in LumpEntry._fields)
    entries = list(map(LumpEntry._make, zip(*columns)))
    header = Header(ident, version, entries, int(record["map_revision"]), order)
    _check_entries(header, size)
    return header


def _check_entries(header: Header, file_size: int) -> None:
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
        raise TruncatedError(
            f"lump of {filelen} bytes at {fileofs} runs past the end of the {file_size}-byte file",
            lump=name, offset=fileofs, needed=fileofs + filelen, available=file_size,
        )

"""Lump patch files: ``mapname_l_N.lmp`` (Valve wiki, "Patching levels with lump files").

A lump file carries one lump of a map outside the ``.bsp``.  It starts with
``lumpfileheader_t`` (bspfile.h, 20 bytes)::

    int lumpOffset;   // where the lump data starts in this file (20)
    int lumpID;       // the lump's directory slot
    int lumpVersion;  // lump_t.version
    int lumpLength;   // lump_t.filelen
    int mapRevision;  // dheader_t.mapRevision of the map it was taken from

followed by the lump data.  After loading a map the engine loads
``<map>_l_0.lmp``, ``<map>_l_1.lmp`` ... and each replaces the lump of its
slot (a later file overrides an earlier one).  The Valve wiki's workflow takes
the patch from a newer compile of the map, so a patch's revision is normally
the map's or greater; :func:`apply_lump_file` refuses an older patch unless
told otherwise.

The data of a game lump (lump 35) in a lump file has its sub-lump offsets
counted from the start of the ``.lmp`` file, which is how :func:`write_lump_file`
writes them and how :func:`apply_lump_file` reads them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ._io import atomic_write
from .codecs.base import Endian, LumpContext, RawLump, fields_dtype, fields_struct, fields_unpack
from .container import BspFile
from .errors import BspError, BspFormatError, TruncatedError
from .lump_ids import NUM_LUMPS, LumpId, lump_name
from .writeplan import encode_lump

__all__ = [
    "LUMPFILE_HEADER",
    "LUMPFILE_HEADER_FIELDS",
    "LumpFile",
    "RevisionMismatchError",
    "lump_file_name",
    "read_lump_file",
    "apply_lump_file",
    "write_lump_file",
]

# lumpfileheader_t, 20 bytes, as (field, struct code) pairs: read and written with struct, so
# that extracting or applying a lump file of entities or files needs no numpy.
LUMPFILE_HEADER_FIELDS = (
    ("lump_offset", "i"),  # int lumpOffset
    ("lump_id", "i"),  # int lumpID
    ("lump_version", "i"),  # int lumpVersion
    ("lump_length", "i"),  # int lumpLength
    ("map_revision", "i"),  # int mapRevision
)
HEADER_SIZE = fields_struct(LUMPFILE_HEADER_FIELDS).size

if TYPE_CHECKING:
    import numpy as np

    LUMPFILE_HEADER: np.dtype  # the same record for numpy, made on first use


def __getattr__(name: str) -> Any:
    if name != "LUMPFILE_HEADER":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    dtype = globals()[name] = fields_dtype(LUMPFILE_HEADER_FIELDS)
    return dtype


class RevisionMismatchError(BspError):
    """A lump file made for an older revision of the map than the one it is applied to."""


class LumpFile(NamedTuple):
    """A lump file's content: ``lump, version, map_revision, data = read_lump_file(path)``."""

    lump: LumpId
    version: int
    map_revision: int
    data: bytes

    @property
    def lump_offset(self) -> int:
        """Where the data starts in a file written by :func:`write_lump_file`."""
        return HEADER_SIZE


def lump_file_name(map_path: str | os.PathLike[str], number: int = 0) -> Path:
    """``<map>_l_<number>.lmp`` next to the map (the name the engine looks for)."""
    path = Path(map_path)
    return path.with_name(f"{path.stem}_l_{number}.lmp")


def read_lump_file(path: str | os.PathLike[str]) -> LumpFile:
    """Read a ``.lmp`` lump file.

    The header is little-endian on PC; a header that only makes sense read
    big-endian (a console patch) is read that way.

    Raises
    ------
    TruncatedError
        The file is shorter than its header or than the lump it declares.
    BspFormatError
        The header is not a lump file header (slot outside 0-63, offset inside
        the header, negative length).
    """
    path = Path(path)
    buffer = path.read_bytes()
    if len(buffer) < HEADER_SIZE:
        raise TruncatedError(f"{path.name}: {len(buffer)} bytes, shorter than the {HEADER_SIZE}-byte "
                             f"lumpfileheader_t", offset=0, needed=HEADER_SIZE, available=len(buffer))
    endians: tuple[Endian, Endian] = ("<", ">")
    for endian in endians:
        header = fields_unpack(LUMPFILE_HEADER_FIELDS, buffer, endian=endian)
        if 0 <= header["lump_id"] < NUM_LUMPS and HEADER_SIZE <= header["lump_offset"] \
                and header["lump_length"] >= 0:
            break
    else:
        header = fields_unpack(LUMPFILE_HEADER_FIELDS, buffer)
        raise BspFormatError(
            f"{path.name}: not a lump file header (lumpOffset {header['lump_offset']}, lumpID "
            f"{header['lump_id']}, lumpLength {header['lump_length']})", offset=0,
        )
    start, length = header["lump_offset"], header["lump_length"]
    if start + length > len(buffer):
        raise TruncatedError(
            f"{path.name}: the {length}-byte lump at {start} runs past the end of the "
            f"{len(buffer)}-byte file", lump=lump_name(header["lump_id"]), offset=start,
            needed=start + length, available=len(buffer),
        )
    return LumpFile(LumpId(header["lump_id"]), header["lump_version"],
                    header["map_revision"], buffer[start : start + length])


def apply_lump_file(bsp: BspFile, lump_file: LumpFile | str | os.PathLike[str], *,
                    check_revision: bool = True) -> Any:
    """Replace a lump of ``bsp`` with the content of a lump file, as the engine does.

    The lump takes the lump file's data and version; it is decoded with the
    codec for that version (a :class:`~sourcebsp.RawLump` if there is none)
    and written when the map is saved.  Returns the new decoded value.

    Parameters
    ----------
    lump_file
        A :class:`LumpFile`, or the path of a ``.lmp`` file.
    check_revision
        Refuse a lump file whose map revision is older than the map's.

    Raises
    ------
    RevisionMismatchError
        The lump file was made for an older revision of the map.
    BspFormatError
        The lump data does not decode with the codec for its version.
    """
    if not isinstance(lump_file, LumpFile):
        lump_file = read_lump_file(lump_file)
    index = int(lump_file.lump)
    name = lump_name(index, bsp.version)
    if check_revision and lump_file.map_revision < bsp.map_revision:
        raise RevisionMismatchError(
            f"the lump file was made for map revision {lump_file.map_revision}, older than this "
            f"map's revision {bsp.map_revision} (pass check_revision=False to apply it anyway)",
            lump=name,
        )
    bsp.header = bsp.header.with_entry(index, version=lump_file.version)
    codec = bsp.codec(index)
    if codec is None:
        value: Any = RawLump(lump_file.data, f"from a lump file; no layout known for lump version "
                                             f"{lump_file.version} in variant {bsp.variant.name}")
    else:
        # Offsets inside the data (game lumps) and in error messages are those of the .lmp file.
        ctx = LumpContext(lump=index, name=name, version=lump_file.version, bsp_version=bsp.version,
                          endian=bsp.endian, file_offset=lump_file.lump_offset)
        value = codec.decode(memoryview(lump_file.data), ctx)
    bsp.set_lump(index, value)
    return value


def write_lump_file(bsp: BspFile, lump: LumpId | int | str, path: str | os.PathLike[str], *,
                    map_revision: int | None = None, overwrite: bool = False) -> Path:
    """Write one lump of ``bsp`` (as it is now, edits included) to a ``.lmp`` file.

    Parameters
    ----------
    lump
        The lump: a :class:`~sourcebsp.LumpId`, its index or its name.
    path
        The file to write, normally :func:`lump_file_name` of the map.
    map_revision
        The revision to record; by default the map's own.  A patch for an
        already shipped map takes the revision of the newer compile.
    overwrite
        Allow replacing an existing file.

    The data is written uncompressed (a lump file has no field for an
    LZMA-compressed lump's real size), in the map's byte order.
    """
    index = _index(lump)
    target = Path(path)
    if target.exists() and not overwrite:
        raise BspError(f"refusing to overwrite {target} (pass overwrite=True)")
    data = _lump_data(bsp, index)
    header = fields_struct(LUMPFILE_HEADER_FIELDS, bsp.endian).pack(
        HEADER_SIZE, index, bsp.entry(index).version, len(data),
        bsp.map_revision if map_revision is None else map_revision)
    return atomic_write(target, header, data)


def _index(lump: LumpId | int | str) -> int:
    if isinstance(lump, str):
        return int(LumpId[lump.upper()])
    return int(LumpId(int(lump)))


def _lump_data(bsp: BspFile, index: int) -> bytes:
    """The lump's uncompressed bytes as they would be saved, offsets counted in the .lmp."""
    if not bsp.is_loaded(index) and index != LumpId.GAME_LUMP:
        return bytes(bsp.lump_bytes(index))
    return encode_lump(bsp, index, bsp.get_lump(index), HEADER_SIZE)

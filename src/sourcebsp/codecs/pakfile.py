"""The pakfile (lump 40): a zip archive of files the map carries with it.

``public/zip_uncompressed.h``: ``ZIP_LocalFileHeader``, ``ZIP_FileHeader`` (one
per file in the central directory) and ``ZIP_EndOfCentralDirRecord``, always
little-endian, also in big-endian console maps.  bspzip (``zip_utils.cpp``)
stores every file uncompressed, with zero dates, "version needed" 10, "made
by" 20, no data descriptors, and ends the archive with a 32-byte comment
``"XZP1 0"`` (XZip format 1, no alignment).  CS:GO-branch games and later TF2
also read LZMA-compressed entries (zip method 14).

Two quirks are handled here:

* **XZP2** (Xbox 360 maps, comment ``"XZP2 <alignment>"``): each central
  directory entry states the length of the local header's padding in its
  ``extraFieldLength`` but the padding bytes are not repeated in the central
  directory -- the engine skips only the fixed header and the name.  The
  standard ``zipfile`` module would swallow the following entries as "extra
  data"; the directory is read as the engine steps through it, and rebuilt
  without those lengths (in a private copy) before ``zipfile`` reads a file.
* **File-relative offsets** (some old bspzip builds): the zip offsets count
  from the start of the BSP file, not of the lump.  ``zipfile`` copes (it
  measures the shift from where the end record lies); :attr:`Pakfile.offset_base`
  tells which convention a pakfile uses, and an untouched pakfile that moves
  in the file has its offsets moved with it.

The central directory is read by :mod:`.zip_directory`, not by ``zipfile``:
listing and counting the files is what most uses need, and ``zipfile`` with
what it imports (``pathlib``, ``shutil``, ``bz2``) takes longer to import
than a whole ``info`` of a large map spends reading.  ``zipfile`` opens the
archive when a file is first read or the archive is written.

An untouched pakfile encodes to its original bytes.  Once changed it is
written again with ``zipfile``: lump-relative offsets, the original archive
comment, no encryption, no zip64 (the engine reads neither).

Untrusted input: reading and extracting are held to :class:`PakLimits`
(size per file, per call, compression ratio), checked from the zip
directory before anything is decompressed; encrypted entries are refused;
extraction is all or nothing and replaces no file unless asked.
"""
from __future__ import annotations

import fnmatch
import io
import os
import re
import struct
from typing import TYPE_CHECKING, Iterable, Iterator, Literal, NamedTuple, Union

from ..errors import BspError, BspFormatError, LimitExceededError, UnsupportedError
from ..lump_ids import LumpId
from .base import LumpContext
from .zip_directory import (
    LOCAL_FILE_HEADER_SIZE,
    MAX_COMMENT,
    BadDirectory,
    EndRecord,
    Member,
    counts_from_file_start,
    end_counts_from_file_start,
    end_record,
    read_members,
    shift_offsets,
    xzp2_as_standard_zip,
)

if TYPE_CHECKING:
    import zipfile
    from pathlib import Path

__all__ = [
    "Pakfile",
    "PakEntry",
    "PakLimits",
    "counts_from_file_start",
    "PakfileCodec",
    "XZIP_COMMENT",
    "ZIP_STORED",
    "ZIP_DEFLATED",
    "ZIP_BZIP2",
    "ZIP_LZMA",
    "LAYOUTS",
]

# Zip compression methods (zipfile.ZIP_STORED and so on, without importing zipfile).
ZIP_STORED = 0  # what bspzip writes and every Source engine reads
ZIP_DEFLATED = 8  # named in listings; the engine reads only stored and LZMA entries (lint rule SB204)
ZIP_BZIP2 = 12
ZIP_LZMA = 14  # read by CS:GO-branch engines and later TF2
_COMPRESSION_NAMES = {ZIP_STORED: "stored", ZIP_DEFLATED: "deflated", ZIP_BZIP2: "bzip2", ZIP_LZMA: "lzma"}
Compression = Union[int, Literal["stored", "lzma"]]

# MakeXZipCommentString: "XZP%c %d" (format 1 = compatible, alignment 0) in a zeroed 32-byte buffer.
XZIP_COMMENT = b"XZP1 0".ljust(32, b"\0")
# bspzip writes lastModifiedTime = lastModifiedDate = 0, which zipfile reads as this.
_NO_DATE = (1980, 0, 0, 0, 0, 0)

# ---- names -------------------------------------------------------------------------------------
_DRIVE = r"[A-Za-z]:"  # compiled when a name is first checked (``re`` keeps it)


def _unsafe_reason(name: str) -> str | None:
    """Why ``name`` may not be a path inside a folder (None when it may)."""
    if "\0" in name:
        return "it contains a NUL character"
    posix = name.replace("\\", "/")
    if posix.startswith("/") or re.match(_DRIVE, posix):
        return "it is an absolute path"
    parts = [p for p in posix.split("/") if p not in ("", ".")]
    if ".." in parts:
        return "it contains a '..' component"
    if not parts:
        return "it is empty"
    return None


def _archive_name(name: str) -> str:
    """A name given by the user for a file in the pakfile, checked; forward slashes."""
    if not isinstance(name, str):
        raise TypeError(f"an archive name must be a str, not {type(name).__name__}")
    reason = _unsafe_reason(name)
    if reason is not None:
        raise ValueError(f"bad archive name {name!r}: {reason}")
    return name.replace("\\", "/")


def _key(name: str) -> str:
    # The engine lowercases every name it reads from the pakfile (Q_strlower).
    return name.replace("\\", "/").lower()


def _compression(value: Compression | None) -> int:
    if value is None or value == "stored":
        return ZIP_STORED
    if value == "lzma":
        return ZIP_LZMA
    if value in (ZIP_STORED, ZIP_LZMA):
        return int(value)
    raise ValueError(f"compression must be ZIP_STORED / 'stored' or ZIP_LZMA / 'lzma', not {value!r}")


# ---- limits -------------------------------------------------------------------------------------
_MIB = 1 << 20


class PakLimits(NamedTuple):
    """How much a pakfile may expand to when its files are read or extracted.

    Sizes are checked from the zip directory before anything is decompressed
    (and the decompressors never produce more than the size stated there).
    Exceeding one raises :class:`~sourcebsp.errors.LimitExceededError` naming
    the limit.  Pass other limits as ``limits=`` to :meth:`Pakfile.read`,
    :meth:`Pakfile.iter_files` and :meth:`Pakfile.extract_all`, or set
    :attr:`Pakfile.limits`.

    Attributes
    ----------
    max_entry_size : int
        Bytes one file may have once decompressed (default 256 MiB; the
        largest files maps carry, textures and sounds, are a few MiB).
    max_total_size : int
        Bytes all the files read by one call may have together (default 1 GiB).
    max_ratio : float
        Decompressed size over stored size of one compressed file of more
        than ``ratio_exempt`` bytes (default 1000: game content compresses a
        few times, zip bombs a thousand times and more).
    ratio_exempt : int
        Files up to this size are not held to ``max_ratio`` (default 1 MiB:
        a blank texture of 76 KB compresses 600 times).
    max_dictionary_size : int
        The LZMA dictionary an LZMA entry's properties may ask for (default
        128 MiB; the decoder allocates it before reading a byte).
    """

    max_entry_size: int = 256 * _MIB
    max_total_size: int = 1024 * _MIB
    max_ratio: float = 1000.0
    ratio_exempt: int = _MIB
    max_dictionary_size: int = 128 * _MIB


# ---- the view ----------------------------------------------------------------------------------
class PakEntry(NamedTuple):
    """One file of the pakfile, as listed."""

    name: str
    size: int
    #: Stored size; None for a file added since the pakfile was read (known once saved).
    compressed_size: int | None
    compress_type: int
    crc: int | None

    @property
    def compression(self) -> str:
        return _COMPRESSION_NAMES.get(self.compress_type, f"method {self.compress_type}")


class _Slot:
    """A file of the pakfile: its entry in the archive as read, or new contents."""

    __slots__ = ("name", "info", "data", "compress_type", "date_time")

    def __init__(self, name: str, info: Member | None, data: bytes | None, compress_type: int,
                 date_time: tuple[int, int, int, int, int, int]) -> None:
        self.name = name
        self.info = info  # the entry of the archive as read
        self.data = data  # new contents; None while the original ones stand
        self.compress_type = compress_type
        self.date_time = date_time


class Pakfile:
    """The files of a pakfile lump: list, read, extract, add, replace, remove.

    A view over the lump's bytes, read with the standard :mod:`zipfile`
    module.  Names are matched as the engine matches them: without regard to
    case, ``\\`` and ``/`` alike.  The order of files is kept; added files go
    last.

    Parameters
    ----------
    data
        The lump's bytes (empty for a map without a pakfile).
    lump, offset
        The lump's name and absolute file offset, for error messages.

    Raises
    ------
    BspFormatError
        The bytes are not a zip archive (no end record, a broken central
        directory, truncated data).

    Examples
    --------
    >>> pak = bsp.pakfile                                  # doctest: +SKIP
    >>> pak.names()[:2]                                     # doctest: +SKIP
    ['materials/maps/x/c0_0_0.vmt', ...]
    >>> pak.add("scripts/soundscapes_x.txt", b"...")        # doctest: +SKIP
    >>> bsp.save("x_packed.bsp")                            # doctest: +SKIP
    """

    def __init__(self, data: bytes | bytearray | memoryview = b"", *, lump: str = "PAKFILE",
                 offset: int = 0) -> None:
        self.lump = lump
        self.offset = offset
        self._original = bytes(data)
        self._modified = False
        self._comment = XZIP_COMMENT
        self._zip: zipfile.ZipFile | None = None  # opened when a file is first read
        self._slots: list[_Slot] = []
        self._index: tuple[dict[str, int], dict[str, int]] | None = None
        self._end: EndRecord | None = None
        #: ``"lump"`` when zip offsets count from the lump's start (what the engine
        #: reads), ``"file"`` when from the BSP file's start (old bspzip builds).
        self.offset_base: Literal["lump", "file"] = "lump"
        #: The limits :meth:`read`, :meth:`iter_files` and :meth:`extract_all` apply when given none.
        self.limits = PakLimits()
        if self._original:
            self._parse()

    # ---- reading ----------------------------------------------------------------------------
    def _error(self, message: str, offset: int | None = None) -> BspFormatError:
        return BspFormatError(message, lump=self.lump, offset=self.offset if offset is None else offset)

    def _parse(self) -> None:
        data = self._original
        end = end_record(data)
        if end is None:
            raise self._error(
                f"not a zip archive: no end-of-central-directory record (PK\\5\\6) in the "
                f"{len(data)}-byte pakfile (truncated or not a zip)"
            )
        self._end = end
        self._comment = end.comment
        if end_counts_from_file_start(end, self.offset):
            self.offset_base = "file"
        try:
            members = read_members(data, end)
        except NotImplementedError as exc:  # a zip feature zipfile lacks (a "version needed" it does not know)
            raise UnsupportedError(f"unsupported zip archive: {exc}", lump=self.lump, offset=self.offset) from exc
        except ValueError as exc:  # BadDirectory, or a name that is not the UTF-8 its flag says
            where = exc.position if isinstance(exc, BadDirectory) else end.position - end.cd_size
            raise self._error(f"bad zip data: {exc}", self.offset + where) from exc
        self._slots = [_Slot(m.name, m, None, m.compress_type, m.date_time) for m in members]

    def _archive(self) -> zipfile.ZipFile:
        """The archive opened with ``zipfile`` (to read files), once."""
        import zipfile  # a seam: listing the pakfile reads its directory without zipfile

        if self._zip is None:
            assert self._end is not None  # only files read from an archive are read through it
            end = self._end
            try:
                readable = self._original if end.compatible else xzp2_as_standard_zip(self._original, end)
                archive = zipfile.ZipFile(io.BytesIO(readable))
            except NotImplementedError as exc:
                raise UnsupportedError(f"unsupported zip archive: {exc}", lump=self.lump,
                                       offset=self.offset) from exc
            except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError, struct.error) as exc:
                raise self._error(f"bad zip data: {exc}") from exc
            if len(archive.infolist()) != end.num_entries:
                raise self._error(f"bad zip data: the end record lists {end.num_entries} files, zipfile reads "
                                  f"{len(archive.infolist())}", self.offset + end.position)
            self._zip = archive
        return self._zip

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, *, lump: str = "PAKFILE",
                   offset: int = 0) -> "Pakfile":
        """The pakfile held in ``data`` (the lump's bytes)."""
        return cls(data, lump=lump, offset=offset)

    def __repr__(self) -> str:
        state = ", modified" if self._modified else ""
        return f"<Pakfile {len(self._slots)} files{state}>"

    def __len__(self) -> int:
        return len(self._slots)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def has_file(self, name: str) -> bool:
        """Whether a file of that name (any case) is in the pakfile."""
        return name in self

    @property
    def modified(self) -> bool:
        """Whether anything changed since the pakfile was read."""
        return self._modified

    @property
    def xzip_format(self) -> int:
        """XZip format of the archive: 1 (PC, standard zip) or 2 (Xbox 360, aligned)."""
        return 1 if self._end is None or self._end.compatible else 2

    @property
    def comment(self) -> bytes:
        """The archive comment (bspzip's is ``XZIP_COMMENT``)."""
        return self._comment

    @comment.setter
    def comment(self, value: bytes) -> None:
        value = bytes(value)
        if len(value) > MAX_COMMENT:
            raise ValueError(f"a zip comment holds at most {MAX_COMMENT} bytes, not {len(value)}")
        self._comment = value
        self._modified = True

    def names(self) -> list[str]:
        """The names of the files, in archive order."""
        return [s.name for s in self._slots]

    def entries(self) -> list[PakEntry]:
        """Name, size, stored size and compression of every file, in archive order."""
        return [self._entry(s) for s in self._slots]

    def get_entry(self, name: str) -> PakEntry:
        """The listing of one file; KeyError when there is none of that name."""
        return self._entry(self._slot(name))

    @staticmethod
    def _entry(slot: _Slot) -> PakEntry:
        if slot.data is not None:
            import zlib  # a seam, as zipfile: only for a file added since the map was read

            stored = len(slot.data) if slot.compress_type == ZIP_STORED else None
            return PakEntry(slot.name, len(slot.data), stored, slot.compress_type, zlib.crc32(slot.data))
        assert slot.info is not None  # a slot holds either new data or an original entry
        info = slot.info
        return PakEntry(slot.name, info.file_size, info.compress_size, info.compress_type, info.crc)

    def _lookup(self) -> tuple[dict[str, int], dict[str, int]]:
        """{name with forward slashes: index}, {the same lowercased: index}; the last file wins."""
        if self._index is None:
            exact: dict[str, int] = {}
            folded: dict[str, int] = {}
            for index, slot in enumerate(self._slots):
                posix = slot.name.replace("\\", "/")
                exact[posix] = index
                folded[posix.lower()] = index
            self._index = (exact, folded)
        return self._index

    def _find(self, name: str) -> int | None:
        """Index of the file called ``name``: an exact match first, then any case."""
        exact, folded = self._lookup()
        posix = name.replace("\\", "/")
        found = exact.get(posix)
        return folded.get(posix.lower()) if found is None else found

    def _slot(self, name: str) -> _Slot:
        index = self._find(name)
        if index is None:
            raise KeyError(f"no file named {name!r} in the pakfile")
        return self._slots[index]

    def read(self, name: str, *, limits: PakLimits | None = None) -> bytes:
        """The contents of one file (decompressed, CRC checked), within ``limits``."""
        slot = self._slot(name)
        self._check_limits([slot], limits)
        return self._contents(slot)

    def _where(self, slot: _Slot) -> int:
        return self.offset + slot.info.header_offset if slot.info is not None else self.offset

    def _check_limits(self, slots: list[_Slot], limits: PakLimits | None) -> None:
        """Refuse, before decompressing anything, files that would break ``limits`` or cannot be read."""
        limits = self.limits if limits is None else limits
        total = 0
        for slot in slots:
            info = slot.info
            if slot.data is not None or info is None:
                continue
            if info.flag_bits & 0x1:
                raise UnsupportedError(f"pakfile entry {slot.name!r} is encrypted (zip flag bit 0); "
                                       f"no Source engine reads encrypted entries", lump=self.lump,
                                       offset=self._where(slot))
            size, stored = int(info.file_size), max(int(info.compress_size), 1)
            total += size
            dictionary = self._lzma_dictionary(info) if info.compress_type == ZIP_LZMA else 0
            for limit, needed, allowed, what in (
                ("max_dictionary_size", dictionary, limits.max_dictionary_size,
                 f"pakfile entry {slot.name!r} asks for an LZMA dictionary of {dictionary} bytes, over the limit"),
                ("max_entry_size", size, limits.max_entry_size,
                 f"pakfile entry {slot.name!r} decompresses to {size} bytes, over the limit per file"),
                ("max_ratio", size if size > limits.ratio_exempt else 0, int(limits.max_ratio * stored),
                 f"pakfile entry {slot.name!r} expands {size / stored:.0f} times, over the limit of "
                 f"{limits.max_ratio:g}"),
                ("max_total_size", total, limits.max_total_size,
                 f"the pakfile entries read together (up to {slot.name!r}) decompress to {total} bytes, "
                 f"over the limit"),
            ):
                if needed > allowed:
                    raise LimitExceededError(
                        f"{what} ({allowed} bytes); pass limits=PakLimits({limit}=...) (or set pakfile.limits) "
                        f"to allow it", limit=limit, lump=self.lump, offset=self._where(slot), needed=needed,
                        available=allowed)

    def _lzma_dictionary(self, info: Member) -> int:
        """The dictionary size an LZMA entry's properties ask for (0 when they cannot be read).

        The entry's data starts with the LZMA SDK version (2 bytes), the
        properties' size (2 bytes) and the properties: the lc/lp/pb byte and
        the dictionary size (4 bytes, little-endian).
        """
        data, start = self._original, info.header_offset
        if start < 0 or start + LOCAL_FILE_HEADER_SIZE > len(data):
            return 0  # reading the entry fails in its own words
        name_length, extra_length = struct.unpack_from("<HH", data, start + 26)
        head = data[start + LOCAL_FILE_HEADER_SIZE + name_length + extra_length:][:9]
        return struct.unpack_from("<I", head, 5)[0] if len(head) == 9 else 0

    def _contents(self, slot: _Slot) -> bytes:
        if slot.data is not None:
            return slot.data
        # Seams, as zipfile in _archive: only reading a file's contents loads them
        import lzma
        import zipfile
        import zlib

        assert slot.info is not None
        where = self._where(slot)
        archive = self._archive()
        try:
            return archive.read(archive.infolist()[slot.info.ordinal])
        except NotImplementedError as exc:
            raise UnsupportedError(f"pakfile entry {slot.name!r}: {exc}", lump=self.lump, offset=where) from exc
        except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, ValueError, OSError, RuntimeError,
                struct.error) as exc:
            raise self._error(f"bad zip data in pakfile entry {slot.name!r}: {exc}", where) from exc

    def iter_files(self, *, limits: PakLimits | None = None) -> Iterator[tuple[str, bytes]]:
        """(name, contents) of every file, in archive order, within ``limits`` (checked first)."""
        self._check_limits(self._slots, limits)
        for slot in self._slots:
            yield slot.name, self._contents(slot)

    def _select(self, names: Iterable[str] | None, patterns: Iterable[str] | None) -> list[_Slot]:
        if names is None and patterns is None:
            return list(self._slots)
        chosen: set[int] = set()
        for name in names or ():
            index = self._find(name)
            if index is None:
                raise KeyError(f"no file named {name!r} in the pakfile")
            chosen.add(index)
        folded = [p.replace("\\", "/").lower() for p in patterns or ()]
        for index, slot in enumerate(self._slots):
            if any(fnmatch.fnmatchcase(_key(slot.name), p) for p in folded):
                chosen.add(index)
        return [self._slots[i] for i in sorted(chosen)]

    def extract_all(self, folder: str | os.PathLike[str], *, names: Iterable[str] | None = None,
                    patterns: Iterable[str] | None = None, overwrite: bool = False,
                    limits: PakLimits | None = None) -> list[Path]:
        """Write the files (all, or those chosen) under ``folder``; returns the paths written.

        Nothing is written unless everything can be: every name, every
        limit and (unless ``overwrite``) every target path is checked first,
        the files are written into a temporary folder beside ``folder``, and
        they are moved into place only once all of them were read.  A
        failure leaves ``folder`` as it was.

        Parameters
        ----------
        folder
            Where to extract (created when missing).
        names, patterns
            Extract only these files (names matched as the engine matches
            them) and those matching these globs (``"materials/*.vmt"``, no
            regard to case); all files when both are None.
        overwrite
            Replace files that exist already; otherwise they make it fail.
        limits
            Size limits (default :attr:`limits`).

        Raises
        ------
        BspFormatError
            A name is an absolute path or climbs out of ``folder``.
        BspError
            A file exists and ``overwrite`` is False.
        LimitExceededError
            The files are larger than ``limits`` allow.
        """
        import shutil  # seams, as zipfile in _archive: reading a map needs none of them
        import tempfile
        from pathlib import Path

        root = Path(folder)
        resolved_root = root.resolve()
        slots = self._select(names, patterns)
        targets = []
        for slot in slots:
            reason = _unsafe_reason(slot.name)
            parts = [p for p in slot.name.replace("\\", "/").split("/") if p not in ("", ".")]
            target = root.joinpath(*parts) if reason is None else root
            if reason is None and not target.resolve().is_relative_to(resolved_root):
                reason = "it leads outside the folder (through a link)"
            if reason is not None:
                raise self._error(f"refusing to extract pakfile entry {slot.name!r} into {root}: {reason}",
                                  self._where(slot))
            targets.append((parts, target))
        if not overwrite:
            for slot, (_, target) in zip(slots, targets):
                if target.exists() and not (slot.name.endswith(("/", "\\")) and target.is_dir()):
                    raise BspError(f"refusing to overwrite {target} with pakfile entry {slot.name!r} "
                                   f"(pass overwrite=True to replace existing files)",
                                   lump=self.lump, offset=self._where(slot))
        self._check_limits(slots, limits)
        # The temporary folder goes beside the target (the same file system, so moves are renames),
        # in its nearest existing ancestor so that a failure creates nothing.
        anchor = root.absolute().parent
        while not anchor.is_dir():
            anchor = anchor.parent
        staging = Path(tempfile.mkdtemp(prefix=f".{root.name or 'pak'}.extract-", dir=anchor))
        try:
            staged = []
            for slot, (parts, _) in zip(slots, targets):
                if slot.name.endswith(("/", "\\")):
                    continue
                path = staging.joinpath(*parts)
                contents = self._contents(slot)
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(contents)
                except (FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
                    # Two entries that cannot both be files: "a" and "a/b".
                    raise self._error(f"cannot extract pakfile entry {slot.name!r}: it clashes with another "
                                      f"entry ({exc.strerror})", self._where(slot)) from exc
                staged.append((path, parts))
            written = []
            for slot, (_, target) in zip(slots, targets):
                if slot.name.endswith(("/", "\\")):
                    target.mkdir(parents=True, exist_ok=True)
            for path, parts in staged:
                target = root.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
                written.append(target)
            return written
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    # ---- editing ----------------------------------------------------------------------------
    def add(self, name: str, data: bytes | bytearray | memoryview, *,
            compression: Compression | None = None) -> None:
        """Add a file, or replace the file of that name (any case) where it stands.

        ``compression``: ``ZIP_STORED`` (default, as bspzip; every engine
        reads it) or ``ZIP_LZMA`` (CS:GO-branch engines and later TF2 only).
        """
        posix = _archive_name(name)
        kind = _compression(compression)
        contents = bytes(data)
        index = self._find(posix)
        slot = _Slot(posix, None, contents, kind, _NO_DATE)
        if index is None:
            self._slots.append(slot)
            exact, folded = self._lookup()
            exact[posix] = folded[posix.lower()] = len(self._slots) - 1
        else:
            self._slots[index] = slot
            # Older duplicates of the name would shadow or confuse the new file.
            key = _key(posix)
            self._slots = [s for i, s in enumerate(self._slots) if i == index or _key(s.name) != key]
            self._index = None
        self._modified = True

    def add_file(self, name: str, path: str | os.PathLike[str], *,
                 compression: Compression | None = None) -> None:
        """Add (or replace) the file at ``path`` under the archive name ``name``."""
        with open(path, "rb") as handle:
            self.add(name, handle.read(), compression=compression)

    def remove(self, name: str) -> None:
        """Remove the file of that name (every copy, any case); KeyError when there is none."""
        if self._find(name) is None:
            raise KeyError(f"no file named {name!r} in the pakfile")
        key = _key(name)
        self._slots = [s for s in self._slots if _key(s.name) != key]
        self._index = None
        self._modified = True

    def set_compression(self, compression: Compression) -> None:
        """Store every file with ``compression`` (``ZIP_STORED`` or ``ZIP_LZMA``) from now on."""
        kind = _compression(compression)
        self._check_limits([s for s in self._slots if s.compress_type != kind], None)
        for slot in self._slots:
            if slot.compress_type != kind:
                slot.data = self._contents(slot)
                slot.compress_type = kind
                self._modified = True

    # ---- writing ----------------------------------------------------------------------------
    def to_bytes(self, file_offset: int | None = None) -> bytes:
        """The lump's bytes.

        Unchanged: the original bytes (with file-relative offsets moved when
        ``file_offset``, the lump's new place in the file, differs).  Changed:
        a new archive (see the module notes).
        """
        if not self._modified:
            if self.offset_base == "file" and file_offset is not None and file_offset != self.offset \
                    and self._end is not None:
                return shift_offsets(self._original, self._end, file_offset - self.offset)
            return self._original
        if self.xzip_format == 2:
            raise UnsupportedError(
                "writing a changed XZP2 (Xbox 360) pakfile is not supported: its aligned layout and "
                "preload section are not rebuilt",
                lump=self.lump, offset=self.offset,
            )
        import zipfile  # a seam, as in _archive: only rebuilding the archive writes with it

        self._check_limits(self._slots, None)  # every original file is read again to be rewritten
        out = io.BytesIO()
        try:
            with zipfile.ZipFile(out, "w", allowZip64=False) as archive:
                for slot in self._slots:
                    info = zipfile.ZipInfo(slot.name, date_time=slot.date_time)
                    # As bspzip: "made by" 20 on MS-DOS, "needed" 10, no attributes.
                    info.create_system = 0
                    info.create_version = 20
                    info.extract_version = 10
                    info.external_attr = 0
                    info.compress_type = slot.compress_type
                    archive.writestr(info, self._contents(slot))
                archive.comment = self._comment
        except zipfile.LargeZipFile as exc:
            raise BspError(f"the pakfile is too large for a zip without zip64: {exc}", lump=self.lump) from exc
        return out.getvalue()


class PakfileCodec:
    """Lump 40 as a :class:`Pakfile`."""

    mutable = True

    def decode(self, data: memoryview, ctx: LumpContext) -> Pakfile:
        return Pakfile(data, lump=ctx.name, offset=ctx.file_offset)

    def relocated(self, data: memoryview, ctx: LumpContext, file_offset: int) -> bytes | None:
        """Some old pakfiles count zip offsets from the file start: written again at
        ``file_offset``.  None for the others, whose offsets count from the lump."""
        if not counts_from_file_start(data, ctx.file_offset):
            return None
        return self.encode(self.decode(data, ctx), ctx._replace(file_offset=file_offset))

    def encode(self, value: Pakfile, ctx: LumpContext) -> bytes:
        return value.to_bytes(file_offset=ctx.file_offset)

    def count(self, value: Pakfile) -> int:
        return len(value)


LAYOUTS = {LumpId.PAKFILE: {None: PakfileCodec()}}

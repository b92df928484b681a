"""``BspFile``: the header plus lazily decoded lumps, read and written.

Constructors do no I/O.  :meth:`BspFile.open` memory-maps a file,
:meth:`BspFile.from_bytes` wraps a buffer.  A lump is sliced out of the
buffer and decoded (decompressing LZMA first, within the file's
:class:`~sourcebsp.compression.Limits`) on first access.

Writing builds a plan (:mod:`sourcebsp.writeplan`) and never changes the map
object: a lump is written again only when its decoded value encodes to
something else than the file holds, so an in-place edit of any decoded value
is saved, and an unedited map comes out byte-identical.
"""
from __future__ import annotations

import errno
import mmap
import os
import stat
import warnings
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterator


from .codecs.base import Codec, LumpContext, RawLump
from .codecs.gamelump_directory import static_prop_record, sub_lump_versions
from .compression import Decompressor, Limits, bzip2_decompress, is_bzip2
from .encryption import KEY_END, NEW_FILE_KEY, decrypt, encrypt, find_key
from .errors import BspError, ClosedMapError, TruncatedError, UnsupportedError
from .header import HEADER_SIZE, Endian, Header, LumpEntry, read_header
from .lump_ids import NUM_LUMPS, LumpId, lump_name
from .lumpaccess import TypedLumps
from .mapqueries import MapQueries
from .protocols import LumpAttr, LumpKey
from .detection import detect, refine, refine_by_entities, refine_by_lumps, refine_by_sizes
from .variants import Variant, chosen_variant, supported_versions
from .parallel import start_parallel

if TYPE_CHECKING:
    from pathlib import Path  # imported when a path is asked for: an import that reading does not need

    from .codecs.gamelumps import GameLumps
    from .codecs.staticprops import DetailProps, StaticProps
    from .writeplan import Compression

__all__ = ["BspFile", "ClosedMapError", "LumpAttr", "LumpKey", "open_bsp"]

_NO_LUMPS = [LumpEntry()] * NUM_LUMPS


def _lump_index(key: LumpKey) -> int:
    if isinstance(key, str):
        try:
            return int(LumpId[key.upper()])
        except KeyError:
            raise KeyError(f"no lump named {key!r}") from None
    index = int(key)
    if not 0 <= index < NUM_LUMPS:
        raise KeyError(f"lump index {index} is outside 0..{NUM_LUMPS - 1}")
    return index


class BspFile(MapQueries, TypedLumps):
    """A Source engine BSP map.

    ``BspFile()`` is a valid empty map (BSP 20, no lumps).  Use
    :func:`sourcebsp.open` / :meth:`open` for files.  After :meth:`close`
    (leaving a ``with`` block) the lumps can no longer be read or saved:
    that raises :class:`ClosedMapError`; the header stays readable.

    Parameters
    ----------
    header, buffer, path
        The directory, the file's bytes and where they came from.
    variant
        The engine branch to read the map as (a name of
        :func:`sourcebsp.variants.variant_names` or a
        :class:`~sourcebsp.variants.Variant`); detected from the header when
        None.
    limits
        Decompression budgets (:class:`~sourcebsp.Limits`).
    xor_key
        The key of an encrypted file (Tactical Intervention's, :mod:`sourcebsp.encryption`):
        the map is written back encrypted with it (``bsp.xor_key``).

    Notes
    -----
    The lump accessors (``get_lump``, ``lump_or_none``, ``lump_or_raise``,
    ``has_lump``) and what each does when the map has no such lump or keeps it
    raw are tabled once, in :class:`sourcebsp.protocols.MapReader`, which this
    class implements.

    Examples
    --------
    >>> import sourcebsp
    >>> with sourcebsp.open("map.bsp") as bsp:          # doctest: +SKIP
    ...     print(bsp.version, len(bsp.planes))
    """

    def __init__(self, header: Header | None = None, buffer: bytes | memoryview | None = None,
                 path: str | os.PathLike[str] | None = None, *, variant: "str | Variant | None" = None,
                 limits: Limits | None = None, xor_key: bytes | None = None) -> None:
        self.header = header if header is not None else Header()
        self.limits = limits or Limits()
        # Read-only, so decoded arrays are read-only views that no one edits in place.
        self._buffer = memoryview(buffer).toreadonly() if buffer is not None else memoryview(b"")
        self._decompressor = Decompressor(self.limits, len(self._buffer))
        chosen = chosen_variant(variant)
        # Other branches whose headers look like this one, when the variant was detected (so a
        # report can say it guessed); empty when named or when the header told.
        self.variant_alternatives: tuple[str, ...] = ()
        if chosen is None:
            found = detect(self.header, encrypted=xor_key is not None)
            if found.alternatives:  # a branch's own lumps, or the static prop version, may tell
                found = refine_by_lumps(found, lambda lump: self.header.lumps[lump].filelen > 0)
            if found.alternatives:  # or the sizes of its records
                found = refine_by_sizes(found, self.header)
            if found.alternatives and buffer is not None:
                found = refine(found, *self._static_prop_record(memoryview(buffer)))
            if found.alternatives and buffer is not None:  # or the games' own entity classes
                found = refine_by_entities(found, self._entity_text)
            chosen, self.variant_alternatives = found
        else:
            _source_only(chosen)
        # The branch's lump table for this BSP version (the HL2 beta's faces differ at 17 and 18).
        self.variant: Variant = chosen.at_version(self.header.version)
        if chosen.lump_order and chosen.lump_order != self.header.lump_order and self.header.lumps == _NO_LUMPS:
            # An empty directory read as standard: it is written in the branch's order.
            self.header = Header(self.header.ident, self.header.version, None, self.header.map_revision,
                                 chosen.lump_order)
        # The key the map is encrypted with when saved (sourcebsp.encryption): the key of the
        # file it was read from, sourcebsp's own for a new map of an encrypted branch, or None.
        self.xor_key = NEW_FILE_KEY if xor_key is None and buffer is None and chosen.encrypted else xor_key
        self._path = None if path is None else os.fspath(path)
        self._mmap: mmap.mmap | None = None
        self._fd: int | None = None  # the open file, for in-kernel copies on save
        self._closed = False
        self._decoded: dict[int, Any] = {}
        self._replaced: set[int] = set()  # lumps given new values with set_lump

    def _static_prop_record(self, buffer: memoryview) -> tuple[int | None, int | None]:
        """The ``sprp`` game lump's version from the directory and the size of its prop records,
        each None when not known (no such sub-lump, a compressed one, or a game lump that does
        not parse: that is reported when it is decoded, not here)."""
        entry = self.header.lumps[LumpId.GAME_LUMP]
        if not entry.filelen or entry.compressed or entry.fileofs + entry.filelen > len(buffer):
            return None, None
        ctx = LumpContext(LumpId.GAME_LUMP, "GAME_LUMP", entry.version, self.header.version, self.header.endian,
                          entry.fileofs)
        data = buffer[entry.fileofs:entry.fileofs + entry.filelen]
        try:
            record = static_prop_record(data, ctx)
            return sub_lump_versions(data, ctx).get("sprp"), None if record is None else record[1]
        except BspError:
            return None, None

    def _entity_text(self) -> memoryview | None:
        """The entity lump's text for detection, decompressed within the file's budget (the block
        then kept for reading the entities); None when the lump cannot be read (that is reported
        when the entities are read, not here)."""
        entry = self.header.lumps[LumpId.ENTITIES]
        if not entry.filelen:
            return None
        try:
            return self._unpacked(LumpId.ENTITIES, entry)
        except BspError:
            return None

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, *, variant: "str | Variant | None" = None,
                   limits: Limits | None = None) -> "BspFile":
        """A map read from an in-memory buffer."""
        view = memoryview(data).cast("B")
        variant = chosen_variant(variant)
        key = find_key(view[:KEY_END])
        if key is not None:  # Tactical Intervention's: decrypted once, in memory
            view = decrypt(view, key)
        header = read_header(bytes(view[:HEADER_SIZE]), file_size=len(view), versions=_versions(variant),
                             past_end_ok=True)
        return cls(header, view, variant=variant, limits=limits, xor_key=key)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, variant: "str | Variant | None" = None,
             limits: Limits | None = None) -> "BspFile":
        """Memory-map and read the header of the map at ``path``.

        Parameters
        ----------
        variant
            Read the map as this engine branch instead of the detected one
            (e.g. ``"csgo"`` or ``"left4dead2"`` for a BSP 21 map).
        limits
            Decompression budgets, for trusted maps larger than the defaults allow.
        """
        path = os.fspath(path)
        chosen = chosen_variant(variant)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        mapped = None
        view = None
        try:
            status = os.fstat(fd)
            if stat.S_ISDIR(status.st_mode):  # a folder opens on POSIX; mapping it says only "Invalid argument"
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            size = status.st_size
            mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if size else None
            # The header is parsed from a copy, so a failure leaves nothing viewing the map.
            head = bytes(mapped[:HEADER_SIZE]) if mapped is not None else b""
            if mapped is not None and is_bzip2(head):  # MAP.bsp.bz2: unpacked in memory, never beside it
                bsp = cls._from_bzip2(mapped, path, chosen, limits)
                mapped.close()
                os.close(fd)
                return bsp
            key = find_key(head)
            if mapped is not None and key is not None:  # Tactical Intervention's: decrypted once, in memory
                with memoryview(mapped) as whole:
                    bsp = cls.from_bytes(whole, variant=chosen, limits=limits)
                mapped.close()
                bsp._path, bsp._fd = path, fd  # the file kept open: a save must not overwrite it unasked
                return bsp
            # A file cut short opens: its whole lumps read, the others raise TruncatedError when read.
            header = read_header(head, file_size=size, versions=_versions(chosen), past_end_ok=True)
            view = memoryview(mapped) if mapped is not None else None
            bsp = cls(header, view, path, variant=chosen, limits=limits)
        except BaseException:
            if view is not None:
                view.release()
            if mapped is not None:
                mapped.close()
            os.close(fd)
            raise
        bsp._mmap, bsp._fd = mapped, fd
        return bsp

    @classmethod
    def _from_bzip2(cls, data: mmap.mmap, path: str, variant: "Variant | None", limits: Limits | None) -> "BspFile":
        bsp = cls.from_bytes(bzip2_decompress(data, limits=limits, name=path), variant=variant, limits=limits)
        bsp._path = path
        return bsp

    def close(self) -> None:
        """Release the file.  Reading or saving lumps afterwards raises :class:`ClosedMapError`;
        decoded arrays still held keep the memory map alive until they are freed."""
        self._closed = True
        self._decoded = {}
        self._replaced = set()
        self._decompressor = Decompressor(self.limits)
        self._buffer.release()
        self._buffer = memoryview(b"")
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # numpy arrays still view the map; it is freed when they are
            self._mmap = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def path(self) -> Path | None:
        """The file this map was opened from (None for a map built in memory)."""
        from pathlib import Path  # a seam: reading a map loads no pathlib

        return None if self._path is None else Path(self._path)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def ident(self) -> str:
        """The file's first four bytes as text: ``VBSP`` (``PSBV`` for a big-endian file)."""
        return self.header.ident.decode("ascii", "backslashreplace")

    @property
    def lump_order(self) -> str:
        """The order of the ``lump_t`` fields in the directory (``"std"``, or a branch's own)."""
        return self.header.lump_order

    @property
    def encrypted(self) -> bool:
        """Whether the file is XOR-encrypted (see :attr:`xor_key`)."""
        return self.xor_key is not None

    def _check_open(self) -> None:
        if self._closed:
            where = f" {self._path}" if self._path else ""
            raise ClosedMapError(f"the map{where} was closed; open it again to read or save its lumps")

    def __enter__(self) -> "BspFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self, _close: Callable[[int], None] = os.close) -> None:
        # os.close bound here: a map freed while the interpreter exits may outlive this module's globals.
        if getattr(self, "_fd", None) is not None:
            _close(self._fd)  # type: ignore[arg-type]
            self._fd = None

    def __repr__(self) -> str:
        where = f" {os.path.basename(self._path)!r}" if self._path else ""
        state = (" encrypted" if self.xor_key is not None else "") + (" closed" if self._closed else "")
        return f"<BspFile{where} {self.header.ident.decode('latin-1')} v{self.version} {self.variant.name}{state}>"

    # ---- header facts -------------------------------------------------------------
    @property
    def version(self) -> int:
        return self.header.version

    @property
    def endian(self) -> Endian:
        """``"<"`` for little-endian (PC) maps, ``">"`` for big-endian (console) maps."""
        return self.header.endian

    @property
    def map_revision(self) -> int:
        return self.header.map_revision

    @property
    def file_size(self) -> int:
        return len(self._buffer)

    def lump_name(self, key: LumpKey) -> str:
        return lump_name(_lump_index(key), self.version)

    def entry(self, key: LumpKey) -> LumpEntry:
        """The directory entry (``lump_t``) of a lump."""
        return self.header.lumps[_lump_index(key)]

    def has_lump(self, key: LumpKey) -> bool:
        """Whether the map holds the lump (a non-empty entry, or a value set since)."""
        index = _lump_index(key)
        return bool(self.header.lumps[index].filelen) or index in self._replaced

    def _index(self, key: LumpKey) -> int:
        return _lump_index(key)

    def _holds(self, index: int) -> bool:
        # A lump decoded from no bytes is held too: lump_or_none gives the value read (or set).
        return bool(self.header.lumps[index].filelen) or index in self._decoded

    def _context(self, index: int, file_offset: int | None = None) -> LumpContext:
        header = self.header
        entry = header.lumps[index]
        return LumpContext(index, lump_name(index, header.version), entry.version, header.version, header.endian,
                           entry.fileofs if file_offset is None else file_offset)

    def codec(self, key: LumpKey) -> Codec | None:
        """The codec used for a lump, or None when it stays raw."""
        index = _lump_index(key)
        return self.variant.codec(index, self.header.lumps[index].version)

    # ---- raw access ---------------------------------------------------------------
    def raw_lump(self, key: LumpKey) -> memoryview:
        """The lump's bytes as stored in the file (compressed if it is)."""
        self._check_open()
        index = _lump_index(key)
        return self._stored(index, self.header.lumps[index])

    def _stored(self, index: int, entry: LumpEntry) -> memoryview:
        """The bytes of a lump in the file; TruncatedError when the file ends before them."""
        end = entry.fileofs + entry.filelen
        if end > len(self._buffer):
            raise TruncatedError(
                f"truncated: the file is {len(self._buffer)} bytes, this lump needs {end}",
                lump=lump_name(index, self.version), offset=entry.fileofs, needed=end, available=len(self._buffer))
        return self._buffer[entry.fileofs : end]

    def truncated(self) -> list[LumpId]:
        """The lumps that run past the end of the file (a file cut short), in index order."""
        size = len(self._buffer)
        return [LumpId(i) for i, e in enumerate(self.header.lumps)
                if e.filelen and e.fileofs + e.filelen > size and i not in self._replaced]

    def _content(self, index: int, entry: LumpEntry) -> memoryview:
        """What :meth:`lump_bytes` gives, for a checked index and its entry."""
        self._check_open()
        return self._unpacked(index, entry)

    def _unpacked(self, index: int, entry: LumpEntry) -> memoryview:
        stored = self._stored(index, entry)
        if not entry.compressed:
            return stored
        return memoryview(self._decompressor.decompress(
            stored, lump=lump_name(index, self.version), offset=entry.fileofs,
            expected_size=entry.fourcc,
        ))

    def lump_bytes(self, key: LumpKey) -> memoryview:
        """The lump's original bytes, decompressed if the file compresses it.

        Raises :class:`~sourcebsp.DecompressionLimitError` past the file's
        decompression budget (each block is decompressed, and counted, once).
        """
        index = _lump_index(key)
        return self._content(index, self.header.lumps[index])

    @property
    def decompressed_size(self) -> int:
        """Bytes decompressed so far, counted against ``limits.total_size``."""
        return self._decompressor.used

    # ---- decoded access -----------------------------------------------------------
    def is_loaded(self, key: LumpKey) -> bool:
        """Whether the lump has been decoded (or set) already."""
        return _lump_index(key) in self._decoded

    def _decode(self, index: int) -> Any:
        """Decode a lump from the file (without keeping the value)."""
        entry = self.header.lumps[index]
        codec = self.variant.codec(index, entry.version)
        data = self._content(index, entry)
        if codec is None:
            return RawLump(bytes(data), f"no layout known for lump version {entry.version} "
                                        f"in variant {self.variant.name}")
        if not getattr(codec, "decompresses", True):  # arrays: views of the bytes
            return codec.decode(data, self._context(index))
        # Codecs that decompress inside the lump (game lumps) share the file's budget.
        with self._decompressor.use():
            return codec.decode(data, self._context(index))

    def set_lump(self, key: LumpKey, value: Any) -> None:
        """Give a lump a new decoded value; it is encoded when the map is saved."""
        self._check_open()
        index = _lump_index(key)
        self._decoded[index] = value
        self._replaced.add(index)

    def decode_all(self) -> dict[int, Any]:
        """Decode every non-empty lump; returns {lump index: value}.

        LZMA-compressed lumps (and the game lump, whose sub-lumps may be
        compressed) are decompressed on every core meanwhile.
        """
        self._check_open()
        indices = [i for i in range(NUM_LUMPS) if self.header.lumps[i].filelen]
        heavy = sorted(
            (i for i in indices if i not in self._decoded
             and (self.header.lumps[i].compressed or i == LumpId.GAME_LUMP)),
            key=lambda i: -self.header.lumps[i].filelen,
        )
        started = start_parallel(self._decode, heavy)
        # The other lumps are decoded here meanwhile; every task ends before this returns.
        errors: list[BaseException] = []
        decoded = self._decoded
        try:
            for index in indices:
                if index not in decoded and index not in heavy:
                    decoded[index] = self._decode(index)
        except BaseException as exc:
            errors.append(exc)
        for index, result in started:
            try:
                decoded.setdefault(index, result())
            except BaseException as exc:
                errors.append(exc)
        if errors:
            raise errors[0]
        return {i: decoded[i] for i in indices}

    def count(self, key: LumpKey) -> int | None:
        """Number of decoded elements of a lump (None for a raw lump)."""
        value = self.get_lump(key)
        codec = self.codec(key)
        if codec is None or isinstance(value, RawLump):
            return None
        return codec.count(value)

    def iter_lumps(self) -> Iterator[tuple[LumpId, LumpEntry]]:
        """(lump id, directory entry) for every non-empty lump, in index order."""
        for index, entry in enumerate(self.header.lumps):
            if entry.filelen:
                yield LumpId(index), entry

    @property
    def game_lumps(self) -> "GameLumps":
        """The game lump directory (empty when the map has none or it stays raw)."""
        value = self.get_lump(LumpId.GAME_LUMP)
        if isinstance(value, RawLump):
            from .codecs.gamelumps import GameLumps  # a seam: reading entities loads no game lump codec

            return GameLumps()
        return value

    # ---- static and detail props (game lump sub-lumps, codecs/staticprops.py) -----
    @property
    def static_props(self) -> "StaticProps":
        """The static props (:class:`~sourcebsp.codecs.staticprops.StaticProps`).

        Edits (``move``, ``add``, ``remove`` or the arrays in place) are saved
        with the map.  A map without an ``sprp`` game lump gives an empty,
        detached value; attach one with ``bsp.game_lumps.add("sprp", version, value)``.
        """
        from .codecs.staticprops import StaticProps  # a seam: numpy-bound, opening a map loads no numpy

        lump = self.game_lumps.get("sprp") if self.has_lump(LumpId.GAME_LUMP) else None
        if lump is None:
            return StaticProps.empty(bsp_version=self.version, endian=self.endian)
        return lump.value  # type: ignore[no-any-return]

    @property
    def detail_props(self) -> "DetailProps | None":
        """The detail props (:class:`~sourcebsp.codecs.staticprops.DetailProps`), or None."""
        lump = self.game_lumps.get("dprp") if self.has_lump(LumpId.GAME_LUMP) else None
        return lump.value if lump is not None else None

    # ---- writing ------------------------------------------------------------------
    def to_bytes(self, *, reencode: bool = False, compression: Compression = "keep") -> bytes:
        """The whole map as bytes (see :meth:`save`).  The map object is not changed."""
        from .writeplan import plan_write  # a seam: only writing loads the write plan

        self._check_open()
        data = plan_write(self, reencode=reencode, compression=compression).to_bytes()
        return data if self.xor_key is None else bytes(encrypt(data, self.xor_key))

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False, reencode: bool = False,
             compression: Compression = "keep", fsync: bool = True) -> Path:
        """Write the map to ``path`` atomically (temporary file, then rename).

        Untouched lumps are copied from the file as they are (in the kernel
        where it can), so saving needs little memory whatever the map's size.
        The map object is not changed by saving.

        Parameters
        ----------
        overwrite
            Allow ``path`` to be the file this map was read from.
        reencode
            Encode every decodable lump from its decoded value, not from its
            original bytes (a check of the codecs: the output is unchanged).
        compression
            ``"keep"`` as found, ``"lzma"`` to compress every lump but the
            pakfile (game lumps one by one), ``"none"`` to decompress all.
        fsync
            Flush the data to the disk before the rename (what makes the save
            safe against a power cut); ``False`` is faster for scratch files,
            which a power cut may leave empty.
        """
        # Seams, as in to_bytes: reading a map loads neither
        from ._io import atomic_write
        from .writeplan import plan_write

        self._check_open()
        target = os.fspath(path)
        if not overwrite and self._is_input(target):
            raise BspError(f"refusing to overwrite the input map {target} (pass overwrite=True)")
        for index in self.truncated():  # its bytes are not in the file to copy
            self._stored(index, self.header.lumps[index])
        plan = plan_write(self, reencode=reencode, compression=compression)
        if self.xor_key is not None:  # encrypted with the key it was read with (the file holds ciphertext)
            return atomic_write(target, encrypt(plan.to_bytes(), self.xor_key), fsync=fsync, size=plan.size)
        return atomic_write(target, *plan.writers(self._fd), fsync=fsync, size=plan.size)

    def _is_input(self, target: str) -> bool:
        """Whether ``target`` names the file this map was read from: by any name (a link, a hard
        link: the same inode), or by its own name after another file took that name."""
        if self._path is None:
            return False
        if self._fd is None:  # a map unpacked from MAP.bsp.bz2: only its path names it
            try:
                return os.path.samefile(target, self._path)
            except (OSError, ValueError):
                return False
        try:
            found = os.stat(target)
        except (OSError, ValueError):  # no such file (the usual case), or a name the system cannot take
            return False
        return os.path.samestat(found, os.fstat(self._fd)) or os.path.realpath(target) == os.path.realpath(self._path)


def _versions(variant: "Variant | None") -> "Collection[int]":
    """The BSP versions to accept: any a detection rule knows, or any at all
    when the caller names the variant (a Source branch: an rBSP one is refused)."""
    if variant is None:
        return supported_versions()
    _source_only(variant)
    return range(-(2**31), 2**31)


def _source_only(variant: Variant) -> None:
    """Refuse a branch this container does not read (Respawn's rBSP: :mod:`sourcebsp.respawn`)."""
    if variant.container != "source":
        raise UnsupportedError(f"variant {variant.name!r} is a Respawn rBSP branch: open its maps with "
                               f"sourcebsp.open(path), which reads Source and rBSP maps", offset=0)


def open_bsp(path: str | os.PathLike[str], *, variant: "str | Variant | None" = None,
             limits: Limits | None = None) -> BspFile:
    """Deprecated: :meth:`BspFile.open` for a Source map, ``sourcebsp.open`` for any map."""
    warnings.warn("sourcebsp.open_bsp is deprecated: sourcebsp.open(path) opens every map, "
                  "BspFile.open(path) a Source map", DeprecationWarning, stacklevel=2)
    return BspFile.open(path, variant=variant, limits=limits)

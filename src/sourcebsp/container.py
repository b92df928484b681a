"""``BspFile``: the header plus lazily decoded lumps, read and written.

Constructors do no I/O.  :meth:`BspFile.open` memory-maps a file,
:meth:`BspFile.from_bytes` wraps a buffer.  A lump is sliced out of the
buffer and decoded (decompressing LZMA first) on first access.  :meth:`save`
writes untouched lumps from their original bytes, so an unedited map comes
out byte-identical; an edited map is re-laid with 4-byte alignment.
"""
from __future__ import annotations

import mmap
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator, Literal

from ._io import atomic_write
from .codecs.base import Codec, Endian, LumpContext, RawLump
from .codecs.gamelumps import GameLumps
from .compression import lzma_compress, lzma_decompress
from .errors import BspError, BspFormatError
from .header import HEADER_SIZE, Header, LumpEntry, read_header
from .lump_ids import NUM_LUMPS, LumpId, lump_name
from .variants import Variant, detect_variant

__all__ = ["BspFile", "open_bsp"]

LumpKey = LumpId | int | str
Compression = Literal["keep", "lzma", "none"]

# Lumps never LZMA-compressed as a whole: the pakfile (a zip the engine reads
# in place) and the game lump (whose sub-lumps are compressed one by one).
_NEVER_COMPRESSED = frozenset({LumpId.PAKFILE, LumpId.XZIPPAKFILE, LumpId.GAME_LUMP})
_ALIGNMENT = 4


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


class BspFile:
    """A Source engine BSP map.

    ``BspFile()`` is a valid empty map (BSP 20, no lumps).  Use
    :func:`sourcebsp.open` / :meth:`open` for files.

    Examples
    --------
    >>> import sourcebsp
    >>> with sourcebsp.open("map.bsp") as bsp:          # doctest: +SKIP
    ...     print(bsp.version, len(bsp.planes))
    """

    def __init__(self, header: Header | None = None, buffer: bytes | memoryview | None = None,
                 path: Path | None = None) -> None:
        self.header = header if header is not None else Header()
        self.variant: Variant = detect_variant(self.header)
        self.path = path
        self._buffer = memoryview(buffer) if buffer is not None else memoryview(b"")
        self._mmap: mmap.mmap | None = None
        self._decoded: dict[int, Any] = {}
        self._replaced: set[int] = set()  # lumps given new values with set_lump

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> "BspFile":
        """A map read from an in-memory buffer."""
        view = memoryview(data).cast("B")
        return cls(read_header(bytes(view[:HEADER_SIZE]), file_size=len(view)), view)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "BspFile":
        """Memory-map and read the header of the map at ``path``."""
        path = Path(path)
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        try:
            # The header is parsed from a copy, so a failure leaves nothing viewing the map.
            head = bytes(mapped[:HEADER_SIZE]) if mapped is not None else b""
            header = read_header(head, file_size=size)
        except BaseException:
            if mapped is not None:
                mapped.close()
            raise
        bsp = cls(header, memoryview(mapped) if mapped is not None else None, path)
        bsp._mmap = mapped
        return bsp

    def close(self) -> None:
        """Release the memory map.  Decoded lumps that were not copied become invalid."""
        if self._mmap is not None:
            self._decoded = {k: v for k, v in self._decoded.items() if k in self._replaced}
            self._buffer.release()
            self._buffer = memoryview(b"")
            try:
                self._mmap.close()
            except BufferError:
                # numpy arrays still view the map; it is freed when they are.
                pass
            self._mmap = None

    def __enter__(self) -> "BspFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = f" {self.path.name!r}" if self.path else ""
        return f"<BspFile{where} {self.header.ident.decode()} v{self.version} {self.variant.name}>"

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

    def _context(self, index: int, file_offset: int | None = None) -> LumpContext:
        entry = self.header.lumps[index]
        return LumpContext(
            lump=index, name=lump_name(index, self.version), version=entry.version,
            bsp_version=self.version, endian=self.endian,
            file_offset=entry.fileofs if file_offset is None else file_offset,
        )

    def codec(self, key: LumpKey) -> Codec | None:
        """The codec used for a lump, or None when it stays raw."""
        index = _lump_index(key)
        return self.variant.codec(index, self.header.lumps[index].version)

    # ---- raw access ---------------------------------------------------------------
    def raw_lump(self, key: LumpKey) -> memoryview:
        """The lump's bytes as stored in the file (compressed if it is)."""
        entry = self.header.lumps[_lump_index(key)]
        return self._buffer[entry.fileofs : entry.fileofs + entry.filelen]

    def lump_bytes(self, key: LumpKey) -> memoryview:
        """The lump's original bytes, decompressed if the file compresses it."""
        index = _lump_index(key)
        entry = self.header.lumps[index]
        stored = self.raw_lump(index)
        if not entry.compressed:
            return stored
        return memoryview(lzma_decompress(
            stored, lump=lump_name(index, self.version), offset=entry.fileofs,
            expected_size=entry.fourcc,
        ))

    # ---- decoded access -----------------------------------------------------------
    def is_loaded(self, key: LumpKey) -> bool:
        """Whether the lump has been decoded (or set) already."""
        return _lump_index(key) in self._decoded

    def get_lump(self, key: LumpKey) -> Any:
        """The decoded lump: a numpy array, a codec's object, or a :class:`RawLump`."""
        index = _lump_index(key)
        if index not in self._decoded:
            self._decoded[index] = self._decode(index)
        return self._decoded[index]

    __getitem__ = get_lump

    def _decode(self, index: int) -> Any:
        codec = self.codec(index)
        data = self.lump_bytes(index)
        if codec is None:
            version = self.header.lumps[index].version
            return RawLump(bytes(data), f"no layout known for lump version {version} "
                                        f"in variant {self.variant.name}")
        return codec.decode(data, self._context(index))

    def find_lump(self, key: LumpKey) -> Any:
        """The decoded lump, or None when the map has none or keeps it raw."""
        index = _lump_index(key)
        if not self.header.lumps[index].filelen and index not in self._decoded:
            return None
        value = self.get_lump(index)
        return None if isinstance(value, RawLump) else value

    def require_lump(self, key: LumpKey, purpose: str) -> Any:
        """The decoded lump, None when the map has none; a lump kept raw raises,
        naming ``purpose`` (what needed it)."""
        index = _lump_index(key)
        if not self.header.lumps[index].filelen and index not in self._decoded:
            return None
        value = self.get_lump(index)
        if isinstance(value, RawLump):
            raise BspFormatError(f"cannot {purpose}: {value.reason}", lump=lump_name(index, self.version),
                                 offset=self.header.lumps[index].fileofs)
        return value

    def set_lump(self, key: LumpKey, value: Any) -> None:
        """Give a lump a new decoded value; it is encoded when the map is saved."""
        index = _lump_index(key)
        self._decoded[index] = value
        self._replaced.add(index)

    def __setitem__(self, key: LumpKey, value: Any) -> None:
        self.set_lump(key, value)

    def decode_all(self) -> dict[int, Any]:
        """Decode every non-empty lump; returns {lump index: value}."""
        return {i: self.get_lump(i) for i in range(NUM_LUMPS) if self.header.lumps[i].filelen}

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
    def game_lumps(self) -> GameLumps:
        value = self.get_lump(LumpId.GAME_LUMP)
        if isinstance(value, RawLump):
            return GameLumps()
        return value  # type: ignore[no-any-return]

    # ---- static and detail props (game lump sub-lumps, codecs/staticprops.py) -----
    @property
    def static_props(self) -> Any:
        """The static props (:class:`~sourcebsp.codecs.staticprops.StaticProps`).

        Edits (``move``, ``add``, ``remove`` or the arrays in place) are saved
        with the map.  A map without an ``sprp`` game lump gives an empty,
        detached value; attach one with ``bsp.game_lumps.add("sprp", version, value)``.
        """
        from .codecs.staticprops import StaticProps

        lump = self.game_lumps.get("sprp") if self.entry(LumpId.GAME_LUMP).filelen else None
        return lump.value if lump is not None else StaticProps.empty(bsp_version=self.version, endian=self.endian)

    @property
    def detail_props(self) -> Any:
        """The detail props (:class:`~sourcebsp.codecs.staticprops.DetailProps`), or None."""
        lump = self.game_lumps.get("dprp") if self.entry(LumpId.GAME_LUMP).filelen else None
        return lump.value if lump is not None else None

    # ---- BSP tree and visibility queries (implemented in sourcebsp.queries) -------
    def leaf_at(self, points: Any, *, model: int = 0) -> Any:
        """The leaf index of a point ``(3,)`` (an int) or of points ``(N, 3)`` (an array)."""
        from . import queries

        return queries.leaf_at(self, points, model=model)

    def cluster_at(self, points: Any) -> Any:
        """The visibility cluster of a point or points (-1 in solid)."""
        from . import queries

        return queries.cluster_at(self, points)

    @property
    def num_clusters(self) -> int:
        """Visibility clusters (without visibility data: the highest leaf cluster + 1)."""
        from . import queries

        return queries.num_clusters(self)

    def pvs(self, cluster: int) -> Any:
        """Bool array: the clusters ``cluster`` can see (all False for solid, -1)."""
        from . import queries

        return queries.pvs(self, cluster)

    def pas(self, cluster: int) -> Any:
        """Bool array: the clusters ``cluster`` can hear (all False for solid, -1)."""
        from . import queries

        return queries.pas(self, cluster)

    def is_visible(self, a: Any, b: Any) -> Any:
        """Whether ``b`` is in the PVS of ``a``; each a cluster (int) or point(s)."""
        from . import queries

        return queries.is_visible(self, a, b)

    # ---- writing ------------------------------------------------------------------
    def _encoded(self, index: int, file_offset: int) -> bytes:
        value = self._decoded[index]
        if isinstance(value, RawLump):
            return value.data
        codec = self.codec(index)
        if codec is None:
            raise BspFormatError(f"no codec to encode {type(value).__name__}",
                                 lump=lump_name(index, self.version))
        return codec.encode(value, self._context(index, file_offset))

    def to_bytes(self, *, reencode: bool = False, compression: Compression = "keep") -> bytes:
        """The whole map as bytes (see :meth:`save`)."""
        if reencode:
            self.decode_all()
        if compression != "keep":
            game = self.get_lump(LumpId.GAME_LUMP) if self.header.lumps[LumpId.GAME_LUMP].filelen else None
            if isinstance(game, GameLumps):
                game.set_compressed(compression == "lzma")
                self._replaced.add(LumpId.GAME_LUMP)
        changed = set(self._replaced)
        # Objects a user can change in place (entities, game lumps, the pakfile)
        # are encoded again whenever they were loaded; arrays decoded from the
        # file are read-only views, so they change only through set_lump.
        changed |= {i for i in self._decoded if getattr(self.codec(i), "mutable", False)}
        if reencode:
            changed |= set(self._decoded)
        if not changed and compression == "keep" and len(self._buffer):
            return bytes(self._buffer)
        return self._relay(changed, compression)

    def _wants_lzma(self, index: int, compression: Compression, length: int) -> bool:
        if compression == "keep":
            return self.header.lumps[index].compressed
        return compression == "lzma" and index not in _NEVER_COMPRESSED and length > 0

    def _relay(self, changed: set[int], compression: Compression) -> bytes:
        """Lay the lumps out again: original order, 4-byte aligned, pakfile last.

        When every lump keeps its size and compression the original offsets are
        kept, so a decode/encode round trip stays byte-identical.
        """
        entries = self.header.lumps
        payloads: dict[int, bytes] = {}
        flags: dict[int, int] = {}  # uncompressed size stored in fourCC, 0 if none
        # Encoding the game lump needs its final offset; try the original one first.
        def payload(index: int) -> tuple[bytes, int]:
            return self._payload(index, changed, compression, entries[index].fileofs)

        if compression == "lzma":
            # LZMA releases the GIL: compress the lumps on every core.
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                results = list(pool.map(payload, range(NUM_LUMPS)))
        else:
            results = [payload(index) for index in range(NUM_LUMPS)]
        for index, (data, fourcc) in enumerate(results):
            payloads[index], flags[index] = data, fourcc
        same_layout = len(self._buffer) >= HEADER_SIZE and all(
            len(payloads[i]) == entries[i].filelen and flags[i] == entries[i].fourcc
            for i in range(NUM_LUMPS)
        )
        if same_layout:
            out = bytearray(self._buffer)
            for index in changed:
                entry = entries[index]
                out[entry.fileofs : entry.fileofs + entry.filelen] = payloads[index]
            # Header edits that move nothing (a lump version set by a lump file,
            # the map revision) are written too; an unedited header encodes to
            # its original bytes.
            out[:HEADER_SIZE] = self.header.to_bytes()
            return bytes(out)
        order = sorted(range(NUM_LUMPS), key=lambda i: (i == LumpId.PAKFILE, entries[i].fileofs, i))
        position = HEADER_SIZE
        offsets: dict[int, int] = {}
        for index in order:
            moved = position != entries[index].fileofs
            if payloads[index] and moved and self._holds_file_offsets(index):
                # Its bytes hold absolute offsets (game lumps, some pakfiles): encode it where it lands.
                self.get_lump(index)
                payloads[index], flags[index] = self._payload(index, changed | {index}, compression, position)
            offsets[index] = position
            position += len(payloads[index])
            position += -position % _ALIGNMENT
        out = bytearray(position)
        lumps = []
        for index in range(NUM_LUMPS):
            data = payloads[index]
            out[offsets[index] : offsets[index] + len(data)] = data
            lumps.append(LumpEntry(offsets[index], len(data), entries[index].version, flags[index]))
        header = Header(self.header.ident, self.version, lumps, self.map_revision, self.header.lump_order)
        out[:HEADER_SIZE] = header.to_bytes()
        return bytes(out)

    def _holds_file_offsets(self, index: int) -> bool:
        check = getattr(self.codec(index), "holds_file_offsets", None)
        return bool(check and check(self.raw_lump(index), self.header.lumps[index].fileofs))

    def _payload(self, index: int, changed: set[int], compression: Compression,
                 file_offset: int) -> tuple[bytes, int]:
        """The bytes to store for a lump, and the value for its fourCC field."""
        entry = self.header.lumps[index]
        if index not in changed and (compression == "keep" or not entry.filelen):
            return bytes(self.raw_lump(index)), entry.fourcc
        plain = self._encoded(index, file_offset) if index in changed else bytes(self.lump_bytes(index))
        if self._wants_lzma(index, compression, len(plain)):
            # Recompressing would not give the original stream back: keep it while
            # the content is what it decompresses to.
            if entry.compressed and (index not in changed or plain == self.lump_bytes(index)):
                return bytes(self.raw_lump(index)), entry.fourcc
            return lzma_compress(plain), len(plain)
        return plain, 0

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False, reencode: bool = False,
             compression: Compression = "keep") -> Path:
        """Write the map to ``path`` atomically (temporary file, then rename).

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
        """
        target = Path(path)
        if self.path is not None and not overwrite and target.exists() and target.resolve() == self.path.resolve():
            raise BspError(f"refusing to overwrite the input map {target} (pass overwrite=True)")
        return atomic_write(target, self.to_bytes(reencode=reencode, compression=compression))


def open_bsp(path: str | os.PathLike[str]) -> BspFile:
    """Open the map at ``path`` (same as :meth:`BspFile.open`)."""
    return BspFile.open(path)


def _add_lump_properties() -> None:
    """``bsp.planes``, ``bsp.vertexes``, ... for every lump id."""
    for lump in LumpId:
        def getter(self: BspFile, _lump: LumpId = lump) -> Any:
            return self.get_lump(_lump)

        def setter(self: BspFile, value: Any, _lump: LumpId = lump) -> None:
            self.set_lump(_lump, value)

        setattr(BspFile, lump.name.lower(), property(getter, setter, doc=f"The decoded {lump.name} lump."))


_add_lump_properties()

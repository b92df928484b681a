"""Valve's LZMA lump compression (``public/tier1/lzmaDecoder.h``), with budgets.

A compressed lump (or game lump) starts with ``lzma_header_t`` -- always
little-endian, also in big-endian console maps -- followed by a raw LZMA1
stream.  The standard library ``lzma`` module decodes it once the 5 property
bytes and the uncompressed size are put in front as an ``.lzma`` (alone)
header.

Maps are untrusted, so every expansion is bounded by :class:`Limits`: the size
of one block, the LZMA dictionary a block may ask for, and the total a whole
file may decompress to.  A :class:`Decompressor` keeps that total for one file
and decodes each distinct block once, however many directory entries (or game
lump entries) point at it.
"""
from __future__ import annotations

import _thread
import contextvars
import struct
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import CompressionError, LimitExceededError, TruncatedError

if TYPE_CHECKING:
    import mmap

    import numpy as np

__all__ = [
    "LZMA_HEADER",
    "LZMA_ID",
    "MAX_UNCOMPRESSED_SIZE",
    "Limits",
    "DecompressionLimitError",
    "Decompressor",
    "is_lzma",
    "lzma_decompress",
    "lzma_compress",
    "is_bzip2",
    "bzip2_decompress",
]

LZMA_ID = b"LZMA"
# unsigned int id ('LZMA'); unsigned int actualSize (uncompressed);
# unsigned int lzmaSize (compressed, without this header); unsigned char properties[5]
_HEADER = struct.Struct("<4sII5s")  # 17 bytes, packed
_PROPERTIES = struct.Struct("<BI")  # lc/lp/pb byte, then the dictionary size

# Kept for callers of the first release: the default limit of one block.
MAX_UNCOMPRESSED_SIZE = 1 << 30


if TYPE_CHECKING:
    LZMA_HEADER: np.dtype
else:
    def __getattr__(name: str) -> Any:
        # LZMA_HEADER, the numpy declaration of lzma_header_t (the struct.Struct above reads the same
        # 17 packed bytes): made on first use, so that reading a map need not import numpy.
        if name != "LZMA_HEADER":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import numpy as np

        header = np.dtype([
            ("id", "S4"),  # unsigned int id ('LZMA')
            ("actual_size", "<u4"),  # unsigned int actualSize (uncompressed)
            ("lzma_size", "<u4"),  # unsigned int lzmaSize (compressed, without this header)
            ("properties", "u1", (5,)),  # unsigned char properties[LZMA_PROPS_SIZE]
        ])
        globals()[name] = header
        return header


class Limits(NamedTuple):
    """Budgets for what a map may decompress to; pass your own to raise them.

    Parameters
    ----------
    total_size
        Bytes a whole file may decompress to, summed over its lumps and game
        lumps (a block shared by several entries counts once).  ``None``:
        ``max(256 MiB, 32 x the file size)``; real maps stay under 5x.
    block_size
        Uncompressed bytes of any one LZMA block.
    dictionary_size
        The LZMA dictionary a block's properties may ask for (Valve's
        compressor uses 16 MiB).
    bzip2_size
        Bytes a whole-file bzip2 map (``MAP.bsp.bz2``, as game servers'
        FastDL folders hold them) may expand to.  ``None``:
        ``max(256 MiB, 32 x the compressed size)``; real maps shrink 1-6x with
        ``bzip2 -9`` (tiny test maps up to 35x, far under the 256 MiB floor).

    Examples
    --------
    >>> import sourcebsp
    >>> limits = sourcebsp.Limits(total_size=4 << 30)
    >>> bsp = sourcebsp.open("huge.bsp", limits=limits)   # doctest: +SKIP
    """

    total_size: int | None = None
    block_size: int = MAX_UNCOMPRESSED_SIZE
    dictionary_size: int = 1 << 27
    bzip2_size: int | None = None

    def total_for(self, file_size: int) -> int:
        """The total budget for a file of ``file_size`` bytes."""
        if self.total_size is not None:
            return self.total_size
        return max(256 << 20, 32 * file_size)

    def bzip2_for(self, compressed_size: int) -> int:
        """The budget for a bzip2 file of ``compressed_size`` bytes."""
        if self.bzip2_size is not None:
            return self.bzip2_size
        return max(256 << 20, 32 * compressed_size)


class DecompressionLimitError(CompressionError):
    """Decompressing would exceed one of the :class:`Limits`.

    A :class:`~sourcebsp.CompressionError` (the block cannot be used as it is).
    ``limit`` names the field of :class:`Limits` that was exceeded; the
    message says how to raise it.
    """

    def __init__(self, message: str, *, limit: str, lump: str | None = None, offset: int | None = None,
                 needed: int | None = None, available: int | None = None) -> None:
        self.limit = limit
        hint = (f"; if the map is trusted, raise it with "
                f"sourcebsp.open(path, limits=sourcebsp.Limits({limit}=...))")
        super().__init__(message + hint, lump=lump, offset=offset, needed=needed, available=available)


class Decompressor:
    """Decompresses the LZMA blocks of one file within its :class:`Limits`.

    Each block is identified by its position and stored size (and a checksum,
    since a game lump's offsets are trusted no more than the directory's): a
    block several entries point at is decoded, and counted, once.  Safe to use
    from several threads (liblzma releases the GIL while it works).
    """

    def __init__(self, limits: Limits | None = None, file_size: int = 0) -> None:
        self.limits = limits or Limits()
        self.budget = self.limits.total_for(file_size)
        self.used = 0
        self._blocks: dict[tuple[int, int, int], memoryview] = {}
        # The blocks being decoded, each with a lock its decoding thread holds until done: another
        # thread waits for the block by taking the lock (``_thread`` locks: no ``threading`` import).
        self._running: dict[tuple[int, int, int], _thread.LockType] = {}
        self._lock = _thread.allocate_lock()

    def decompress(self, data: bytes | memoryview, *, lump: str | None = None, offset: int = 0,
                   expected_size: int | None = None) -> memoryview:
        """Decompress one Valve LZMA block (see :func:`lzma_decompress`)."""
        import zlib  # a seam, as lzma in _inflate: only for a compressed block

        key = (offset, len(data), zlib.crc32(data))
        found = self._blocks.get(key)
        if found is not None:
            return found
        actual = _check_header(data, lump, offset, expected_size, self.limits)
        with self._lock:
            if key in self._blocks:
                return self._blocks[key]
            running = self._running.get(key)
            if running is None:
                if self.used + actual > self.budget:
                    raise DecompressionLimitError(
                        f"decompressing {actual} more bytes would bring the file's total to "
                        f"{self.used + actual}, over its total_size limit of {self.budget} bytes",
                        limit="total_size", lump=lump, offset=offset, needed=self.used + actual,
                        available=self.budget,
                    )
                # Reserved before the work, so threads cannot overrun the budget together.
                self.used += actual
                self._running[key] = decoding = _thread.allocate_lock()
                decoding.acquire()
        if running is not None:
            # Another thread decodes this very block: wait for it (or for its failure).
            with running:
                pass
            return self.decompress(data, lump=lump, offset=offset, expected_size=expected_size)
        out = None
        try:
            out = _inflate(data, actual, lump, offset)
        finally:
            with self._lock:
                if out is None:
                    self.used -= actual
                else:
                    self._blocks[key] = out
                self._running.pop(key).release()
        return out

    def use(self) -> "_Using":
        """A context in which :func:`lzma_decompress` (as codecs call it) uses this decompressor."""
        return _Using(self)


_CURRENT: contextvars.ContextVar[Decompressor | None] = contextvars.ContextVar(
    "sourcebsp_decompressor", default=None)


class _Using:
    def __init__(self, decompressor: Decompressor) -> None:
        self._decompressor = decompressor
        self._token: contextvars.Token[Decompressor | None] | None = None

    def __enter__(self) -> Decompressor:
        self._token = _CURRENT.set(self._decompressor)
        return self._decompressor

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        _CURRENT.reset(self._token)


def is_lzma(data: bytes | memoryview) -> bool:
    return bytes(data[:4]) == LZMA_ID


def lzma_decompress(
    data: bytes | memoryview,
    *,
    lump: str | None = None,
    offset: int = 0,
    expected_size: int | None = None,
) -> memoryview:
    """Decompress one Valve LZMA block: its bytes, as a read-only buffer.

    A ``memoryview`` rather than ``bytes`` so that the only copy of a lump is
    the one liblzma's output is written into (``bytes(...)`` gives a copy).

    ``offset`` is the absolute file offset of ``data`` (for error messages);
    ``expected_size``, when known from the directory, must equal the header's
    ``actualSize``.  Inside :meth:`Decompressor.use` the block counts against
    that decompressor's budget; otherwise only the default per-block limits
    apply.
    """
    current = _CURRENT.get()
    if current is not None:
        return current.decompress(data, lump=lump, offset=offset, expected_size=expected_size)
    limits = Limits()
    return _inflate(data, _check_header(data, lump, offset, expected_size, limits), lump, offset)


def _check_header(data: bytes | memoryview, lump: str | None, offset: int, expected_size: int | None,
                  limits: Limits) -> int:
    """Validate ``lzma_header_t`` against the data and the limits; the uncompressed size."""
    if len(data) < _HEADER.size:
        raise TruncatedError(
            f"compressed data of {len(data)} bytes is shorter than the "
            f"{_HEADER.size}-byte lzma_header_t",
            lump=lump, offset=offset, needed=_HEADER.size, available=len(data),
        )
    ident, actual, packed, properties = _HEADER.unpack_from(data)
    if ident != LZMA_ID:
        raise CompressionError(f"lzma_header_t id is {ident!r}, expected {LZMA_ID!r}", lump=lump, offset=offset)
    if expected_size is not None and actual != expected_size:
        raise CompressionError(
            f"lzma_header_t says {actual} uncompressed bytes, the directory says {expected_size}",
            lump=lump, offset=offset, needed=expected_size, available=actual,
        )
    if actual > limits.block_size:
        raise DecompressionLimitError(
            f"lzma_header_t claims {actual} uncompressed bytes, over the block_size limit of "
            f"{limits.block_size} bytes",
            limit="block_size", lump=lump, offset=offset, needed=actual, available=limits.block_size,
        )
    dictionary = _PROPERTIES.unpack(properties)[1]
    if dictionary > limits.dictionary_size:
        raise DecompressionLimitError(
            f"LZMA properties ask for a {dictionary}-byte dictionary, over the dictionary_size "
            f"limit of {limits.dictionary_size} bytes",
            limit="dictionary_size", lump=lump, offset=offset + 13, needed=dictionary,
            available=limits.dictionary_size,
        )
    if _HEADER.size + packed > len(data):
        raise TruncatedError(
            f"lzma_header_t says {packed} compressed bytes, only {len(data) - _HEADER.size} follow it",
            lump=lump, offset=offset + _HEADER.size, needed=packed, available=len(data) - _HEADER.size,
        )
    return int(actual)


#: Bytes given to and taken from liblzma per call: 32 KiB, the first output block of the
#: lzma module, so each call returns that block itself and never joins several.
_PIECE = 1 << 15


def _inflate(data: bytes | memoryview, actual: int, lump: str | None, offset: int) -> memoryview:
    """Run liblzma on a checked block: the ``actual`` uncompressed bytes, read-only.

    The output is written piece by piece into one buffer of its final size:
    asked for the whole output at once, the lzma module grows a list of
    blocks and joins them, so a lump would exist twice beside liblzma's
    dictionary (itself as large as the lump).  The input goes in pieces too,
    so the module never copies the stream's unread tail.
    """
    import lzma  # a seam: opening a map without compressed lumps loads no lzma

    try:
        out = bytearray(actual)  # not numpy: reading the entities of a compressed map needs none
    except MemoryError:  # an address-space limit (ulimit -v) below the block's stated size
        raise LimitExceededError(
            f"the system refused the {actual} bytes lzma_header_t says this block expands to",
            limit="memory", lump=lump, offset=offset, needed=actual,
        ) from None
    if actual == 0:
        return memoryview(out).toreadonly()
    _, _, packed, properties = _HEADER.unpack_from(data)
    settings, dictionary = _PROPERTIES.unpack(properties)
    # A stream of N bytes never refers further back than N bytes: a dictionary of
    # that size decodes it the same and bounds what liblzma allocates.
    dictionary = min(dictionary, max(actual, 4096))
    alone = _PROPERTIES.pack(settings, dictionary) + struct.pack("<Q", actual)
    body = memoryview(data)[_HEADER.size : _HEADER.size + packed]
    decoder = lzma.LZMADecompressor(format=lzma.FORMAT_ALONE)
    written = read = 0
    try:
        # The 13-byte .lzma header first, then the stream straight from the file's pages.
        decoder.decompress(alone, 0)
        while written < actual and not decoder.eof:
            if decoder.needs_input:
                if read >= len(body):
                    break  # the stream ends early: reported below
                piece = body[read : read + _PIECE]
                read += len(piece)
            else:
                piece = body[:0]
            # max_length bounds every call's output, so no call can exceed the stated size.
            chunk = decoder.decompress(piece, min(_PIECE, actual - written))
            out[written : written + len(chunk)] = chunk
            written += len(chunk)
    except lzma.LZMAError as exc:
        raise CompressionError(f"corrupt LZMA data: {exc}", lump=lump, offset=offset + _HEADER.size) from exc
    if written != actual:
        raise CompressionError(
            f"LZMA data expands to {written} bytes, lzma_header_t says {actual}",
            lump=lump, offset=offset + _HEADER.size, needed=actual, available=written,
        )
    return memoryview(out).toreadonly()


def lzma_compress(data: bytes | memoryview) -> bytes:
    """Compress ``data`` into a Valve LZMA block (``lzma_header_t`` + stream)."""
    import lzma  # a seam: only a save that compresses loads it

    # A dictionary larger than the data gains nothing and costs the encoder ~10x
    # its size in memory: the smallest power of two holding the data, up to 1 MiB.
    dictionary = 1 << max(12, min(20, (len(data) - 1).bit_length()))
    alone = lzma.compress(
        data,
        format=lzma.FORMAT_ALONE,
        filters=[{"id": lzma.FILTER_LZMA1, "preset": 6, "dict_size": dictionary}],
    )
    properties, stream = alone[:5], memoryview(alone)[13:]
    return _HEADER.pack(LZMA_ID, len(data), len(stream), properties) + stream


# A bzip2 stream: "BZh" and the block size digit '1'-'9' (x 100 kB).
_BZIP2_MAGIC = b"BZh"


def is_bzip2(head: bytes | memoryview) -> bool:
    """Whether ``head`` (a file's first bytes) starts a bzip2 stream (a ``.bsp.bz2`` map)."""
    return len(head) >= 4 and bytes(head[:3]) == _BZIP2_MAGIC and 0x31 <= head[3] <= 0x39


def bzip2_decompress(data: "bytes | memoryview | mmap.mmap", *, limits: Limits | None = None, name: str = "") -> bytes:
    """The map a whole-file bzip2 stream holds, in memory, within ``limits.bzip2_size``.

    Streams written one after the other (parallel compressors write several)
    are joined, as ``bzip2 -d`` does.  Corrupt or truncated data raises
    :class:`~sourcebsp.CompressionError`; a stream that expands past the
    budget raises :class:`DecompressionLimitError` as soon as it does, having
    produced no more than the budget.
    """
    import bz2  # a seam: only a bzip2-compressed map loads it

    limits = limits or Limits()
    budget = limits.bzip2_for(len(data))
    where = f"{name}: " if name else ""
    pieces: list[bytes] = []
    produced = 0
    rest: "bytes | memoryview | mmap.mmap" = data
    position = 0  # offset in ``data`` of the stream being read
    while True:
        decompressor = bz2.BZ2Decompressor()
        try:
            piece = decompressor.decompress(rest, max_length=budget - produced + 1)
        except (OSError, EOFError, ValueError) as exc:
            raise CompressionError(f"{where}bzip2 data is corrupt ({exc})", offset=position) from None
        produced += len(piece)
        if produced > budget:
            raise DecompressionLimitError(
                f"{where}the bzip2 map expands to more than {budget} bytes, over the bzip2_size limit",
                limit="bzip2_size", offset=position, needed=produced, available=budget)
        pieces.append(piece)
        if not decompressor.eof:
            if decompressor.needs_input:
                raise CompressionError(f"{where}bzip2 data ends before the end of its stream (truncated file)",
                                       offset=len(data), needed=len(data) + 1, available=len(data))
            raise DecompressionLimitError(  # pragma: no cover - max_length stops at budget + 1 bytes
                f"{where}the bzip2 map expands to more than {budget} bytes, over the bzip2_size limit",
                limit="bzip2_size", offset=position, needed=produced, available=budget)
        unused = decompressor.unused_data
        if not is_bzip2(unused):
            if unused.strip(b"\0"):
                raise CompressionError(f"{where}{len(unused)} bytes after the bzip2 stream are not bzip2 data",
                                       offset=len(data) - len(unused))
            break
        position = len(data) - len(unused)
        rest = unused
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)

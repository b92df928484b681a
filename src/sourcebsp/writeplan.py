"""How a :class:`~sourcebsp.BspFile` is written: a plan, made without changing the map.

:func:`plan_write` decides, for each lump, what to store and where:

* a lump is **changed** when its decoded value encodes to other bytes than
  the file holds.  Every loaded value is checked that way unless it cannot
  have changed (a read-only numpy view of the file, or a codec that declares
  ``mutable = False``), so an in-place edit of any decoded object is saved
  whatever its codec declares;
* an unchanged lump is copied from the file as it is (compressed or not);
* when every lump keeps its size the original layout is kept (so a decode /
  encode round trip is byte-identical); otherwise the lumps are laid out
  again in their original order, 4-byte aligned, pakfile last, and the
  absolute file offsets some lumps hold move with them.

The plan is a list of pieces: bytes, or regions of the input file that
:meth:`WritePlan.writers` copies in the kernel (``copy_file_range``) when it
can, so a save does not read the map into memory.
"""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol

from ._io import write_all
from .codecs.base import RawLump
from .compression import lzma_compress
from .errors import BspFormatError
from .header import HEADER_SIZE, Header, LumpEntry
from .lump_ids import NUM_LUMPS, LumpId, lump_name
from .parallel import run_parallel
from .protocols import Compression, MapReader

if TYPE_CHECKING:
    from .codecs.base import LumpContext
    from .variants import Variant

__all__ = ["Compression", "WritePlan", "encode_lump", "plan_write"]


class SavedMap(MapReader, Protocol):
    """What a save reads from a map beyond :class:`~sourcebsp.protocols.MapReader`:
    its file's bytes and the values decoded or set so far."""

    header: Header
    variant: "Variant"
    xor_key: bytes | None  # the key the output is encrypted with (sourcebsp.encryption), or None
    _buffer: memoryview
    _decoded: dict[int, Any]
    _replaced: set[int]

    def _decode(self, index: int) -> Any: ...

    def _context(self, index: int, file_offset: int | None = None) -> "LumpContext": ...

_ALIGNMENT = 4
# Regions from this size are copied in the kernel: writing them from the memory map would
# fault its pages in first.  Smaller ones join their neighbours' gathered write: fewer
# system calls (benchmarks/README.md, "Figures behind the code").
_COPY_IN_KERNEL_FROM = 1 << 20

class Region(NamedTuple):
    """``length`` bytes of the input file from ``offset``."""

    offset: int
    length: int


class WritePlan:
    """The pieces of the output file, in order, and its header."""

    def __init__(self, header: Header, pieces: list["bytes | memoryview | Region"], source: memoryview) -> None:
        self.header = header
        self.pieces = _merged(pieces, source)
        self._source = source

    @property
    def size(self) -> int:
        return sum(p.length if isinstance(p, Region) else len(p) for p in self.pieces)

    def _view(self, piece: "bytes | memoryview | Region") -> "bytes | memoryview":
        if isinstance(piece, Region):
            return self._source[piece.offset : piece.offset + piece.length]
        return piece

    def to_bytes(self) -> bytes:
        return b"".join(self._view(p) for p in self.pieces)

    def writers(self, fd: int | None) -> list["bytes | memoryview | Callable[[int], None]"]:
        """The pieces for :func:`~sourcebsp._io.atomic_write`: large file regions become
        in-kernel copies from ``fd`` (the open input file) when there is one; smaller
        ones are written from the memory map, in one gathered write with their neighbours."""
        copy_range = getattr(os, "copy_file_range", None)
        if fd is None or copy_range is None:
            return [self._view(p) for p in self.pieces]
        return [_region_copier(fd, p, self._source) if isinstance(p, Region) and p.length >= _COPY_IN_KERNEL_FROM
                else self._view(p) for p in self.pieces]


def _merged(pieces: list["bytes | memoryview | Region"], source: memoryview) -> list["bytes | memoryview | Region"]:
    """Neighbouring regions of the file as one (and short padding the file has too), so a
    moved run of unchanged lumps is one copy."""
    out: list["bytes | memoryview | Region"] = []
    start = end = 0  # the region being gathered, [start, end); none while they are equal
    for piece in pieces:
        if isinstance(piece, Region):
            if not piece.length:
                continue
            if end > start and piece.offset == end:
                end += piece.length
                continue
            if end > start:
                out.append(Region(start, end - start))
            start, end = piece.offset, piece.offset + piece.length
            continue
        if not len(piece):
            continue
        if end > start and len(piece) <= _ALIGNMENT and source[end : end + len(piece)] == piece:
            end += len(piece)
            continue
        if end > start:
            out.append(Region(start, end - start))
            start = end = 0
        out.append(piece)
    if end > start:
        out.append(Region(start, end - start))
    return out


def _region_copier(fd: int, region: Region, source: memoryview) -> Callable[[int], None]:
    def copy_region(handle: int) -> None:
        done = 0
        try:
            while done < region.length:
                count = os.copy_file_range(fd, handle, region.length - done, region.offset + done)
                if count <= 0:
                    break
                done += count
        except OSError:
            pass  # not supported between these files: write from the memory map
        if done < region.length:
            write_all(handle, [source[region.offset + done : region.offset + region.length]])

    return copy_region


def encode_lump(bsp: "SavedMap", index: int, value: Any, file_offset: int) -> bytes:
    """A lump's value as bytes, for a place at ``file_offset`` (a RawLump stays as it is)."""
    if isinstance(value, RawLump):
        return bytes(value.data)
    codec = bsp.codec(index)
    if codec is None:
        raise BspFormatError(f"no codec to encode {type(value).__name__}", lump=lump_name(index, bsp.version))
    return codec.encode(value, bsp._context(index, file_offset))


def _cannot_have_changed(bsp: "SavedMap", index: int, value: Any) -> bool:
    """True for values no one can edit in place: read-only views of the file's
    bytes, and values of codecs that declare ``mutable = False``."""
    np = sys.modules.get("numpy")  # not imported: no value is an array (a save need not import it)
    if np is not None and isinstance(value, np.ndarray) and not value.flags.writeable:
        base = value
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        # Views of bytes or of a read-only buffer cannot be made writable again.
        return not isinstance(base, np.ndarray)
    return getattr(bsp.codec(index), "mutable", True) is False


def _relocated(bsp: "SavedMap", index: int, contents: dict[int, bytes], file_offset: int) -> bytes | None:
    """A lump's uncompressed bytes moved to ``file_offset``, for the codecs whose lumps hold
    absolute file offsets; None when they stay as they are."""
    relocate = bsp.variant.relocator(index, bsp.header.lumps[index].version)
    if relocate is None:
        return None
    plain = contents[index] if index in contents else bsp.lump_bytes(index)  # as at the lump's old place
    return relocate(memoryview(plain), bsp._context(index), file_offset)


def _recompressed_game_lumps(value: Any, compressed: bool) -> Any:
    """A copy of the game lump directory with every sub-lump (un)compressed;
    the map's own value is left as it is."""
    import copy  # a seam, with GameLumps: only a save that changes the compression loads them

    from .codecs.gamelumps import GameLumps

    if not isinstance(value, GameLumps):
        return value
    lumps = [copy.copy(lump) for lump in value.lumps]
    result = GameLumps(lumps, value.relative_offsets, value.terminator)
    result.set_compressed(compressed)
    return result


def plan_write(bsp: "SavedMap", *, reencode: bool = False, compression: Compression = "keep") -> WritePlan:
    """The plan for writing ``bsp`` (see the module docstring).  ``bsp`` is not changed."""
    if compression not in ("keep", "lzma", "none"):
        raise ValueError(f"compression must be 'keep', 'lzma' or 'none', not {compression!r}")
    entries = bsp.header.lumps
    values: dict[int, Any] = dict(bsp._decoded)
    forced: set[int] = set(bsp._replaced)
    if reencode:
        for index in range(NUM_LUMPS):
            if entries[index].filelen and index not in values and bsp.codec(index) is not None:
                values[index] = bsp._decode(index)
        forced |= set(values)
    game = LumpId.GAME_LUMP
    if compression != "keep" and (entries[game].filelen or game in values):
        values[game] = _recompressed_game_lumps(values[game] if game in values else bsp._decode(game),
                                                compression == "lzma")
        forced.add(game)

    # New uncompressed content of the lumps that changed.
    contents: dict[int, bytes] = {}
    for index, value in values.items():
        if index not in forced and _cannot_have_changed(bsp, index, value):
            continue
        plain = encode_lump(bsp, index, value, entries[index].fileofs)
        if plain != bsp.lump_bytes(index):
            contents[index] = plain

    never_lzma = bsp.variant.never_lzma  # the pakfile and game lump (its sub-lumps are compressed one by one)

    def wants_lzma(index: int, length: int) -> bool:
        if length == 0:
            return False
        if compression == "keep":
            return entries[index].compressed
        return compression == "lzma" and index not in never_lzma

    def stored(index: int, plain: "bytes | memoryview") -> tuple["bytes | memoryview", int]:
        if wants_lzma(index, len(plain)):
            return lzma_compress(plain), len(plain)
        return plain, 0

    # Every lump stored otherwise than as found: (its bytes, its fourcc).  The others
    # are copied from the file as they are, so they are never read here.
    to_convert = sorted(contents) if compression == "keep" else [
        index for index, entry in enumerate(entries)
        if index in contents or (entry.filelen and entry.compressed
                                 != wants_lzma(index, entry.fourcc if entry.compressed else entry.filelen))]

    def convert(index: int) -> tuple["bytes | memoryview", int]:
        return stored(index, contents[index] if index in contents else bsp.lump_bytes(index))

    # liblzma releases the GIL: compress on every core.
    converted = dict(run_parallel(convert, to_convert))
    same_layout = len(bsp._buffer) >= HEADER_SIZE and all(
        len(data) == entries[i].filelen and fourcc == entries[i].fourcc for i, (data, fourcc) in converted.items())
    if same_layout:
        return _patched(bsp, {i: converted[i][0] for i in contents})
    return _relaid(bsp, contents, converted, stored)


def _patched(bsp: "SavedMap", patches: dict[int, "bytes | memoryview"]) -> WritePlan:
    """The original layout with changed lumps written over their old bytes."""
    entries = bsp.header.lumps
    source = bsp._buffer
    head = bsp.header.to_bytes()
    spans = sorted((entries[i].fileofs, i) for i in patches)
    overlapping = any(a_ofs + entries[a].filelen > b_ofs for (a_ofs, a), (b_ofs, _) in zip(spans, spans[1:]))
    if overlapping:
        # Entries sharing bytes: apply the edits in index order, as a whole copy.
        out = bytearray(source)
        for index in sorted(patches):
            out[entries[index].fileofs : entries[index].fileofs + entries[index].filelen] = patches[index]
        out[:HEADER_SIZE] = head
        return WritePlan(bsp.header, [bytes(out)], source)
    pieces: list["bytes | memoryview | Region"] = []
    position = 0
    if head != source[:HEADER_SIZE]:
        # Header edits that move nothing (a lump version set by a lump file, the map revision).
        pieces.append(head)
        position = HEADER_SIZE
    for offset, index in spans:
        if offset > position:
            pieces.append(Region(position, offset - position))
        pieces.append(patches[index])
        position = offset + entries[index].filelen
    if position < len(source):
        pieces.append(Region(position, len(source) - position))
    return WritePlan(bsp.header, pieces, source)


def _relaid(bsp: "SavedMap", contents: dict[int, bytes], converted: dict[int, tuple["bytes | memoryview", int]],
            stored: Callable[[int, "bytes | memoryview"], tuple["bytes | memoryview", int]]) -> WritePlan:
    """The lumps laid out again: original order, 4-byte aligned, pakfile last.

    ``contents`` holds the new uncompressed bytes of the lumps that changed,
    ``converted`` the lumps not stored as found, as (bytes, fourcc); the
    others are regions of the file."""
    entries = bsp.header.lumps
    # An encrypted map's readers find its key where the plain map is zeros (bytes 384-416:
    # the entries of lumps 23-25), so there slots the compiler never wrote stay all zeros.
    keep_unwritten = bsp.xor_key is not None
    # File order (a stable sort: ties in index order), then the pakfile moved last.
    order = sorted(range(NUM_LUMPS), key=[entry.fileofs for entry in entries].__getitem__)
    order.remove(LumpId.PAKFILE)
    order.append(LumpId.PAKFILE)
    position = HEADER_SIZE
    lumps: list[LumpEntry] = list(entries)
    pieces: list["bytes | memoryview | Region"] = [b""]  # the header goes first
    for index in order:
        entry = entries[index]
        fileofs, length, version, fourcc = entry
        piece: "bytes | memoryview | Region"
        if index in converted:
            piece, fourcc = converted[index]
            length = len(piece)
        else:
            piece = Region(fileofs, length) if length else b""
        if length and position != fileofs:
            # Bytes that hold absolute offsets (game lumps, some pakfiles) move with the lump.
            moved = _relocated(bsp, index, contents, position)
            if moved is not None:
                piece, fourcc = stored(index, moved)
                length = len(piece)
        if keep_unwritten and not length and entry == (0, 0, version, 0):
            pass
        elif position != fileofs or length != entry.filelen or fourcc != entry.fourcc:
            lumps[index] = LumpEntry(position, length, version, fourcc)
        if not length:
            continue  # nothing to write, and position stays aligned
        pieces.append(piece)  # WritePlan gathers neighbouring regions
        position += length
        padding = -position % _ALIGNMENT
        if padding:
            pieces.append(bytes(padding))
            position += padding
    header = Header(bsp.header.ident, bsp.version, lumps, bsp.header.map_revision, bsp.header.lump_order)
    pieces[0] = header.to_bytes()
    return WritePlan(header, pieces, bsp._buffer)

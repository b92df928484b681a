"""The visibility lump (lump 4): the PVS and PAS of every cluster.

bspfile.h struct ``dvis_t``::

    int numclusters;
    int bitofs[numclusters][2];   // bitofs[cluster][DVIS_PVS], bitofs[cluster][DVIS_PAS]

followed by run-length compressed bit vectors, one per cluster and kind.  A
row has ``(numclusters + 7) >> 3`` bytes once expanded; bit ``j & 7`` of byte
``j >> 3`` is set when cluster ``j`` is potentially visible (PVS) or audible
(PAS).  The compression only shortens runs of zero bytes: "a zero byte is
followed by a count of zero bytes", the count (1 to 255) including that zero
byte itself.  Offsets in ``bitofs`` count from the start of the lump.

vvis writes the PVS rows of clusters 0..n-1, then the PAS rows, with no gaps;
other tools may share rows between clusters or leave bytes unused.  Decoding
keeps the lump's bytes, so encoding an unedited value gives them back whatever
their layout; :meth:`Visibility.from_matrices` lays out new data as vvis does.

The value is immutable (a new value is made with :meth:`Visibility.replace`
or :meth:`Visibility.from_matrices` and stored with ``bsp.set_lump``), which
is why the codec is not ``mutable``.

Rows may be shared, so the full matrices can be far larger than the lump
(100,000 clusters sharing one row: 9 GiB).  :meth:`Visibility.visible` and
:meth:`Visibility.validate` decode a bounded number of rows at a time; the
matrices are sized against the memory budget of :mod:`sourcebsp.resources`.
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ..errors import BspFormatError, TruncatedError
from ..resources import check_memory
from .base import Endian, LumpContext

__all__ = [
    "DVIS_PVS",
    "DVIS_PAS",
    "Visibility",
    "VisibilityCodec",
    "compress_rows",
    "pas_from_pvs",
]

DVIS_PVS = 0  # bitofs[cluster][DVIS_PVS]
DVIS_PAS = 1  # bitofs[cluster][DVIS_PAS]
_KIND_NAMES = {DVIS_PVS: "PVS", DVIS_PAS: "PAS"}

NUMCLUSTERS = np.dtype("<i4")  # int numclusters
BITOFS = np.dtype("<i4")  # int bitofs[numclusters][2]
_MAX_RUN = 255  # a zero run's count is one byte
_CHUNK_BYTES = 32 << 20  # expanded rows decoded at once when only some are wanted
_STREAM_FACTOR = 16  # the all-rows-at-once decoder may expand the row data this much


def _row_bytes(num_clusters: int) -> int:
    return (num_clusters + 7) >> 3


def _unpack(rows: np.ndarray, num_clusters: int) -> np.ndarray:
    """Expanded rows (uint8, ``(..., row_bytes)``) as booleans ``(..., num_clusters)``."""
    bits = np.unpackbits(rows, axis=-1, bitorder="little")
    return bits[..., :num_clusters].astype(bool)


def _pack(matrix: np.ndarray) -> np.ndarray:
    """Boolean rows ``(m, num_clusters)`` as expanded rows (uint8, ``(m, row_bytes)``)."""
    return np.packbits(np.asarray(matrix, dtype=bool), axis=-1, bitorder="little")


def compress_rows(rows: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Run-length compress expanded rows the way vvis does.

    Parameters
    ----------
    rows : ndarray of uint8, shape ``(m, row_bytes)``
        Expanded bit vectors.

    Returns
    -------
    data : bytes
        The compressed rows, one after the other.
    lengths : ndarray of int64, shape ``(m,)``
        The compressed length of each row.

    Notes
    -----
    Every non-zero byte is copied; a run of zero bytes becomes pairs
    ``(0, count)`` with ``count`` at most 255 ("rep == 255" starts a new pair
    in vvis' ``CompressVis``).  Runs never cross from one row to the next.
    """
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    if rows.ndim != 2:
        raise ValueError(f"expected a 2-D array of expanded rows, got shape {rows.shape}")
    count_rows, width = rows.shape
    if width == 0 or count_rows == 0:
        return b"", np.zeros(count_rows, np.int64)
    flat = rows.ravel()
    size = flat.size
    pos = np.arange(size)
    zero = flat == 0
    row_first = pos % width == 0
    row_last = pos % width == width - 1
    prev_zero = np.concatenate(([False], zero[:-1]))
    next_zero = np.concatenate((zero[1:], [False]))
    run_first = zero & (row_first | ~prev_zero)
    run_last = zero & (row_last | ~next_zero)
    # For a zero byte: where its run starts and where it ends (exclusive).
    run_start = np.maximum.accumulate(np.where(run_first, pos, 0))
    run_end = np.minimum.accumulate(np.where(run_last, pos + 1, size)[::-1])[::-1]
    pair_start = zero & ((pos - run_start) % _MAX_RUN == 0)
    out_len = np.where(zero, np.where(pair_start, 2, 0), 1)
    out_pos = np.cumsum(out_len) - out_len
    out = np.zeros(int(out_len.sum()), np.uint8)
    out[out_pos[~zero]] = flat[~zero]
    out[out_pos[pair_start] + 1] = np.minimum(_MAX_RUN, run_end - pos)[pair_start]
    return out.tobytes(), out_len.reshape(count_rows, width).sum(axis=1)


def pas_from_pvs(pvs: np.ndarray) -> np.ndarray:
    """The PAS vvis derives from a PVS: a cluster hears what its visible clusters see.

    ``pas[i] = OR of pvs[j] for every j in pvs[i]`` (vvis ``CalcPAS``).
    """
    pvs = np.asarray(pvs, dtype=bool)
    # A boolean matrix product through BLAS: the sums of 0/1 products are
    # whole numbers below 2**24, exact in float32, for up to 16 million clusters.
    as_float = pvs.astype(np.float32)
    return (as_float @ as_float) > 0.5


class Visibility:
    """The decoded ``dvis_t``: cluster count, row offsets and compressed rows.

    Parameters
    ----------
    bitofs : ndarray of int32, shape ``(numclusters, 2)``
        ``bitofs[cluster][DVIS_PVS]`` and ``bitofs[cluster][DVIS_PAS]``:
        offsets of the compressed rows from the start of the lump.
    data : bytes
        The lump's bytes after the directory (the compressed rows).
    present : bool
        False for a map without visibility data (an empty lump: vvis has not
        run).  Such a value has no clusters and encodes to no bytes.
    file_offset : int
        Absolute offset of the lump in its file, for error messages.

    Notes
    -----
    Row contents are checked when they are decoded: a row that runs past the
    end of the lump raises :class:`~sourcebsp.errors.TruncatedError`, a
    malformed one :class:`~sourcebsp.errors.BspFormatError`, both naming the
    absolute file offset.  :meth:`validate` decodes everything at once.
    """

    def __init__(self, bitofs: np.ndarray, data: bytes, *, present: bool = True,
                 file_offset: int = 0, lump: str = "VISIBILITY") -> None:
        bitofs = np.array(bitofs)  # a copy: the value is immutable and outlives the file's map
        if bitofs.ndim != 2 or bitofs.shape[1] != 2:
            raise ValueError(f"bitofs must have shape (numclusters, 2), not {bitofs.shape}")
        if not present and (len(bitofs) or data):
            raise ValueError("a Visibility without data (present=False) has no clusters and no rows")
        bitofs.flags.writeable = False
        self.bitofs = bitofs
        self.data = bytes(data)
        self.present = present
        self.file_offset = file_offset
        self.lump = lump
        self._matrices: dict[int, np.ndarray] = {}

    # ---- facts --------------------------------------------------------------------
    @property
    def num_clusters(self) -> int:
        """``numclusters``: 0 when the map has no visibility data."""
        return len(self.bitofs)

    @property
    def row_bytes(self) -> int:
        """Bytes of one expanded row: ``(numclusters + 7) >> 3``."""
        return _row_bytes(self.num_clusters)

    @property
    def header_size(self) -> int:
        """Bytes of the directory: ``numclusters`` and ``bitofs``."""
        return NUMCLUSTERS.itemsize + self.bitofs.size * BITOFS.itemsize if self.present else 0

    def __len__(self) -> int:
        return self.num_clusters

    def __repr__(self) -> str:
        if not self.present:
            return "Visibility(no data)"
        return f"Visibility({self.num_clusters} clusters, {len(self.data)} bytes of rows)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Visibility):
            return NotImplemented
        return (self.present == other.present and np.array_equal(self.bitofs, other.bitofs)
                and self.data == other.data)

    __hash__ = None  # type: ignore[assignment]

    # ---- decoding -----------------------------------------------------------------
    def _check_cluster(self, cluster: int) -> int:
        cluster = int(cluster)
        if not -1 <= cluster < self.num_clusters:
            raise IndexError(f"cluster {cluster} is outside -1..{self.num_clusters - 1}")
        return cluster

    def _row(self, cluster: int, kind: int) -> np.ndarray:
        cluster = self._check_cluster(cluster)
        if cluster == -1:
            # A point in solid (cluster -1) sees and hears nothing.
            return np.zeros(self.num_clusters, bool)
        if kind in self._matrices:
            return np.asarray(self._matrices[kind][cluster])
        start = int(self.bitofs[cluster, kind])
        expanded = _decode_row(self._blob(), start - self.header_size, self.row_bytes,
                               self._where(cluster, kind))
        return _unpack(expanded, self.num_clusters)

    def pvs(self, cluster: int) -> np.ndarray:
        """Which clusters ``cluster`` can see: bool array of shape ``(numclusters,)``.

        Cluster -1 (solid) gives an all-False row.
        """
        return self._row(cluster, DVIS_PVS)

    def pas(self, cluster: int) -> np.ndarray:
        """Which clusters ``cluster`` can hear: bool array of shape ``(numclusters,)``."""
        return self._row(cluster, DVIS_PAS)

    def _input_size(self) -> int:
        return self.header_size + len(self.data)

    def _matrix(self, kind: int) -> np.ndarray:
        if kind not in self._matrices:
            # Rows may be shared, so the matrix can be far larger than the lump.
            check_memory(self._input_size(), self.num_clusters * (2 * self.num_clusters + 9 * self.row_bytes),
                         f"the {_KIND_NAMES[kind]} matrix of {self.num_clusters} clusters", lump=self.lump,
                         offset=self.file_offset)
            expanded = _decode_rows(self._blob(), self.bitofs[:, kind].astype(np.int64) - self.header_size,
                                    self.row_bytes, lambda c: self._where(c, kind))
            matrix = _unpack(expanded, self.num_clusters)
            matrix.flags.writeable = False
            self._matrices[kind] = matrix
        return self._matrices[kind]

    def pvs_matrix(self) -> np.ndarray:
        """The PVS of every cluster: read-only bool array ``(numclusters, numclusters)``.

        ``pvs_matrix()[a, b]`` is True when cluster ``a`` can see cluster ``b``.
        """
        return self._matrix(DVIS_PVS)

    def pas_matrix(self) -> np.ndarray:
        """The PAS of every cluster: read-only bool array ``(numclusters, numclusters)``."""
        return self._matrix(DVIS_PAS)

    def validate(self) -> None:
        """Decode every row, raising the first format error found."""
        clusters = np.arange(self.num_clusters)
        for kind in (DVIS_PVS, DVIS_PAS):
            for _ in self._packed_chunks(clusters, kind):
                pass

    def _packed_chunks(self, clusters: np.ndarray, kind: int) -> Any:
        """(first position, packed rows ``(k, row_bytes)``) of ``clusters`` (>= 0), a bounded chunk at a time."""
        if kind in self._matrices:
            yield 0, _pack(self._matrices[kind][clusters])
            return
        chunk = max(1, _CHUNK_BYTES // max(9 * self.row_bytes, 1))  # rows and their int64 gather index
        bitofs = self.bitofs[:, kind].astype(np.int64) - self.header_size
        for first in range(0, len(clusters), chunk):
            part = clusters[first : first + chunk]
            yield first, _decode_rows(self._blob(), bitofs[part], self.row_bytes,
                                      lambda c, part=part: self._where(int(part[c]), kind))

    def visible(self, a: np.ndarray, b: np.ndarray, kind: int = DVIS_PVS) -> np.ndarray:
        """Whether cluster ``b[i]`` is in the PVS (or PAS) of cluster ``a[i]``, for arrays of clusters.

        Only the distinct rows of ``a`` are decoded, a bounded number at a
        time, so the memory needed does not grow with ``numclusters`` squared.
        Cluster -1 sees nothing and is seen by nothing.
        """
        a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
        a, b = a.ravel(), b.ravel()
        for values in (a, b):
            if len(values) and (values.min() < -1 or values.max() >= self.num_clusters):
                bad = values[(values < -1) | (values >= self.num_clusters)][0]
                raise IndexError(f"cluster {int(bad)} is outside -1..{self.num_clusters - 1}")
        result = np.zeros(len(a), bool)
        open_ = np.flatnonzero((a >= 0) & (b >= 0))
        unique, inverse = np.unique(a[open_], return_inverse=True)
        for first, rows in self._packed_chunks(unique, kind):
            mine = (inverse >= first) & (inverse < first + len(rows))
            row, column = inverse[mine] - first, b[open_][mine]
            result[open_[mine]] = (rows[row, column >> 3] >> (column & 7)) & 1
        return result

    def compressed_row(self, cluster: int, kind: int = DVIS_PVS) -> bytes:
        """The stored (compressed) bytes of one row."""
        cluster = self._check_cluster(cluster)
        if cluster == -1:
            raise IndexError("the solid cluster -1 has no row")
        start = int(self.bitofs[cluster, kind]) - self.header_size
        blob = self._blob()
        _, used = _decode_row(blob, start, self.row_bytes, self._where(cluster, kind), with_length=True)
        return self.data[start : start + used]

    def _blob(self) -> np.ndarray:
        return np.frombuffer(self.data, np.uint8)

    def _where(self, cluster: int, kind: int) -> "_RowPlace":
        return _RowPlace(self.lump, self.file_offset + self.header_size, cluster, _KIND_NAMES[kind])

    # ---- encoding and editing -----------------------------------------------------
    def encode(self, endian: Endian = "<") -> bytes:
        """The lump's bytes: directory then rows."""
        if not self.present:
            return b""
        head = struct.pack(endian + "i", self.num_clusters)
        offsets = np.ascontiguousarray(self.bitofs, dtype=BITOFS.newbyteorder(endian)).tobytes()
        return head + offsets + self.data

    @classmethod
    def empty(cls) -> "Visibility":
        """No visibility data (an empty lump)."""
        return cls(np.zeros((0, 2), np.int32), b"", present=False)

    @classmethod
    def from_matrices(cls, pvs: np.ndarray, pas: np.ndarray | None = None) -> "Visibility":
        """New visibility data laid out as vvis writes it.

        Parameters
        ----------
        pvs : array_like of bool, shape ``(n, n)``
            ``pvs[a, b]``: cluster ``a`` can see cluster ``b``.
        pas : array_like of bool, shape ``(n, n)``, optional
            The PAS; by default derived from the PVS as vvis does
            (:func:`pas_from_pvs`).

        Notes
        -----
        The directory is followed by the PVS rows of clusters 0..n-1 and then
        their PAS rows, each compressed by :func:`compress_rows`.  For data
        vvis wrote, ``from_matrices(v.pvs_matrix(), v.pas_matrix())`` gives
        back the same bytes.
        """
        pvs = np.asarray(pvs, dtype=bool)
        if pvs.ndim != 2 or pvs.shape[0] != pvs.shape[1]:
            raise ValueError(f"the PVS must be a square matrix, not shape {pvs.shape}")
        pas = pas_from_pvs(pvs) if pas is None else np.asarray(pas, dtype=bool)
        if pas.shape != pvs.shape:
            raise ValueError(f"the PAS has shape {pas.shape}, the PVS {pvs.shape}")
        n = len(pvs)
        data, lengths = compress_rows(np.concatenate([_pack(pvs), _pack(pas)]))
        header_size = NUMCLUSTERS.itemsize + 2 * n * BITOFS.itemsize
        starts = header_size + np.concatenate(([0], np.cumsum(lengths)[:-1])) if n else np.zeros(0, np.int64)
        bitofs = np.stack([starts[:n], starts[n:]], axis=1).astype(np.int32)
        return cls(bitofs, data)

    def replace(self, pvs: np.ndarray | None = None, pas: np.ndarray | None = None) -> "Visibility":
        """A copy with new PVS and/or PAS matrices for the same clusters.

        Rows whose bits are unchanged keep their stored bytes and offsets;
        each changed row is compressed and appended after the existing rows
        (the bytes it replaces stay, unused, so no other offset moves).  Use
        :meth:`from_matrices` for a compact, vvis-style lump.
        """
        n = self.num_clusters
        new = {DVIS_PVS: pvs, DVIS_PAS: pas}
        bitofs = np.array(self.bitofs, dtype=np.int32)
        appended: list[bytes] = []
        end = self.header_size + len(self.data)
        for kind, matrix in new.items():
            if matrix is None:
                continue
            matrix = np.asarray(matrix, dtype=bool)
            if matrix.shape != (n, n):
                raise ValueError(f"the new {_KIND_NAMES[kind]} has shape {matrix.shape}, expected {(n, n)} "
                                 "(use Visibility.from_matrices to change the cluster count)")
            changed = np.flatnonzero((matrix != self._matrix(kind)).any(axis=1))
            if not len(changed):
                continue
            data, lengths = compress_rows(_pack(matrix[changed]))
            starts = end + np.concatenate(([0], np.cumsum(lengths)[:-1]))
            bitofs[changed, kind] = starts
            end += len(data)
            appended.append(data)
        if not appended:
            return self
        if not self.present:  # pragma: no cover - an absent lump has no clusters to change
            return self
        return Visibility(bitofs, self.data + b"".join(appended), file_offset=self.file_offset, lump=self.lump)


class _RowPlace:
    """Where a row lives, for error messages: lump, absolute offset of the rows, cluster, kind."""

    __slots__ = ("lump", "base", "cluster", "kind")

    def __init__(self, lump: str, base: int, cluster: int, kind: str) -> None:
        self.lump, self.base, self.cluster, self.kind = lump, base, cluster, kind

    def describe(self) -> str:
        return f"cluster {self.cluster} {self.kind} row"


def _decode_row(blob: np.ndarray, start: int, row_bytes: int, where: _RowPlace,
                with_length: bool = False) -> Any:
    """Expand one compressed row starting at ``blob[start]`` (vectorized over its bytes).

    Returns the expanded row (uint8, ``(row_bytes,)``), and with
    ``with_length`` also the number of compressed bytes it used.
    """
    absolute = where.base + start
    if row_bytes == 0:
        empty = np.zeros(0, np.uint8)
        return (empty, 0) if with_length else empty
    if not 0 <= start < len(blob):
        raise BspFormatError(
            f"{where.describe()} starts outside the row data", lump=where.lump, offset=absolute,
        )
    # A compressed row is at most twice its expanded size (every byte a lone zero).
    window = blob[start : start + 2 * row_bytes]
    zero = window == 0
    # In a valid row every zero starts a pair and the byte after it is the count.
    is_count = np.concatenate(([False], zero[:-1]))
    following = np.concatenate((window[1:], [0])).astype(np.int64)
    out_len = np.where(is_count, 0, np.where(zero, following, 1))
    produced = np.cumsum(out_len)
    last = int(np.searchsorted(produced, row_bytes, "left"))  # the token that completes the row
    truncated = last == len(window) or bool(zero[last] and last + 1 == len(window))
    used = len(window) if truncated else (last + 2 if zero[last] else last + 1)
    # The reading above holds up to the first zero followed by a zero (a count
    # of 0, which vvis never writes); such a pair inside the row is an error.
    bad = np.flatnonzero(zero[: used - 1] & zero[1:used])
    if len(bad):
        raise BspFormatError(f"{where.describe()}: a run of zero bytes with a count of 0",
                             lump=where.lump, offset=absolute + int(bad[0]))
    if truncated:
        have = int(produced[-1]) if len(produced) else 0
        raise TruncatedError(
            f"{where.describe()} ends at the end of the lump after {have} of its {row_bytes} bytes",
            lump=where.lump, offset=absolute, needed=row_bytes, available=have,
        )
    if produced[last] != row_bytes:
        raise BspFormatError(
            f"{where.describe()}: its last run of zeros passes the end of the row "
            f"({int(produced[last])} bytes for a {row_bytes}-byte row)",
            lump=where.lump, offset=absolute + last, needed=row_bytes, available=int(produced[last]),
        )
    token = ~is_count[:used]
    expanded = np.repeat(window[:used][token], out_len[:used][token])
    return (expanded, used) if with_length else expanded


def _decode_rows(blob: np.ndarray, starts: np.ndarray, row_bytes: int, where: Any) -> np.ndarray:
    """Expand many rows at once: ``(len(starts), row_bytes)`` uint8.

    The whole row area is parsed once (every zero byte starts a pair, the
    next byte is its count) and expanded with one ``np.repeat``; rows are
    then slices of that stream.  That reading holds as long as no row starts
    on a count byte and no zero byte is followed by another; otherwise (or
    when a row is malformed) each row is decoded on its own, which finds the
    exact error.
    """
    count = len(starts)
    if row_bytes == 0 or count == 0:
        return np.zeros((count, row_bytes), np.uint8)
    fast = _decode_rows_together(blob, starts, row_bytes)
    if fast is not None:
        return fast
    unique, inverse = np.unique(starts, return_inverse=True)
    first = np.zeros(len(unique), np.int64)
    first[inverse[::-1]] = np.arange(count)[::-1]  # a cluster using each distinct row
    rows = np.stack([_decode_row(blob, int(s), row_bytes, where(int(c))) for s, c in zip(unique, first)])
    return rows[inverse]


def _decode_rows_together(blob: np.ndarray, starts: np.ndarray, row_bytes: int) -> np.ndarray | None:
    size = len(blob)
    if size == 0 or starts.min() < 0 or starts.max() >= size:
        return None
    zero = blob == 0
    if (zero[:-1] & zero[1:]).any():
        return None
    is_count = np.concatenate(([False], zero[:-1]))
    if is_count[starts].any():
        return None
    following = np.concatenate((blob[1:], [0])).astype(np.int64)
    out_len = np.where(is_count, 0, np.where(zero, following, 1))
    ends = np.cumsum(out_len)  # stream position after each byte's token
    if int(ends[-1]) > _STREAM_FACTOR * size + len(starts) * row_bytes:
        return None  # expanding everything would cost more than the rows asked for
    row_begin = ends[starts] - out_len[starts]
    row_end = row_begin + row_bytes
    last = np.searchsorted(ends, row_end, "left")
    if (last >= size).any() or (ends[np.minimum(last, size - 1)] != row_end).any():
        return None
    token = ~is_count
    stream = np.repeat(blob[token], out_len[token])
    return np.asarray(stream[row_begin[:, None] + np.arange(row_bytes)])


class VisibilityCodec:
    """Lump 4 as a :class:`Visibility`."""

    def decode(self, data: memoryview, ctx: LumpContext) -> Visibility:
        size = len(data)
        if size == 0:
            empty = Visibility.empty()
            empty.file_offset, empty.lump = ctx.file_offset, ctx.name
            return empty
        if size < NUMCLUSTERS.itemsize:
            raise TruncatedError(f"{size} bytes cannot hold dvis_t.numclusters",
                                 lump=ctx.name, offset=ctx.file_offset, needed=4, available=size)
        count = int(np.frombuffer(data[:4], NUMCLUSTERS.newbyteorder(ctx.endian))[0])
        header_size = NUMCLUSTERS.itemsize + 2 * BITOFS.itemsize * max(count, 0)
        if count < 0:
            raise BspFormatError(f"dvis_t.numclusters is negative ({count})",
                                 lump=ctx.name, offset=ctx.file_offset)
        if header_size > size:
            raise TruncatedError(
                f"dvis_t.bitofs for {count} clusters needs {header_size} bytes, the lump has {size}",
                lump=ctx.name, offset=ctx.file_offset, needed=header_size, available=size,
            )
        bitofs = np.frombuffer(data[4:header_size], BITOFS.newbyteorder(ctx.endian)).reshape(count, 2)
        if count and size == header_size:
            raise TruncatedError(f"dvis_t has {count} clusters but no rows",
                                 lump=ctx.name, offset=ctx.file_offset + size, needed=1, available=0)
        outside = np.flatnonzero(((bitofs < header_size) | (bitofs >= size)).ravel())
        if len(outside):
            at = int(outside[0])
            cluster, kind = divmod(at, 2)
            raise BspFormatError(
                f"dvis_t.bitofs[{cluster}][{_KIND_NAMES[kind]}] = {int(bitofs.ravel()[at])} is outside "
                f"the row data (lump offsets {header_size}..{size - 1})",
                lump=ctx.name, offset=ctx.file_offset + 4 + 4 * at,
            )
        return Visibility(bitofs, bytes(data[header_size:]), file_offset=ctx.file_offset, lump=ctx.name)

    def encode(self, value: Visibility, ctx: LumpContext) -> bytes:
        return value.encode(ctx.endian)

    def count(self, value: Visibility) -> int:
        return value.num_clusters


VISIBILITY_CODEC = VisibilityCodec()

"""Visibility (lump 4): the dvis_t directory and the run-length compressed PVS/PAS rows."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import BspFormatError, LumpId, TruncatedError
from sourcebsp.codecs.base import LumpContext
from sourcebsp.codecs.visibility import (
    DVIS_PAS,
    DVIS_PVS,
    Visibility,
    VisibilityCodec,
    compress_rows,
    pas_from_pvs,
)

CODEC = VisibilityCodec()


def _ctx(endian: str = "<", file_offset: int = 1000) -> LumpContext:
    return LumpContext(lump=4, name="VISIBILITY", version=0, bsp_version=20, endian=endian,  # type: ignore[arg-type]
                       file_offset=file_offset)


def reference_row(lump: bytes, offset: int, num_clusters: int) -> list[bool]:
    """An independent, byte-at-a-time reading of one row (as bspfile.h describes it)."""
    row_bytes = (num_clusters + 7) // 8
    out = bytearray()
    pos = offset
    while len(out) < row_bytes:
        byte = lump[pos]
        if byte:
            out.append(byte)
            pos += 1
        else:
            out.extend(b"\0" * lump[pos + 1])
            pos += 2
    return [bool(out[j >> 3] & (1 << (j & 7))) for j in range(num_clusters)]


def _vis_lump(bsp: sourcebsp.BspFile) -> bytes:
    return bytes(bsp.lump_bytes(LumpId.VISIBILITY))


# ---- every corpus map ------------------------------------------------------------


def test_decode_encode_gives_the_lump_back(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        vis = bsp.visibility
        assert isinstance(vis, Visibility)
        raw = _vis_lump(bsp)
        assert vis.present == bool(raw)
        assert vis.encode(bsp.endian) == raw
        assert bsp.codec(LumpId.VISIBILITY).encode(vis, bsp._context(LumpId.VISIBILITY)) == raw
        assert bsp.count(LumpId.VISIBILITY) == vis.num_clusters
        if raw:
            assert vis.num_clusters == struct.unpack(bsp.endian + "i", raw[:4])[0]
            assert vis.header_size == 4 + 8 * vis.num_clusters
            assert vis.bitofs.tolist() == np.frombuffer(
                raw[4 : vis.header_size], bsp.endian + "i4").reshape(-1, 2).tolist()
        # The whole map, every lump encoded again, is the same file.
        assert bsp.to_bytes(reencode=True) == map_path.read_bytes()


def test_num_clusters_matches_the_leaf_clusters(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        vis = bsp.visibility
        leaf_clusters = bsp.leafs["cluster"]
        if vis.present:
            assert vis.num_clusters == int(leaf_clusters.max()) + 1
            # every cluster number is used by some leaf
            assert set(np.unique(leaf_clusters[leaf_clusters >= 0]).tolist()) == set(range(vis.num_clusters))
        else:
            assert vis.num_clusters == 0
        assert bsp.num_clusters == int(leaf_clusters.max()) + 1


def test_rows_facts_that_hold_for_vvis_output(map_path: Path) -> None:
    """Measured on the corpus: each holds for every map vvis was run on."""
    with sourcebsp.open(map_path) as bsp:
        vis = bsp.visibility
        if not vis.present:
            assert vis.pvs_matrix().shape == (0, 0)
            return
        n = vis.num_clusters
        pvs, pas = vis.pvs_matrix(), vis.pas_matrix()
        assert pvs.shape == pas.shape == (n, n) and pvs.dtype == bool
        assert pvs.diagonal().all(), "every cluster sees itself"
        assert pas.diagonal().all()
        assert (pvs == pvs.T).all(), "vvis PVS is symmetric on every corpus map"
        assert (pas <= pas.T).all() and (pas >= pvs).all()
        # vvis CalcPAS: a cluster hears everything its visible clusters see.
        assert (pas == pas_from_pvs(pvs)).all()
        # vvis' layout: PVS rows of clusters 0..n-1 then PAS rows, back to back.
        starts = np.concatenate([vis.bitofs[:, DVIS_PVS], vis.bitofs[:, DVIS_PAS]])
        assert starts[0] == vis.header_size and (np.diff(starts) > 0).all()


def test_rows_equal_an_independent_byte_by_byte_decoder(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        vis = bsp.visibility
        if not vis.present:
            return
        raw = _vis_lump(bsp)
        n = vis.num_clusters
        picks = sorted({0, 1 % n, n // 2, n - 1, *np.random.default_rng(n).integers(0, n, 5).tolist()})
        for cluster in picks:
            for kind, single, matrix in ((DVIS_PVS, vis.pvs, vis.pvs_matrix), (DVIS_PAS, vis.pas, vis.pas_matrix)):
                expected = reference_row(raw, int(vis.bitofs[cluster, kind]), n)
                assert single(cluster).tolist() == expected
                assert matrix()[cluster].tolist() == expected
                stored = vis.compressed_row(cluster, kind)
                offset = int(vis.bitofs[cluster, kind])
                assert raw[offset : offset + len(stored)] == stored


def test_rows_equal_srctools(map_path: Path) -> None:
    srctools_bsp = pytest.importorskip("srctools.bsp")
    with sourcebsp.open(map_path) as bsp:
        vis = bsp.visibility
        try:
            theirs = srctools_bsp.BSP(str(map_path)).visibility
        except Exception:
            # srctools 2.x cannot open two corpus maps (VTMB's BSP 17 faces, the
            # big-endian Xbox 360 file); the decoder test above covers them.
            assert map_path.stem in ("vtmb_sp_genesisdevice_1", "x360_shack")
            return
        if not vis.present:
            assert theirs is None
            return
        n = vis.num_clusters
        for ours, rows in ((vis.pvs_matrix(), theirs.potentially_visible),
                           (vis.pas_matrix(), theirs.potentially_audible)):
            bits = np.unpackbits(np.frombuffer(b"".join(bytes(r) for r in rows), np.uint8).reshape(n, -1),
                                 axis=1, bitorder="little")[:, :n].astype(bool)
            assert (bits == ours).all()


def test_vvis_layout_is_rebuilt_byte_for_byte(map_path: Path) -> None:
    """The compressor writes what vvis wrote: from the matrices back to the same lump."""
    with sourcebsp.open(map_path) as bsp:
        vis = bsp.visibility
        if not vis.present:
            return
        raw = _vis_lump(bsp)
        assert Visibility.from_matrices(vis.pvs_matrix(), vis.pas_matrix()).encode(bsp.endian) == raw
        # and with the PAS derived from the PVS as vvis does
        assert Visibility.from_matrices(vis.pvs_matrix()).encode(bsp.endian) == raw
        assert vis.replace(pvs=vis.pvs_matrix(), pas=vis.pas_matrix()) is vis


def test_edit_keeps_unchanged_rows_and_survives_save(map_path: Path, tmp_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        vis = bsp.visibility
        if not vis.present or vis.num_clusters < 2:
            return
        raw = _vis_lump(bsp)
        n = vis.num_clusters
        pvs = vis.pvs_matrix().copy()
        pvs[0, n - 1] = pvs[n - 1, 0] = not pvs[0, n - 1]
        edited = vis.replace(pvs=pvs)
        assert edited is not vis and (edited.pvs_matrix() == pvs).all()
        assert (edited.pas_matrix() == vis.pas_matrix()).all()
        moved = np.flatnonzero((edited.bitofs != vis.bitofs).any(axis=1)).tolist()
        assert moved == [0, n - 1]
        assert edited.encode(bsp.endian)[: len(raw)] == raw[:4] + edited.bitofs.astype(
            bsp.endian + "i4").tobytes() + raw[edited.header_size :]
        bsp.set_lump(LumpId.VISIBILITY, edited)
        out = bsp.save(tmp_path / "edited.bsp")
    with sourcebsp.open(out) as again:
        assert (again.visibility.pvs_matrix() == pvs).all()
        assert again.visibility == edited
        assert again.is_visible(0, n - 1) == bool(pvs[0, n - 1])


# ---- synthetic data ----------------------------------------------------------------


def test_compress_rows_follows_vvis_rules() -> None:
    rows = np.zeros((3, 80), np.uint8)
    rows[0, 0] = 5  # literal, then 79 zeros
    rows[1, 40] = 7  # 40 zeros, literal, 39 zeros
    # row 2: all zeros -> one pair of 80
    data, lengths = compress_rows(rows)
    assert data == bytes([5, 0, 79, 0, 40, 7, 0, 39, 0, 80])
    assert lengths.tolist() == [3, 5, 2]
    long = np.zeros((1, 600), np.uint8)
    long[0, -1] = 1
    data, _ = compress_rows(long)
    assert data == bytes([0, 255, 0, 255, 0, 89, 1])


@pytest.mark.parametrize("n", [1, 7, 8, 9, 300, 2100])
@pytest.mark.parametrize("endian", ["<", ">"])
def test_random_matrices_round_trip(n: int, endian: str) -> None:
    rng = np.random.default_rng(n)
    pvs = rng.random((n, n)) < (0.02 if n > 100 else 0.5)
    pvs |= pvs.T
    pvs[0, :] = pvs[:, 0] = False  # cluster 0 sees only itself: its row is one long zero run
    np.fill_diagonal(pvs, True)
    # Past 2040 clusters a row is over 255 bytes, so long zero runs need several pairs.
    pas = pas_from_pvs(pvs) if n < 1000 else rng.random((n, n)) < 0.5
    built = Visibility.from_matrices(pvs) if n < 1000 else Visibility.from_matrices(pvs, pas)
    blob = built.encode(endian)
    decoded = CODEC.decode(memoryview(blob), _ctx(endian))
    assert decoded == built
    assert (decoded.pvs_matrix() == pvs).all()
    assert (decoded.pas_matrix() == pas).all()
    for cluster in (0, n - 1):
        assert decoded.pvs(cluster).tolist() == reference_row(blob, int(decoded.bitofs[cluster, 0]), n)
    if n > 2040:
        assert decoded.compressed_row(0) == bytes([1, 0, 255, 0, (n + 7) // 8 - 256])
    assert CODEC.encode(decoded, _ctx(endian)) == blob


def test_shared_rows_and_gaps_decode() -> None:
    """Rows shared by clusters, unused bytes and zero pairs between rows still decode."""
    n = 10
    row_a = bytes([0b00000011, 0b01])  # clusters 0, 1, 8
    row_b = bytes([0, 1, 0b10])  # cluster 9
    header = 4 + 8 * n
    body = row_a + b"\0\0" + row_b  # two unused zero bytes between the rows
    offs = [header if c % 2 == 0 else header + 4 for c in range(n)]
    bitofs = np.array([[o, header] for o in offs], np.int32)
    blob = struct.pack("<i", n) + bitofs.tobytes() + body
    vis = CODEC.decode(memoryview(blob), _ctx())
    pvs = vis.pvs_matrix()
    assert np.flatnonzero(pvs[0]).tolist() == [0, 1, 8]
    assert np.flatnonzero(pvs[1]).tolist() == [9]
    assert (vis.pas_matrix() == pvs[0]).all()
    assert vis.pvs(3).tolist() == pvs[3].tolist()
    assert vis.encode() == blob


def test_solid_cluster_has_no_pvs_and_range_is_checked() -> None:
    vis = Visibility.from_matrices(np.ones((4, 4), bool))
    assert vis.pvs(-1).tolist() == [False] * 4
    assert vis.pas(-1).tolist() == [False] * 4
    with pytest.raises(IndexError):
        vis.pvs(4)
    with pytest.raises(IndexError):
        vis.pvs(-2)


def test_empty_lump_means_no_visibility_data() -> None:
    vis = CODEC.decode(memoryview(b""), _ctx())
    assert not vis.present and vis.num_clusters == 0
    assert CODEC.encode(vis, _ctx()) == b""
    only_count = struct.pack("<i", 0)
    zero = CODEC.decode(memoryview(only_count), _ctx())
    assert zero.present and zero.num_clusters == 0 and zero.encode() == only_count


# ---- malformed input: each error names the absolute file offset ----------------------


def _lump(n: int, bitofs: list[tuple[int, int]], body: bytes, endian: str = "<") -> bytes:
    return struct.pack(endian + "i", n) + np.array(bitofs, endian + "i4").tobytes() + body


def test_truncated_directory() -> None:
    with pytest.raises(TruncatedError) as info:
        CODEC.decode(memoryview(b"\1\0"), _ctx())
    assert info.value.offset == 1000
    with pytest.raises(TruncatedError) as info:
        CODEC.decode(memoryview(struct.pack("<ii", 5, 44)), _ctx())
    assert info.value.needed == 44 and info.value.available == 8 and "file offset 1000" in str(info.value)


def test_negative_cluster_count() -> None:
    with pytest.raises(BspFormatError, match="negative"):
        CODEC.decode(memoryview(struct.pack("<i", -3)), _ctx())


def test_offset_outside_the_lump() -> None:
    blob = _lump(2, [(20, 21), (20, 99)], bytes([1, 1, 1, 1]))
    with pytest.raises(BspFormatError) as info:
        CODEC.decode(memoryview(blob), _ctx())
    # bitofs[1][PAS] is the fourth int of the directory: 4 + 3 * 4 bytes in
    assert info.value.offset == 1000 + 16
    assert "bitofs[1][PAS] = 99" in str(info.value)
    inside_header = _lump(2, [(20, 8), (20, 21)], bytes([1, 1, 1, 1]))
    with pytest.raises(BspFormatError) as info:
        CODEC.decode(memoryview(inside_header), _ctx())
    assert info.value.offset == 1000 + 8


def test_truncated_row() -> None:
    n = 40  # five bytes per row
    header = 4 + 8 * n
    body = bytes([0xFF, 0xFF, 0, 2])  # four bytes of five, then the lump ends
    blob = _lump(n, [(header, header)] * n, body)
    vis = CODEC.decode(memoryview(blob), _ctx())
    with pytest.raises(TruncatedError) as info:
        vis.pvs(3)
    assert info.value.offset == 1000 + header and info.value.needed == 5 and info.value.available == 4
    assert "cluster 3 PVS row" in str(info.value)
    with pytest.raises(TruncatedError):
        vis.pvs_matrix()
    # A zero pair cut off after its zero byte
    cut = _lump(n, [(header, header)] * n, bytes([0xFF, 0]))
    with pytest.raises(TruncatedError):
        CODEC.decode(memoryview(cut), _ctx()).pas(0)


def test_zero_count_and_overlong_run() -> None:
    n = 16
    header = 4 + 8 * n
    zero_count = _lump(n, [(header, header)] * n, bytes([0, 0, 1, 1]))
    with pytest.raises(BspFormatError, match="count of 0") as info:
        CODEC.decode(memoryview(zero_count), _ctx()).validate()
    assert info.value.offset == 1000 + header
    overlong = _lump(n, [(header, header)] * n, bytes([1, 0, 9]))
    with pytest.raises(BspFormatError, match="passes the end of the row") as info:
        CODEC.decode(memoryview(overlong), _ctx()).pvs(0)
    assert info.value.offset == 1000 + header + 1


def test_truncated_row_in_a_real_map(all_maps: list[Path]) -> None:
    """A corrupt offset in a corpus map: the error names where in the file the row is."""
    path = next(p for p in all_maps if p.stem == "tf2_test2")
    data = bytearray(path.read_bytes())
    with sourcebsp.open(path) as bsp:
        entry = bsp.entry(LumpId.VISIBILITY)
        n = bsp.visibility.num_clusters
    last_byte = entry.filelen - 1
    assert data[entry.fileofs + last_byte] != 0
    # point the last cluster's PAS row at the lump's last byte
    struct.pack_into("<i", data, entry.fileofs + 4 + 8 * (n - 1) + 4, last_byte)
    bsp = sourcebsp.BspFile.from_bytes(bytes(data))
    with pytest.raises(TruncatedError) as info:
        bsp.visibility.pas(n - 1)
    assert info.value.offset == entry.fileofs + last_byte
    assert info.value.lump == "VISIBILITY"

"""Damaged copies of corpus maps: each fault raises its own error class, naming the
lump and the absolute file offset, and never crashes or hangs."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.compression import LZMA_HEADER, lzma_compress, lzma_decompress
from sourcebsp.header import HEADER_SIZE



def _entry_offset(index: int) -> int:
    return 8 + 16 * index


def _damaged(tmp_path: Path, source: Path, edit) -> Path:
    data = bytearray(source.read_bytes())
    edit(data)
    out = tmp_path / f"damaged_{source.name}"
    out.write_bytes(bytes(data))
    return out


def test_truncated_file(tmp_path: Path, corpus_file) -> None:
    """A file cut short opens; its whole lumps read as in the full file, the others raise
    TruncatedError when read (naming the lump, its offset, the file's size and the size needed)."""
    source = corpus_file("tf2_mp_lobby.bsp")
    path = _damaged(tmp_path, source, lambda d: d.__delitem__(slice(len(d) // 2, None)))
    size = len(source.read_bytes()) // 2
    with sourcebsp.open(path) as bsp, sourcebsp.open(source) as full:
        cut = [lump for lump, e in full.iter_lumps() if e.fileofs + e.filelen > size]
        assert cut and bsp.truncated() == cut
        for lump, entry in full.iter_lumps():
            if lump in cut:
                with pytest.raises(sourcebsp.TruncatedError) as info:
                    bsp.lump_bytes(lump)
                error = info.value
                assert error.lump == full.lump_name(lump) and error.offset == entry.fileofs
                assert f"file offset {error.offset}" in str(error) and error.lump in str(error)
                assert error.available == size and error.needed == entry.fileofs + entry.filelen
                assert f"the file is {size} bytes, this lump needs {error.needed}" in str(error)
            else:
                assert bytes(bsp.lump_bytes(lump)) == bytes(full.lump_bytes(lump))
        with pytest.raises(sourcebsp.TruncatedError):
            bsp.decode_all()
        with pytest.raises(sourcebsp.TruncatedError):
            bsp.save(tmp_path / "out.bsp")
        assert not (tmp_path / "out.bsp").exists()


def test_file_shorter_than_header(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_mp_lobby.bsp")
    path = _damaged(tmp_path, source, lambda d: d.__delitem__(slice(500, None)))
    with pytest.raises(sourcebsp.TruncatedError, match="1036-byte header"):
        sourcebsp.open(path)


def test_lump_past_end_of_file(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("css_2000.bsp")
    size = source.stat().st_size

    def edit(d: bytearray) -> None:  # PLANES' filelen runs off the end
        struct.pack_into("<i", d, _entry_offset(LumpId.PLANES) + 4, size)

    with sourcebsp.open(_damaged(tmp_path, source, edit)) as bsp, pytest.raises(sourcebsp.TruncatedError) as info:
        bsp.planes
    assert info.value.lump == "PLANES"
    assert info.value.offset == 1036
    assert "PLANES" in str(info.value) and "file offset 1036" in str(info.value)


def test_negative_offset(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_test2.bsp")

    def edit(d: bytearray) -> None:
        struct.pack_into("<i", d, _entry_offset(LumpId.VERTEXES), -64)

    with pytest.raises(sourcebsp.BspFormatError, match="VERTEXES"):
        sourcebsp.open(_damaged(tmp_path, source, edit))


def test_length_not_a_multiple_of_record(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_test2.bsp")

    def edit(d: bytearray) -> None:
        length = struct.unpack_from("<i", d, _entry_offset(LumpId.PLANES) + 4)[0]
        struct.pack_into("<i", d, _entry_offset(LumpId.PLANES) + 4, length - 3)

    with sourcebsp.open(_damaged(tmp_path, source, edit)) as bsp:
        assert len(bsp.vertexes)  # other lumps still read
        with pytest.raises(sourcebsp.LumpSizeError) as info:
            bsp.planes
    assert info.value.lump == "PLANES" and info.value.offset == bsp.entry("PLANES").fileofs
    assert "20-byte record" in str(info.value)


def test_wrong_magic(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_test2.bsp")
    path = _damaged(tmp_path, source, lambda d: d.__setitem__(slice(0, 4), b"ZBSP"))
    with pytest.raises(sourcebsp.UnsupportedError, match="ZBSP"):
        sourcebsp.open(path)


def _compressed_lump(bsp: sourcebsp.BspFile) -> int:
    return next(i for i, e in enumerate(bsp.header.lumps) if e.compressed and e.filelen > 100)


def test_corrupt_lzma_stream(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2c_vipr_downfall.bsp")
    with sourcebsp.open(source) as bsp:
        index = _compressed_lump(bsp)
        entry = bsp.entry(index)

    def edit(d: bytearray) -> None:
        body = entry.fileofs + LZMA_HEADER.itemsize
        d[body + 8 : body + 40] = bytes(range(32))

    with sourcebsp.open(_damaged(tmp_path, source, edit)) as bsp:
        with pytest.raises(sourcebsp.CompressionError) as info:
            bsp.get_lump(index)
    assert info.value.lump == bsp.lump_name(index)
    assert info.value.offset == entry.fileofs + LZMA_HEADER.itemsize


def test_lzma_bad_id_and_size_mismatch(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("x360_shack.bsp")  # big-endian: lzma_header_t stays little-endian
    with sourcebsp.open(source) as bsp:
        index = _compressed_lump(bsp)
        entry = bsp.entry(index)
    bad_id = _damaged(tmp_path, source, lambda d: d.__setitem__(slice(entry.fileofs, entry.fileofs + 4), b"LZMB"))
    with sourcebsp.open(bad_id) as bsp, pytest.raises(sourcebsp.CompressionError, match="LZMB"):
        bsp.get_lump(index)

    def wrong_size(d: bytearray) -> None:  # directory's fourCC disagrees with actualSize
        struct.pack_into(">i", d, _entry_offset(index) + 12, entry.fourcc + 4)

    with sourcebsp.open(_damaged(tmp_path, source, wrong_size)) as bsp:
        with pytest.raises(sourcebsp.CompressionError, match="directory says"):
            bsp.get_lump(index)


def test_lzma_bomb_is_refused_before_decompressing() -> None:
    block = bytearray(lzma_compress(bytes(1000)))
    struct.pack_into("<I", block, 4, 0xFFFFFFF0)  # claim ~4 GiB
    with pytest.raises(sourcebsp.CompressionError, match="limit"):
        lzma_decompress(bytes(block), lump="PLANES", offset=5000)


def test_lzma_stream_shorter_than_claimed() -> None:
    block = lzma_compress(b"abc" * 1000)
    with pytest.raises(sourcebsp.TruncatedError) as info:
        lzma_decompress(block[:-10], lump="EDGES", offset=2000)
    assert info.value.offset == 2000 + LZMA_HEADER.itemsize


def test_lzma_round_trip() -> None:
    payload = np.arange(10000, dtype="<i4").tobytes()
    block = lzma_compress(payload)
    assert block[:4] == b"LZMA" and len(block) < len(payload)
    assert lzma_decompress(block, expected_size=len(payload)) == payload


def test_error_hierarchy() -> None:
    assert issubclass(sourcebsp.TruncatedError, sourcebsp.BspFormatError)
    assert issubclass(sourcebsp.TruncatedError, EOFError)
    assert issubclass(sourcebsp.BspFormatError, ValueError)
    assert issubclass(sourcebsp.UnsupportedError, sourcebsp.BspError)
    assert not issubclass(sourcebsp.UnsupportedError, sourcebsp.BspFormatError)
    for cls in (sourcebsp.LumpSizeError, sourcebsp.CompressionError):
        assert issubclass(cls, sourcebsp.BspFormatError)
    assert HEADER_SIZE == 1036


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.97])
def test_truncated_corpus_maps_raise_only_bsp_errors(map_path: Path, tmp_path: Path, fraction: float) -> None:
    data = map_path.read_bytes()
    cut = tmp_path / "cut.bsp"
    cut.write_bytes(data[: int(len(data) * fraction)])
    with sourcebsp.open(cut) as bsp:
        assert bsp.truncated()
        with pytest.raises(sourcebsp.TruncatedError):
            bsp.decode_all()


def test_scrambled_lumps_raise_only_bsp_errors(map_path: Path, tmp_path: Path) -> None:
    """Random bytes in place of every lump: decoding may succeed or raise a BspError, nothing else."""
    rng = np.random.default_rng(1234)
    data = bytearray(map_path.read_bytes())
    data[HEADER_SIZE:] = rng.integers(0, 256, len(data) - HEADER_SIZE, dtype=np.uint8).tobytes()
    path = tmp_path / "scrambled.bsp"
    path.write_bytes(bytes(data))
    with sourcebsp.open(path) as bsp:
        for index in range(64):
            try:
                bsp.get_lump(index)
            except sourcebsp.BspError as exc:
                assert exc.offset is not None, (bsp.lump_name(index), exc)

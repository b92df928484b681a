"""LZMA blocks: the per-file decompression budget, the dictionary cap, blocks shared by entries."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import BspFile, DecompressionLimitError, Limits, LumpId
from sourcebsp.compression import LZMA_HEADER, Decompressor, lzma_compress, lzma_decompress
from sourcebsp.header import HEADER_SIZE, Header, LumpEntry

ROOT = Path(__file__).resolve().parent.parent
RAW_LUMPS = (LumpId.XZIPPAKFILE, LumpId.PHYSLEVEL, LumpId.DISP_MULTIBLEND)  # no codec: bytes only


def _map_with_shared_block(size: int, entries: int = 12) -> bytes:
    """A map whose ``entries`` directory entries all point at one LZMA block of ``size`` zeros."""
    block = lzma_compress(bytes(size))
    lumps = [LumpEntry()] * 64
    slots = [LumpId.PLANES, LumpId.VERTEXES, LumpId.EDGES, LumpId.SURFEDGES, LumpId.LEAFFACES,
             LumpId.LEAFBRUSHES, LumpId.PRIMINDICES, LumpId.VERTNORMALS, LumpId.VERTNORMALINDICES,
             LumpId.CLIPPORTALVERTS, LumpId.DISP_LIGHTMAP_ALPHAS, *RAW_LUMPS][:entries]
    for slot in slots:
        lumps[slot] = LumpEntry(HEADER_SIZE, len(block), 0, size)
    return Header(lumps=lumps).to_bytes() + block


def test_lzma_header_dtype_matches_the_struct() -> None:
    assert LZMA_HEADER.itemsize == 17  # sizeof(lzma_header_t), packed


SIZE = 60 << 14  # a whole number of records of every lump used (20, 12, 4, 2, 1 bytes)


def test_shared_block_is_decoded_and_counted_once() -> None:
    size = SIZE
    bsp = BspFile.from_bytes(_map_with_shared_block(size), limits=Limits(total_size=size))
    bsp.decode_all()
    contents = [bsp.lump_bytes(i) for i in range(64) if bsp.entry(i).filelen]
    assert len(contents) == 12
    assert all(c.obj is contents[0].obj for c in contents)  # one decoded buffer
    assert bsp.decompressed_size == size
    assert len(bsp.vertexes) == size // 12 and not bsp.vertexes.any()


def test_total_budget_is_enforced_with_a_message_that_says_how_to_raise_it() -> None:
    size = SIZE
    bsp = BspFile.from_bytes(_map_with_shared_block(size), limits=Limits(total_size=size - 1))
    with pytest.raises(DecompressionLimitError, match=r"total_size.*Limits\(total_size=") as caught:
        bsp.get_lump(LumpId.PLANES)
    assert caught.value.limit == "total_size" and caught.value.offset == HEADER_SIZE
    assert isinstance(caught.value, sourcebsp.BspError)


def test_default_total_budget_follows_the_file_size() -> None:
    assert Limits().total_for(1000) == 256 << 20
    assert Limits().total_for(100 << 20) == 32 * (100 << 20)
    assert Limits(total_size=5).total_for(100 << 20) == 5


def test_game_lumps_share_the_file_budget(corpus_file) -> None:
    path = corpus_file("tf2c_vipr_downfall.bsp")  # LZMA lumps and LZMA game lumps
    with sourcebsp.open(path) as bsp:
        blocks = {(e.fileofs, e.filelen): e.fourcc for e in bsp.header.lumps if e.compressed}
        directory_total = sum(blocks.values())
        games = sum(len(g.data) for g in bsp.game_lumps if g.compressed)
    assert games > 0
    with sourcebsp.open(path, limits=Limits(total_size=directory_total)) as bsp:
        for index in range(64):
            bsp.lump_bytes(index)  # every directory block fits exactly
        assert bsp.decompressed_size == directory_total
        with pytest.raises(DecompressionLimitError, match="GAME_LUMP") as caught:
            bsp.get_lump(LumpId.GAME_LUMP)
        assert caught.value.limit == "total_size"
    with sourcebsp.open(path, limits=Limits(total_size=directory_total + games)) as bsp:
        bsp.decode_all()
        assert bsp.decompressed_size == directory_total + games


def _with_dictionary(block: bytes, dictionary: int) -> bytes:
    patched = bytearray(block)
    struct.pack_into("<I", patched, 13, dictionary)  # properties[1..4]: the dictionary size
    return bytes(patched)


def test_dictionary_cap() -> None:
    payload = b"sourcebsp " * 5000
    block = _with_dictionary(lzma_compress(payload), 3 << 30)  # asks for a 3 GiB dictionary
    with pytest.raises(DecompressionLimitError, match="dictionary_size") as caught:
        lzma_decompress(block, lump="LIGHTING", offset=4000)
    assert caught.value.limit == "dictionary_size" and caught.value.offset == 4013
    assert "Limits(dictionary_size=" in str(caught.value)
    trusting = Decompressor(Limits(dictionary_size=4 << 30))
    assert trusting.decompress(block) == payload


def test_raised_dictionary_cap_allocates_only_what_the_data_needs(tmp_path: Path) -> None:
    """Under a 2 GiB address-space limit a block asking for 3 GiB still decodes once allowed."""
    path = tmp_path / "map.bsp"
    payload_size = 200_000
    data = bytearray(_map_with_shared_block(payload_size, entries=1))
    struct.pack_into("<I", data, HEADER_SIZE + 13, 3 << 30)
    path.write_bytes(data)
    script = (
        "import resource, sys, sourcebsp\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "try:\n"
        "    sourcebsp.open(sys.argv[1]).decode_all()\n"
        "except sourcebsp.DecompressionLimitError as e:\n"
        "    print(e.limit)\n"
        "bsp = sourcebsp.open(sys.argv[1], limits=sourcebsp.Limits(dictionary_size=4 << 30))\n"
        "print(len(bsp.lump_bytes(1)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["dictionary_size", str(payload_size)]


def test_block_size_limit_is_overridable(corpus_file) -> None:
    path = corpus_file("tf2c_vipr_downfall.bsp")
    with sourcebsp.open(path) as bsp:
        largest = max(e.fourcc for e in bsp.header.lumps if e.compressed)
    with sourcebsp.open(path, limits=Limits(block_size=largest - 1)) as bsp:
        with pytest.raises(DecompressionLimitError, match="block_size"):
            bsp.decode_all()
    with sourcebsp.open(path, limits=Limits(block_size=largest)) as bsp:
        bsp.decode_all()


def test_parallel_decode_gives_what_sequential_decode_gives(corpus_file) -> None:
    path = corpus_file("tf2c_vipr_downfall.bsp")
    with sourcebsp.open(path) as parallel, sourcebsp.open(path) as sequential:
        decoded = parallel.decode_all()
        for index, value in decoded.items():
            one = sequential.get_lump(index)
            codec = sequential.codec(index)
            if codec is None:
                assert value.data == one.data
            else:
                ctx = sequential._context(index)
                assert codec.encode(value, ctx) == codec.encode(one, ctx), sequential.lump_name(index)


def test_corrupt_block_in_parallel_decode_raises_a_bsp_error(corpus_file, tmp_path: Path) -> None:
    source = corpus_file("tf2c_vipr_downfall.bsp")
    data = bytearray(source.read_bytes())
    with sourcebsp.open(source) as bsp:
        entry = bsp.entry(LumpId.LIGHTING)
    assert entry.compressed
    middle = entry.fileofs + entry.filelen // 2
    data[middle : middle + 64] = bytes(64)
    (tmp_path / "bad.bsp").write_bytes(data)
    with sourcebsp.open(tmp_path / "bad.bsp") as bsp:
        with pytest.raises(sourcebsp.CompressionError, match="LIGHTING"):
            bsp.decode_all()


def test_compressed_round_trip_keeps_content() -> None:
    for payload in (b"", b"x", np.arange(100_000, dtype="<i4").tobytes()):
        block = lzma_compress(payload)
        assert lzma_decompress(block, expected_size=len(payload)) == payload


def test_threads_decoding_one_block_share_one_decode() -> None:
    from concurrent.futures import ThreadPoolExecutor

    payload = bytes(range(256)) * 4000
    block = lzma_compress(payload)
    decompressor = Decompressor(Limits(total_size=len(payload)))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: decompressor.decompress(block, offset=100), range(32)))
    assert all(r is results[0] for r in results) and results[0] == payload
    assert decompressor.used == len(payload)


def test_parallel_decode_in_a_forked_child(corpus_file) -> None:
    """The thread pool made before a fork is not reused by the child (its threads are gone)."""
    import multiprocessing

    path = corpus_file("tf2c_vipr_downfall.bsp")
    with sourcebsp.open(path) as bsp:
        bsp.decode_all()  # makes the pool in this process
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        sizes = pool.map_async(_decoded_size, [str(path)]).get(timeout=120)  # a stale pool hangs
    with sourcebsp.open(path) as bsp:
        bsp.decode_all()
        assert sizes == [bsp.decompressed_size]


def _decoded_size(path: str) -> int:
    with sourcebsp.open(path) as bsp:
        bsp.decode_all()
        return bsp.decompressed_size


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS")
def test_a_block_larger_than_the_address_space_limit_is_a_typed_error() -> None:
    """A direct ``lzma_decompress`` (no file budget) of a block claiming 1 GiB, under a 768 MiB
    address-space limit: a LimitExceededError naming the lump and offset, not a MemoryError."""
    script = (
        "import resource, struct, sourcebsp\n"
        "from sourcebsp.compression import lzma_compress, lzma_decompress\n"
        "from sourcebsp.errors import LimitExceededError\n"
        "block = bytearray(lzma_compress(bytes(1000)))\n"
        "struct.pack_into('<I', block, 4, (1 << 30) - 1)  # actualSize: just under the block limit\n"
        "resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))\n"
        "try:\n"
        "    lzma_decompress(bytes(block), lump='LIGHTING', offset=4096)\n"
        "except LimitExceededError as e:\n"
        "    print(type(e).__name__, e.limit, e.lump, e.offset)\n"
        "except sourcebsp.BspError as e:\n"  # allowed too: the stream ends early
        "    print(type(e).__name__, 'early', e.lump, e.offset)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["LimitExceededError", "memory", "LIGHTING", "4096"]

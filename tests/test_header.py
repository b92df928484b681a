"""The header and lump directory, on synthetic headers and on every corpus map."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import sourcebsp
from sourcebsp.header import HEADER_SIZE, Header, LumpEntry, header_struct, read_header
from sourcebsp.variants import supported_versions


def test_header_size_is_dheader_t() -> None:
    # 4 ident + 4 version + 64 * 16 lump_t + 4 mapRevision (bspfile.h)
    assert HEADER_SIZE == 1036
    assert header_struct(">").size == header_struct("<").size == 1036


def _synthetic(order: str, endian: str = "<") -> bytes:
    """A header with one 20-byte lump right after it, in the given directory order."""
    ident = b"VBSP" if endian == "<" else b"PSBV"
    entries = [LumpEntry()] * 64
    entries[1] = LumpEntry(fileofs=HEADER_SIZE, filelen=20, version=0, fourcc=0)
    entries[7] = LumpEntry(fileofs=HEADER_SIZE + 20, filelen=56, version=1, fourcc=0)
    header = Header(ident, 21, entries, 7, order)  # type: ignore[arg-type]
    return header.to_bytes() + bytes(76)


@pytest.mark.parametrize("order", ["std", "l4d2"])
@pytest.mark.parametrize("endian", ["<", ">"])
def test_directory_order_and_endianness_detected(order: str, endian: str) -> None:
    data = _synthetic(order, endian)
    header = read_header(data)
    assert header.lump_order == order
    assert header.endian == endian
    assert header.lumps[7] == LumpEntry(HEADER_SIZE + 20, 56, 1, 0)
    assert header.map_revision == 7
    assert header.to_bytes() == data[:HEADER_SIZE]


def test_every_corpus_header_round_trips(map_path) -> None:
    data = map_path.read_bytes()
    header = read_header(data)
    assert header.to_bytes() == data[:HEADER_SIZE]
    # The detected directory must hold every non-empty lump inside the file.
    for entry in header.lumps:
        if entry.filelen:
            assert HEADER_SIZE <= entry.fileofs and entry.fileofs + entry.filelen <= len(data)


def test_l4d2_order_found_on_every_v21_corpus_map(all_maps) -> None:
    checked = 0
    for path in all_maps:
        data = path.read_bytes()
        if struct.unpack("<i", data[4:8])[0] != 21:
            continue
        # Independent check: in the L4D2 layout the first int of lump_t is a small version
        # number, so reading it as an offset would put non-empty lumps inside the header.
        raw = np.frombuffer(data, "<i4", 64 * 4, 8).reshape(64, 4)
        looks_l4d2 = bool(((raw[:, 0] < HEADER_SIZE) & (raw[:, 2] > 0)).any())
        assert read_header(data).lump_order == ("l4d2" if looks_l4d2 else "std"), path.name
        # Cut short, the file still reads in the right order: the error names a lump
        # whose real extent passes the cut.
        cut = len(data) // 3
        with pytest.raises(sourcebsp.TruncatedError) as info:
            read_header(data[:cut])
        assert info.value.offset is not None and info.value.offset >= HEADER_SIZE
        assert info.value.needed is not None and info.value.needed > cut
        checked += 1
    assert checked >= 5


def test_corpus_has_both_v21_directory_orders(all_maps) -> None:
    orders = set()
    for path in all_maps:
        header = read_header(path.read_bytes())
        if header.version == 21:
            orders.add(header.lump_order)
    assert orders == {"std", "l4d2"}


def test_unknown_ident_and_version_are_unsupported() -> None:
    with pytest.raises(sourcebsp.UnsupportedError, match="IBSP"):
        read_header(b"IBSP" + bytes(2000))
    data = bytearray(_synthetic("std"))
    data[4:8] = struct.pack("<i", 99)
    with pytest.raises(sourcebsp.UnsupportedError, match="version 99"):
        read_header(bytes(data), versions=supported_versions())
    with pytest.raises(sourcebsp.UnsupportedError, match="version 99"):
        sourcebsp.BspFile.from_bytes(bytes(data))
    assert read_header(bytes(data)).version == 99  # the directory alone judges no version

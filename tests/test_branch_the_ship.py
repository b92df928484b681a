"""The Ship and Bloody Good Time told from the file by their static prop records: v5 and v6 with a
128-byte targetname (BSPSource's DStaticPropV5Ship, 188 bytes, and DStaticPropV6BGT, 192; bsp_tool
0.7.0's outerlight branch has no static props).  Other BSP 20 maps keep their detection."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import sourcebsp
from sourcebsp.codecs import staticprops as sp
from sourcebsp.codecs.base import LumpContext
from sourcebsp.codecs.gamelump_directory import static_prop_record
from sourcebsp.examples.branches import example_branch_bytes
from sourcebsp.detection import Detection, refine
from sourcebsp.variants import VARIANTS


def _as_v5_ship(data: bytes) -> bytes:
    """The example's props rewritten as The Ship's v5 records (a targetname each)."""
    with sourcebsp.BspFile.from_bytes(data, variant="the_ship") as bsp:
        props = bsp.static_props
        layout = next(lay for lay in sp.STATIC_PROP_LAYOUTS if lay.name == "v5_ship")
        v5 = np.zeros(len(props), layout.dtype)
        for name in layout.dtype.names:
            if name in props.props.dtype.names:
                v5[name] = props.props[name]
        v5["targetname"] = b"barrel_1"
        bsp.game_lumps["sprp"].version = 5
        bsp.game_lumps["sprp"].value = sp.StaticProps(props.dictionary, props.leafs, v5, layout)
        return bsp.to_bytes()


@pytest.mark.parametrize("version", [5, 6])
def test_the_ship_told_by_its_prop_records(version: int) -> None:
    data = example_branch_bytes("the_ship")
    if version == 5:
        data = _as_v5_ship(data)
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        assert bsp.variant.name == "the_ship" and bsp.variant_alternatives == ()
        props = bsp.static_props
        assert props.version == version and props.layout.size == {5: 188, 6: 192}[version]
        if version == 5:  # the targetname where BSPSource reads it: after the 60-byte v5 record
            raw = props.props.tobytes()
            assert raw[60:60 + 128].rstrip(b"\0") == b"barrel_1"
            assert props.to_dict(0)["targetname"] == "barrel_1"
        assert bsp.to_bytes() == data


def test_the_record_size_read_without_decoding() -> None:
    data = example_branch_bytes("the_ship")
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        entry = bsp.entry("GAME_LUMP")
    ctx = LumpContext(35, "GAME_LUMP", 0, 20, "<", entry.fileofs)
    view = memoryview(data)[entry.fileofs:entry.fileofs + entry.filelen]
    assert static_prop_record(view, ctx) == (6, 192)
    # A prop count that does not divide what follows: no size (detection then uses the version only).
    broken = bytearray(data)
    with sourcebsp.BspFile.from_bytes(data, variant="the_ship") as bsp:
        sub = bsp.game_lumps["sprp"]
        start = sub.context().file_offset
        names = struct.unpack_from("<i", data, start)[0]
        leafs = struct.unpack_from("<i", data, start + 4 + 128 * names)[0]
        count_at = start + 4 + 128 * names + 4 + 2 * leafs
    struct.pack_into("<i", broken, count_at, 5)
    assert static_prop_record(memoryview(bytes(broken))[entry.fileofs:entry.fileofs + entry.filelen], ctx) is None
    with sourcebsp.BspFile.from_bytes(bytes(broken)) as bsp:
        assert bsp.variant.name == "orange_box" and "the_ship" in bsp.variant_alternatives


@pytest.mark.parametrize("name", ["orange_box", "left4dead", "black_mesa", "vindictus", "dark_messiah"])
def test_other_branches_keep_their_detection(name: str) -> None:
    with sourcebsp.BspFile.from_bytes(example_branch_bytes(name)) as bsp:
        assert bsp.variant.name == name and bsp.variant_alternatives == ()


def test_refine_by_size() -> None:
    found = Detection(VARIANTS["orange_box"], ("left4dead", "the_ship", "zeno_clash"))
    assert refine(found, 6, 192) == Detection(VARIANTS["the_ship"], ())
    assert refine(found, 5, 188) == Detection(VARIANTS["the_ship"], ())
    # A plain v5 or v6 record: The Ship's records of those versions always hold the 128-byte
    # targetname (BSPSource's DStaticPropV5Ship, DStaticPropV6BGT), so it drops out.
    assert refine(found, 6, 64) == Detection(VARIANTS["orange_box"], ())
    assert refine(found, 5, 60) == Detection(VARIANTS["orange_box"], ())
    assert refine(found, 6, None) == refine(found, 6)

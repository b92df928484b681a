"""Dear Esther (BSP 21): its own 76-byte static props v9 (BSPSource's DStaticPropV9DE; bsp_tool
0.7.0 has no Dear Esther branch), told from Portal 2's 72-byte v9 by the record size, and its
entity classes (BSPSource's DearEstherDef: de_env_wind, de_func_smokevolume)."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import sourcebsp
from sourcebsp.codecs import staticprops as sp
from sourcebsp.codecs.base import LumpContext
from sourcebsp.codecs.gamelump_directory import read_directory
from sourcebsp.examples.branches import example_branch_bytes


def test_record_layout_is_bspsource_s() -> None:
    dtype = sp.STATIC_PROP_V9_DEAR_ESTHER
    assert dtype.itemsize == 76  # DStaticPropV9DE.getSize(): DStaticPropV8's 68 + 8
    # DStaticPropV9DE.read(): origin, angles, propType, firstLeaf, leafCount, solid, flags, 4 skipped,
    # skin, fademin, fademax, 12 skipped (the lighting origin), forcedFadeScale, four CPU/GPU level
    # bytes, 1 skipped, diffuseModulation (an int), 3 skipped.
    offsets = {name: dtype.fields[name][1] for name in dtype.names}
    assert offsets["prop_type"] == 24 and offsets["solid"] == 30 and offsets["flags"] == 31
    assert offsets["skin"] == 36 and offsets["fade_min_dist"] == 40 and offsets["fade_max_dist"] == 44
    assert offsets["forced_fade_scale"] == 60 and offsets["min_cpu_level"] == 64
    assert offsets["diffuse_modulation"] == 69


def test_example_is_told_by_its_prop_size() -> None:
    data = example_branch_bytes("dear_esther")
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        assert bsp.variant.name == "dear_esther" and bsp.variant_alternatives == ()
        props = bsp.static_props
        assert props.layout.name == "v9_dear_esther" and len(props) > 0
        assert bsp.to_bytes() == data and bsp.to_bytes(reencode=True) == data
    with sourcebsp.BspFile.from_bytes(example_branch_bytes("portal2")) as bsp:  # 72-byte v9: not Dear Esther's
        assert bsp.variant.name == "portal2" and "dear_esther" not in bsp.variant_alternatives


def test_values_at_bspsource_s_offsets() -> None:
    """The decoded fields are the bytes BSPSource's read order finds in the file's sprp sub-lump."""
    data = example_branch_bytes("dear_esther")
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        first = bsp.static_props.props[0]
        entry = bsp.entry("GAME_LUMP")
    ctx = LumpContext(35, "GAME_LUMP", 0, 21, "<", entry.fileofs)
    rows = read_directory(memoryview(data)[entry.fileofs:entry.fileofs + entry.filelen], ctx)[0]
    _, _, version, fileofs, _ = next(row for row in rows if row[0] == int.from_bytes(b"sprp", "big"))
    assert version == 9
    # The dictionary (a count, 128-byte names), the leaves (a count, unsigned shorts), the prop count.
    at = fileofs
    names = struct.unpack_from("<i", data, at)[0]
    at += 4 + 128 * names
    leaves = struct.unpack_from("<i", data, at)[0]
    at += 4 + 2 * leaves + 4
    origin = struct.unpack_from("<3f", data, at)
    skin, fade_min, fade_max = struct.unpack_from("<iff", data, at + 36)
    forced_fade_scale = struct.unpack_from("<f", data, at + 60)[0]
    assert origin == pytest.approx(tuple(first["origin"]))
    assert (skin, fade_min, fade_max) == pytest.approx((first["skin"], first["fade_min_dist"], first["fade_max_dist"]))
    assert forced_fade_scale == pytest.approx(first["forced_fade_scale"])
    assert list(data[at + 69:at + 73]) == np.asarray(first["diffuse_modulation"]).tolist()

"""Dark Messiah's world lights (tf2_test2.bsp's four carried into its layouts) and static props
(in its example map).

Its dworldlight_t: SDK 2013's 88-byte version 0 record and an unsigned int (92 bytes), as
bsp_tool's arkane.dark_messiah_mp notes it (the only source: BSPSource reads no world lights, and
bsp_tool leaves the lumps raw).  Its v6 static props: 136 bytes, BSPSource's DStaticPropV6DM.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

import sourcebsp
from sourcebsp.codecs import records
from sourcebsp.codecs import staticprops as sp
from sourcebsp.examples.branches import branch_bytes, example_branch_bytes

from .conftest import CORPUS

# SDK 2013's dworldlight_t version 0 ("9f3i7f3i", bsp_tool's valve.source WorldLight) and the int.
_RECORD = struct.Struct("<9f3i7f3iI")


@pytest.fixture(scope="module")
def original() -> sourcebsp.BspFile:
    path = CORPUS / "tf2_test2.bsp"
    if not path.exists():
        pytest.skip("corpus map missing")
    return sourcebsp.BspFile.from_bytes(path.read_bytes())


@pytest.fixture(scope="module")
def data(original: sourcebsp.BspFile) -> bytes:
    return branch_bytes(original, "dark_messiah")


def test_both_world_light_lumps_decoded(original: sourcebsp.BspFile, data: bytes) -> None:
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        assert bsp.variant.name == "dark_messiah"
        assert len(bsp.get_lump("WORLDLIGHTS")) == 4  # (tf2_test2 has no HDR lights: that lump is empty)
        for lump in ("WORLDLIGHTS", "WORLDLIGHTS_HDR"):
            ours, theirs = bsp.get_lump(lump), original.get_lump(lump)
            assert ours.dtype == records.WORLDLIGHT_DARK_MESSIAH.dtype and len(ours) == len(theirs)
            assert bsp.entry(lump).filelen == 92 * len(ours)
            for field in theirs.dtype.names:
                np.testing.assert_array_equal(ours[field], theirs[field], err_msg=f"{lump}.{field}")
        assert bsp.to_bytes() == data and bsp.to_bytes(reencode=True) == data


def test_world_light_fields_where_the_record_puts_them(data: bytes) -> None:
    buf = bytearray(data)
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        at = bsp.entry("WORLDLIGHTS").fileofs
    values = (1.0, 2.0, 3.0, 0.5, 0.25, 0.125, 0.0, 0.0, -1.0, 7, 2, 32, 0.75, 0.5, 1.0, 512.0, 0.0, 1.0, 0.0,
              1, 3, 4, 2)
    _RECORD.pack_into(buf, at, *values)
    with sourcebsp.BspFile.from_bytes(bytes(buf)) as bsp:
        light = bsp.get_lump("WORLDLIGHTS")[0]
        assert tuple(light["origin"]) == (1.0, 2.0, 3.0) and tuple(light["normal"]) == (0.0, 0.0, -1.0)
        assert (int(light["cluster"]), int(light["type"]), int(light["style"])) == (7, 2, 32)
        assert float(light["radius"]) == 512.0 and float(light["linear_attn"]) == 1.0
        assert (int(light["flags"]), int(light["texinfo"]), int(light["owner"])) == (1, 3, 4)
        assert int(light["illuminate_players"]) == 2
        assert bsp.to_bytes(reencode=True) == bytes(buf)


def test_static_props_are_bspsource_s_136_byte_records() -> None:
    with sourcebsp.BspFile.from_bytes(example_branch_bytes("dark_messiah")) as bsp:
        props = bsp.static_props
        assert props.layout.name == "v6_dark_messiah" and props.layout.size == 136 and len(props) == 1
        assert props[0].model == "models/props_c17/oildrum001.mdl"
        # Its first 64 bytes are DStaticPropV6's (BSPSource's DStaticPropV6DM reads those, then 72 bytes).
        raw = props.props.tobytes()
        assert np.frombuffer(raw[:64], sp.STATIC_PROP_V6)[0]["origin"].tolist() == list(props[0].origin)
    # Outside Dark Messiah's sub-lumps a 136-byte v6 record fits no layout.
    with pytest.raises(sourcebsp.BspError):
        sp.select_static_prop_layout(6, 20, 1, 136)
    assert sp.select_static_prop_layout(6, 20, 1, 64, family="dark_messiah").name == "v6"

"""Vindictus and Zeno Clash: their own ddispinfo_t and static prop sub-lumps.

Vindictus on a map with what the example room lacks: tf2_test2.bsp (3 displacements, 17 static
props) carried over into its layouts: told from the file, written back byte for byte, its 232-byte
disp infos holding the original's values, decompiled as the original.  Its static props (v6-v8, a
scale array before them) read as bsp_tool 0.7.0's nexon branches read them, and as BSPSource's
StaticPropLumpReader lays them out.  Zeno Clash's sub-lump (a second name array, 68-byte v7 props)
as BSPSource reads it (bsp_tool 0.7.0's ace_team.zeno_clash has no static props).
"""
from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp.codecs import staticprops as sp
from sourcebsp.codecs.base import LumpContext
from sourcebsp.converters.gltf import glb_bytes
from sourcebsp.converters.vmf import decompile_text
from sourcebsp.examples.branches import branch_bytes

from .conftest import CORPUS

MAP = CORPUS / "tf2_test2.bsp"


@pytest.fixture(scope="module")
def original() -> sourcebsp.BspFile:
    if not MAP.exists():
        pytest.skip("corpus map missing")
    return sourcebsp.BspFile.from_bytes(MAP.read_bytes())


@pytest.fixture(scope="module")
def carried(original: sourcebsp.BspFile) -> bytes:
    return branch_bytes(original, "vindictus")


def _with_scales(data: bytes, scales: list[tuple[int, tuple[float, float, float]]]) -> bytes:
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        props = bsp.static_props
        props.scales = np.array(scales, sp.STATIC_PROP_SCALE)
        return bsp.to_bytes()


def test_told_from_the_file_and_written_back(carried: bytes) -> None:
    with sourcebsp.BspFile.from_bytes(carried) as bsp:
        assert bsp.variant.name == "vindictus" and bsp.variant_alternatives == ()
        assert bsp.to_bytes() == carried and bsp.to_bytes(reencode=True) == carried
        assert bsp.dispinfo.dtype.itemsize == 232 and bsp.static_props.layout.name == "v7_vindictus"


def test_disp_infos_hold_the_original_values(original: sourcebsp.BspFile, carried: bytes) -> None:
    with sourcebsp.BspFile.from_bytes(carried) as bsp:
        ours, theirs = bsp.dispinfo, original.dispinfo
        assert len(ours) == len(theirs) == 3
        for field in ("start_position", "disp_vert_start", "disp_tri_start", "power", "smoothing_angle",
                      "contents", "map_face", "lightmap_alpha_start", "lightmap_sample_position_start",
                      "allowed_verts"):
            np.testing.assert_array_equal(ours[field], theirs[field], err_msg=field)
        assert theirs["power"].tolist() != [0, 0, 0] and theirs["map_face"].tolist() != [0, 0, 0]


def test_bsp_tool_reads_the_disp_infos_alike(carried: bytes, tmp_path: Path) -> None:
    bsp_tool = pytest.importorskip("bsp_tool")
    path = tmp_path / "vindictus.bsp"
    path.write_bytes(carried)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = bsp_tool.load_bsp(str(path), force_branch=bsp_tool.branches.nexon.vindictus69)
    with sourcebsp.BspFile.from_bytes(carried) as bsp:
        rows = bsp.dispinfo
        assert len(theirs.DISPLACEMENT_INFO) == len(rows)
        for row, info in zip(rows, theirs.DISPLACEMENT_INFO):
            assert (int(row["power"]), int(row["map_face"]), int(row["disp_vert_start"]), int(row["contents"])) == (
                info.power, info.face, info.first_displacement_vertex, int(info.contents))
            assert float(row["smoothing_angle"]) == pytest.approx(info.smoothing_angle)
            assert list(row["allowed_verts"]) == list(info.allowed_vertices)


def test_decompiles_and_exports_as_the_original(original: sourcebsp.BspFile, carried: bytes) -> None:
    want, _ = decompile_text(original, props=False)
    with sourcebsp.BspFile.from_bytes(carried) as bsp:
        got, stats = decompile_text(bsp, props=False)
        assert stats.displacements == 3 and got == want
        assert glb_bytes(bsp)[:4] == b"glTF"


# ---- static props with scales ------------------------------------------------------------

def test_scales_as_bsp_tool_reads_them(carried: bytes, tmp_path: Path) -> None:
    bsp_tool = pytest.importorskip("bsp_tool")
    data = _with_scales(carried, [(3, (2.0, 2.0, 2.0)), (0, (1.0, 0.5, 3.0))])
    path = tmp_path / "scaled.bsp"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = bsp_tool.load_bsp(str(path), force_branch=bsp_tool.branches.nexon.vindictus).GAME_LUMP.sprp
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        props = bsp.static_props
        assert props.scale_of(3) == (2.0, 2.0, 2.0) and props.scale_of(0) == (1.0, 0.5, 3.0)
        assert props.scale_of(1) == (1.0, 1.0, 1.0)
        assert [(s.index, (s.scale.x, s.scale.y, s.scale.z)) for s in theirs.scales] == [
            (3, (2.0, 2.0, 2.0)), (0, (1.0, 0.5, 3.0))]
        assert len(theirs.props) == len(props) == 17
        assert theirs.model_names == props.names
        for record, prop in zip(props.props, theirs.props):
            assert tuple(record["origin"]) == (prop.origin.x, prop.origin.y, prop.origin.z)
            assert (int(record["prop_type"]), int(record["skin"])) == (prop.name_index, prop.skin)
            assert float(record["forced_fade_scale"]) == prop.forced_fade_scale


def test_v6_is_the_v5_record_after_the_scales(carried: bytes, tmp_path: Path) -> None:
    # BSPSource's DStaticPropV6VIN extends DStaticPropV5 (60 bytes); bsp_tool's nexon.vindictus69
    # reads its v6 props as StaticPropv5 after the scales.
    bsp_tool = pytest.importorskip("bsp_tool")
    with sourcebsp.BspFile.from_bytes(carried) as bsp:
        props = bsp.static_props
        layout = next(lay for lay in sp.STATIC_PROP_LAYOUTS if lay.name == "v6_vindictus")
        v6 = np.zeros(len(props), layout.dtype)
        for name in layout.dtype.names:
            v6[name] = props.props[name]
        bsp.game_lumps["sprp"].version = 6
        bsp.game_lumps["sprp"].value = sp.StaticProps(props.dictionary, props.leafs, v6, layout,
                                                      scales=np.array([(5, (4.0, 4.0, 1.0))], sp.STATIC_PROP_SCALE))
        data = bsp.to_bytes()
    path = tmp_path / "v6.bsp"
    path.write_bytes(data)
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        assert bsp.static_props.layout.name == "v6_vindictus" and bsp.static_props.scale_of(5) == (4.0, 4.0, 1.0)
        assert bsp.to_bytes() == data
        ours = bsp.static_props.props
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = bsp_tool.load_bsp(str(path), force_branch=bsp_tool.branches.nexon.vindictus69).GAME_LUMP.sprp
    assert len(theirs.props) == len(ours) and [s.index for s in theirs.scales] == [5]
    assert [p.origin.z for p in theirs.props] == ours["origin"][:, 2].tolist()


def test_v8_as_bsp_tool_reads_it(carried: bytes, tmp_path: Path) -> None:
    # bsp_tool's nexon.vindictus StaticPropv8 ("6f3H2Bi2f12sf2H8s"): v6 and 8 bytes; no other source.
    bsp_tool = pytest.importorskip("bsp_tool")
    with sourcebsp.BspFile.from_bytes(carried) as bsp:
        props = bsp.static_props
        layout = next(lay for lay in sp.STATIC_PROP_LAYOUTS if lay.name == "v8_vindictus")
        assert struct.calcsize("<6f3H2Bi2f12sf2H8s") == layout.size == 72
        v8 = np.zeros(len(props), layout.dtype)
        for name in sp.STATIC_PROP_V6.names:
            v8[name] = props.props[name]
        v8["unknown"] = np.arange(8, dtype=np.uint8)
        bsp.game_lumps["sprp"].version = 8
        bsp.game_lumps["sprp"].value = sp.StaticProps(props.dictionary, props.leafs, v8, layout,
                                                      scales=np.zeros(0, sp.STATIC_PROP_SCALE))
        data = bsp.to_bytes()
    path = tmp_path / "v8.bsp"
    path.write_bytes(data)
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        assert bsp.static_props.layout.name == "v8_vindictus"
        ours = bsp.static_props.props
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = bsp_tool.load_bsp(str(path), force_branch=bsp_tool.branches.nexon.vindictus).GAME_LUMP.sprp
    assert [p.unknown_2 for p in theirs.props] == [bytes(range(8))] * len(ours)
    assert [p.skin for p in theirs.props] == ours["skin"].tolist()


def test_scales_in_the_vmf_and_the_gltf(carried: bytes) -> None:
    data = _with_scales(carried, [(3, (2.0, 2.0, 2.0))])
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        text, stats = decompile_text(bsp)
        assert stats.static_props == 17
        assert text.count('"scale" "2 2 2"') == 1 and text.count('"scale" "1 1 1"') == 16
        glb = glb_bytes(bsp)
    length = struct.unpack_from("<I", glb, 12)[0]
    nodes = json.loads(glb[20:20 + length])["nodes"]
    scaled = [node for node in nodes if node.get("extras", {}).get("static_prop") is not None and "scale" in node]
    assert [(node["extras"]["static_prop"], node["scale"]) for node in scaled] == [(3, [2.0, 2.0, 2.0])]


def test_removing_props_moves_their_scales(carried: bytes) -> None:
    data = _with_scales(carried, [(3, (2.0, 2.0, 2.0)), (1, (3.0, 3.0, 3.0)), (8, (5.0, 1.0, 1.0))])
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        props = bsp.static_props
        props.remove([0, 1])
        assert props.scales["prop"].tolist() == [1, 6]
        assert props.scale_of(1) == (2.0, 2.0, 2.0) and props.scale_of(6) == (5.0, 1.0, 1.0)
        again = bsp.to_bytes()
    with sourcebsp.BspFile.from_bytes(again) as bsp:
        assert len(bsp.static_props) == 15 and bsp.static_props.scale_of(1) == (2.0, 2.0, 2.0)


def test_a_scale_for_no_prop_is_an_error_naming_its_offset(carried: bytes) -> None:
    data = _with_scales(carried, [(17, (2.0, 2.0, 2.0))])
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        sub = bsp.game_lumps["sprp"]
        with pytest.raises(sourcebsp.BspFormatError, match="scale 0 is for prop 17 of 17") as info:
            sub.value
        raw = bytes(sub.data)
        names, = struct.unpack_from("<i", raw, 0)
        leafs, = struct.unpack_from("<i", raw, 4 + 128 * names)
        assert info.value.offset == sub.context().file_offset + 4 + 128 * names + 4 + 2 * leafs + 4


# ---- Zeno Clash ------------------------------------------------------------------------------

def _zeno_sprp(count: int, paths: list[bytes]) -> bytes:
    """A sub-lump as BSPSource's StaticPropLumpReader reads Zeno Clash's: the model names, an int
    and that many 128-byte names (skipped), the leaves, then 68-byte props (DStaticPropV7ZC)."""
    names = [b"models/a.mdl", b"models/b.mdl"]
    out = struct.pack("<i", len(names)) + b"".join(n.ljust(128, b"\0") for n in names)
    out += struct.pack("<i", len(paths)) + b"".join(p.ljust(128, b"\0") for p in paths)
    out += struct.pack("<i3H", 3, 0, 1, 2)
    out += struct.pack("<i", count)
    for i in range(count):
        # DStaticPropV6 (origin, angles, type, first leaf, leaf count, solid, flags, skin, fade min/max,
        # lighting origin, forced fade scale, DX levels), then DStaticPropV7ZC's int.
        out += struct.pack("<6f3H2Bi2f3ff2Hi", 1.0 * i, 2.0, 3.0, 0.0, 90.0, 0.0, i % 2, i, 1, 6, 0, i,
                           10.0, 20.0, 0.0, 0.0, 0.0, 1.0, 0, 0, -7 - i)
    return out


@pytest.mark.parametrize("count, paths", [(3, [b"models/a_path", b"x"]), (1, []), (0, [b"y"])])
def test_zeno_clash_sub_lump_as_bspsource_reads_it(count: int, paths: list[bytes]) -> None:
    data = _zeno_sprp(count, paths)
    ctx = LumpContext(35, "GAME_LUMP/sprp", 7, 20, "<", 1000)
    codec = sp.StaticPropsCodec("zeno_clash")
    value = codec.decode(memoryview(data), ctx)
    assert value.layout.name == "v7_zeno_clash" and value.layout.size == 68
    assert [bytes(p).rstrip(b"\0") for p in value.model_paths] == paths
    assert value.names == ["models/a.mdl", "models/b.mdl"] and value.leafs.tolist() == [0, 1, 2]
    assert value.props["unknown"].tolist() == [-7 - i for i in range(count)]
    assert value.props["origin"][:, 0].tolist() == [float(i) for i in range(count)]
    assert value.props["skin"].tolist() == list(range(count))
    assert codec.encode(value, ctx) == data
    # Read as a mainline sub-lump the second name array is taken for the leaf count: no layout fits.
    if paths:
        with pytest.raises(sourcebsp.BspError):
            sp.StaticPropsCodec().decode(memoryview(data), ctx)


def test_zeno_clash_layouts_only_in_its_sub_lumps() -> None:
    # 68-byte v7 props elsewhere are early Left 4 Dead's (its diffuse modulation last).
    assert sp.select_static_prop_layout(7, 20, 2, 136).name == "v7_l4d"
    assert sp.select_static_prop_layout(7, 20, 2, 136, family="zeno_clash").name == "v7_zeno_clash"
    assert sp.select_static_prop_layout(6, 20, 2, 120, family="vindictus").name == "v6_vindictus"
    assert sp.select_static_prop_layout(6, 20, 2, 128, family="vindictus").name == "v6"
    with pytest.raises(sourcebsp.BspError):
        sp.select_static_prop_layout(6, 20, 2, 120)  # a 60-byte v6 outside Vindictus fits nothing


def test_zeno_clash_example_carries_props(tmp_path: Path) -> None:
    from sourcebsp.examples.branches import example_branch_bytes

    data = example_branch_bytes("zeno_clash")
    with sourcebsp.BspFile.from_bytes(data, variant="zeno_clash") as bsp:
        props = bsp.static_props
        assert props.layout.name == "v7_zeno_clash" and len(props) == 1 and props.model_paths is not None
        assert props[0].model == "models/props_c17/oildrum001.mdl"
        assert bsp.to_bytes() == data

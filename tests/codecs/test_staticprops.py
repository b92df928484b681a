"""Game lump sub-lumps: static props (``sprp``), detail props (``dprp``) and detail
prop lighting (``dplt``/``dplh``), on every corpus map, against srctools, a
standard-library reader, the Hammer sources, and damaged inputs."""
from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest
import srctools.bsp
from srctools.keyvalues import Keyvalues
from srctools.vmf import VMF

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.codecs import staticprops as sp
from sourcebsp.codecs.base import LumpContext
from sourcebsp.codecs.gamelumps import GAMELUMP, SUB_CODECS, GameLumpCodec, GameLumps

# What srctools cannot read, and why (checked below: if srctools learns to read
# one, the test fails and the map moves to the srctools comparison).
SRCTOOLS_UNREADABLE = {
    ("x360_shack", "props"): "big-endian 'PSBV' file: srctools opens only 'VBSP' maps",
    ("x360_shack", "detail_props"): "big-endian 'PSBV' file: srctools opens only 'VBSP' maps",
    ("vtmb_sp_genesisdevice_1", "props"):
        "BSP 17: to map prop leafs srctools reads Bloodlines' 104-byte dface_t as the 56-byte one",
    ("vtmb_sp_genesisdevice_1", "detail_props"):
        "dprp version 2 has no sprite dictionary; srctools reads every version as version 4",
}

# prop_static entities of the Hammer sources that are not in the compiled map, and why.
NOT_COMPILED = {
    ("tf2_test2", (464.023, -87.473, -195.115)):
        "model 'models/not_a_real_file' does not exist: vbsp leaves out a prop it cannot load",
    ("x360_shack", (864.0, 480.0, 320.0)):
        "the .vmf (mapversion 28) was saved once more after the compile (the map has mapversion 27)",
}

# sizeof() from gamebspfile.h (Source SDK 2013 and the CS:GO / L4D branches) and
# the per-game variants as documented by BSPSource and the VDC article.
DOCUMENTED_SIZES = {
    "StaticPropLump_t v4": (sp.STATIC_PROP_V4, 56),
    "StaticPropLump_t v5": (sp.STATIC_PROP_V5, 60),
    "StaticPropLump_t v5 (The Ship)": (sp.STATIC_PROP_V5_SHIP, 188),
    "StaticPropLump_t v6": (sp.STATIC_PROP_V6, 64),
    "StaticPropLump_t v6 (Bloody Good Time)": (sp.STATIC_PROP_V6_BGT, 192),
    "StaticPropLump_t v7 (Left 4 Dead)": (sp.STATIC_PROP_V7_L4D, 68),
    "StaticPropLump_t v8": (sp.STATIC_PROP_V8, 68),
    "StaticPropLump_t v9": (sp.STATIC_PROP_V9, 72),
    "StaticPropLump_t v10 (Source 2013)": (sp.STATIC_PROP_V10_SDK2013, 72),
    "StaticPropLump_t v10 (CS:GO)": (sp.STATIC_PROP_V10_CSGO, 76),
    "StaticPropLump_t v11 (CS:GO)": (sp.STATIC_PROP_V11_CSGO, 80),
    "StaticPropLump_t v11 (Black Mesa)": (sp.STATIC_PROP_V11_MESA, 80),
    "StaticPropLump_t v11 (early Black Mesa)": (sp.STATIC_PROP_V11_MESA_LITE, 76),
    "StaticPropLump_t v13 (Strata)": (sp.STATIC_PROP_V13_STRATA, 88),
    "StaticPropLump_t v6 (Dark Messiah)": (sp.STATIC_PROP_V6_DARK_MESSIAH, 136),  # BSPSource DStaticPropV6DM
    "StaticPropLump_t v7 (Zeno Clash)": (sp.STATIC_PROP_V7_ZENO_CLASH, 68),  # BSPSource DStaticPropV7ZC
    "StaticPropLump_t v8 (Vindictus)": (sp.STATIC_PROP_V8_VINDICTUS, 72),  # bsp_tool nexon.vindictus
    "Vindictus prop scale": (sp.STATIC_PROP_SCALE, 16),  # BSPSource: int, Vector3f; bsp_tool "i3f"
    "StaticPropDictLump_t": (sp.NAME, 128),
    "DetailObjectDictLump_t": (sp.NAME, 128),
    "DetailSpriteDictLump_t": (sp.DETAIL_SPRITE, 32),
    "DetailObjectLump_t": (sp.DETAIL_OBJECT, 52),
    "DetailPropLightstylesLump_t": (sp.DETAIL_PROP_LIGHTSTYLE, 5),
    "dgamelump_t": (GAMELUMP, 16),
}

# Field offsets with C alignment rules applied to the gamebspfile.h members.
DOCUMENTED_OFFSETS = {
    "v4 m_Skin": (sp.STATIC_PROP_V4, "skin", 32),
    "v4 m_LightingOrigin": (sp.STATIC_PROP_V4, "lighting_origin", 44),
    "v6 m_nMinDXLevel": (sp.STATIC_PROP_V6, "min_dx_level", 60),
    "v8 m_nMinCPULevel": (sp.STATIC_PROP_V8, "min_cpu_level", 60),
    "v8 m_DiffuseModulation": (sp.STATIC_PROP_V8, "diffuse_modulation", 64),
    "v9 m_bDisableX360": (sp.STATIC_PROP_V9, "disable_x360", 68),
    "v10 (2013) m_Skin after the padding byte": (sp.STATIC_PROP_V10_SDK2013, "skin", 32),
    "v10 (2013) int m_Flags": (sp.STATIC_PROP_V10_SDK2013, "flags", 64),
    "v10 (2013) m_nLightmapResolutionX": (sp.STATIC_PROP_V10_SDK2013, "lightmap_resolution_x", 68),
    "v10 (CS:GO) m_FlagsEx": (sp.STATIC_PROP_V10_CSGO, "flags_ex", 72),
    "v11 (CS:GO) m_flUniformScale": (sp.STATIC_PROP_V11_CSGO, "uniform_scale", 76),
    "DetailObjectLump_t m_Type": (sp.DETAIL_OBJECT, "type", 44),
    "DetailObjectLump_t m_flScale": (sp.DETAIL_OBJECT, "scale", 48),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED_SIZES))
def test_struct_sizes_are_documented_sizeof(name: str) -> None:
    dtype, size = DOCUMENTED_SIZES[name]
    assert dtype.itemsize == size
    assert dtype.newbyteorder(">").itemsize == size


@pytest.mark.parametrize("name", sorted(DOCUMENTED_OFFSETS))
def test_field_offsets(name: str) -> None:
    dtype, field, offset = DOCUMENTED_OFFSETS[name]
    assert dtype.fields[field][1] == offset


def test_every_layout_is_distinct_within_its_version_and_size() -> None:
    seen: dict[tuple[int, int], list[str]] = {}
    for layout in sp.STATIC_PROP_LAYOUTS:
        seen.setdefault((layout.version, layout.size), []).append(layout.name)
        assert set(layout.dtype.names) >= {"origin", "angles", "prop_type", "first_leaf", "leaf_count",
                                           "solid", "skin", "fade_min_dist", "fade_max_dist",
                                           "lighting_origin", "flags"}
    # Same version and size: v11 of CS:GO (BSP 21+) and Black Mesa (BSP 20), which the BSP version
    # tells apart, and v7 of early Left 4 Dead and Zeno Clash, whose sub-lumps differ (a Zeno Clash
    # layout is read only by its branch's codec).
    shared = {key: names for key, names in seen.items() if len(names) > 1}
    assert shared == {(11, 80): ["v11_csgo", "v11_mesa"], (7, 68): ["v7_l4d", "v7_zeno_clash"]}
    assert sp.select_static_prop_layout(11, 20, 1, 80).name == "v11_mesa"
    assert sp.select_static_prop_layout(11, 21, 1, 80).name == "v11_csgo"
    assert sp.select_static_prop_layout(10, 20, 3, 3 * 76).name == "v10_csgo"
    assert sp.select_static_prop_layout(10, 21, 3, 3 * 72).name == "v10_sdk2013"
    assert sp.select_static_prop_layout(7, 20, 2, 2 * 72).name == "v7_sdk2013"


# ---- round trips on every corpus map ------------------------------------------------


def test_game_lump_and_sub_lumps_round_trip(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        raw = bytes(bsp.lump_bytes(LumpId.GAME_LUMP))
        games = bsp.game_lumps
        assert games.ids() and "sprp" in games
        originals = {g.id: g.data for g in games}
        stored = {g.id: g.stored_bytes() for g in games}
        for lump in games:
            value = lump.value
            # Every sub-lump of the corpus has a codec and decodes to its value type.
            assert lump.id in SUB_CODECS
            assert not isinstance(value, sourcebsp.RawLump)
            assert lump.is_decoded
            codec = SUB_CODECS[lump.id]
            assert codec.encode(value, lump.context(bsp.endian)) == originals[lump.id]
            assert lump.data == originals[lump.id]
            # Compressed sub-lumps keep their LZMA stream while the content is unchanged.
            assert lump.stored_bytes() == stored[lump.id]
        ctx = bsp._context(LumpId.GAME_LUMP)
        assert GameLumpCodec().encode(games, ctx) == raw
        assert bsp.to_bytes() == map_path.read_bytes()
        assert bsp.to_bytes(reencode=True) == map_path.read_bytes()


def test_a_moved_game_lump_says_what_encoding_it_there_says(map_path: Path) -> None:
    """Relocating the directory's offsets (what a save does with an untouched game lump)
    gives the bytes a decode and an encode at the new place give, on every corpus map."""
    with sourcebsp.open(map_path) as bsp:
        raw = bsp.lump_bytes(LumpId.GAME_LUMP)
        ctx = bsp._context(LumpId.GAME_LUMP)
        codec = GameLumpCodec()
        games = codec.decode(raw, ctx)
        for place in (ctx.file_offset + 4, ctx.file_offset - 1000, 1036, 1 << 24):
            moved = codec.relocated(raw, ctx, place)
            if games.relative_offsets:
                assert moved is None  # offsets count from the lump: nothing to move
                continue
            assert moved == codec.encode(games, ctx._replace(file_offset=place))
            again = codec.decode(memoryview(moved), ctx._replace(file_offset=place))
            assert [(g.id, g.flags, g.version, g.data) for g in again] == [(g.id, g.flags, g.version, g.data) for g in games]


def test_only_offsets_into_a_moved_game_lump_move() -> None:
    """Zero means "none", and an empty sub-lump may hold junk (here one the move would push
    past what an int can hold): both stay as they are; the dummy entry at the end moves."""
    ctx = LumpContext(lump=int(LumpId.GAME_LUMP), name="GAME_LUMP", version=0, bsp_version=20, endian="<",
                      file_offset=5000)
    rows = [(0x73707270, 0, 10, 5000 + 68, 4), (0x64707270, 0, 4, 0, 0), (0x64706C74, 0, 0, 2**31 - 10, 0),
            (0, 0, 0, 5000 + 72, 0)]
    data = struct.pack("<i", 4) + np.array(rows, GAMELUMP).tobytes() + b"prop"
    moved = GameLumpCodec().relocated(memoryview(data), ctx, 7000)
    assert moved is not None
    assert np.frombuffer(moved, GAMELUMP, 4, 4)["fileofs"].tolist() == [7000 + 68, 0, 2**31 - 10, 7000 + 72]
    assert moved[:4] == data[:4] and moved[68:] == b"prop"


def test_byte_order_does_not_change_values(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        lump = bsp.game_lumps["sprp"]
        value = lump.value
        other = ">" if bsp.endian == "<" else "<"
        swapped = SUB_CODECS["sprp"].encode(value, lump.context(other))
        assert len(swapped) == len(lump.data)
        back = SUB_CODECS["sprp"].decode(memoryview(swapped), lump.context(other))
        assert back.layout == value.layout
        assert back.names == value.names
        assert back.leafs.tolist() == value.leafs.tolist()
        for field in value.props.dtype.names:
            assert np.array_equal(back.props[field], value.props[field], equal_nan=True), field


# ---- against independent readers -------------------------------------------------------


def _reference_props(data: bytes, endian: str, version: int, bsp_version: int) -> tuple[list[str], list[tuple]]:
    """gamebspfile.h read with the standard library: the dictionary and the
    fields every StaticPropLump_t layout starts with (the first 36 bytes)."""
    (names_count,) = struct.unpack_from(endian + "i", data, 0)
    at = 4
    names = [data[at + 128 * i : at + 128 * (i + 1)].split(b"\0")[0].decode() for i in range(names_count)]
    at += 128 * names_count
    (leaf_count,) = struct.unpack_from(endian + "i", data, at)
    at += 4 + leaf_count * (4 if bsp_version >= 25 and version >= 12 else 2)
    (count,) = struct.unpack_from(endian + "i", data, at)
    at += 4
    props = []
    if count:
        size = (len(data) - at) // count
        for i in range(count):
            fields = struct.unpack_from(endian + "6f3HB", data, at + i * size)
            (skin,) = struct.unpack_from(endian + "i", data, at + i * size + 32)
            props.append((names[fields[6]], fields[0:3], fields[3:6], fields[9], skin))
    return names, props


def test_static_props_equal_standard_library_reader(map_path: Path) -> None:
    # Covers the maps srctools cannot read too (big-endian Xbox 360, Bloodlines).
    with sourcebsp.open(map_path) as fresh:
        lump = fresh.game_lumps["sprp"]
        names, expected = _reference_props(lump.data, fresh.endian, lump.version, fresh.version)
    with sourcebsp.open(map_path) as bsp:
        props = bsp.static_props
        assert props.names == names
        got = [(p.model, p.origin, p.angles, p.solid, p.skin) for p in props]
        assert got == [(m, tuple(o), tuple(a), solid, skin) for m, o, a, solid, skin in expected]


def _srctools(path: Path, attribute: str) -> tuple[srctools.bsp.BSP, list] | None:
    """srctools' reading of a map's props, or None where it cannot read them."""
    if (path.stem, attribute) not in SRCTOOLS_UNREADABLE:
        reference = srctools.bsp.BSP(path)
        return reference, getattr(reference, attribute)
    with pytest.raises(Exception):  # noqa: B017 - documents the limitation: see SRCTOOLS_UNREADABLE
        getattr(srctools.bsp.BSP(path), attribute)
    return None


def test_static_props_equal_srctools(map_path: Path) -> None:
    found = _srctools(map_path, "props")
    if found is None:
        return
    reference, expected = found
    leaf_index = {id(leaf): i for i, leaf in enumerate(reference.visleafs)}
    with sourcebsp.open(map_path) as bsp:
        props = bsp.static_props
        assert len(props) == len(expected)
        for ours, theirs in zip(props, expected):
            assert ours.model == theirs.model
            assert ours.origin == tuple(theirs.origin)
            assert ours.skin == theirs.skin
            assert ours.solid == theirs.solidity
            # srctools normalises angles into [0, 360).
            assert np.allclose(np.mod(ours.angles, 360.0), np.mod(tuple(theirs.angles), 360.0), atol=1e-3)
            record = ours.record
            assert record["fade_min_dist"] == np.float32(theirs.min_fade)
            assert record["fade_max_dist"] == np.float32(theirs.max_fade)
            assert set(props.leafs_of(ours.index).tolist()) == {leaf_index[id(leaf)] for leaf in theirs.visleafs}


def test_detail_props_equal_srctools(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        details = bsp.detail_props
        assert details is not None
        found = _srctools(map_path, "detail_props")
        if found is None:
            assert len(details) == 0
            return
        expected = found[1]
        assert len(details) == len(expected)
        for record, theirs in zip(details.props, expected):
            assert tuple(record["origin"].tolist()) == tuple(theirs.origin)
            assert int(record["leaf"]) == theirs.leaf
            assert tuple(record["lighting"].item()) == tuple(theirs.lighting)
            if int(record["type"]) == 1:  # DETAIL_PROP_TYPE_SPRITE
                sprite = details.sprites[int(record["detail_model"])]
                assert tuple(sprite["ul"].tolist()) == tuple(theirs.dims_upper_left)
                assert tuple(sprite["tex_lr"].tolist()) == tuple(theirs.texcoord_lower_right)
                assert record["scale"] == np.float32(theirs.sprite_scale)


def test_detail_props_of_valvebsp_testmap(corpus_file) -> None:
    with sourcebsp.open(corpus_file("valvebsp_testmap.bsp")) as bsp:
        details = bsp.detail_props
        assert len(details) == 120 and details.names == [] and len(details.sprites) > 0
        # Every prop is a sprite whose index is in the sprite dictionary.
        assert (details.props["type"] == 1).all()
        assert details.props["detail_model"].max() < len(details.sprites)
        for lighting in ("dplt", "dplh"):
            samples = bsp.game_lumps[lighting].value
            assert samples.dtype == sp.DETAIL_PROP_LIGHTSTYLE and len(samples) == 0
            # No detail prop refers to a light style sample that is not there.
            assert (details.props["light_style_count"] == 0).all()


# ---- Hammer sources ------------------------------------------------------------------------


def _vmf_props(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        vmf = VMF.parse(Keyvalues.parse(handle, path.name))
    out = []
    for ent in vmf.by_class["prop_static"]:
        out.append({
            "model": ent["model"],
            "origin": tuple(float(v) for v in ent["origin"].split()),
            "angles": tuple(float(v) for v in ent["angles", "0 0 0"].split()),
            "skin": int(ent["skin", "0"]),
            "solid": int(ent["solid", "6"]),
        })
    return out


def _vmf_maps() -> list:
    from tests.conftest import CORPUS, VMF_DIR

    return [pytest.param(p, id=p.stem) for p in sorted(VMF_DIR.glob("*.vmf")) if (CORPUS / f"{p.stem}.bsp").exists()]


@pytest.mark.parametrize("vmf_path", _vmf_maps())
def test_every_prop_static_of_the_hammer_source_is_compiled(vmf_path: Path) -> None:
    from tests.conftest import CORPUS

    wanted = _vmf_props(vmf_path)
    with sourcebsp.open(CORPUS / f"{vmf_path.stem}.bsp") as bsp:
        props = list(bsp.static_props)
    unmatched = list(range(len(props)))
    missing = []
    for prop in wanted:
        hits = [i for i in unmatched
                if np.allclose(props[i].origin, prop["origin"], atol=0.01) and props[i].model == prop["model"]]
        if not hits:
            missing.append(prop)
            continue
        found = props[hits[0]]
        unmatched.remove(hits[0])
        assert np.allclose(np.mod(found.angles, 360), np.mod(prop["angles"], 360), atol=0.01)
        assert (found.skin, found.solid) == (prop["skin"], prop["solid"])
    # Every compiled prop comes from the source, and the only source props
    # missing from the map are the documented ones.
    assert unmatched == []
    assert sorted((vmf_path.stem, m["origin"]) for m in missing) == sorted(
        key for key in NOT_COMPILED if key[0] == vmf_path.stem
    )
    if vmf_path.stem == "x360_shack":
        text = vmf_path.read_text()
        assert re.search(r'"mapversion" "28"', text)
        with sourcebsp.open(CORPUS / "x360_shack.bsp") as bsp:
            assert b'"mapversion" "27"' in bytes(bsp.lump_bytes(LumpId.ENTITIES))


def test_hammer_sources_are_present(vmf_dir: Path) -> None:
    # The prop comparison above must have maps with props to look at.
    counts = {p.stem: len(_vmf_props(p)) for p in vmf_dir.glob("*.vmf")}
    assert counts["tf2_test2"] == 18 and counts["x360_shack"] == 3


# ---- edits --------------------------------------------------------------------------------


def _edit(props: sp.StaticProps) -> dict[str, object]:
    """Move the first prop, add one, remove the second: what the saved map must show."""
    before = [(p.model, p.origin) for p in props]
    if before:
        props.move(0, (12.5, -40.25, 64.0), (0.0, 45.0, 0.0))
    added = props.add("models/sourcebsp/test_crate.mdl", (1.0, 2.0, 3.0), (0.0, 90.0, 0.0),
                      leafs=[0, 1], skin=2, solid=0)
    if len(before) >= 2:
        props.remove([1])
        added -= 1
    expected = [(m, o) for m, o in before]
    if expected:
        expected[0] = (expected[0][0], (12.5, -40.25, 64.0))
    if len(expected) >= 2:
        del expected[1]
    expected.append(("models/sourcebsp/test_crate.mdl", (1.0, 2.0, 3.0)))
    return {"props": expected, "added": added}


def test_move_add_remove_survive_save(map_path: Path, tmp_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        props = bsp.static_props
        names_before = props.names
        leafs_before = {p.index: props.leafs_of(p.index).tolist() for p in props}
        leaf_array_before = len(props.leafs)
        want = _edit(props)
        out = bsp.save(tmp_path / map_path.name)
        untouched = {g.id: g.stored_bytes() for g in bsp.game_lumps if g.id != "sprp"}
        was_compressed = bsp.game_lumps["sprp"].compressed
    with sourcebsp.open(out) as saved:
        again = saved.static_props
        assert [(p.model, p.origin) for p in again] == want["props"]
        new = again[want["added"]]
        assert (new.angles, new.skin, new.solid) == ((0.0, 90.0, 0.0), 2, 0)
        assert again.leafs_of(want["added"]).tolist() == [0, 1]
        assert again.names == names_before + ["models/sourcebsp/test_crate.mdl"]
        # The props that stay keep their leaf lists (the removed one's list is gone).
        removed = len(leafs_before) >= 2
        kept = [i for i in leafs_before if i != 1] if removed else list(leafs_before)
        assert [again.leafs_of(j).tolist() for j in range(len(kept))] == [leafs_before[i] for i in kept]
        # Removing a prop packs the leaf array; adding one appends its list.
        expected_leafs = sum(len(leafs_before[i]) for i in kept) if removed else leaf_array_before
        assert len(again.leafs) == expected_leafs + 2
        if len(want["props"]) > 1:
            assert again[0].angles == (0.0, 45.0, 0.0)
        # The other game lumps are written from their original bytes (LZMA stream included).
        assert {g.id: g.stored_bytes() for g in saved.game_lumps if g.id != "sprp"} == untouched
        assert saved.game_lumps["sprp"].compressed == was_compressed
    if (map_path.stem, "props") in SRCTOOLS_UNREADABLE:
        return
    theirs = srctools.bsp.BSP(out).props
    assert [(p.model, tuple(p.origin)) for p in theirs] == want["props"]
    assert theirs[want["added"]].skin == 2 and theirs[want["added"]].solidity == 0


def test_edit_in_place_and_add_to_empty_lump(corpus_file, tmp_path: Path) -> None:
    with sourcebsp.open(corpus_file("css_2000.bsp")) as bsp:
        props = bsp.static_props
        props.props["skin"][:] = 0
        props.props["origin"][:, 2] += 100.0
        out = bsp.save(tmp_path / "lifted.bsp")
    with sourcebsp.open(corpus_file("css_2000.bsp")) as original, sourcebsp.open(out) as saved:
        assert (saved.static_props.props["skin"] == 0).all()
        assert np.array_equal(saved.static_props.props["origin"][:, 2],
                              original.static_props.props["origin"][:, 2] + np.float32(100.0))
    with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp")) as bsp:
        assert len(bsp.static_props) == 0
        bsp.static_props.add("models/props_2fort/oildrum.mdl", (0, 0, 8), leafs=[1])
        out = bsp.save(tmp_path / "one_prop.bsp")
    assert [(p.model, tuple(p.origin)) for p in srctools.bsp.BSP(out).props] == [
        ("models/props_2fort/oildrum.mdl", (0.0, 0.0, 8.0))
    ]


def test_add_rejects_unknown_fields_and_long_names(corpus_file) -> None:
    with sourcebsp.open(corpus_file("css_2000.bsp")) as bsp:
        props = bsp.static_props
        with pytest.raises(ValueError, match="lightmap_resolution_x"):
            props.add("models/a.mdl", (0, 0, 0), lightmap_resolution_x=16)  # not in the v5 layout
        with pytest.raises(ValueError, match="at most 127"):
            props.add("m" * 128, (0, 0, 0))
        assert len(props) == 16


def test_detached_value_for_a_map_without_sprp() -> None:
    empty = sp.StaticProps.empty(version=5, bsp_version=19)
    assert len(empty) == 0 and empty.layout.name == "v5"
    index = empty.add("models/x.mdl", (1, 2, 3))
    games = GameLumps()
    games.add("sprp", 5, empty)
    ctx = LumpContext(35, "GAME_LUMP", 0, 19, "<", 2000)
    again = GameLumpCodec().decode(memoryview(GameLumpCodec().encode(games, ctx)), ctx)
    assert again["sprp"].value[index].origin == (1.0, 2.0, 3.0)


# ---- damaged input ------------------------------------------------------------------------


def _sprp(version: int, count: int, record: int, *, names: int = 1, leafs: int = 0) -> bytes:
    return (struct.pack("<i", names) + b"models/a.mdl".ljust(128, b"\0") * names
            + struct.pack("<i", leafs) + b"\0\0" * leafs + struct.pack("<i", count) + bytes(record * count))


def _ctx(version: int, bsp_version: int = 20, file_offset: int = 5000) -> LumpContext:
    return LumpContext(35, "GAME_LUMP/sprp", version, bsp_version, "<", file_offset)


def test_sprp_that_fits_no_layout() -> None:
    data = _sprp(10, 2, 75)  # 150 bytes for two props: neither 72 nor 76 per prop
    with pytest.raises(sourcebsp.BspFormatError, match="no static prop layout fits") as info:
        sp.StaticPropsCodec().decode(memoryview(data), _ctx(10))
    assert isinstance(info.value, sourcebsp.LumpSizeError)
    assert "72 (v10_sdk2013)" in str(info.value) and "76 (v10_csgo)" in str(info.value)
    assert info.value.offset == 5000 + 4 + 128 + 4  # the prop count
    with pytest.raises(sourcebsp.LumpSizeError, match="75 bytes per prop"):
        sp.StaticPropsCodec().decode(memoryview(data), _ctx(10))


def test_sprp_of_unknown_version() -> None:
    with pytest.raises(sourcebsp.UnsupportedError, match="version 3"):
        sp.StaticPropsCodec().decode(memoryview(_sprp(3, 1, 56)), _ctx(3))


def test_truncated_sprp_dictionary() -> None:
    data = _sprp(5, 0, 60, names=3)[:200]
    with pytest.raises(sourcebsp.TruncatedError, match="3 model names") as info:
        sp.StaticPropsCodec().decode(memoryview(data), _ctx(5))
    assert info.value.offset == 5004 and info.value.needed == 4 + 3 * 128


def test_sprp_trailing_bytes_in_a_real_map(corpus_file) -> None:
    with sourcebsp.open(corpus_file("css_2000.bsp")) as bsp:
        lump = bsp.game_lumps["sprp"]
        lump.data = lump.data + b"\0\0\0\0"
        with pytest.raises(sourcebsp.BspFormatError, match="no static prop layout fits"):
            lump.value


def test_dprp_with_trailing_bytes() -> None:
    data = struct.pack("<3i", 0, 0, 0) + b"\0\0"
    ctx = _ctx(4)._replace(name="GAME_LUMP/dprp")
    with pytest.raises(sourcebsp.LumpSizeError, match="2 bytes follow") as info:
        sp.DetailPropsCodec().decode(memoryview(data), ctx)
    assert info.value.offset == 5012


def test_game_lump_entry_past_the_end(corpus_file, tmp_path: Path) -> None:
    source = corpus_file("tf2_test2.bsp")
    data = bytearray(source.read_bytes())
    with sourcebsp.open(source) as bsp:
        entry = bsp.entry(LumpId.GAME_LUMP)
        index = bsp.game_lumps.ids().index("sprp")
    row = entry.fileofs + 4 + 16 * index
    struct.pack_into("<i", data, row + 12, entry.filelen * 2)  # dgamelump_t.filelen
    path = tmp_path / "damaged.bsp"
    path.write_bytes(bytes(data))
    with sourcebsp.open(path) as bsp:
        with pytest.raises(sourcebsp.TruncatedError, match="'sprp'") as info:
            bsp.game_lumps
    assert info.value.offset == row
    assert f"file offset {row}" in str(info.value)


def test_prop_with_model_index_outside_the_dictionary() -> None:
    data = bytearray(_sprp(5, 2, 60))
    props_at = 4 + 128 + 4 + 4
    struct.pack_into("<H", data, props_at + 60 + 24, 7)  # second prop's m_PropType
    props = sp.StaticPropsCodec().decode(memoryview(bytes(data)), _ctx(5))
    with pytest.raises(sourcebsp.BspFormatError, match="uses model 7 of a 1-name dictionary") as info:
        list(props)
    assert info.value.offset == 5000 + props_at + 60 and info.value.lump == "GAME_LUMP/sprp"

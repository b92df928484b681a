"""The example room in every branch's layout: read, written back byte for byte, exported,
decompiled, and read alike by bsp_tool 0.7.0 where it has the branch."""
from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.examples.branches import example_branch_bytes, example_branches
from sourcebsp.variants import VARIANTS

BRANCHES = example_branches()


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("branches")
    paths = {}
    for name in BRANCHES:
        paths[name] = folder / f"{name}.bsp"
        assert main(["example", "--variant", name, "-o", str(paths[name])]) == 0
    return paths


# What the static prop version tells (the branches' own prop versions): detected without a guess.
# (branch, the others its file could still be): Alien Swarm's prop version is not known, so it
# stays a possibility for a BSP 21 map.  Vindictus's latest props are v8 too (bsp_tool's
# nexon.vindictus: StaticPropv8, "new in March 2025"), but the room's 480-byte leaf lump is no
# whole number of its 56-byte leaves: the record sizes rule it out.
_TOLD_BY_PROPS = {"left4dead": ("left4dead", ()), "black_mesa": ("black_mesa", ()),
                  "csgo": ("csgo", ("alien_swarm",)), "orange_box": ("orange_box", ()),
                  "source_xbox": ("source_xbox", ()),  # (this one by its lightmap page lumps)
                  "the_ship": ("the_ship", ())}  # (this one by its 192-byte prop records)


@pytest.mark.parametrize("name", sorted(_TOLD_BY_PROPS))
def test_the_static_prop_version_tells_the_branch(name: str, examples: dict[str, Path]) -> None:
    with sourcebsp.open(examples[name]) as bsp:
        assert (bsp.variant.name, bsp.variant_alternatives) == _TOLD_BY_PROPS[name]


def test_portal2_props_rule_out_csgo(examples: dict[str, Path]) -> None:
    with sourcebsp.open(examples["portal2"]) as bsp:  # sprp v9: not a CS:GO compiler's
        assert bsp.variant.name == "portal2" and bsp.variant_alternatives == ("alien_swarm",)


def test_every_branch_has_an_example() -> None:
    # The rBSP branches have a room of their own (examples/respawn.py, tests/test_respawn.py).
    respawn = {name for name, variant in VARIANTS.items() if variant.container == "respawn"}
    assert respawn == {"titanfall", "titanfall2"}
    assert set(BRANCHES) == set(VARIANTS) - respawn
    # A branch keeping a lump of the room raw (its layout not declared) cannot be written.
    from sourcebsp.variants import compose

    lacking = VARIANTS["orange_box"]._replace(
        name="lacking", layouts=compose(VARIANTS["orange_box"].layouts, remove=(sourcebsp.LumpId.BRUSHSIDES,)))
    with pytest.raises(sourcebsp.UnsupportedError, match="BRUSHSIDES"):
        example_branch_bytes(lacking)


@pytest.mark.parametrize("name", BRANCHES)
def test_header_is_the_branch_s(name: str, examples: dict[str, Path]) -> None:
    variant = VARIANTS[name]
    data = examples[name].read_bytes()
    assert data == example_branch_bytes(name)
    if variant.encrypted:  # the plain map: XOR-ed again with the key the file holds at 384-416
        assert data[:4] != variant.ident
        key = data[384:416]
        data = bytes(byte ^ key[i % 32] for i, byte in enumerate(data))
    assert data[:4] == variant.ident
    version = int.from_bytes(data[4:8], "little" if variant.endian == "<" else "big")
    assert version in variant.versions
    with sourcebsp.open(examples[name]) as bsp:
        assert bsp.header.lump_order == (variant.lump_order or "std")
        # Detected from the file, or (a branch the file cannot tell) one of the alternatives.
        assert bsp.variant is variant or name in bsp.variant_alternatives
        assert all(bsp.entry(lump).version == want for lump, want in variant.lump_versions.items()
                   if want and bsp.entry(lump).filelen)
        assert all(not bsp.entry(lump).filelen for lump, want in variant.lump_versions.items() if want is None)


@pytest.mark.parametrize("name", BRANCHES)
def test_info_repack_reencode_export_decompile(name: str, examples: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = examples[name]
    force = ["--variant", name]
    assert main(["info", str(path), "--json", *force]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["variant"] == name and report["damaged"] == [] and report["entity_count"] == 4
    for extra in ([], ["--reencode"]):
        out = tmp_path / f"repack{len(extra)}.bsp"
        assert main(["repack", str(path), "-o", str(out), *extra, *force]) == 0
        assert out.read_bytes() == path.read_bytes()
    assert main(["export", str(path), "-o", str(tmp_path / "room.glb"), *force]) == 0
    assert (tmp_path / "room.glb").read_bytes()[:4] == b"glTF"
    assert main(["decompile", str(path), "-o", str(tmp_path / "room.vmf"), *force]) == 0
    vmf = (tmp_path / "room.vmf").read_text()
    assert vmf.count("solid\n") + vmf.count("solid\r\n") >= 7  # six walls and the button's brush
    variant = VARIANTS[name]
    with sourcebsp.open(path, variant=name) as bsp:
        if variant.static_prop_versions and not variant.static_prop_layout:  # layout not documented
            assert "sprp" not in bsp.game_lumps and "dprp" in bsp.game_lumps
            return
        assert len(bsp.static_props) == 1 and bsp.static_props.layout.name == (
            variant.static_prop_layout or "v10_sdk2013")
        assert bsp.static_props[0].model == "models/props_c17/oildrum001.mdl"
        assert not variant.static_prop_versions or bsp.static_props.version in variant.static_prop_versions


# bsp_tool 0.7.0's module for each branch it has.
def _bsp_tool_branches() -> dict[str, Any]:
    bsp_tool = pytest.importorskip("bsp_tool")
    b = bsp_tool.branches
    return {"vampire": b.troika.vampire, "source2004": b.valve.source, "orange_box": b.valve.orange_box,
            "orange_box_x360": b.valve.orange_box_x360, "left4dead": b.valve.left4dead,
            "left4dead2": b.valve.left4dead2, "csgo": b.valve.sdk_2013, "portal2": b.valve.sdk_2013,
            "alien_swarm": b.valve.alien_swarm, "the_ship": b.outerlight.outerlight,
            "zeno_clash": b.ace_team.zeno_clash, "infra": b.loiste.infra, "strata": b.strata.strata,
            "dark_messiah": b.arkane.dark_messiah_sp, "vindictus": b.nexon.vindictus69,
            # bsp_tool 0.7.0's valve.source_xbox cannot load a file (it has no LumpHeader): its
            # base, valve.source, reads the lumps the Xbox shares with the PC (its page infos are
            # checked against the documented 8-byte record in tests/codecs/test_dtypes.py).
            "source_xbox": b.valve.source,
            "console_v21": b.valve.sdk_2013_x360,
            # bsp_tool reads Contagion with its left4dead2 branch (GAME_VERSIONS "Contagion": 27), and
            # has no Tactical Intervention branch: it reads the decrypted file as the Orange Box.
            "contagion": b.valve.left4dead2, "tactical_intervention": b.valve.orange_box,
            # bsp_tool 0.7.0 has no HL2 beta branch: its BSP 19 reader shares the lumps the beta did
            # not change, and leaves the beta's 72-byte faces raw (not a whole number of its 56-byte
            # ones).  Nor a Dota 2 one: Dota 2 was built from the Alien Swarm branch, whose reader
            # has every lump of the room (which holds no disp infos or overlays, the lumps Dota changed;
            # those are held to BSPSource's read order in tests/codecs/test_dtypes.py).
            "hl2_beta": b.valve.source, "dota2_v22": b.valve.alien_swarm, "dota2_v23": b.valve.alien_swarm}


# (our lump, bsp_tool's lump, [(our field, bsp_tool's attribute)]) compared record by record.
_FIELDS = [
    ("PLANES", "PLANES", [("dist", "distance")]),
    ("FACES", "FACES", [("planenum", "plane"), ("firstedge", "first_edge"), ("numedges", "num_edges"),
                        ("texinfo", "texture_info"), ("lightofs", "light_offset"), ("area", "area")]),
    ("BRUSHES", "BRUSHES", [("firstside", "first_side"), ("numsides", "num_sides")]),
    ("BRUSHSIDES", "BRUSH_SIDES", [("planenum", "plane"), ("texinfo", "texture_info")]),
    ("MODELS", "MODELS", [("firstface", "first_face"), ("numfaces", "num_faces"), ("headnode", "node")]),
    ("NODES", "NODES", [("planenum", "plane"), ("firstface", "first_face"), ("numfaces", "num_faces")]),
    ("TEXDATA", "TEXTURE_DATA", [("name_string_table_id", "name_index")]),
]


@pytest.mark.parametrize("name", [n for n in BRANCHES if n in ("vampire", "source2004", "orange_box", "left4dead",
                                                                "left4dead2", "csgo", "portal2", "alien_swarm",
                                                                "the_ship", "zeno_clash", "infra", "strata",
                                                                "orange_box_x360", "console_v21",
                                                                "dark_messiah", "source_xbox", "vindictus",
                                                                "contagion", "tactical_intervention",
                                                                "hl2_beta", "dota2_v22", "dota2_v23")])
def test_bsp_tool_reads_the_same(name: str, examples: dict[str, Path], tmp_path: Path) -> None:
    bsp_tool = pytest.importorskip("bsp_tool")
    path = examples[name]
    if VARIANTS[name].encrypted:  # bsp_tool reads no encrypted file: it gets one decrypted in plain Python
        data = path.read_bytes()
        key = data[384:416]
        path = tmp_path / "decrypted.bsp"
        path.write_bytes(bytes(byte ^ key[i % 32] for i, byte in enumerate(data)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = bsp_tool.load_bsp(str(path), force_branch=_bsp_tool_branches()[name])
    compared = 0
    with sourcebsp.open(examples[name], variant=name) as ours:
        assert [dict(e.items()) for e in ours.entities] == [dict(e) for e in theirs.ENTITIES]
        for lump, their_lump, fields in _FIELDS:
            their = getattr(theirs, their_lump)
            # bsp_tool 0.7.0 leaves some lumps raw: its Xbox 360 branches read no lump of the
            # big-endian files (RawBspLump even on the corpus' x360_shack.bsp), and its vampire
            # branch has no dleaf_t (VTMB's 32-byte leaves: 2112 bytes = 66 x 32 in
            # vtmb_sp_genesisdevice_1, which sourcebsp reads).  Only lumps both decode are compared.
            if type(their).__name__ == "RawBspLump":
                continue
            mine = ours.get_lump(lump)
            assert len(mine) == len(their), lump
            for field, attribute in fields:
                if field not in (mine.dtype.names or ()):
                    continue
                values = np.array([getattr(record, attribute) for record in their], dtype=float)
                assert np.allclose(mine[field].astype(float), values), (lump, field)
            compared += 1
        # Vertices and plane normals, where bsp_tool decodes them.
        if type(theirs.VERTICES).__name__ != "RawBspLump":
            xyz = np.array([[v.x, v.y, v.z] for v in theirs.VERTICES])
            assert np.allclose(ours.vertexes["point"] if ours.vertexes.dtype.names else ours.vertexes, xyz)
    if name not in ("orange_box_x360", "console_v21"):
        assert compared >= 6


def test_dark_messiah_game_lump_directory(examples: dict[str, Path]) -> None:
    """Dark Messiah's dgamelumpheader_t and dgamelump_t each carry one more int (bsp_tool's arkane
    branch; the VDC article lists dgamelump_t among the structs Arkane changed): bsp_tool finds
    our sub-lumps where we put them.  Its static props it cannot check here: its v4-v6 reader
    asserts a leaf count other than 1, and the room's prop is in one leaf."""
    bsp_tool = pytest.importorskip("bsp_tool")
    path = examples["dark_messiah"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = bsp_tool.load_bsp(str(path), force_branch=bsp_tool.branches.arkane.dark_messiah_sp)
    data = path.read_bytes()
    with sourcebsp.open(path) as ours:
        assert ours.variant.name == "dark_messiah" and ours.variant_alternatives == ()
        entry = ours.entry("GAME_LUMP")
        found = {g.id: g for g in ours.game_lumps}
        assert sorted(theirs.GAME_LUMP.headers) == sorted(found) == ["dprp", "sprp"]
        for name, header in theirs.GAME_LUMP.headers.items():
            assert header.version == found[name].version and header.length == len(found[name].data)
            start = header.offset - entry.fileofs
            assert data[header.offset:header.offset + header.length] == found[name].data
            assert 8 + 20 * 2 <= start  # after the 8-byte header and two 20-byte entries
        assert len(ours.static_props) == 1 and ours.static_props.layout.name == "v6_dark_messiah"


def test_dark_messiah_unknown_fields_are_kept(examples: dict[str, Path]) -> None:
    """The ints of unknown meaning survive a decode and re-encode, whatever they hold."""
    import struct

    data = bytearray(examples["dark_messiah"].read_bytes())
    with sourcebsp.BspFile.from_bytes(bytes(data)) as bsp:
        start = bsp.entry("GAME_LUMP").fileofs
        unknown_models = bsp.entry("MODELS").fileofs + 36
    struct.pack_into("<i", data, start + 4, 77)  # dgamelumpheader_t's second int
    struct.pack_into("<i", data, start + 8 + 16, 5)  # the first dgamelump_t's last int
    struct.pack_into("<i", data, unknown_models, 9)  # dmodel_t's unknown int
    with sourcebsp.BspFile.from_bytes(bytes(data)) as bsp:
        assert bsp.game_lumps.header_extra == (77,) and bsp.game_lumps["sprp"].extra == (5,)
        assert int(bsp.models[0]["unknown"]) == 9 and int(bsp.models[0]["headnode"]) == 0
        assert bsp.to_bytes(reencode=True) == bytes(data)


def test_contagion_directory_as_bspsource_reads_it(examples: dict[str, Path]) -> None:
    """BSPSource (BspFile.load) reads a BSP 27 header as the version, "an extra int (always 0?)",
    then 64 standard lump_t's {fileofs, filelen, version, fourCC} and the map revision; bsp_tool
    reads Left 4 Dead 2's lump_t {version, fileofs, filelen, fourCC} from byte 8.  Both find
    every lump at the same offset with the same length: BSPSource's extra int is lump 0's
    version, and what it takes for lump versions are the fourCCs (0), hence its note that
    Contagion "reports lump version 0" for the occlusion lump."""
    data = examples["contagion"].read_bytes()
    with sourcebsp.open(examples["contagion"]) as ours:
        assert ours.variant.name == "contagion" and ours.variant_alternatives == ()
        assert ours.header.lump_order == "l4d2" and ours.version == 27
        for index, entry in enumerate(ours.header.lumps):
            ofs, length, their_version = struct.unpack_from("<3i", data, 12 + 16 * index)
            assert (ofs, length) == (entry.fileofs, entry.filelen)
            assert their_version == entry.fourcc == 0
        assert struct.unpack_from("<i", data, 8)[0] == ours.entry(0).version == 0  # the "extra int"

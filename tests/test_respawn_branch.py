"""Titanfall rBSP as branches of the one table: names, opening, and the commands that read it.

Entities, static props and the pakfile are compared with bsp_tool 0.7.0 (``respawn.titanfall2``)
reading the same files; byte identity of what an edit does not touch is checked directly.
"""
from __future__ import annotations

import io
import json
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.errors import BspFormatError, UnsupportedError
from sourcebsp.examples.branches import example_branch_bytes
from sourcebsp.respawn import RespawnBsp
from sourcebsp.variants import VARIANTS, get_variant, reading_as, variant_names

from .conftest import CORPUS

CROSSFIRE = CORPUS / "other-engines" / "titanfall2_mp_crossfire.bsp"
needs_crossfire = pytest.mark.skipif(not CROSSFIRE.is_file(), reason="no Titanfall 2 map in the corpus")

# Every command that takes --variant (cli._common.variant_option).
VARIANT_COMMANDS = ["check", "decompile", "deps", "edit-entities", "entities", "export", "info", "lightmaps", "lump",
                    "pack", "pak", "props", "render", "repack", "scan", "vis"]


def _bsp_tool(path: Path):  # type: ignore[no-untyped-def]
    bsp_tool = pytest.importorskip("bsp_tool")
    return bsp_tool.load_bsp(str(path))


def _copy_with_partitions(tmp_path: Path) -> Path:
    """The Titanfall 2 map with a _spawn.ent and an _env.ent beside it (the partitions it names)."""
    path = tmp_path / "mp_crossfire.bsp"
    shutil.copy(CROSSFIRE, path)
    (tmp_path / "mp_crossfire_spawn.ent").write_bytes(
        b'ENTITIES01\n{\n"classname" "info_spawnpoint_human"\n"origin" "64 0 0"\n"angles" "0 90 0"\n}\n'
        b'{\n"classname" "info_spawnpoint_titan"\n"origin" "-64 0 0"\n}\n\0')
    (tmp_path / "mp_crossfire_env.ent").write_bytes(b'ENTITIES01\n{\n"classname" "env_fog_controller"\n}\n\0')
    return path


# ---- the branch table -------------------------------------------------------------------------

def test_titanfall_branches_are_in_the_table() -> None:
    assert {"titanfall", "titanfall2"} <= set(variant_names()) == set(VARIANTS)
    for name, version in (("titanfall", 29), ("titanfall2", 37)):
        variant = get_variant(name)
        assert variant.container == "respawn" and variant.versions == {version} and variant.ident == b"rBSP"
        # Its lump table is the one RespawnBsp decodes with (MESHES, 0x50, differs between the two).
        from sourcebsp.codecs.respawn import record_dtypes

        assert variant.codec(0x50, 0).dtype == record_dtypes(version)[0x50]  # type: ignore[union-attr]
    assert get_variant("titanfall").codec(0x50, 0).dtype["vertex_type"] == np.dtype("<u2")  # type: ignore[union-attr]
    assert get_variant("titanfall2").codec(0x50, 0).dtype["cubemap"] == np.dtype("i1")  # type: ignore[union-attr]


@needs_crossfire
def test_open_chooses_the_container_by_the_first_bytes() -> None:
    assert isinstance(sourcebsp.open(CROSSFIRE), RespawnBsp)
    assert isinstance(sourcebsp.open(CROSSFIRE, variant="titanfall2"), RespawnBsp)
    assert isinstance(sourcebsp.open(CROSSFIRE, "titanfall2"), RespawnBsp)  # the variant by position too
    with reading_as("titanfall2"):  # --variant titanfall2
        assert sourcebsp.open(CROSSFIRE).variant is VARIANTS["titanfall2"]
    with pytest.raises(UnsupportedError, match="titanfall2"):
        sourcebsp.open(CROSSFIRE, variant="titanfall")  # an rBSP 37 file is not Titanfall's
    with pytest.raises(UnsupportedError, match="rBSP"):
        sourcebsp.open(CROSSFIRE, variant="orange_box")
    with sourcebsp.open(CROSSFIRE) as bsp:
        assert isinstance(bsp, RespawnBsp) and bsp.variant is VARIANTS["titanfall2"]
        assert bsp.to_bytes() == Path(CROSSFIRE).read_bytes()
    # The Source container alone still refuses it, naming the way in.
    with pytest.raises(sourcebsp.NotSourceMapError, match=r"sourcebsp\.open\(path\)"):
        sourcebsp.BspFile.open(CROSSFIRE)


@needs_crossfire
@pytest.mark.parametrize("alias", ["open_map", "open_named"])
def test_the_old_ways_in_are_deprecated_aliases_of_open(alias: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"sourcebsp.{alias} is deprecated"):
        bsp = getattr(sourcebsp, alias)(CROSSFIRE, variant="titanfall2")
    assert isinstance(bsp, RespawnBsp) and bsp.to_bytes() == Path(CROSSFIRE).read_bytes()


def test_open_bsp_is_a_deprecated_alias_of_the_source_container(corpus_file) -> None:  # type: ignore[no-untyped-def]
    path = corpus_file("tf2_mp_lobby.bsp")
    with pytest.warns(DeprecationWarning, match="sourcebsp.open_bsp is deprecated"):
        bsp = sourcebsp.open_bsp(path)
    assert isinstance(bsp, sourcebsp.BspFile) and bsp.to_bytes() == path.read_bytes()


def test_a_source_map_is_not_read_as_titanfall(corpus_file) -> None:  # type: ignore[no-untyped-def]
    path = corpus_file("tf2_mp_lobby.bsp")
    with pytest.raises(UnsupportedError, match="Respawn rBSP"):
        sourcebsp.open(path, variant="titanfall2")
    with pytest.raises(UnsupportedError, match="rBSP branch"):
        sourcebsp.open(path, variant="titanfall")
    assert isinstance(sourcebsp.open(path), sourcebsp.BspFile)


@pytest.mark.parametrize("command", VARIANT_COMMANDS)
def test_every_variant_command_accepts_the_titanfall_names(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    assert "titanfall2" in capsys.readouterr().out


@needs_crossfire
@pytest.mark.parametrize("argv", [["check"], ["deps"], ["lightmaps", "-o", "{tmp}/lm"], ["vis", "--cluster", "0"], ["lump", "extract", "PLANES", "-o", "{tmp}/p.lmp"],
                                  ["export", "-o", "{tmp}/x.obj"],
                                  ["pak", "remove", "x", "-o", "{tmp}/y.bsp"]])
def test_commands_that_do_not_apply_say_so_in_one_line(argv: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    args = [argv[0], "--variant", "titanfall2", str(CROSSFIRE), *(a.format(tmp=tmp_path) for a in argv[1:])]
    assert main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "Traceback" not in "\n".join(err) and "internal error" not in "\n".join(err)
    assert any("Titanfall" in line or "rBSP" in line for line in err), err


# ---- entities ---------------------------------------------------------------------------------

@needs_crossfire
def test_entities_lists_the_lump_and_the_ent_files_as_bsp_tool_reads_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _copy_with_partitions(tmp_path)
    assert main(["entities", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    reference = _bsp_tool(path)
    expected = [("mp_crossfire.bsp", e) for e in reference.ENTITIES]
    for partition in ("env", "spawn"):  # ENTITY_PARTITIONS: "01* env spawn"
        expected += [(f"mp_crossfire_{partition}.ent", e) for e in getattr(reference, f"ENTITIES_{partition}")]
    assert len(listed) == len(expected) == 33 + 1 + 2
    for row, (where, entity) in zip(listed, expected):
        assert row.get("file", "mp_crossfire.bsp") == where
        assert dict(row["keyvalues"]) == dict(entity)
    assert [row["index"] for row in listed] == list(range(len(listed)))
    assert main(["entities", str(path), "--class", "info_spawnpoint_*"]) == 0
    out = capsys.readouterr().out
    assert "2 of 36 entities" in out and "in mp_crossfire_spawn.ent" in out


@needs_crossfire
def test_entities_ent_dumps_the_lump_text(tmp_path: Path) -> None:
    out = tmp_path / "x.ent"
    assert main(["entities", str(CROSSFIRE), "--ent", "-o", str(out)]) == 0
    raw = RespawnBsp.open(CROSSFIRE).raw("ENTITIES")
    assert out.read_bytes() == raw.split(b"\0")[0] and out.read_bytes().startswith(b"{")


@needs_crossfire
def test_edit_entities_writes_the_lump_and_the_ent_files_and_nothing_else(tmp_path: Path) -> None:
    path = _copy_with_partitions(tmp_path)
    out = tmp_path / "out" / "mp_edit.bsp"
    assert main(["edit-entities", str(path), "-o", str(out), "--match-class", "info_spawnpoint_*",
                 "--set", "targetname=edited", "--add", "classname=info_target,targetname=new"]) == 0
    before, after = RespawnBsp.open(path), RespawnBsp.open(out)
    # Every lump but the entities (and the game lump, whose sub-lump offsets follow it) as read.
    for index in range(128):
        if index not in (0x00, 0x23):
            assert after.raw(index) == before.raw(index), after.names[index]
    assert after.game_sub_lump("sprp")[:2] == before.game_sub_lump("sprp")[:2]  # type: ignore[index]
    # bsp_tool reads the result: the added entity in the lump, the edits in the .ent file.
    reference = _bsp_tool(out)
    assert [dict(e) for e in reference.ENTITIES][-1] == {"classname": "info_target", "targetname": "new"}
    assert [e["targetname"] for e in reference.ENTITIES_spawn] == ["edited", "edited"]
    assert (tmp_path / "out" / "mp_edit_env.ent").read_bytes() == (tmp_path / "mp_crossfire_env.ent").read_bytes()
    assert (tmp_path / "out" / "mp_edit_spawn.ent").read_bytes().startswith(b"ENTITIES01\n{")


# ---- static props and the pakfile -------------------------------------------------------------

@pytest.mark.parametrize("variant, version", [("titanfall", 12), ("titanfall2", 13)])
def test_static_props_match_bsp_tool(variant: str, version: int, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "room.bsp"
    path.write_bytes(example_branch_bytes(variant))
    assert main(["props", str(path), "--json"]) == 0
    props = json.loads(capsys.readouterr().out)
    reference = _bsp_tool(path).GAME_LUMP.sprp
    assert RespawnBsp.open(path).static_props.version == version
    assert [p["model"] for p in props] == reference.model_names == ["models/props_c17/oildrum001.mdl"]
    assert len(props) == len(reference.props) == 1
    mine, theirs = props[0], reference.props[0]
    assert mine["origin"] == list(theirs.origin) == [128, 64, 0]
    assert mine["scale"] == theirs.scale == 1.0
    assert mine["solid"] == theirs.solid_mode.value == 6
    assert [mine["min_cpu_level"], mine["max_cpu_level"]] == [theirs.cpu_level.min, theirs.cpu_level.max]
    assert mine["lighting_origin"] == list(theirs.lighting_origin)
    if version == 12:
        assert [mine["fade_min_dist"], mine["fade_max_dist"]] == list(theirs.fade_distance) == [1024, 2048]
    # info lists the game lump's directory as bsp_tool reads it (one sub-lump: sprp, its version, its length).
    assert main(["info", str(path), "--json"]) == 0
    game_lumps = json.loads(capsys.readouterr().out)["game_lumps"]
    found = RespawnBsp.open(path).game_sub_lump("sprp")
    assert found is not None and game_lumps == [{"id": "sprp", "version": version, "length": len(found[1]),
                                                 "compressed": False}]
    assert [h.version for h in _bsp_tool(path).GAME_LUMP.headers.values()] == [version]
    # The text table, the glTF export and a byte-identical repack of the map with its prop.
    assert main(["props", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t") == [
        "0", "models/props_c17/oildrum001.mdl", "128 64 0", "0 90 0", "0", "6", "1"]  # piped: tab-separated
    assert main(["export", str(path), "-o", str(tmp_path / "room.glb")]) == 0
    assert main(["repack", str(path), "-o", str(tmp_path / "again.bsp")]) == 0
    assert (tmp_path / "again.bsp").read_bytes() == path.read_bytes()


def test_titanfall_v12_fields_match_bsp_tool() -> None:
    """Every field of a v12 record holding distinct values, read by bsp_tool's GameLump_SPRPv12."""
    tf = pytest.importorskip("bsp_tool.branches.respawn.titanfall")

    from sourcebsp.codecs.respawn import decode_static_props, static_prop_v12

    props = np.zeros(2, static_prop_v12())
    props["origin"], props["angles"] = [[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]
    props["prop_type"], props["first_leaf"], props["leaf_count"] = [1, 0], [0, 2], [2, 1]
    props["solid"], props["flags"], props["skin"], props["cubemap"] = [6, 2], [1, 4], [3, 0], [5, 7]
    props["fade_min_dist"], props["fade_max_dist"] = [100, 200], [300, 400]
    props["lighting_origin"], props["forced_fade_scale"] = [[13, 14, 15], [16, 17, 18]], [0.5, 2.0]
    props["min_cpu_level"], props["max_cpu_level"], props["min_gpu_level"], props["max_gpu_level"] = 1, 2, 3, -1
    props["diffuse_modulation"] = [[10, 20, 30, 40], [50, 60, 70, 80]]
    props["disable_x360"], props["scale"] = [1, 0], [1.5, 0.25]
    props["collision_flags_add"], props["collision_flags_remove"] = [9, 11], [12, 13]
    names = b"".join(name.ljust(128, b"\0") for name in (b"models/a.mdl", b"models/b.mdl"))
    data = (struct.pack("<i", 2) + names + struct.pack("<i3H", 3, 5, 6, 7) + struct.pack("<3i", 2, 8, 9)
            + props.tobytes())
    mine = decode_static_props(data, version=12)
    theirs = tf.GameLump_SPRPv12.from_stream(io.BytesIO(data))
    assert mine.names == theirs.model_names and mine.leaves.tolist() == list(theirs.leaves) == [5, 6, 7]
    assert mine.header == (theirs.unknown_1, theirs.unknown_2) == (8, 9)
    for record, prop in zip(mine.props, theirs.props):
        assert list(record["origin"]) == list(prop.origin) and list(record["angles"]) == list(prop.angles)
        assert (record["prop_type"], record["first_leaf"], record["leaf_count"]) == (
            prop.model_name, prop.first_leaf, prop.num_leaves)
        assert (record["solid"], record["flags"]) == (prop.solid_mode.value, prop.flags.value)
        assert (record["skin"], record["cubemap"]) == (prop.skin, prop.cubemap)
        assert [record["fade_min_dist"], record["fade_max_dist"]] == list(prop.fade_distance)
        assert list(record["lighting_origin"]) == list(prop.lighting_origin)
        assert record["forced_fade_scale"] == prop.forced_fade_scale
        assert [record["min_cpu_level"], record["max_cpu_level"]] == list(prop.cpu_level)
        assert [record["min_gpu_level"], record["max_gpu_level"]] == list(prop.gpu_level)
        assert list(record["diffuse_modulation"]) == list(prop.diffuse_modulation)
        assert bool(record["disable_x360"]) == prop.disable_x360 and record["scale"] == prop.scale
        assert [record["collision_flags_add"], record["collision_flags_remove"]] == list(prop.collision_flags)
    assert theirs.as_bytes() == data  # bsp_tool writes back the bytes sourcebsp read


@needs_crossfire
def test_corpus_map_has_an_empty_sprp_v13() -> None:
    bsp = RespawnBsp.open(CROSSFIRE)
    found = bsp.game_sub_lump("sprp")
    assert found is not None and found[0] == 13 and len(found[1]) == 16  # 4 zero ints, as bsp_tool reads
    props = bsp.static_props
    assert props is not None and props.names == [] and len(props.props) == 0
    assert len(_bsp_tool(CROSSFIRE).GAME_LUMP.sprp.props) == 0


def test_static_props_hostile_counts_are_format_errors() -> None:
    from sourcebsp.codecs.respawn import decode_static_props

    for data in (struct.pack("<i", 1 << 30), struct.pack("<4i", 0, 5, 0, 0),
                 struct.pack("<i", 0) + struct.pack("<3i", 0, 0, 0) + struct.pack("<i", -1),
                 struct.pack("<4i", 0, 0, 0, 0) + b"\0" * 7):
        with pytest.raises(BspFormatError, match="GAME_LUMP sprp"):
            decode_static_props(data, file_offset=1000)
    # Titanfall's v12: a leaf count past the lump, a negative one, props past it, bytes after them.
    for data in (struct.pack("<2i", 0, 1 << 30), struct.pack("<2i", 0, -2), struct.pack("<5i", 0, 0, 3, 0, 0),
                 struct.pack("<5i", 0, 0, 0, 0, 0) + b"\0" * 4):
        with pytest.raises(BspFormatError, match="GAME_LUMP sprp"):
            decode_static_props(data, version=12, file_offset=1000)
    with pytest.raises(UnsupportedError, match="version 11"):
        decode_static_props(struct.pack("<4i", 0, 0, 0, 0), version=11)


def test_pak_lists_and_extracts_an_rbsp_pakfile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("scripts/vscripts/x.nut", b"print(1)\n")
    bsp = RespawnBsp(example_branch_bytes("titanfall2"))
    bsp.set_lump("PAKFILE", buffer.getvalue())
    path = tmp_path / "pak.bsp"
    bsp.save(path)
    again = RespawnBsp.open(path)
    assert again.raw("PAKFILE") == buffer.getvalue() and again.lumps[0x28].fileofs % 4 == 0
    assert all(again.raw(i) == bsp.raw_original(i) for i in range(128) if i != 0x28)
    assert main(["pak", str(path), "list", "--json"]) == 0
    assert [e["name"] for e in json.loads(capsys.readouterr().out)] == ["scripts/vscripts/x.nut"]
    assert main(["pak", str(path), "extract", str(tmp_path / "x")]) == 0
    assert (tmp_path / "x" / "scripts" / "vscripts" / "x.nut").read_bytes() == b"print(1)\n"
    assert _bsp_tool(path).PAKFILE.namelist() == ["scripts/vscripts/x.nut"]


# ---- writing, hostile partitions, LZMA --------------------------------------------------------

@pytest.mark.parametrize("name", ["titanfall", "titanfall2"])
def test_example_repacks_byte_identically(name: str, tmp_path: Path) -> None:
    path = tmp_path / "room.bsp"
    assert main(["example", "--variant", name, "-o", str(path)]) == 0
    for extra in ([], ["--reencode"]):
        out = tmp_path / f"out{len(extra)}.bsp"
        assert main(["repack", str(path), "-o", str(out), *extra]) == 0
        assert out.read_bytes() == path.read_bytes()


def test_a_partition_name_with_a_path_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bsp = RespawnBsp(example_branch_bytes("titanfall2"))
    bsp.set_lump("ENTITY_PARTITIONS", b"01* ../secret\0")
    (tmp_path / "maps").mkdir()
    path = tmp_path / "maps" / "mp.bsp"
    bsp.save(path)
    (tmp_path / "secret.ent").write_bytes(b"ENTITIES01\n{\n}\n\0")  # what ../secret would reach
    again = RespawnBsp.open(path)
    assert again.partitions == [] and again.ent_files == {}  # never looked up
    with pytest.raises(BspFormatError, match="ENTITY_PARTITIONS"):
        again.partition_entities()
    assert main(["entities", str(path)]) == 1
    assert "ENTITY_PARTITIONS" in capsys.readouterr().err
    assert main(["info", str(path), "--json"]) == 1  # reported as damaged, the rest described
    assert "ENTITY_PARTITIONS" in capsys.readouterr().out


@needs_crossfire
def test_no_lump_of_the_corpus_map_is_compressed() -> None:
    """rBSP has no lzma_header_t: every fourCC is 0 and no lump starts with LZMA's id."""
    bsp = RespawnBsp.open(CROSSFIRE)
    assert {entry.fourcc for entry in bsp.lumps} == {0}
    assert not any(bsp.raw(index).startswith(b"LZMA") for index in range(128))
    assert VARIANTS["titanfall2"].loads_lzma is False


@needs_crossfire
def test_collision_brushes_match_bsp_tool() -> None:
    """CM_BRUSHES (32-byte Brush), their side plane offsets and side properties: counts and values."""
    bsp = RespawnBsp.open(CROSSFIRE)
    reference = _bsp_tool(CROSSFIRE)
    brushes = bsp.array("CM_BRUSHES")
    assert len(brushes) == len(reference.CM_BRUSHES) == 458
    assert np.array_equal(brushes["origin"], np.array([list(b.origin) for b in reference.CM_BRUSHES], "<f4"))
    assert np.array_equal(brushes["extents"], np.array([list(b.extents) for b in reference.CM_BRUSHES], "<f4"))
    for field in ("num_non_axial_no_discard", "num_plane_offsets", "index", "brush_side_offset"):
        assert brushes[field].tolist() == [getattr(b, field) for b in reference.CM_BRUSHES], field
    assert brushes["index"].tolist() == list(range(458))  # each brush names its own place
    assert bsp.array("CM_BRUSH_SIDE_PLANE_OFFSETS").tolist() == list(reference.CM_BRUSH_SIDE_PLANE_OFFSETS)
    properties = bsp.array("CM_BRUSH_SIDE_PROPERTIES")
    assert properties.tolist() == [p.as_int() for p in reference.CM_BRUSH_SIDE_PROPERTIES]
    # Every brush has its six axial sides and its extra planes' properties: 6 * 458 + 182 sides.
    assert len(properties) == 6 * len(brushes) + int(brushes["num_plane_offsets"].sum()) == 2930

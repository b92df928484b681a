"""Respawn rBSP (Titanfall, Titanfall 2): reading, decoding and writing back.

Counts and values are compared with bsp_tool (an independent reader of Respawn
maps) on every rBSP map of the corpus; the synthetic cases check the
external-lump and ``.ent`` files, edits and hostile headers.
"""
from __future__ import annotations

import shutil
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sourcebsp
from sourcebsp.errors import BspError, BspFormatError, LumpSizeError, TruncatedError, UnsupportedError
from sourcebsp.respawn import HEADER_SIZE, NUM_LUMPS, RespawnBsp, is_respawn, lump_names

from .conftest import CORPUS, IN_CI


def _rbsp_maps() -> list[Path]:
    found = []
    for path in sorted(CORPUS.rglob("*.bsp")):
        with open(path, "rb") as handle:
            if is_respawn(handle.read(8)):
                found.append(path)
    return found


RBSP_MAPS = _rbsp_maps()
if IN_CI and not RBSP_MAPS:
    raise RuntimeError(f"CI=true but the corpus at {CORPUS} has no rBSP map")
maps = pytest.mark.parametrize("path", RBSP_MAPS or [pytest.param(None, marks=pytest.mark.skip("no rBSP map"))],
                               ids=lambda p: p.stem if p else "none")


def _bsp_tool(path: Path):  # type: ignore[no-untyped-def]
    bsp_tool = pytest.importorskip("bsp_tool")
    return bsp_tool.load_bsp(str(path))


# bsp_tool's attribute for each lump sourcebsp decodes into records.
_COMPARED = ("PLANES", "TEXTURE_DATA", "VERTICES", "VERTEX_NORMALS", "MODELS", "MESH_INDICES", "MESHES",
             "MESH_BOUNDS", "MATERIAL_SORTS", "TEXTURE_DATA_STRING_TABLE", "CM_GRID_CELLS", "CM_GEO_SETS",
             "CM_PRIMITIVES", "CM_UNIQUE_CONTENTS")


def _compare_collision_grid(bsp: RespawnBsp, reference: Any) -> None:
    """The grid cells, geo sets and primitives field by field, bsp_tool's bit-fields against ours."""
    from sourcebsp.codecs.respawn import PRIMITIVE_CONTENTS_BITS, PRIMITIVE_INDEX_BITS

    def fields(values: np.ndarray) -> list[tuple[int, int, int]]:
        values = values.astype(np.int64)
        return list(zip((values >> (PRIMITIVE_CONTENTS_BITS + PRIMITIVE_INDEX_BITS)).tolist(),
                        ((values >> PRIMITIVE_CONTENTS_BITS) & 0xFFFF).tolist(), (values & 0xFF).tolist()))

    def theirs(primitive: Any) -> tuple[int, int, int]:
        return (primitive.type.value, primitive.index, primitive.unique_contents)

    cells = bsp.array("CM_GRID_CELLS")
    assert list(zip(cells["first_geo_set"].tolist(), cells["num_geo_sets"].tolist())) == \
        [(c.first_geo_set, c.num_geo_sets) for c in reference.CM_GRID_CELLS]
    sets = bsp.array("CM_GEO_SETS")
    assert sets["straddle_group"].tolist() == [g.straddle_group for g in reference.CM_GEO_SETS]
    assert sets["num_primitives"].tolist() == [g.num_primitives for g in reference.CM_GEO_SETS]
    assert fields(sets["primitive"]) == [theirs(g.primitive) for g in reference.CM_GEO_SETS]
    assert fields(bsp.array("CM_PRIMITIVES")) == [theirs(p) for p in getattr(reference, "CM_PRIMITIVES", ())]
    assert bsp.array("CM_UNIQUE_CONTENTS").tolist() == list(reference.CM_UNIQUE_CONTENTS)


@maps
def test_header_and_lumps_match_the_file(path: Path) -> None:
    data = path.read_bytes()
    with sourcebsp.open(path) as bsp:
        assert isinstance(bsp, RespawnBsp)
        assert bsp.version == struct.unpack_from("<i", data, 4)[0]
        assert bsp.variant.name == {29: "titanfall", 37: "titanfall2"}[bsp.version]
        assert len(bsp.lumps) == NUM_LUMPS == len(bsp.names)
        for index, entry in enumerate(bsp.lumps):
            assert tuple(entry) == struct.unpack_from("<4i", data, 16 + 16 * index)


@maps
def test_counts_and_values_equal_bsp_tool(path: Path) -> None:
    reference = _bsp_tool(path)
    bsp = RespawnBsp.open(path)
    assert reference.version == bsp.version
    for name in _COMPARED:  # bsp_tool leaves an empty lump's attribute out
        assert bsp.count(name) == len(getattr(reference, name, ())), name
    vertices = bsp.array("VERTICES")
    assert np.allclose(vertices, [[v.x, v.y, v.z] for v in reference.VERTICES])
    normals = bsp.array("VERTEX_NORMALS")
    assert np.allclose(normals, [[v.x, v.y, v.z] for v in reference.VERTEX_NORMALS])
    meshes = bsp.array("MESHES")
    assert meshes["first_mesh_index"].tolist() == [m.first_mesh_index for m in reference.MESHES]
    assert meshes["num_triangles"].tolist() == [m.num_triangles for m in reference.MESHES]
    assert meshes["material_sort"].tolist() == [m.material_sort for m in reference.MESHES]
    assert meshes["flags"].tolist() == [int(m.flags) for m in reference.MESHES]
    assert bsp.array("MESH_INDICES").tolist() == list(reference.MESH_INDICES)
    sorts = bsp.array("MATERIAL_SORTS")
    assert sorts["texture_data"].tolist() == [s.texture_data for s in reference.MATERIAL_SORTS]
    assert sorts["vertex_offset"].tolist() == [s.vertex_offset for s in reference.MATERIAL_SORTS]
    assert bsp.texture_names() == [reference.TEXTURE_DATA_STRING_DATA[t.name_index]
                                   for t in reference.TEXTURE_DATA]
    assert len(bsp.entities) == len(reference.ENTITIES)
    _compare_collision_grid(bsp, reference)


@maps
def test_mesh_indices_stay_inside_their_vertex_lumps(path: Path) -> None:
    # Independent of bsp_tool: what a vertex lump's record size must be for the meshes to fit.
    bsp = RespawnBsp.open(path)
    from sourcebsp.codecs.respawn import MASK_VERTEX, VERTEX_LUMP_OF_FLAGS

    meshes, indices, sorts = bsp.array("MESHES"), bsp.array("MESH_INDICES"), bsp.array("MATERIAL_SORTS")
    for mesh in meshes:
        lump = VERTEX_LUMP_OF_FLAGS[int(mesh["flags"]) & MASK_VERTEX]
        start = int(mesh["first_mesh_index"])
        used = indices[start:start + 3 * int(mesh["num_triangles"])].astype(np.int64)
        used += int(sorts[mesh["material_sort"]]["vertex_offset"])
        assert used.max() < bsp.count(lump)
        vertex = bsp.array(lump)[used]
        assert vertex["position_index"].max() < bsp.count("VERTICES")
        assert vertex["normal_index"].max() < bsp.count("VERTEX_NORMALS")


@maps
def test_save_unchanged_and_reencoded_is_byte_identical(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    bsp = RespawnBsp.open(path)
    assert bsp.to_bytes() == data
    bsp.reencode()
    assert set(bsp._replaced) >= {i for i in bsp.decoded_lumps() if bsp.lumps[i].filelen}
    assert bsp.to_bytes() == data
    out = tmp_path / "copy.bsp"
    assert bsp.save(out) == out and out.stat().st_size == len(data)
    assert out.read_bytes() == data
    with pytest.raises(FileExistsError):
        bsp.save(out)


@maps
def test_grown_lump_moves_what_follows(path: Path) -> None:
    bsp = RespawnBsp.open(path)
    before = {i: bsp.raw(i) for i in range(NUM_LUMPS)}
    text = bsp.raw("ENTITIES").rstrip(b"\0") + b'{\n"classname" "info_null"\n}\n\0'
    bsp.set_lump("ENTITIES", text)
    again = RespawnBsp(bsp.to_bytes())
    assert len(again.entities) == len(RespawnBsp.open(path).entities) + 1
    for index in range(1, NUM_LUMPS):
        if index != 0x23:
            assert again.raw(index) == before[index], again.names[index]
    assert again.lumps[0].filelen == len(text)
    # The game lump moved: its directory's dgamelump_t.fileofs (from the start of the file, as
    # bsp_tool's GameLump.as_bytes(offset) writes them) moved with it; the sub-lump is the same.
    moved = again.lumps[0x23].fileofs - bsp.lumps[0x23].fileofs
    assert moved == 32 and len(again.raw(0x23)) == len(before[0x23])
    old, new = bsp.game_sub_lump("sprp"), again.game_sub_lump("sprp")
    assert old is not None and new is not None
    assert new[:2] == old[:2] and new[2] == old[2] + moved


def _tiny(version: int = 37) -> bytes:
    """A header with three lumps: ENTITIES, VERTICES (two vertices), ENTITY_PARTITIONS."""
    entities = b'{\n"classname" "worldspawn"\n}\n\0'
    vertices = np.array([[0, 1, 2], [3, 4, 5]], "<f4").tobytes()
    parts = b"01* env\0"
    directory = [[0, 0, 0, 0] for _ in range(NUM_LUMPS)]
    offset = HEADER_SIZE
    body = b""
    for index, data in ((0x00, entities), (0x03, vertices), (0x18, parts)):
        directory[index] = [offset, len(data), 0, 0]
        body += data + b"\0" * (-len(data) % 4)
        offset = HEADER_SIZE + len(body)
    head = struct.pack(f"<4s3i{4 * NUM_LUMPS}i", b"rBSP", version, 1, NUM_LUMPS - 1,
                       *[v for entry in directory for v in entry])
    return head + body


def test_external_lump_and_ent_files_are_read_and_saved(tmp_path: Path) -> None:
    path = tmp_path / "mp_tiny.bsp"
    path.write_bytes(_tiny())
    external = np.array([[9, 9, 9]], "<f4").tobytes()
    (tmp_path / "mp_tiny.bsp.0003.bsp_lump").write_bytes(external)
    (tmp_path / "mp_tiny_env.ent").write_bytes(b'ENTITIES01\n{\n"classname" "light"\n}\n{\n"classname" "x"\n}\n\0')
    bsp = sourcebsp.open(path)
    assert isinstance(bsp, RespawnBsp) and bsp.variant.name == "titanfall2"
    assert bsp.array("VERTICES").tolist() == [[9, 9, 9]]
    assert bsp.partitions == ["env"]
    assert {k: len(v) for k, v in bsp.partition_entities().items()} == {"env": 2}
    out = tmp_path / "saved" / "copy.bsp"
    out.parent.mkdir()
    bsp.save(out)
    assert out.read_bytes() == path.read_bytes()
    assert (out.parent / "copy.bsp.0003.bsp_lump").read_bytes() == external
    assert (out.parent / "copy_env.ent").read_bytes() == (tmp_path / "mp_tiny_env.ent").read_bytes()


def test_titanfall1_names_differ_where_titanfall2_named_more() -> None:
    assert lump_names(29)[0x04] == "UNUSED_4" and lump_names(37)[0x04] == "LIGHTPROBE_PARENT_INFOS"
    assert lump_names(29)[0x50] == lump_names(37)[0x50] == "MESHES"
    assert RespawnBsp(_tiny(29)).array("MESHES").dtype.itemsize == 28  # both Mesh layouts are 28 bytes


@pytest.mark.parametrize("damage, error, offset", [
    (lambda d: d[:100], TruncatedError, 100),
    (lambda d: d[:4] + struct.pack("<i", 47) + d[8:], UnsupportedError, 4),
    (lambda d: d[:12] + struct.pack("<i", 63) + d[16:], BspFormatError, 12),
    (lambda d: d[:16 + 16 * 3] + struct.pack("<i", -5) + d[20 + 16 * 3:], BspFormatError, 16 + 16 * 3),
    (lambda d: d[:16 + 16 * 3] + struct.pack("<i", 20) + d[20 + 16 * 3:], BspFormatError, 20),
    (lambda d: d[:-8], TruncatedError, None),
])
def test_hostile_headers_raise_bsp_errors(damage, error, offset) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as raised:
        RespawnBsp(damage(_tiny()))
    if offset is not None:
        assert raised.value.offset == offset


def test_record_size_is_checked() -> None:
    data = bytearray(_tiny())
    struct.pack_into("<i", data, 16 + 16 * 3 + 4, 20)  # VERTICES: 20 bytes, not a multiple of 12
    with pytest.raises(LumpSizeError) as raised:
        RespawnBsp(bytes(data)).array("VERTICES")
    assert raised.value.lump == "VERTICES" and raised.value.offset == HEADER_SIZE + 32


def test_every_truncation_of_a_real_map_is_an_error_or_reads() -> None:
    if not RBSP_MAPS:
        pytest.skip("no rBSP map")
    data = RBSP_MAPS[0].read_bytes()
    for size in (0, 7, 8, 16, HEADER_SIZE - 1, HEADER_SIZE, len(data) // 2, len(data) - 1):
        try:
            bsp = RespawnBsp(data[:size])
            for index in bsp.decoded_lumps():
                bsp.count(index)
        except BspError:
            pass


def test_random_damage_ends_in_success_or_bsp_error(tmp_path: Path) -> None:
    """300 copies of a real map, each with a few random bytes of the header or a geometry lump
    changed, read through every rBSP path (counts, texture names, entities, triangles, glTF)."""
    if not RBSP_MAPS:
        pytest.skip("no rBSP map")
    from sourcebsp.converters.gltf.respawn import respawn_glb_pieces
    from sourcebsp.model.respawn import build_respawn_mesh

    data = RBSP_MAPS[0].read_bytes()
    bsp = RespawnBsp(data)
    # Where to strike: the directory, and the first 256 bytes of each decoded lump and of ENTITIES.
    targets = [(16, HEADER_SIZE)] + [(bsp.lumps[i].fileofs, min(bsp.lumps[i].filelen, 256))
                                     for i in (0, *bsp.decoded_lumps()) if bsp.lumps[i].filelen]
    rng = np.random.default_rng(26)
    outcomes = {"read": 0, "error": 0}
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            start, length = targets[int(rng.integers(len(targets)))]
            where = start + int(rng.integers(length))
            damaged[where] = int(rng.integers(256)) if rng.random() < 0.7 else 0xFF
        try:
            bsp = RespawnBsp(bytes(damaged))
            for index in bsp.decoded_lumps():
                bsp.count(index)
            bsp.texture_names()
            bsp.entities
            build_respawn_mesh(bsp)
            respawn_glb_pieces(bsp)
            assert bsp.to_bytes() == bytes(damaged)
            outcomes["read"] += 1
        except BspError:
            outcomes["error"] += 1
    assert outcomes["error"] > 0 and outcomes["read"] > 0, outcomes  # both paths were taken


@pytest.mark.parametrize("variant, version", [("titanfall", 29), ("titanfall2", 37)])
def test_example_map_reads_in_bsp_tool_and_round_trips(variant: str, version: int, tmp_path: Path) -> None:
    from sourcebsp.examples.respawn import write_example_respawn

    path = write_example_respawn(tmp_path / f"mp_{variant}.bsp", variant)
    bsp = sourcebsp.open(path)
    assert isinstance(bsp, RespawnBsp) and bsp.version == version and bsp.variant.name == variant
    reference = _bsp_tool(path)
    assert reference.branch.__name__.endswith(f".{variant}")
    for name in _COMPARED:
        assert bsp.count(name) == len(getattr(reference, name)), name
    assert (bsp.count("VERTICES"), bsp.count("MESHES"), bsp.count("MESH_INDICES")) == (8, 1, 36)
    assert len(bsp.entities) == len(reference.ENTITIES) == 5
    assert [dict(e.items()) for e in bsp.entities] == list(reference.ENTITIES)
    _compare_collision_grid(bsp, reference)
    assert (bsp.count("CM_GRID_CELLS"), bsp.count("CM_GEO_SETS"), bsp.count("CM_PRIMITIVES")) == (6, 3, 2)
    assert bsp.texture_names() == list(reference.TEXTURE_DATA_STRING_DATA) == ["dev/dev_measuregeneric01",
                                                                               "dev/dev_measurewall01a"]
    bsp.reencode()
    assert bsp.to_bytes() == path.read_bytes()


def test_cli_repack_keeps_companion_files_it_may_not_replace(tmp_path: Path) -> None:
    import subprocess
    import sys

    from sourcebsp.examples.respawn import write_example_respawn

    (tmp_path / "in").mkdir()
    path = write_example_respawn(tmp_path / "in" / "mp_room.bsp")
    (tmp_path / "in" / "mp_room.bsp.0003.bsp_lump").write_bytes(np.zeros((8, 3), "<f4").tobytes())
    mine = tmp_path / "out.bsp.0003.bsp_lump"
    mine.write_bytes(b"the user's file")
    done = subprocess.run([sys.executable, "-m", "sourcebsp", "repack", str(path), "-o", str(tmp_path / "out.bsp")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "exists" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert mine.read_bytes() == b"the user's file" and not (tmp_path / "out.bsp").exists()
    done = subprocess.run([sys.executable, "-m", "sourcebsp", "repack", str(path), "-o", str(tmp_path / "out.bsp"),
                           "--overwrite"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert mine.read_bytes() == np.zeros((8, 3), "<f4").tobytes()
    assert (tmp_path / "out.bsp").read_bytes() == path.read_bytes()

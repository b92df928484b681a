"""``export`` of Titanfall rBSP maps: the glTF holds every mesh triangle, validator clean.

The triangles are compared with bsp_tool's reading of MESHES, MESH_INDICES and
the vertex lumps (an independent reader); hostile indices end in BspFormatError.
"""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sourcebsp.converters.gltf.respawn import export_respawn_glb
from sourcebsp.errors import BspFormatError
from sourcebsp.model.respawn import build_respawn_mesh
from sourcebsp.respawn import RespawnBsp

from ..test_respawn import RBSP_MAPS, maps
from .test_gltf import _chunks, assert_valid, validator  # noqa: F401 - the fixture, shared


@maps
def test_glb_is_validator_clean(path: Path, tmp_path: Path, validator: Path) -> None:  # noqa: F811
    out = tmp_path / "map.glb"
    export_respawn_glb(path, out)
    assert_valid(out, validator)


def _accessor(document: dict, blob: bytes, index: int) -> np.ndarray:
    accessor = document["accessors"][index]
    view = document["bufferViews"][accessor["bufferView"]]
    dtype = {5126: "<f4", 5125: "<u4"}[accessor["componentType"]]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3}[accessor["type"]]
    return np.frombuffer(blob, dtype, accessor["count"] * width, view["byteOffset"]).reshape(-1, width)


@maps
def test_glb_triangles_are_bsp_tools(path: Path, tmp_path: Path) -> None:
    bsp_tool = pytest.importorskip("bsp_tool")
    reference = bsp_tool.load_bsp(str(path))
    out = tmp_path / "map.glb"
    stats = export_respawn_glb(path, out)
    document, blob = _chunks(out.read_bytes())
    assert stats.triangles == sum(m.num_triangles for m in reference.MESHES)
    # Every triangle as its three Z-up corner positions, sorted, from the file and from bsp_tool.
    found = []
    for primitive in (p for mesh in document["meshes"] for p in mesh["primitives"]):
        position = _accessor(document, blob, primitive["attributes"]["POSITION"])
        corners = _accessor(document, blob, primitive["indices"]).ravel()
        zup = np.stack([position[:, 0], -position[:, 2], position[:, 1]], axis=1)
        found.append(zup[corners].reshape(-1, 9))
    assert sum(len(f) for f in found) == stats.triangles
    vertices = np.array([[v.x, v.y, v.z] for v in reference.VERTICES], np.float32)
    # bsp_tool keeps Titanfall 2's version-0 VERTEX_LIT_FLAT raw: its bytes, read as 36-byte records.
    flat = np.frombuffer(bytes(reference.VERTEX_LIT_FLAT[:]), "<u4")
    expected = []
    for mesh in reference.MESHES:
        sort = reference.MATERIAL_SORTS[mesh.material_sort]
        rows = np.array(reference.MESH_INDICES[mesh.first_mesh_index:mesh.first_mesh_index + 3 * mesh.num_triangles],
                        np.int64) + sort.vertex_offset
        assert int(mesh.flags) & 0x600 == 0  # the corpus map: lit-flat vertices only
        position_index = flat.reshape(-1, 9)[rows, 0]  # 36-byte records, position_index first
        expected.append(vertices[position_index].reshape(-1, 9))
    names = sorted(m["name"] for m in document["materials"])
    assert names == sorted({reference.TEXTURE_DATA_STRING_DATA[reference.TEXTURE_DATA[s.texture_data].name_index]
                            for s in (reference.MATERIAL_SORTS[m.material_sort] for m in reference.MESHES)})

    def canonical(rows: list[np.ndarray]) -> np.ndarray:
        joined = np.concatenate(rows)
        return joined[np.lexsort(joined.T[::-1])]

    np.testing.assert_allclose(canonical(found), canonical(expected), atol=1e-3)


def test_cli_export_and_info_and_repack(tmp_path: Path) -> None:
    if not RBSP_MAPS:
        pytest.skip("no rBSP map")
    path = RBSP_MAPS[0]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sourcebsp", *args], capture_output=True, text=True, timeout=120)

    done = run("export", str(path), "-o", str(tmp_path / "x.glb"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "x.glb").read_bytes()[:4] == b"glTF"
    refused = run("export", str(path), "-o", str(tmp_path / "x.obj"))
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1 and ".glb only" in refused.stderr
    info = run("info", "--json", str(path))
    assert info.returncode == 0, info.stderr
    report = json.loads(info.stdout)
    bsp = RespawnBsp.open(path)
    assert report["variant"] == bsp.variant.name and report["entity_count"] == len(bsp.entities)
    assert {row["name"]: row["count"] for row in report["lumps"]}["MESHES"] == bsp.count("MESHES")
    assert len(report["lumps"]) == sum(1 for _ in bsp.iter_lumps())
    repacked = run("repack", str(path), "-o", str(tmp_path / "r.bsp"), "--reencode")
    assert repacked.returncode == 0, repacked.stderr
    assert (tmp_path / "r.bsp").read_bytes() == path.read_bytes()
    again = run("repack", str(path), "-o", str(tmp_path / "r.bsp"))
    assert again.returncode == 1 and "Traceback" not in again.stderr  # exists, no --overwrite


def _with(data: bytes, lump: int, record: int, field_offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    fileofs, _ = struct.unpack_from("<2i", out, 16 + 16 * lump)
    struct.pack_into(fmt, out, fileofs + record * {0x50: 28, 0x52: 12, 0x4F: 2}[lump] + field_offset, value)
    return bytes(out)


@pytest.mark.parametrize("lump, field_offset, fmt, value, named", [
    (0x50, 24 - 2, "<H", 999, "MESHES"),           # material sort out of range
    (0x50, 0, "<I", 10 ** 8, "MESHES"),            # first mesh index past MESH_INDICES
    (0x52, 8, "<i", 10 ** 7, "MESH_INDICES"),      # vertex offset past the vertex lump
    (0x52, 0, "<h", 500, "MATERIAL_SORTS"),        # texture data out of range
])
def test_hostile_indices_name_their_lump(lump: int, field_offset: int, fmt: str, value: int, named: str) -> None:
    if not RBSP_MAPS:
        pytest.skip("no rBSP map")
    data = _with(RBSP_MAPS[0].read_bytes(), lump, 0, field_offset, fmt, value)
    with pytest.raises(BspFormatError) as raised:
        build_respawn_mesh(RespawnBsp(data))
    assert raised.value.lump == named and raised.value.offset is not None


@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_example_room_glb(variant: str, tmp_path: Path, validator: Path) -> None:  # noqa: F811
    from sourcebsp.examples.respawn import write_example_respawn

    path = write_example_respawn(tmp_path / "room.bsp", variant)
    out = tmp_path / "room.glb"
    stats = export_respawn_glb(path, out)
    assert (stats.triangles, stats.materials) == (12, 1)
    assert_valid(out, validator)
    document, blob = _chunks(out.read_bytes())
    position = _accessor(document, blob, document["meshes"][0]["primitives"][0]["attributes"]["POSITION"])
    # The room's 8 corners, Y-up: x in +-256, height (y) 0..256, depth (z = -y) in +-256.
    assert sorted(map(tuple, np.unique(position, axis=0).tolist())) == sorted(
        (x, h, z) for x in (-256.0, 256.0) for h in (0.0, 256.0) for z in (-256.0, 256.0))


@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_static_props_are_placed_nodes_named_after_their_models(variant: str, tmp_path: Path,
                                                               validator: Path) -> None:  # noqa: F811
    from sourcebsp.examples.respawn import write_example_respawn

    path = write_example_respawn(tmp_path / "mp_room.bsp", variant)
    out = tmp_path / "room.glb"
    stats = export_respawn_glb(path, out)
    assert_valid(out, validator)
    document, _ = _chunks(out.read_bytes())
    props = [n for n in document["nodes"] if "static_prop" in n.get("extras", {})]
    assert stats.props == len(props) == 1 and "mesh" not in props[0]
    prop = props[0]
    assert prop["name"] == "models/props_c17/oildrum001.mdl"
    # The sprp record: origin (128, 64, 0) Z-up is (128, 0, -64) Y-up; yaw 90 turns the model's
    # +X (forward) to the map's +Y, which is -Z in glTF's axes.
    assert np.allclose(prop["translation"], [128, 0, -64])
    x, y, z, w = prop["rotation"]
    forward = np.array([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)])  # R @ (1, 0, 0)
    assert np.allclose(forward, [0, 0, -1], atol=1e-6)
    assert "scale" not in prop and prop["extras"]["skin"] == 0
    scene = document["scenes"][0]["nodes"]
    assert document["nodes"].index(prop) in scene


def test_a_brush_entity_model_is_named_as_the_source_export_names_it(tmp_path: Path) -> None:
    from sourcebsp.examples.respawn import example_respawn_bytes

    data = example_respawn_bytes("titanfall2")
    bsp = RespawnBsp(data)
    models = bsp.array("MODELS").copy()
    models["first_mesh"], models["num_meshes"] = [0, 0], [0, 1]  # the room's mesh drawn by model 1, the func_brush
    fileofs = bsp.lumps[0x0E].fileofs
    path = tmp_path / "mp_room.bsp"
    path.write_bytes(data[:fileofs] + models.tobytes() + data[fileofs + models.nbytes:])
    out = tmp_path / "room.glb"
    export_respawn_glb(path, out)
    document, _ = _chunks(out.read_bytes())
    [node] = [n for n in document["nodes"] if "mesh" in n]
    assert node["name"] == "*1 func_brush ramp_north"  # the entity with "model" "*1"
    assert node["extras"] == {"model": 1, "classname": "func_brush"}
    assert document["meshes"][node["mesh"]]["name"] == node["name"]


@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_the_one_export_entry_takes_a_titanfall_map_or_its_path(variant: str, tmp_path: Path) -> None:
    """``export_glb`` and ``glb_bytes`` take any map: a Titanfall map (object or path) gives the
    rBSP builder's file and statistics; the OBJ export refuses it by name."""
    import sourcebsp
    from sourcebsp.converters.gltf import GltfOptions, export_glb, glb_bytes
    from sourcebsp.converters.gltf.respawn import RespawnExportStats
    from sourcebsp.converters.obj import export_obj
    from sourcebsp.errors import UnsupportedError
    from sourcebsp.examples.respawn import write_example_respawn

    path = write_example_respawn(tmp_path / "mp_room.bsp", variant)
    direct = tmp_path / "direct.glb"
    export_respawn_glb(path, direct, units="meters")
    options = GltfOptions(units="meters")
    stats = export_glb(path, tmp_path / "entry.glb", options)
    assert (tmp_path / "entry.glb").read_bytes() == direct.read_bytes()
    assert isinstance(stats, RespawnExportStats) and stats.meshes >= 1 and stats.primitives >= stats.meshes
    assert stats.summary("out.glb", options).startswith(f"out.glb: {stats.meshes} meshes ({stats.primitives} ")
    with sourcebsp.open(path) as bsp:
        assert glb_bytes(bsp, options) == direct.read_bytes()
    with pytest.raises(UnsupportedError, match="exports as .glb only, not .obj"):
        export_obj(path, tmp_path / "map.obj")

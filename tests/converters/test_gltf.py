"""glTF binary export: structure, counts and the Khronos validator, on every corpus map."""
from __future__ import annotations

import functools
import io
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pygltflib = pytest.importorskip("pygltflib")  # before the package, which needs it to import

import sourcebsp
from sourcebsp.converters import gltf as gl
from sourcebsp.lump_ids import LumpId
from sourcebsp.model.geometry import build_mesh

from ..conftest import IN_CI, ROOT
from ..model._expected import expected, names_of


VALIDATOR_SCRIPT = Path(__file__).with_name("validate_gltf.mjs")


@functools.lru_cache(maxsize=2)
def _export(path, units="hammer"):
    stats = gl.ExportStats()
    data = gl.glb_bytes(path, units=units, stats=stats)
    return data, stats


def _chunks(data: bytes) -> tuple[dict, bytes]:
    magic, version, length = struct.unpack_from("<4sII", data)
    assert (magic, version, length) == (b"glTF", 2, len(data))
    size, kind = struct.unpack_from("<I4s", data, 12)
    assert kind == b"JSON" and size % 4 == 0
    document = json.loads(data[20 : 20 + size])
    rest = data[20 + size :]
    if not rest:
        return document, b""
    bsize, bkind = struct.unpack_from("<I4s", rest)
    assert bkind == b"BIN\0" and bsize == len(rest) - 8 and bsize % 4 == 0
    return document, rest[8:]


def _accessor(document: dict, blob: bytes, index: int) -> np.ndarray:
    acc = document["accessors"][index]
    view = document["bufferViews"][acc["bufferView"]]
    dtype = {5126: "<f4", 5123: "<u2", 5125: "<u4"}[acc["componentType"]]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[acc["type"]]
    raw = blob[view.get("byteOffset", 0) : view.get("byteOffset", 0) + view["byteLength"]]
    return np.frombuffer(raw, dtype).reshape(acc["count"], width)


def test_glb_structure_and_counts(map_path):
    data, stats = _export(map_path)
    bsp = sourcebsp.open(map_path)
    want = expected(bsp)
    loaded = pygltflib.GLTF2.load_from_bytes(data)
    assert len(loaded.meshes) == len(want.models) == stats.meshes
    names = names_of(bsp)
    assert sorted(m.name for m in loaded.materials) == sorted(names[t] for t in want.textures)
    document, blob = _chunks(data)
    triangles = 0
    lit = bsp.entry(LumpId.LIGHTING).filelen > 0 or bsp.entry(LumpId.LIGHTING_HDR).filelen > 0
    for mesh in document.get("meshes", []):
        for primitive in mesh["primitives"]:
            assert primitive["mode"] == 4
            position = _accessor(document, blob, primitive["attributes"]["POSITION"])
            indices = _accessor(document, blob, primitive["indices"]).ravel()
            assert indices.max() < len(position) and len(indices) % 3 == 0
            triangles += len(indices) // 3
            assert np.isfinite(_accessor(document, blob, primitive["attributes"]["TEXCOORD_0"])).all()
            assert ("TEXCOORD_1" in primitive["attributes"]) == lit
            if lit:
                uv1 = _accessor(document, blob, primitive["attributes"]["TEXCOORD_1"])
                assert np.all((uv1 >= 0) & (uv1 <= 1))
            normal = _accessor(document, blob, primitive["attributes"]["NORMAL"])
            np.testing.assert_allclose(np.linalg.norm(normal, axis=1), 1, atol=1e-4)
    assert triangles == want.triangles == stats.triangles
    assert len(document.get("images", [])) == int(lit)
    if lit:
        Image = pytest.importorskip("PIL.Image")
        view = document["bufferViews"][document["images"][0]["bufferView"]]
        png = blob[view.get("byteOffset", 0) : view.get("byteOffset", 0) + view["byteLength"]]
        with Image.open(io.BytesIO(png)) as image:
            assert image.format == "PNG" and image.size == stats.lightmap


def test_static_prop_nodes(map_path):
    data, _ = _export(map_path)
    document, _ = _chunks(data)
    bsp = sourcebsp.open(map_path)
    props = bsp.static_props
    group = [n for n in document["nodes"] if n.get("name") == "static_props"]
    if not len(props):
        assert not group
        return
    children = [document["nodes"][i] for i in group[0]["children"]]
    assert [c["name"] for c in children] == props.model_names()
    origin = props.props["origin"].astype(np.float64)
    got = np.array([c["translation"] for c in children])
    np.testing.assert_allclose(got, np.stack([origin[:, 0], origin[:, 2], -origin[:, 1]], 1), atol=1e-3)
    for c in children:
        assert abs(np.linalg.norm(c["rotation"]) - 1) < 1e-6


def test_units_and_axes(corpus_file):
    path = corpus_file("tf2_test2.bsp")
    inches, _ = _export(path)
    metres, _ = _export(path, "meters")
    di, bi = _chunks(inches)
    dm, bm = _chunks(metres)
    pi = _accessor(di, bi, di["meshes"][0]["primitives"][0]["attributes"]["POSITION"])
    pm = _accessor(dm, bm, dm["meshes"][0]["primitives"][0]["attributes"]["POSITION"])
    np.testing.assert_allclose(pm, pi * 0.0254, rtol=1e-5, atol=1e-5)
    # Y up: the glTF Y range is the map's Z range.
    mesh = build_mesh(sourcebsp.open(path))
    world = mesh.positions[mesh.vertex_model == 0]
    acc = di["accessors"][di["meshes"][0]["primitives"][0]["attributes"]["POSITION"]]
    assert acc["min"][1] == pytest.approx(float(world[:, 2].min()), abs=1e-3)
    assert acc["max"][2] == pytest.approx(float(-world[:, 1].min()), abs=1e-3)


def test_empty_map_has_no_bin_chunk(corpus_file):
    data, stats = _export(corpus_file("v42_rot_main.bsp"))
    document, blob = _chunks(data)
    assert blob == b"" and "buffers" not in document and stats.triangles == 0


# ---- the Khronos validator --------------------------------------------------------------
def _validator_dir() -> Path | None:
    """The folder whose node_modules holds gltf-validator (.ci/node, or $SOURCEBSP_GLTF_VALIDATOR)."""
    for folder in (os.environ.get("SOURCEBSP_GLTF_VALIDATOR"), ROOT / ".ci" / "node"):
        if folder and (Path(folder) / "node_modules" / "gltf-validator").is_dir():
            return Path(folder)
    return None


@pytest.fixture(scope="session")
def validator() -> Path:
    folder = _validator_dir()
    if shutil.which("node") is None or folder is None:
        message = ("the glTF validator is not installed: npm install --prefix .ci/node gltf-validator "
                   "(and node must be on PATH)")
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return folder


def test_khronos_validator(map_path, tmp_path, validator):
    data, _ = _export(map_path)
    out = tmp_path / f"{map_path.stem}.glb"
    out.write_bytes(data)
    assert_valid(out, validator)


def assert_valid(glb: Path, validator: Path) -> None:
    """The Khronos validator finds no error and no warning in the file ``glb``."""
    run = subprocess.run(["node", str(VALIDATOR_SCRIPT), str(glb)], cwd=validator, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode in (0, 1), run.stderr
    report = json.loads(run.stdout.splitlines()[0])
    assert report["errors"] == 0, report["messages"]
    assert report["warnings"] == 0, report["messages"]


def test_brush_entity_nodes_placed(map_path):
    data, _ = _export(map_path)
    document, _ = _chunks(data)
    bsp = sourcebsp.open(map_path)
    by_model = {}
    for entity in bsp.entities:
        model = entity.get("model") or ""
        if model.startswith("*") and model[1:].isdigit():
            by_model.setdefault(int(model[1:]), entity)
    for node in document["nodes"]:
        if "mesh" not in node:
            continue
        index = node["extras"]["model"]
        assert node["name"] == ("world" if index == 0 else node["name"]) and node["name"].startswith(
            "world" if index == 0 else f"*{index}")
        origin = np.zeros(3)
        if index in by_model and by_model[index].get("origin"):
            origin = np.array([float(v) for v in by_model[index]["origin"].split()])
        expected_t = [origin[0], origin[2], -origin[1]]
        np.testing.assert_allclose(node.get("translation", [0, 0, 0]), expected_t if index else [0, 0, 0], atol=1e-4)


def test_options_object_and_keyword_arguments_write_the_same_file(corpus_file, tmp_path):
    """GltfOptions is what the keyword arguments build; keywords given with it replace its fields."""
    path = corpus_file("tf2_test2.bsp")
    options = gl.GltfOptions(models="world", units="meters", include_tools=True, props=False)
    by_keywords = gl.glb_bytes(path, models="world", units="meters", include_tools=True, props=False)
    assert gl.glb_bytes(path, options) == by_keywords != gl.glb_bytes(path)
    assert gl.glb_bytes(path, options, units="hammer", props=True) == gl.glb_bytes(path, models="world",
                                                                                  include_tools=True)
    stats = gl.export_glb(path, tmp_path / "options.glb", options)
    assert (tmp_path / "options.glb").read_bytes() == by_keywords
    assert stats == gl.export_glb(path, tmp_path / "keywords.glb", models="world", units="meters",
                                  include_tools=True, props=False)
    assert stats.meshes == 1 and stats.props == 0


def test_options_are_checked_when_made(tmp_path):
    with pytest.raises(ValueError, match="units must be 'hammer' or 'meters', not 'feet'"):
        gl.GltfOptions(units="feet")
    with pytest.raises(ValueError, match="units must be"):  # before the map is looked for
        gl.glb_bytes(tmp_path / "absent.bsp", units="feet")
    with pytest.raises(TypeError, match="colour"):
        gl.glb_bytes(tmp_path / "absent.bsp", colour=True)
    with pytest.raises(AttributeError):  # frozen: one set of options, shared safely
        gl.GltfOptions().skybox = True


def test_without_pygltflib_the_export_names_the_extra(corpus_file, tmp_path):
    """pygltflib is imported with the glTF package: missing, the package, the library call and the
    command all say which extra installs it."""
    out = tmp_path / "out.glb"
    body = f"""
import sys
sys.modules["pygltflib"] = None  # as if it were not installed
from sourcebsp.errors import MissingExtraError
try:
    from sourcebsp.converters.gltf import export_glb
except MissingExtraError as exc:
    print(exc)
from sourcebsp.cli import main
sys.exit(main(["export", {str(corpus_file("tf2_mp_lobby.bsp"))!r}, "-o", {str(out)!r}]))
"""
    run = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    message = "glTF export needs pygltflib: pip install 'sourcebsp[export]'"
    assert run.returncode == 1 and not out.exists()
    assert run.stdout.strip() == message
    assert run.stderr.strip() == f"sourcebsp: error: {message}"

"""Static prop vertex lighting (``sp_*.vhv``): built in code with struct, every file of the corpus, hostile files."""
from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.cli import main
from sourcebsp.content.studiomodel.vhv import VHV_HEADER, VHV_MESH, read_vhv, vhv_files
from sourcebsp.errors import BspError, UnsupportedError


def build_vhv(meshes: list[tuple[int, list[tuple[int, int, int, int]]]], checksum: int = 77, version: int = 2,
              size: int = 4, data_at: int = 512) -> bytes:
    """A .vhv from public/vhv.h field by field: (lod, [BGRA colours]) per mesh."""
    total = sum(len(c) for _, c in meshes)
    out = bytearray(struct.pack("<iIIIIi4I", version, checksum, 4, size, total, len(meshes), 0, 0, 0, 0))
    at = data_at
    for lod, colours in meshes:
        out += struct.pack("<III4I", lod, len(colours), at, 0, 0, 0, 0)
        at += 4 * len(colours)
    out += bytes(data_at - len(out))
    for _, colours in meshes:
        for c in colours:
            out += bytes(c)
    return bytes(out)


def test_struct_sizes_are_vhv_h() -> None:
    assert VHV_HEADER.itemsize == 40 and VHV_MESH.itemsize == 28


def test_built_file_decodes_to_rgba_per_lod() -> None:
    data = build_vhv([(0, [(1, 2, 3, 255), (4, 5, 6, 255)]), (0, [(7, 8, 9, 255)]), (1, [(10, 11, 12, 255)])])
    vhv = read_vhv(data, "sp_3.vhv")
    assert vhv.checksum == 77 and vhv.vertex_counts(0) == [2, 1] and vhv.vertex_counts(1) == [1]
    lod0 = vhv.mesh_colors(0)
    assert [m.tolist() for m in lod0] == [[[3, 2, 1, 255], [6, 5, 4, 255]], [[9, 8, 7, 255]]]  # BGRA -> RGBA
    assert vhv.mesh_colors(1)[0].tolist() == [[12, 11, 10, 255]]
    assert vhv.summary() == {"file": "sp_3.vhv", "checksum": 77, "lods": {"0": [2, 1], "1": [1]}}


def test_file_names_by_prop_index() -> None:
    assert vhv_files(["sp_0.vhv", "SP_HDR_0.vhv", "sp_12.vhv", "materials/sp_1.vhv", "sp_x.vhv", "sp_2.vtf"]) == {
        0: {"ldr": "sp_0.vhv", "hdr": "SP_HDR_0.vhv"}, 12: {"ldr": "sp_12.vhv"}}


def _broken(data: bytes, at: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


GOOD = build_vhv([(0, [(1, 2, 3, 255)] * 3), (1, [(1, 2, 3, 255)])])


@pytest.mark.parametrize("data, error", [
    (GOOD[:30], "FileHeader_t"),  # truncated header
    (_broken(GOOD, 0, "<i", 3), "version 3"),
    (_broken(GOOD, 20, "<i", 0x7FFFFFFF), "MeshHeader_t"),  # mesh count past the file
    (_broken(GOOD, 20, "<i", -1), "negative"),
    (_broken(GOOD, 16, "<I", 5), "header 5"),  # counts disagree
    (_broken(GOOD, 40 + 8, "<I", 10_000), "mesh 0 colours"),  # colours past the end
    (GOOD[:514], "mesh 0 colours"),  # truncated colours
])
def test_hostile_files_raise_bsp_errors(data: bytes, error: str) -> None:
    with pytest.raises(BspError, match=error):
        read_vhv(data, "sp_0.vhv")


def test_other_vertex_sizes_are_unsupported() -> None:
    with pytest.raises(UnsupportedError, match="8-byte"):
        read_vhv(_broken(GOOD, 12, "<I", 8), "sp_0.vhv")


def _vhv_maps(all_maps: list[Path]) -> dict[str, dict[str, bytes]]:
    found = {}
    for path in all_maps:
        with sourcebsp.open(path) as bsp:
            try:
                raw = bytes(bsp.raw_lump(LumpId.PAKFILE))
                names = zipfile.ZipFile(io.BytesIO(raw)).namelist()
            except (zipfile.BadZipFile, BspError):
                continue
            files = {n: bsp.pakfile.read(n) for n in names if n.lower().endswith(".vhv")}
        if files:
            found[path.stem] = files
    return found


@pytest.mark.slow
def test_every_corpus_vhv_file(all_maps: list[Path]) -> None:
    maps = _vhv_maps(all_maps)
    assert sorted(maps) == ["l4d2_map_cannals_escape01", "tf2c_vipr_downfall", "valvebsp_testmap"]
    assert sum(len(f) for f in maps.values()) == 24 + 27 + 90
    for stem, files in maps.items():
        with sourcebsp.open(next(p for p in all_maps if p.stem == stem)) as bsp:
            num_props = len(bsp.static_props.props)
        assert set(vhv_files(files)) <= set(range(num_props))  # one file per static prop index at most
        for name, data in files.items():
            vhv = read_vhv(data, name)
            # Independent of the reader: the header's count by struct, 4 bytes each, and vrad's alpha of 255.
            total = struct.unpack_from("<I", data, 16)[0]
            assert len(vhv.colors) == total and int(vhv.counts.sum()) == total
            assert (vhv.colors[:, 3] == 255).all()
            assert vhv.checksum == struct.unpack_from("<I", data, 4)[0]
            assert len(vhv.mesh_colors(0)) >= 1


@pytest.mark.slow
def test_props_json_lists_vertex_lighting(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_file("valvebsp_testmap.bsp")
    assert main(["props", str(path), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    with sourcebsp.open(path) as bsp:
        data = bsp.pakfile.read("sp_0.vhv")
    meshes = struct.unpack_from("<i", data, 20)[0]
    by_lod: dict[str, list[int]] = {}
    for k in range(meshes):
        lod, count = struct.unpack_from("<II", data, 40 + 28 * k)
        by_lod.setdefault(str(lod), []).append(count)
    assert records[0]["vertex_lighting"]["ldr"] == {"file": "sp_0.vhv", "checksum": struct.unpack_from("<I", data, 4)[0],
                                                    "lods": by_lod}
    assert records[0]["vertex_lighting"]["hdr"]["file"] == "sp_hdr_0.vhv"
    assert sum(bool(r["vertex_lighting"]) for r in records) == 12


def test_props_json_broken_vhv_is_reported_not_fatal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ._maps import build_map

    path = build_map(tmp_path / "m.bsp", props=["models/a.mdl"], pak={"sp_0.vhv": GOOD[:30], "sp_hdr_0.vhv": GOOD})
    assert main(["props", str(path), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)[0]
    assert "FileHeader_t" in record["vertex_lighting"]["ldr"]["error"]
    assert record["vertex_lighting"]["hdr"]["lods"] == {"0": [3], "1": [1]}
    assert np.array_equal(read_vhv(GOOD, "x").colors[0], [3, 2, 1, 255])


# ---- a .vhv laid on its model's vertices -------------------------------------------------------
def position_colour(p: tuple[float, float, float]) -> tuple[int, int, int]:
    """A distinct colour per vertex of the fixtures below (each byte at most 127: no overbright)."""
    x, y, z = p
    return int(x * 5 + z) % 128, int(y * 5 + z) % 128, int(z * 4) % 128


def _layered_spec(fixups: bool):
    from ._studiomodels import Spec, quad

    return Spec(fixups=fixups, bodyparts=[
        ("body", [("ref", [quad(0), quad(1, z=5.0, size=4.0)])]),
        ("head", [("a", [quad(0, z=20.0, size=2.0)]), ("b", [quad(1, z=30.0, size=3.0)])]),
    ])


def vhv_for(spec, lod1: bool = True) -> bytes:
    """vrad's file for a fixture model: per LOD 0 mesh of every body part model, one colour per strip-group
    vertex, which the fixture's .vtx stores in reverse mesh vertex order (so vertex k of a strip group is
    mesh vertex n-1-k); a LOD 1 mesh after each model's, which must be skipped."""
    meshes = []
    for _, models in spec.bodyparts:
        for _, parts in models:
            for mesh in parts:
                r_g_b = [position_colour(p) for p in mesh.positions[::-1]]
                meshes.append((0, [(b, g, r, 255) for r, g, b in r_g_b]))
            if lod1:
                meshes.append((1, [(1, 1, 1, 255)]))
    return build_vhv(meshes, checksum=spec.checksum)


@pytest.mark.parametrize("fixups", [False, True])
@pytest.mark.parametrize("head", [0, 1])
def test_vertex_colours_follow_the_strip_group_order(fixups: bool, head: int) -> None:
    from sourcebsp.content.studiomodel import build_model
    from ._studiomodels import build_mdl, build_vtx, build_vvd

    spec = _layered_spec(fixups)
    model = build_model("m.mdl", build_mdl(spec), ("m.vvd", build_vvd(spec)), ("m.vtx", build_vtx(spec)),
                        bodygroups=[0, head])
    assert model.num_strip_vertices == 16  # every body part model's LOD 0: 4 quads of 4 vertices
    colours = model.vertex_colors(read_vhv(vhv_for(spec), "sp_1.vhv"))
    assert len(colours) == model.num_vertices == 12
    # The independent fact: the colour written for each position (from the spec, not the reader).
    want = [position_colour(tuple(p)) for p in model.positions.tolist()]
    assert colours[:, :3].tolist() == [list(c) for c in want]
    assert (colours[:, 3] == 255).all()


def test_a_vhv_for_another_compile_or_layout_is_refused() -> None:
    from sourcebsp.content.studiomodel import ModelFormatError, build_model
    from ._studiomodels import build_mdl, build_vtx, build_vvd

    spec = _layered_spec(False)
    model = build_model("m.mdl", build_mdl(spec), ("m.vvd", build_vvd(spec)), ("m.vtx", build_vtx(spec)))
    other = read_vhv(_broken(vhv_for(spec), 4, "<I", spec.checksum + 1), "sp_2.vhv")
    with pytest.raises(ModelFormatError, match=r"sp_2\.vhv, offset 4 .*checksum"):
        model.vertex_colors(other)
    meshes = [(0, [(1, 2, 3, 255)] * 4)] * 2 + [(0, [(1, 2, 3, 255)] * 3)] + [(0, [(1, 2, 3, 255)] * 4)]
    with pytest.raises(ModelFormatError, match=r"sp_2\.vhv, offset 96 .*mesh 2 differs"):
        model.vertex_colors(read_vhv(build_vhv(meshes, checksum=spec.checksum), "sp_2.vhv"))
    with pytest.raises(ModelFormatError, match="mesh 3 differs"):  # a mesh short
        model.vertex_colors(read_vhv(build_vhv([(0, [(1, 2, 3, 255)] * 4)] * 3, checksum=spec.checksum),
                                     "sp_2.vhv"))


def test_vertex_light_is_the_shaders_gamma_of_twice_the_byte() -> None:
    from sourcebsp.content.studiomodel.vhv import vertex_light_linear

    # common_vs_fxc.h: GammaToLinear(colour * cOverbright 2), GammaToLinear = pow(x, 2.2); 128 is 1.0.
    light = vertex_light_linear(np.array([[0, 64, 128, 255], [255, 0, 0, 255]], np.uint8))
    assert light.tolist()[0] == pytest.approx([0.0, (128 / 255) ** 2.2, (256 / 255) ** 2.2], rel=1e-6)
    assert light[1, 0] == pytest.approx(2 ** 2.2, rel=1e-6)

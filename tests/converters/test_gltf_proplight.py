"""Static props lit in the glTF export: the map's ``sp_*.vhv`` vertex colours and the leaf ambient cube, on
models built here, on the open-deathmatch models, and on the corpus maps that carry ``.vhv`` files."""
from __future__ import annotations

import re
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pygltflib")  # before the package, which needs it to import

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.cli import main
from sourcebsp.content import fold, mount
from sourcebsp.converters import gltf as gl

from ..content._maps import OPEN_DEATHMATCH, build_map
from ..content._studiomodels import box_spec, build_mdl, build_vtx, build_vvd
from ..content.test_studiomodel import _sibling
from ..content.test_vhv import build_vhv, position_colour, vhv_for
from .test_gltf import _accessor, _chunks, validator  # noqa: F401 (fixture)
from .test_gltf_props import STAND, _prop_nodes, _validate


def _linear(rgb: np.ndarray) -> np.ndarray:
    """The model shaders' light of a vertex colour byte: pow(2 c / 255, 2.2) (common_vs_fxc.h), clipped as exported."""
    return np.clip((2.0 * np.asarray(rgb, np.float64) / 255.0) ** 2.2, 0.0, 1.0)


def _source(position: np.ndarray) -> np.ndarray:
    """glTF's Y-up back to Source's Z-up: (x, y, z) -> (x, -z, y)."""
    return np.stack([position[:, 0], -position[:, 2], position[:, 1]], axis=1)


def _attribute(document: dict, blob: bytes, node: dict, name: str) -> np.ndarray:
    index = document["meshes"][node["mesh"]]["primitives"][0]["attributes"][name]
    values = _accessor(document, blob, index)
    if name != "COLOR_0":
        return values
    # Normalized unsigned shorts, opaque: the light is RGB.
    assert document["accessors"][index]["normalized"] and values.dtype == np.uint16 and (values[:, 3] == 65535).all()
    return values[:, :3] / 65535.0


def _cube_sides(bsp: sourcebsp.BspFile, point: tuple[float, float, float]) -> np.ndarray:
    """The (6, 3) cube of the one ambient sample of the leaf at ``point``, read from the lumps' bytes with
    struct and decoded as ColorRGBExp32ToVector does (c * 2 ** exponent)."""
    leaf = int(bsp.leaf_at(point))
    index = bytes(bsp.raw_lump(LumpId.LEAF_AMBIENT_INDEX))
    count, first = struct.unpack_from("<HH", index, 4 * leaf)
    assert count == 1  # the example map: one sample per empty leaf, so the weighted mean is that sample
    samples = bytes(bsp.raw_lump(LumpId.LEAF_AMBIENT_LIGHTING))
    sides = [struct.unpack_from("<BBBb", samples, 28 * first + 4 * k) for k in range(6)]
    return np.array([[r * 2.0 ** e, g * 2.0 ** e, b * 2.0 ** e] for r, g, b, e in sides])


def _box_game(root: Path) -> Path:
    spec = box_spec()  # two quads facing +Z: every normal (0, 0, 1)
    (root / "models").mkdir(parents=True)
    for suffix, data in ((".mdl", build_mdl(spec)), (".vvd", build_vvd(spec)), (".dx90.vtx", build_vtx(spec))):
        (root / f"models/box{suffix}").write_bytes(data)
    return root


def test_vhv_colours_and_ambient_cube_on_built_props(tmp_path: Path, validator: Path) -> None:  # noqa: F811
    game = _box_game(tmp_path / "game")
    spec = box_spec()
    # Props 1-3 are boxes (prop 0 is the example's oil drum, not found): prop 1 has vrad's vertex lighting;
    # props 2-4 have none and take the ambient cube, prop 3 rolled over (its normals face -Z), prop 4 rolled
    # a quarter turn (AngleMatrix: roll 90 turns up, +Z, to -Y).
    path = build_map(tmp_path / "lit.bsp", props=["models/box.mdl"] * 4, pak={"sp_1.vhv": vhv_for(spec)})
    bsp = sourcebsp.BspFile.open(path)
    bsp.static_props.props["angles"][3] = (0.0, 0.0, 180.0)
    bsp.static_props.props["angles"][4] = (0.0, 0.0, 90.0)
    bsp.save(tmp_path / "map.bsp")
    bsp.close()
    out = tmp_path / "map.glb"
    assert main(["export", str(tmp_path / "map.bsp"), "-o", str(out), "--game", str(game)]) == 0
    document, blob = _chunks(out.read_bytes())
    nodes = _prop_nodes(document)[1:]
    assert [document["meshes"][n["mesh"]]["extras"]["lighting"] for n in nodes] == ["vertex"] + ["ambient"] * 3
    assert [document["meshes"][n["mesh"]]["name"] for n in nodes] == ["models/box.mdl"] * 4
    # Prop 1: each vertex has the colour written for its position (in the spec, found through the reversed
    # strip-group order of the fixture's .vtx), as the shaders decode it.
    position = _source(_attribute(document, blob, nodes[0], "POSITION"))
    want = _linear([position_colour(tuple(p)) for p in position.tolist()])
    assert _attribute(document, blob, nodes[0], "COLOR_0") == pytest.approx(want, abs=1e-5)
    # Props 2 and 3: the +Z and the -Z side of their leaf's cube (the box's illumposition is the origin).
    with sourcebsp.open(tmp_path / "map.bsp") as bsp:
        origins = bsp.static_props.props["origin"].astype(float)
        cubes = [_cube_sides(bsp, tuple(origins[k])) for k in (2, 3, 4)]
    colours = [_attribute(document, blob, nodes[k], "COLOR_0") for k in (1, 2, 3)]
    for colour, cube, side in zip(colours, cubes, (4, 5, 3)):  # +Z, -Z, -Y
        assert colour == pytest.approx(np.clip(np.tile(cube[side], (8, 1)), 0, 1), abs=1e-5)
    # The sides differ (the light is above; the fill from -Y is not the fill from +Y), so the pick is seen.
    assert len({tuple(c[0].round(4)) for c in colours}) == 3 and not np.allclose(cubes[2][3], cubes[2][2])
    _validate(validator, out)


def test_vhv_of_another_compile_falls_back_to_the_ambient_cube(tmp_path: Path) -> None:
    game = _box_game(tmp_path / "game")
    stale = bytearray(vhv_for(box_spec()))
    struct.pack_into("<I", stale, 4, 999)  # the checksum of another compile of the model
    path = build_map(tmp_path / "stale.bsp", props=["models/box.mdl"], pak={"sp_1.vhv": bytes(stale)})
    stats = gl.ExportStats()
    document, _ = _chunks(gl.glb_bytes(path, game=mount(game), stats=stats))
    assert (stats.props_vertex_lit, stats.props_ambient_lit) == (0, 1)
    assert len(stats.lighting_problems) == 1 and stats.lighting_problems[0].startswith("sp_1.vhv: ")
    assert "checksum 999" in stats.lighting_problems[0]


def test_unlit_export_shares_one_mesh(tmp_path: Path) -> None:
    game = _box_game(tmp_path / "game")
    path = build_map(tmp_path / "two.bsp", props=["models/box.mdl"] * 2)
    stats = gl.ExportStats()
    document, _ = _chunks(gl.glb_bytes(path, game=mount(game), stats=stats, prop_lighting=False))
    nodes = _prop_nodes(document)[1:]
    assert nodes[0]["mesh"] == nodes[1]["mesh"] and stats.props_ambient_lit == 0
    assert "COLOR_0" not in document["meshes"][nodes[0]["mesh"]]["primitives"][0]["attributes"]


# ---- the open-deathmatch models -----------------------------------------------------------------
def strip_group_positions(path: Path) -> list[list[tuple[float, float, float]]]:
    """Per LOD 0 mesh of every body part's every model (body part, model, mesh order), the .vvd position of
    each strip-group vertex in file order: walked with struct.unpack_from, from studio.h / optimize.h."""
    m = path.read_bytes()
    vvd, vtx = _sibling(path, ".vvd"), _sibling(path, ".dx90.vtx")
    assert vvd is not None and vtx is not None
    d, x = vvd.read_bytes(), vtx.read_bytes()
    count = struct.unpack_from("<i", d, 16)[0]
    num_fixups, fixup_start, data_start = struct.unpack_from("<iii", d, 48)
    raw = [struct.unpack_from("<3f", d, data_start + 48 * i + 16) for i in range(count)]
    if num_fixups:
        order: list[int] = []
        for f in range(num_fixups):
            _, first, n = struct.unpack_from("<iii", d, fixup_start + 12 * f)
            order += range(first, first + n)
        raw = [raw[i] for i in order]
    out = []
    num_bodyparts, bodypart_index = struct.unpack_from("<ii", m, 232)
    x_bp_at = struct.unpack_from("<i", x, 32)[0]
    for b in range(num_bodyparts):
        bp = bodypart_index + 16 * b
        _, nummodels, _, modelindex = struct.unpack_from("<4i", m, bp)
        xb = x_bp_at + 8 * b
        xm0 = xb + struct.unpack_from("<ii", x, xb)[1]
        for j in range(nummodels):
            mo = bp + modelindex + 148 * j
            nummeshes, meshindex, _, vertexindex = struct.unpack_from("<iiii", m, mo + 72)
            xm = xm0 + 8 * j
            lods, lod_off = struct.unpack_from("<ii", x, xm)
            if not lods:
                continue
            xl = xm + lod_off
            x_mesh_off = struct.unpack_from("<ii", x, xl)[1]
            for k in range(nummeshes):
                vertexoffset = struct.unpack_from("<i", m, mo + meshindex + 116 * k + 12)[0]
                xme = xl + x_mesh_off + 9 * k
                groups, group_off = struct.unpack_from("<ii", x, xme)
                positions = []
                for g in range(groups):
                    xg = xme + group_off + 25 * g
                    num_verts, vert_off = struct.unpack_from("<ii", x, xg)
                    for v in range(num_verts):
                        orig = struct.unpack_from("<H", x, xg + vert_off + 9 * v + 4)[0]
                        positions.append(raw[vertexindex // 48 + vertexoffset + orig])
                out.append(positions)
    return out


def _hashed(position: np.ndarray) -> np.ndarray:
    """(n, 3) colour bytes, each at most 127, from a hash of each float32 position."""
    codes = [zlib.crc32(np.asarray(p, "<f4").tobytes()) for p in position]
    return np.array([[(c >> s) & 127 for s in (0, 7, 14)] for c in codes])


@pytest.mark.parametrize("model", [STAND, "models/player/police.mdl"])
def test_real_models_lit_by_a_vhv_laid_out_as_vrad_writes(tmp_path: Path, model: str,
                                                          validator: Path) -> None:  # noqa: F811
    """A .vhv per prop with one colour per strip-group vertex (the layout vrad writes: the count of colours is
    the strip-group vertex total of the model's LOD 0, which the independent walk counts), each the hash of the
    vertex's position: the exported colour of every vertex is the hash of its exported position."""
    if not (OPEN_DEATHMATCH / model).is_file():
        pytest.skip(f"no model at {OPEN_DEATHMATCH / model}")
    meshes = strip_group_positions(OPEN_DEATHMATCH / model)
    checksum = struct.unpack_from("<I", (OPEN_DEATHMATCH / model).read_bytes(), 8)[0]
    colours = [[(b, g, r, 255) for r, g, b in _hashed(np.array(mesh, np.float32)).tolist()] for mesh in meshes]
    vhv = build_vhv([(0, c) for c in colours], checksum=checksum)
    path = build_map(tmp_path / "real.bsp", props=[model], pak={"sp_1.vhv": vhv})
    stats = gl.ExportStats()
    data = gl.glb_bytes(path, game=mount(OPEN_DEATHMATCH), stats=stats)
    assert stats.props_vertex_lit == 1 and not stats.lighting_problems
    from sourcebsp.content.studiomodel import load_model_file

    assert load_model_file(OPEN_DEATHMATCH / model).num_strip_vertices == sum(len(m) for m in meshes)
    document, blob = _chunks(data)
    node = _prop_nodes(document)[1]
    position = _source(_attribute(document, blob, node, "POSITION")).astype(np.float32)
    assert _attribute(document, blob, node, "COLOR_0") == pytest.approx(_linear(_hashed(position)), abs=1e-5)
    out = tmp_path / "real.glb"
    out.write_bytes(data)
    _validate(validator, out)


# ---- corpus maps with .vhv files -----------------------------------------------------------------
_VHV = re.compile(r"sp_(?:hdr_)?(\d+)\.vhv")
VHV_MAPS = ["valvebsp_testmap.bsp", "tf2c_vipr_downfall.bsp", "l4d2_map_cannals_escape01.bsp"]


@pytest.mark.slow
@pytest.mark.parametrize("name", VHV_MAPS)
def test_corpus_vhv_files_are_kept_to_their_models(corpus_file, tmp_path: Path, name: str,
                                                   validator: Path) -> None:  # noqa: F811
    """The corpus maps' models are not here: each is stood in for by an open-deathmatch model, whose checksum
    is not the one the map's .vhv files were baked for.  Every such file is refused (named, checksum), as the
    engine refuses it, and its prop takes the ambient cube; the glb stays valid."""
    if not (OPEN_DEATHMATCH / STAND).is_file():
        pytest.skip(f"no model at {OPEN_DEATHMATCH / STAND}")
    path = corpus_file(name)
    content = tmp_path / "content"
    with sourcebsp.open(path) as bsp:
        names = bsp.static_props.names
        lit = sorted({int(m.group(1)) for n in bsp.pakfile.names() if (m := _VHV.match(n.lower()))})
    for model in {fold(n) for n in names}:
        target = content / model
        target.parent.mkdir(parents=True, exist_ok=True)
        stem = target.name[: -len(".mdl")]
        source = OPEN_DEATHMATCH / STAND
        shutil.copyfile(source, target)
        for suffix in (".vvd", ".dx90.vtx"):
            shutil.copyfile(_sibling(source, suffix), target.with_name(stem + suffix))  # type: ignore[arg-type]
    stats = gl.ExportStats()
    data = gl.glb_bytes(path, game=mount(None, content=[content]), stats=stats)
    assert stats.props_vertex_lit == 0 and stats.props_ambient_lit == stats.props_meshed == stats.props
    assert sorted(int(_VHV.match(p).group(1)) for p in stats.lighting_problems) == lit  # type: ignore[union-attr]
    assert all("checksum" in p for p in stats.lighting_problems)
    document, blob = _chunks(data)
    for node in _prop_nodes(document):
        colour = _attribute(document, blob, node, "COLOR_0")
        assert np.isfinite(colour).all() and (colour >= 0).all() and (colour <= 1).all()
    out = tmp_path / "corpus.glb"
    out.write_bytes(data)
    _validate(validator, out)

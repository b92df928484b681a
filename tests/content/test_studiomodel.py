"""The studio model reader: struct sizes, synthetic models of every version, hostile files, real models."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from sourcebsp.content.studiomodel import (MissingModelFiles, ModelFormatError, build_model, load_model,
                                           load_model_file)
from sourcebsp.content.studiomodel import mdl, vtx, vvd
from sourcebsp.errors import BspError, UnsupportedError

from ._maps import OPEN_DEATHMATCH
from ._studiomodels import Mesh, Spec, box_spec, build_mdl, build_vtx, build_vvd, quad, write_model
from ..conftest import IN_CI

# sizeof() of each struct as studio.h / optimize.h (pack(1)) declare them.
SIZES = [(mdl.STUDIOHDR, 408), (mdl.BODYPARTS, 16), (mdl.MODEL, 148), (mdl.MESH, 116), (mdl.TEXTURE, 64),
         (mdl.MODELGROUP, 8), (vvd.VVD_HEADER, 64), (vvd.VVD_FIXUP, 12), (vvd.VVD_VERTEX, 48),
         (vtx.VTX_HEADER, 36), (vtx.VTX_BODYPART, 8), (vtx.VTX_MODEL, 8), (vtx.VTX_LOD, 12), (vtx.VTX_MESH, 9),
         (vtx.VTX_STRIPGROUP, 25), (vtx.VTX_STRIPGROUP_TOPOLOGY, 33), (vtx.VTX_STRIP, 27),
         (vtx.VTX_STRIP_TOPOLOGY, 35), (vtx.VTX_VERTEX, 9)]


@pytest.mark.parametrize("dtype,size", SIZES, ids=[str(i) for i in range(len(SIZES))])
def test_struct_sizes(dtype: np.dtype, size: int) -> None:
    assert dtype.itemsize == size


def test_header_fields_at_their_studio_h_offsets() -> None:
    # Offsets the srctools header reader also uses (models.py's _COUNTS) and studio.h gives.
    fields = mdl.STUDIOHDR.fields
    assert {name: fields[name][1] for name in ("numlocalseq", "numtextures", "numcdtextures", "numskinref",
                                               "numskinfamilies", "numbodyparts", "numincludemodels")} == \
        {"numlocalseq": 188, "numtextures": 204, "numcdtextures": 212, "numskinref": 220, "numskinfamilies": 224,
         "numbodyparts": 232, "numincludemodels": 336}


@pytest.mark.parametrize("version", range(44, 50))
def test_every_version_reads_the_box(tmp_path: Path, version: int) -> None:
    path = write_model(tmp_path, "box", box_spec(version))
    model = load_model_file(path)
    assert model.version == version
    assert model.num_vertices == 8 and model.num_triangles == 4
    low, high = model.bounds()  # type: ignore[misc]
    assert low.tolist() == [0, 0, 0] and high.tolist() == [10, 10, 5]
    # Stored clockwise seen from +Z: read counter-clockwise, so the faces' normals point up (+Z).
    p = model.positions.astype(float)
    for mesh in model.meshes:
        t = mesh.triangles
        normal = np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]])
        assert (normal[:, 2] > 0).all()


def test_names_skins_materials_and_includes(tmp_path: Path) -> None:
    spec = box_spec(includes=["models/anims_a.mdl", "models\\anims_b.mdl"],
                    cdmaterials=["models\\first\\", "models/second/"])
    (tmp_path / "materials/models/second").mkdir(parents=True)
    found = {"models/second/tex_b"}
    model = build_model("box.mdl", build_mdl(spec), ("box.vvd", build_vvd(spec)), ("box.vtx", build_vtx(spec)),
                        material_exists=lambda name: name in found)
    assert model.textures == ["tex_a", "tex_b"]
    assert model.header.cdmaterials == ["models/first/", "models/second/"]
    # The first folder holding the texture, else the first folder.
    assert model.materials == ["models/first/tex_a", "models/second/tex_b"]
    assert model.includes == ["models/anims_a.mdl", "models/anims_b.mdl"]
    first, second = model.meshes
    assert [model.material_of(first, 0), model.material_of(second, 0)] == model.materials
    assert [model.material_of(first, 1), model.material_of(second, 1)] == model.materials[::-1]
    assert model.material_of(first, 7) == model.materials[0]  # a skin out of range draws family 0


def test_triangle_strips(tmp_path: Path) -> None:
    # A strip 0 1 2 3 is triangles (0 1 2) and (2 1 3) turned; the repeated 3 3 adds degenerate ones only.
    positions = [(0.0, 0.0, 0.0), (0.0, 10.0, 0.0), (10.0, 0.0, 0.0), (10.0, 10.0, 0.0), (20.0, 0.0, 0.0)]
    spec = Spec(bodyparts=[("b", [("m", [Mesh(0, positions, [], strip=[0, 1, 2, 3, 3, 4])])])], skins=[[0]],
                textures=["t"])
    model = load_model_file(write_model(tmp_path, "strip", spec))
    tris = model.meshes[0].triangles
    assert model.num_triangles == 2
    # The file's clockwise (0 1 2), (2 1 3) come out reversed: (2 1 0), (3 1 2); vertex 4 is used by none.
    assert sorted(map(tuple, tris.tolist())) == sorted([(2, 1, 0), (3, 1, 2)])
    assert model.num_vertices == 4


def test_fixups_restore_the_order(tmp_path: Path) -> None:
    plain = load_model_file(write_model(tmp_path / "a", "box", box_spec()))
    fixed = load_model_file(write_model(tmp_path / "b", "box", box_spec(fixups=True)))
    assert fixed.positions.tolist() == plain.positions.tolist()
    assert [m.triangles.tolist() for m in fixed.meshes] == [m.triangles.tolist() for m in plain.meshes]


def test_bodyparts_default_to_their_first_model(tmp_path: Path) -> None:
    spec = Spec(bodyparts=[("body", [("big", [quad(0, size=20.0)])]),
                           ("hat", [("blank", []), ("cap", [quad(1, z=30.0)])]),
                           ("badge", [("round", [quad(1, z=-5.0, size=2.0)]), ("square", [quad(0, z=50.0)])])])
    path = write_model(tmp_path, "person", spec)
    model = load_model_file(path)
    assert model.choices == [0, 0, 0]
    assert model.num_triangles == 4 and model.num_vertices == 8
    assert model.bounds()[0].tolist() == [0, 0, -5] and model.bounds()[1].tolist() == [20, 20, 0]  # type: ignore[index]
    chosen = load_model_file(path, bodygroups=[0, 1, 1])
    assert chosen.num_triangles == 6 and chosen.bounds()[1].tolist() == [20, 20, 50]  # type: ignore[index]
    summary = model.summary()
    assert [(b["name"], b["models"], b["default"]) for b in summary["bodyparts"]] == [
        ("body", ["big"], 0), ("hat", ["blank", "cap"], 0), ("badge", ["round", "square"], 0)]


def test_case_insensitive_files_and_vtx_fallback(tmp_path: Path) -> None:
    spec = box_spec()
    (tmp_path / "female_01.mdl").write_bytes(build_mdl(spec))
    (tmp_path / "Female_01.VVD").write_bytes(build_vvd(spec))
    (tmp_path / "Female_01.dx80.vtx").write_bytes(build_vtx(spec))
    model = load_model_file(tmp_path / "female_01.mdl")
    assert model.num_triangles == 4
    # A broken .sw.vtx is not read while a .dx80 one is there: dx90, dx80, sw in that order.
    (tmp_path / "female_01.sw.vtx").write_bytes(b"junk")
    assert load_model_file(tmp_path / "female_01.mdl").num_triangles == 4


def test_missing_mesh_files_and_animation_only(tmp_path: Path) -> None:
    path = write_model(tmp_path, "box", box_spec(), mesh_files=False)
    with pytest.raises(MissingModelFiles, match=r"box\.mdl: its mesh files are missing \(\.vvd and \.vtx\)"):
        load_model_file(path)
    anims = Spec(bodyparts=[], skins=[], textures=[], includes=["models/x.mdl"])
    model = load_model_file(write_model(tmp_path, "anims", anims, mesh_files=False))
    assert (model.num_vertices, model.num_triangles, model.bounds()) == (0, 0, None)


def test_checksum_mismatch_is_refused(tmp_path: Path) -> None:
    path = write_model(tmp_path, "box", box_spec(vtx_checksum=99))
    with pytest.raises(ModelFormatError, match="checksum 99"):
        load_model_file(path)


def test_unsupported_version(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError, match="MDL version 53"):
        load_model_file(write_model(tmp_path, "box", box_spec(53)))


def _files(spec: Spec) -> dict[str, bytes]:
    return {"mdl": build_mdl(spec), "vvd": build_vvd(spec), "vtx": build_vtx(spec)}


@pytest.mark.parametrize("which", ["mdl", "vvd", "vtx"])
def test_truncated_files_raise_bsp_errors(which: str) -> None:
    files = _files(box_spec(fixups=True))
    data = files[which]
    for cut in range(0, len(data), 7):
        files[which] = data[:cut]
        with pytest.raises(BspError) as info:
            build_model("box.mdl", files["mdl"], ("box.vvd", files["vvd"]), ("box.vtx", files["vtx"]))
        assert "box." in str(info.value)


@pytest.mark.parametrize("which", ["mdl", "vvd", "vtx"])
def test_corrupt_ints_end_in_success_or_bsp_error(which: str) -> None:
    files = _files(Spec(bodyparts=[("b", [("m", [quad(0), Mesh(1, quad().positions, [], strip=[0, 1, 3, 2])])]),
                                   ("c", [("n", []), ("o", [quad(1)])])], fixups=True))
    data = files[which]
    rng = np.random.default_rng(27)
    for offset in range(0, len(data) - 4, 4):
        for value in (-1, 1 << 30, int(rng.integers(0, 1 << 16))):
            bad = bytearray(data)
            struct.pack_into("<i", bad, offset, value)
            files[which] = bytes(bad)
            try:
                model = build_model("m.mdl", files["mdl"], ("m.vvd", files["vvd"]), ("m.vtx", files["vtx"]))
            except BspError:
                continue
            assert model.positions.shape[1] == 3
            for mesh in model.meshes:
                assert not len(mesh.triangles) or int(mesh.triangles.max()) < model.num_vertices


# ---- real models, against a reader written here with struct, and against srctools ---------------------

def _real_models() -> list[Path]:
    models = sorted((OPEN_DEATHMATCH / "models").rglob("*.mdl")) if OPEN_DEATHMATCH.is_dir() else []
    if not models and IN_CI:
        raise FileNotFoundError(OPEN_DEATHMATCH)
    return models


def _sibling(path: Path, suffix: str) -> Path | None:
    stem = path.name[:-4].lower()
    for entry in sorted(path.parent.iterdir()):
        if entry.name.lower() == stem + suffix:
            return entry
    return None


def independent_lod0(path: Path) -> tuple[int, int, tuple[float, ...] | None]:
    """(vertices, triangles, bbox) of LOD 0 of the default body groups, walked with struct.unpack_from."""
    m = path.read_bytes()
    num_bodyparts, bodypart_index = struct.unpack_from("<ii", m, 232)
    vvd_path = _sibling(path, ".vvd")
    vtx_path = next((p for p in (_sibling(path, s) for s in (".dx90.vtx", ".dx80.vtx", ".sw.vtx")) if p), None)
    if vvd_path is None or vtx_path is None:
        return -1, -1, None
    d, x = vvd_path.read_bytes(), vtx_path.read_bytes()
    lod_verts = struct.unpack_from("<i", d, 16)[0]
    num_fixups, fixup_start, data_start = struct.unpack_from("<iii", d, 48)
    raw = [struct.unpack_from("<3f", d, data_start + 48 * i + 16) for i in range(lod_verts)]
    if num_fixups:
        order: list[int] = []
        for f in range(num_fixups):
            lod, src, n = struct.unpack_from("<iii", d, fixup_start + 12 * f)
            order += range(src, src + n)
        raw = [raw[i] for i in order]
    used: set[int] = set()
    triangles = 0
    vtx_bodyparts, vtx_bp_at = struct.unpack_from("<ii", x, 28)
    for b in range(num_bodyparts):
        bp = bodypart_index + 16 * b
        _, nummodels, _, modelindex = struct.unpack_from("<4i", m, bp)
        if not nummodels:
            continue
        mo = bp + modelindex  # model 0: the default choice
        nummeshes, meshindex, _, vertexindex = struct.unpack_from("<iiii", m, mo + 72)
        xb = vtx_bp_at + 8 * b
        _, x_model_off = struct.unpack_from("<ii", x, xb)
        xm = xb + x_model_off
        _, lod_off = struct.unpack_from("<ii", x, xm)
        xl = xm + lod_off
        x_meshes, x_mesh_off = struct.unpack_from("<ii", x, xl)
        for k in range(nummeshes):
            vertexoffset = struct.unpack_from("<i", m, mo + meshindex + 116 * k + 12)[0]
            xme = xl + x_mesh_off + 9 * k
            groups, group_off = struct.unpack_from("<ii", x, xme)
            for g in range(groups):
                xg = xme + group_off + 25 * g
                _, vert_off, _, index_off, strips, strip_off = struct.unpack_from("<6i", x, xg)
                for s in range(strips):
                    xs = xg + strip_off + 27 * s
                    n_idx, first = struct.unpack_from("<ii", x, xs)
                    flags = x[xs + 18]
                    idx = struct.unpack_from(f"<{n_idx}H", x, xg + index_off + 2 * first)
                    ids = [vertexindex // 48 + vertexoffset + struct.unpack_from("<H", x, xg + vert_off + 9 * i + 4)[0]
                           for i in idx]
                    if flags & 2 and not flags & 1:
                        tris = [tuple(ids[i:i + 3]) for i in range(len(ids) - 2)]
                        tris = [t for t in tris if len(set(t)) == 3]
                    else:
                        tris = [tuple(ids[i:i + 3]) for i in range(0, len(ids) - 2, 3)]
                    triangles += len(tris)
                    used.update(i for t in tris for i in t)
    if not used:
        return 0, 0, None
    pts = [raw[i] for i in used]
    return len(used), triangles, tuple(min(p[a] for p in pts) for a in range(3)) + \
        tuple(max(p[a] for p in pts) for a in range(3))


@pytest.fixture(scope="module")
def real_models() -> list[Path]:
    models = _real_models()
    if not models:
        pytest.skip(f"no models under {OPEN_DEATHMATCH}")
    return models


def test_real_models_match_an_independent_reader(real_models: list[Path]) -> None:
    with_mesh = 0
    for path in real_models:
        vertices, triangles, box = independent_lod0(path)
        if vertices < 0:  # mesh files absent: refused in one line, unless the model has no mesh at all
            try:
                model = load_model_file(path)
            except MissingModelFiles as exc:
                assert "\n" not in str(exc) and path.name in str(exc)
                continue
            assert model.num_triangles == 0
            continue
        model = load_model_file(path)
        assert (model.num_vertices, model.num_triangles) == (vertices, triangles), path
        if box is None:
            assert model.bounds() is None
        else:
            low, high = model.bounds()  # type: ignore[misc]
            assert np.allclose(np.concatenate([low, high]), box, atol=0.01), path
            with_mesh += 1
    assert with_mesh >= 30  # 41 models have their .vvd; a few of them are animation-only or empty


def test_real_models_names_match_srctools(real_models: list[Path]) -> None:
    srctools = pytest.importorskip("srctools.mdl")
    from srctools.filesys import RawFileSystem

    for path in real_models:
        system = RawFileSystem(str(path.parent))
        theirs = srctools.Model(system, system[path.name])
        ours = load_model_file(path) if _sibling(path, ".vvd") else None
        if ours is None:
            continue
        # srctools appends an empty folder (the materials root, which it tries last); the file has no such entry.
        theirs_cd = [c.replace("\\", "/") for c in theirs.cdmaterials]
        assert ours.header.cdmaterials == (theirs_cd[:-1] if theirs_cd[-1:] == [""] else theirs_cd), path
        # srctools gives each skin family as texture names, only of the references some mesh uses.
        used = sorted({int(r) for bp in ours.header.bodyparts for m in bp.models for r in m.meshes["material"]})
        assert [[ours.textures[family[r]] for r in used] for family in ours.skins.tolist()] == \
            [[t.replace("\\", "/") for t in family] for family in theirs.skins], path
        assert ours.includes == [inc.filename.replace("\\", "/") for inc in theirs.included_models], path


def test_load_model_from_a_game_and_a_pakfile(tmp_path: Path) -> None:
    from sourcebsp.codecs.pakfile import Pakfile
    from sourcebsp.content import mount

    spec = box_spec()
    write_model(tmp_path / "game/models/props", "crate", spec)
    fs = mount(tmp_path / "game")
    model = load_model(fs, "Models\\Props\\Crate.mdl")
    assert model is not None and model.num_triangles == 4
    assert load_model(fs, "models/none.mdl") is None
    # The map's pakfile is searched first: a different crate there wins.
    pak = Pakfile()
    small = Spec(bodyparts=[("b", [("m", [quad(0)])])])
    for suffix, data in ((".mdl", build_mdl(small)), (".vvd", build_vvd(small)), (".dx90.vtx", build_vtx(small))):
        pak.add(f"models/props/crate{suffix}", data)
    fs.attach_pakfile(pak, "map.bsp")
    packed = load_model(fs, "models/props/crate.mdl")
    assert packed is not None and packed.num_triangles == 2 and packed.name.startswith("pakfile:")


def test_tables_read_again_and_again_are_refused() -> None:
    """Many headers pointing at one big table cannot make the reader expand it without end."""
    from sourcebsp.content.studiomodel._common import Tables

    tables = Tables(bytes(10000), "x.vtx")
    for _ in range(2):
        tables(0, 5000, np.dtype("<u2"), "indices")  # the whole file, twice: as much as a real file can claim
    with pytest.raises(ModelFormatError, match=r"x\.vtx.*more than twice its 10000.*overlap"):
        tables(0, 5000, np.dtype("<u2"), "indices")


def test_fixups_copying_more_vertices_than_the_file_has() -> None:
    spec = box_spec(fixups=True)
    data = bytearray(build_vvd(spec))
    fix_at = struct.unpack_from("<i", data, 52)[0]
    struct.pack_into("<3i", data, fix_at + 12, 0, 0, 8)  # the second run now copies all 8 again: 12 in all
    with pytest.raises(ModelFormatError, match="fixups of LOD 0 copy 12 vertices, the file has 8"):
        build_model("box.mdl", build_mdl(spec), ("box.vvd", bytes(data)), ("box.vtx", build_vtx(spec)))

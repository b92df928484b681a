"""Decompiling maps into VMF (sourcebsp.converters.vmf).

The VMF text is read back with srctools' parser; geometry is recomputed
from the written plane points by vertex enumeration (tests/converters/
_vmf_reference.py), not with sourcebsp's clipping.  Fidelity is measured
against the Hammer sources of the corpus (``vmf/``); facts of maps without
a source come from their lumps, read here without the decompiler.

Fidelity per map (brushes the compiler keeps matched by plane sets with
normals within 1e-3 and distances within 0.05 units; displacements by
power, start position and vertex positions within 0.1 units; point
entities by their keys):

=================================  =======  =====  ===============  =======
map                                brushes  disps  point entities   brush
                                                                    ents
=================================  =======  =====  ===============  =======
momentum_mp_lobby                  6/6      0/0    2/2              0/0
tf2_mp_lobby                       6/6      0/0    3/3              0/0
tf2_test2                          75/75    3/3    36/36 (of 45)    2/2
tf2_test_displacement_decompile    6/6      3/3    0/0              0/0
tf2_test_physcollide               9/9      0/0    0/0              2/2
x360_shack                         196/196  4/4    5/5 (of 6)       1/1
=================================  =======  =====  ===============  =======

Source entities missing from a map are not in its BSP at all: tf2_test2.bsp
and x360_shack.bsp were compiled from earlier revisions of their VMFs
(worldspawn ``mapversion`` 24 and 27 against 26 and 28), and vbsp drops a
prop_static whose model does not exist (``models/not_a_real_file``).
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp.converters.vmf import DecompileOptions, build_vmf, decompile, decompile_text
from sourcebsp.converters.vmf.textures import clean_material_name, tool_category
from sourcebsp.lump_ids import LumpId

from ._vmf_reference import (
    NORMAL_TOL, brushes_of, displacements_of, match_brushes, parse_vmf, polygons, side_plane,
)
from ..conftest import corpus_map, corpus_vmf

SOURCES = ["momentum_mp_lobby", "tf2_mp_lobby", "tf2_test2", "tf2_test_displacement_decompile",
           "tf2_test_physcollide", "x360_shack"]
TOOL_MAPS = ["csgo_tooltextures", "gmod_tooltextures", "l4d2_tooltextures", "l4d2_tooltextures_old"]
#: Entities vbsp turns into something else or drops (checked through what they became).
COMPILED_AWAY = {"func_detail", "func_instance", "func_viscluster", "prop_static", "info_overlay", "env_cubemap"}


@functools.lru_cache(maxsize=None)
def _decompiled(path: Path, **options) -> tuple[str, object]:
    return decompile_text(path, **options)


@functools.lru_cache(maxsize=None)
def _parsed(path: Path):
    return parse_vmf(_decompiled(path)[0])


def _source(name: str):
    return parse_vmf(corpus_vmf(f"{name}.vmf"))  # skipped without the corpus, an error in CI


def _map(name: str) -> Path:
    return corpus_map(f"{name}.bsp")


def _numbers(text: str) -> np.ndarray | None:
    try:
        return np.array([float(v) for v in text.replace("[", " ").replace("]", " ").split()])
    except ValueError:
        return None


def _same_value(a: str, b: str) -> bool:
    if a == b:
        return True
    x, y = _numbers(a), _numbers(b)
    return x is not None and y is not None and x.shape == y.shape and len(x) > 0 and np.allclose(x, y, atol=2e-3)


# ---- every map: a valid VMF -----------------------------------------------------------
def _solid_geometry(solid) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    planes = [side_plane(s) for s in solid.sides]
    normals = np.array([p[0] for p in planes])
    dists = np.array([p[1] for p in planes])
    return polygons(normals, dists), normals, dists


def test_output_parses_with_unique_ids_and_closed_convex_solids(map_path):
    text, stats = _decompiled(map_path)
    vmf = _parsed(map_path)  # srctools' VMF parser (raises on malformed text)
    for block in ("versioninfo", "visgroups", "viewsettings", "world", "cameras", "cordon"):
        assert re.search(rf"^{block}\n{{", text, re.M), block
    # ids: entities and solids share Hammer's object counter, sides have their own.
    object_ids = [int(i) for i in re.findall(r'^\t?"id" "(\d+)"', text, re.M)]
    side_ids = [int(i) for i in re.findall(r'^\t\t\t"id" "(\d+)"', text, re.M)]
    assert len(object_ids) == len(set(object_ids))
    assert len(side_ids) == len(set(side_ids))
    solids = list(vmf.brushes) + [s for e in vmf.entities for s in e.solids]
    assert len(solids) == stats.solids
    assert len(side_ids) == stats.sides == sum(len(s.sides) for s in solids)
    for solid in solids:
        polys, normals, dists = _solid_geometry(solid)
        assert len(polys) >= 4
        assert all(len(p) >= 3 for p in polys)  # every written side bounds the solid
        corners = np.vstack(polys)
        # Convex, and each plane faces out: every corner behind every plane, the centre strictly.
        assert np.all(corners @ normals.T - dists <= 0.02)
        assert np.all(corners.mean(axis=0) @ normals.T - dists < 0)
        # Closed: the polygons' area vectors cancel.
        area = sum(np.cross(p, np.roll(p, -1, axis=0)).sum(axis=0) for p in polys)
        perimeter = sum(np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1).sum() for p in polys)
        assert np.linalg.norm(area) <= 0.05 * perimeter


def test_every_brush_of_the_map_is_written_or_reported(map_path):
    _, stats = _decompiled(map_path)
    with sourcebsp.open(map_path) as bsp:
        n = len(bsp.brushes) if bsp.entry(LumpId.BRUSHES).filelen else 0
        disp = len(bsp.dispinfo) if bsp.entry(LumpId.DISPINFO).filelen else 0
    made = stats.displacement_brushes_made + stats.occluder_solids
    assert stats.solids + len(stats.skipped_brushes) == n + made
    assert stats.skipped_brushes == []
    assert stats.displacements == disp


# ---- fidelity against the Hammer sources ------------------------------------------------
@pytest.mark.parametrize("name", SOURCES)
def test_source_brushes_come_back(name):
    source = brushes_of(_source(name))
    decompiled = brushes_of(_parsed(_map(name)))
    matched, missed = match_brushes(source, decompiled)
    kept = sum(b.kept_by_compiler for b in source)
    assert kept and matched / kept >= 0.99, [(b.owner, b.materials) for b in missed]
    assert missed == []


@pytest.mark.parametrize("name", SOURCES)
def test_source_displacements_come_back(name):
    source = [d for d in displacements_of(_source(name))]
    decompiled = displacements_of(_parsed(_map(name)))
    with sourcebsp.open(_map(name)) as bsp:
        in_bsp = len(bsp.dispinfo) if bsp.entry(LumpId.DISPINFO).filelen else 0
    assert len(decompiled) == len(source) == in_bsp
    free = list(range(len(decompiled)))
    for disp in source:
        errors = [(np.abs(decompiled[j].positions - disp.positions).max(), j) for j in free
                  if decompiled[j].power == disp.power and np.allclose(decompiled[j].start, disp.start, atol=0.01)]
        assert errors, f"no displacement of power {disp.power} at {disp.start}"
        error, j = min(errors)
        assert error <= 0.1
        free.remove(j)


def _bsp_entities(path: Path) -> dict[str, object]:
    with sourcebsp.open(path) as bsp:
        return {e.get("hammerid"): e for e in bsp.entities}


@pytest.mark.parametrize("name", SOURCES)
def test_source_point_entities_come_back_with_their_keys(name):
    source = _source(name)
    vmf = _parsed(_map(name))
    by_id = {e.id: e for e in vmf.entities}
    in_bsp = _bsp_entities(_map(name))
    checked = 0
    for ent in source.entities:
        if ent.hidden or ent.solids or ent["classname"] in COMPILED_AWAY:
            continue
        compiled = in_bsp.get(str(ent.id))
        if compiled is None:
            continue  # not in this BSP (an earlier revision of the VMF was compiled)
        ours = by_id.get(ent.id)
        assert ours is not None, (ent["classname"], ent.id)
        for key, value in ent.items():
            if key == "id":
                continue
            if compiled.get(key) != value:
                # The compiled map itself differs here (another revision): we must follow the map.
                assert ours[key] == compiled.get(key, ""), (ent.id, key)
            else:
                assert ours[key] == value, (ent.id, key)
        # Outputs: in a connections block, as the map has them.
        assert sorted((o.output.casefold(), o.target, o.input, o.params, o.delay, o.times) for o in ours.outputs) == \
            sorted((o.name.casefold(), o.target, o.input, o.parameter, o.delay, o.times) for o in compiled.outputs)
        checked += 1
    assert checked == sum(1 for e in in_bsp.values() if e.classname != "worldspawn" and e.model_index is None)


@pytest.mark.parametrize("name", SOURCES)
def test_source_props_and_overlays_come_back_with_their_keys(name):
    source = _source(name)
    vmf = _parsed(_map(name))
    with sourcebsp.open(_map(name)) as bsp:
        props = [(p.model.lower(), np.array(p.origin)) for p in bsp.static_props]
    compiled = 0
    for ent in source.entities:
        cls = ent["classname"]
        if ent.hidden or cls not in ("prop_static", "info_overlay"):
            continue
        origin = _numbers(ent["origin"])
        if cls == "prop_static" and not any(m == ent["model"].lower() and np.allclose(o, origin, atol=1e-3)
                                            for m, o in props):
            continue  # vbsp dropped it (missing model) or it is not in this revision
        ours = [e for e in vmf.entities if e["classname"] == cls and _same_value(e["origin"], ent["origin"])
                and (cls != "prop_static" or e["model"].lower() == ent["model"].lower())]
        assert len(ours) >= 1, (cls, ent["origin"])
        # info_overlay's angles are an editor handle only: vbsp does not store them.
        skip = {"id", "angles"} if cls == "info_overlay" else {"id"}
        for key, value in ent.items():
            if key not in skip:
                assert _same_value(ours[0][key], value), (cls, ent["origin"], key, ours[0][key], value)
        compiled += 1
    assert compiled == len(props) + (len(bsp_overlays(name)))


def bsp_overlays(name: str):
    with sourcebsp.open(_map(name)) as bsp:
        return list(bsp.overlays) if bsp.entry(LumpId.OVERLAYS).filelen else []


@pytest.mark.parametrize("name", SOURCES)
def test_brush_entity_count_matches(name):
    source = _source(name)
    vmf = _parsed(_map(name))
    assert sum(1 for e in source.entities if e.solids and not e.hidden) == sum(1 for e in vmf.entities if e.solids)


def _mapversion(name: str) -> tuple[str | None, str]:
    """worldspawn's mapversion in the BSP and in the VMF source."""
    with sourcebsp.open(_map(name)) as bsp:
        compiled = bsp.entities.worldspawn.get("mapversion")
    source = re.search(r'"mapversion" "(\d+)"', corpus_vmf(f"{name}.vmf").read_text(errors="replace"))
    return compiled, source.group(1)


#: Maps whose BSP was compiled from the very revision of the VMF in the corpus.
SAME_REVISION = [n for n in SOURCES if n not in ("tf2_test2", "x360_shack")]


def test_revisions_of_the_sources():
    """tf2_test2 and x360_shack were compiled from earlier revisions of their VMFs (see the module doc)."""
    assert _mapversion("tf2_test2") == ("24", "26")
    assert _mapversion("x360_shack") == ("27", "28")
    for name in SAME_REVISION:
        compiled, source = _mapversion(name)
        assert compiled == source


def _side_pairs(name: str):
    """(source side, decompiled side) of every source brush the compiler keeps, matched one to one."""
    source = brushes_of(_source(name))
    decompiled = brushes_of(_parsed(_map(name)))
    used: set[int] = set()
    for brush in source:
        if not brush.kept_by_compiler:
            continue
        j = next(j for j, d in enumerate(decompiled) if j not in used and _planes_equal(brush, d))
        used.add(j)
        for side in brush.sides:
            n, d = side_plane(side)
            other = next(s for s in decompiled[j].sides if np.all(np.abs(side_plane(s)[0] - n) < NORMAL_TOL)
                         and abs(side_plane(s)[1] - d) < 0.05)
            yield side, other


@pytest.mark.parametrize("name", SAME_REVISION)
def test_hammer_side_ids_come_back(name):
    with sourcebsp.open(_map(name)) as bsp:
        faceids = set(bsp.faceids.tolist()) if bsp.entry(LumpId.FACEIDS).filelen else set()
    restored = 0
    for side, other in _side_pairs(name):
        if other.id in faceids:
            assert other.id == side.id
            restored += 1
    assert faceids and restored > 0


@pytest.mark.parametrize("name", [n for n in SAME_REVISION if n != "momentum_mp_lobby"])
def test_texture_axes_are_the_source_axes(name):
    """Sides that have faces carry their own texinfo (faceless sides get another side's: vbsp compacts them).

    momentum_mp_lobby is left out: its BSP's own texinfo turns the wall textures
    90 degrees from the VMF's axes (test_texture_axes_follow_the_map_faces checks
    the decompile against that texinfo).
    """
    with sourcebsp.open(_map(name)) as bsp:
        faceids = set(bsp.faceids.tolist())
    compared = 0
    for side, other in _side_pairs(name):
        if other.id not in faceids or other.mat.lower() != side.mat.lower():
            continue
        for mine, theirs in ((other.uaxis, side.uaxis), (other.vaxis, side.vaxis)):
            assert np.allclose(tuple(mine.vec()), tuple(theirs.vec()), atol=1e-3)
            assert abs(mine.scale - theirs.scale) < 1e-3 and abs(mine.offset - theirs.offset) < 0.01
        assert other.lightmap == side.lightmap
        compared += 1
    assert compared > 0


def _planes_equal(a, b) -> bool:
    from ._vmf_reference import same_planes

    return same_planes(a, b)


# ---- facts of every map -------------------------------------------------------------------
def _face_corners(bsp, faces, index: int) -> np.ndarray:
    f = faces[index]
    se = bsp.surfedges[int(f["firstedge"]) : int(f["firstedge"]) + int(f["numedges"])]
    edges = bsp.edges["v"]
    idx = [int(edges[s][0]) if s >= 0 else int(edges[-s][1]) for s in se.tolist()]
    return bsp.vertexes["point"][idx].astype(np.float64)


def test_displacement_vertices_match_the_map(map_path):
    vmf = _parsed(map_path)
    with sourcebsp.open(map_path) as bsp:
        if not bsp.entry(LumpId.DISPINFO).filelen:
            assert displacements_of(vmf) == []
            return
        faces = bsp.faces if bsp.entry(LumpId.FACES).filelen else bsp.faces_hdr
        expected = []
        for row in bsp.dispinfo:
            corners = _face_corners(bsp, faces, int(row["map_face"]))
            start = row["start_position"].astype(np.float64)
            c = np.roll(corners, -int(np.argmin(np.linalg.norm(corners - start, axis=1))), axis=0)
            w = 2 ** int(row["power"]) + 1
            t = np.linspace(0, 1, w)
            flat = np.array([(c[0] + (c[1] - c[0]) * ti) + ((c[3] + (c[2] - c[3]) * ti) - (c[0] + (c[1] - c[0]) * ti)) * tj
                             for ti in t for tj in t])
            v = bsp.disp_verts[int(row["disp_vert_start"]) : int(row["disp_vert_start"]) + w * w]
            expected.append((int(row["power"]), start, flat + v["vec"] * v["dist"][:, None]))
    ours = displacements_of(vmf)
    assert len(ours) == len(expected)
    free = list(range(len(ours)))
    for power, start, positions in expected:
        errors = [(np.abs(ours[j].positions - positions).max(), j) for j in free
                  if ours[j].power == power and np.allclose(ours[j].start, start, atol=0.01)]
        error, j = min(errors)
        assert error <= 0.1
        free.remove(j)


def _entity_blocks(text: str) -> list[tuple[list[tuple[str, str]], list[tuple[str, str]]]]:
    """(keys, connections) of every ``entity`` block, duplicates kept (srctools' Entity folds them)."""
    from srctools.keyvalues import Keyvalues

    out = []
    for block in Keyvalues.parse(text).find_all("entity"):
        keys = [(kv.real_name, kv.value) for kv in block if not kv.has_children()]
        conns = [(kv.real_name, kv.value) for sub in block.find_all("connections") for kv in sub]
        out.append((keys, conns))
    return out


def test_entities_of_the_lump_keep_their_keys_and_outputs(map_path):
    text, _ = _decompiled(map_path)
    with sourcebsp.open(map_path) as bsp:
        lump = list(bsp.entities) if bsp.entry(LumpId.ENTITIES).filelen else []
        world = bsp.entities.worldspawn if lump else None
    dropped = {"hammerid", "portalnumber", "occludernumber", "world_mins", "world_maxs"}
    theirs = [e for e in lump if e.classname != "worldspawn"]
    # The lump's entities come first, in order; what the decompiler adds (props, overlays, ...) after.
    ours = _entity_blocks(text)[: len(theirs)]
    assert len(ours) == len(theirs)
    for (keys, conns), entity in zip(ours, theirs):
        outputs = [(o.name, o.text) for o in entity.outputs if not o.extra]
        expected = [(k, v) for k, v in entity.items() if k.casefold() not in dropped and (k, v) not in outputs
                    and not (k.casefold() == "model" and (v.startswith("*") or v == "") and
                             (entity.model_index is not None or v == ""))]
        assert sorted((k, v) for k, v in keys if k != "id") == sorted(expected)
        assert conns == outputs  # in map order
        hid = entity.get("hammerid")
        mine = int(dict(keys)["id"])
        if hid and hid.isdigit() and int(hid) > 1:
            assert mine == int(hid) or sum(1 for e in theirs if e.get("hammerid") == hid) > 1
    if world is not None:
        world_block = next(iter(__import__("srctools.keyvalues", fromlist=["Keyvalues"]).Keyvalues.parse(text)
                                .find_all("world")))
        got = sorted((kv.real_name, kv.value) for kv in world_block if not kv.has_children() and kv.real_name != "id")
        assert got == sorted((k, v) for k, v in world.items() if k.casefold() not in dropped)


def test_props_cubemaps_and_overlays_match_the_lumps(map_path):
    vmf = _parsed(map_path)
    with sourcebsp.open(map_path) as bsp:
        props = list(bsp.static_props) if bsp.entry(LumpId.GAME_LUMP).filelen else []
        cubemaps = np.array(bsp.cubemaps) if bsp.entry(LumpId.CUBEMAPS).filelen else []
        overlays = np.array(bsp.overlays) if bsp.entry(LumpId.OVERLAYS).filelen else []
    ours = [e for e in vmf.entities if e["classname"] == "prop_static"]
    assert len(ours) == len(props)
    for mine, prop in zip(ours, props):
        assert mine["model"] == prop.model
        assert np.allclose(_numbers(mine["origin"]), prop.origin, atol=1e-3)
        assert np.allclose(_numbers(mine["angles"]), prop.angles, atol=1e-3)
        assert int(mine["skin"]) == prop.skin and int(mine["solid"]) == prop.solid
    cubes = [e for e in vmf.entities if e["classname"] == "env_cubemap"]
    assert len(cubes) == len(cubemaps)
    for mine, cube in zip(cubes, cubemaps):
        assert np.array_equal(_numbers(mine["origin"]), cube["origin"].astype(float))
        assert int(mine["cubemapsize"]) == int(cube["size"])
    infos = [e for e in vmf.entities if e["classname"] == "info_overlay"]
    assert len(infos) == len(overlays)
    for mine, overlay in zip(infos, overlays):
        basis = np.array([_numbers(mine[k]) for k in ("BasisU", "BasisV", "BasisNormal")])
        assert np.allclose(basis @ basis.T, np.eye(3), atol=1e-3)  # an orthonormal frame
        assert np.allclose(basis[2], overlay["basis_normal"], atol=1e-3)
        assert np.allclose(basis[0], overlay["uv_points"][:3, 2], atol=1e-3)  # BasisU rides in the z values


def _faces_by_plane(bsp):
    """Each plane number's faces: (face index, corners), FACES or FACES_HDR, displacements left out."""
    faces = bsp.faces if bsp.entry(LumpId.FACES).filelen else bsp.faces_hdr
    out: dict[int, list] = {}
    for i in range(len(faces)):
        if int(faces["dispinfo"][i]) == -1 and int(faces["numedges"][i]) >= 3:
            out.setdefault(int(faces["planenum"][i]), []).append((i, _face_corners(bsp, faces, i)))
    return faces, out


def _inside(points: np.ndarray, poly: np.ndarray, normal: np.ndarray, tol: float = 0.1) -> bool:
    """All ``points`` inside the convex ``poly`` (clockwise seen from ``normal``)."""
    for a, b in zip(poly, np.roll(poly, -1, axis=0)):
        e = b - a
        if np.any(np.cross(e, points - a) @ normal / np.linalg.norm(e) > tol):
            return False
    return True


def _texdata_names(bsp) -> list[str]:
    table, data = bsp.texdata_string_table, bsp.texdata_string_data
    return [data.at(int(table[i])) for i in bsp.texdata["name_string_table_id"]]


_PATCHED = re.compile(r"^maps/[^/]+/(.+?)(_-?\d+_-?\d+_-?\d+|_wvt_patch|_depth_\d+)+$")


def _material(names: list[str], texinfo, ti: int) -> str:
    name = names[int(texinfo["texdata"][ti])].lower()
    while (m := _PATCHED.match(name)) is not None:
        name = m.group(1)
    return name


def test_texture_axes_follow_the_map_faces(map_path):
    """A world side with a face of the map wholly on it has that face's texture axes, scale and shift."""
    vmf = _parsed(map_path)
    with sourcebsp.open(map_path) as bsp:
        if not bsp.entry(LumpId.FACES).filelen and not bsp.entry(LumpId.FACES_HDR).filelen:
            return
        faces, by_plane = _faces_by_plane(bsp)
        planes, texinfo = bsp.planes, bsp.texinfo
        names = _texdata_names(bsp)
        keys = {}
        for pn in by_plane:
            keys.setdefault((tuple(np.round(planes["normal"][pn], 3)), round(float(planes["dist"][pn]), 1)), []).append(pn)
        solids = list(vmf.brushes) + [s for e in vmf.entities if e["classname"] == "func_detail" for s in e.solids]
        rng = np.random.default_rng(1)
        if len(solids) > 400:
            solids = [solids[i] for i in rng.choice(len(solids), 400, replace=False)]
        compared = 0
        for solid in solids:
            polys, normals, dists = _solid_geometry(solid)
            for side, poly, n, d in zip(solid.sides, polys, normals, dists):
                if side.disp_power:
                    continue
                candidates = keys.get((tuple(np.round(n, 3)), round(float(d), 1)), [])
                # A face of another brush can lie on this side (coplanar brushes): same material only.
                found = [faces["texinfo"][i] for pn in candidates for i, c in by_plane[pn] if _inside(c, poly, n)
                         and _material(names, texinfo, int(faces["texinfo"][i])) == side.mat.lower()]
                if not found:
                    continue
                ok = False
                for ti in set(int(t) for t in found):
                    vecs = texinfo["texture_vecs"][ti].astype(float)
                    scale = 1 / np.linalg.norm(vecs[:, :3], axis=1)
                    axes = vecs[:, :3] * scale[:, None]
                    mine = [side.uaxis, side.vaxis]
                    if np.any(np.abs(axes @ n) > 0.999):
                        # vbsp gives every sky face one texinfo; axes along the normal cannot be
                        # written, so Hammer's default axes (scale 0.25, no shift) stand in.
                        ok |= all(abs(m.scale - 0.25) < 1e-9 and m.offset == 0 and abs(np.dot(tuple(m.vec()), n)) < 1e-9
                                  for m in mine)
                        continue
                    ok |= all(np.allclose(tuple(mine[k].vec()), axes[k], atol=1e-3) and
                              abs(mine[k].scale - scale[k]) < 1e-3 and abs(mine[k].offset - vecs[k, 3]) < 0.01
                              for k in range(2))
                assert ok, (side.id, side.mat)
                compared += 1
        assert compared > 0 or not len(faces)


def test_overlay_sides_hold_the_overlay_faces(map_path):
    """Each overlay side lies on the plane of one of the overlay's faces and holds that face's centre."""
    vmf = _parsed(map_path)
    with sourcebsp.open(map_path) as bsp:
        if not bsp.entry(LumpId.OVERLAYS).filelen:
            return
        faces = bsp.faces if bsp.entry(LumpId.FACES).filelen else bsp.faces_hdr
        planes = bsp.planes
        overlays = [(o["origin"].astype(float), o["faces"][: int(o["face_count_and_render_order"]) & 0x3FFF])
                    for o in bsp.overlays]
        face_info = {int(f): (planes["normal"][faces["planenum"][f]].astype(float),
                              _face_corners(bsp, faces, int(f)).mean(axis=0), int(faces["dispinfo"][f]))
                     for _, fl in overlays for f in fl}
    sides = {}
    for solid in list(vmf.brushes) + [s for e in vmf.entities for s in e.solids]:
        polys, normals, dists = _solid_geometry(solid)
        for side, poly, n, d in zip(solid.sides, polys, normals, dists):
            sides[side.id] = (side, poly, n, d)
    infos = [e for e in vmf.entities if e["classname"] == "info_overlay"]
    assert len(infos) == len(overlays)
    for mine, (origin, face_list) in zip(infos, overlays):
        assert np.allclose(_numbers(mine["origin"]), origin, atol=1e-3)
        ids = [int(i) for i in mine["sides"].split()]
        assert ids
        for i in ids:
            side, poly, n, d = sides[i]
            if side.disp_power:
                assert any(face_info[int(f)][2] != -1 for f in face_list)
                continue
            assert any(np.allclose(face_info[int(f)][0], n, atol=1e-3) and _inside(face_info[int(f)][1][None], poly, n)
                       for f in face_list)


def test_overlay_sides_are_the_source_sides():
    vmf = _parsed(_map("tf2_test2"))
    source = _source("tf2_test2")
    want = {tuple(_numbers(e["origin"])): e["sides"] for e in source.entities if e["classname"] == "info_overlay"}
    got = {tuple(_numbers(e["origin"])): e["sides"] for e in vmf.entities if e["classname"] == "info_overlay"}
    assert got == want == {(-320.0, -288.0, -128.0): "714", (288.0, 0.0, -64.0): "840"}


# ---- tool textures ------------------------------------------------------------------------
@pytest.mark.parametrize("name", TOOL_MAPS)
def test_tool_textures_restored(name):
    """The tool-texture test maps hold one 16-unit cube per texture, named in worldspawn's textureNames."""
    path = _map(name)
    with sourcebsp.open(path) as bsp:
        rows = [r.split() for r in bsp.entities.worldspawn["textureNames"].split(";")]
    brushes = brushes_of(_parsed(path))
    for y, row in enumerate(rows):
        for x, texture in enumerate(row):
            centre = np.array([16 + 32 * x, 16 + 32 * y, 16.0])
            found = [b for b in brushes if np.all(b.normals @ centre - b.dists < 0)]
            assert len(found) == 1, texture
            assert {m.lower() for m in found[0].materials} == {texture.lower()}


def test_tool_categories_follow_contents_and_flags():
    assert tool_category(0x1, 0x80) == "nodraw"
    assert tool_category(0x0, 0x100 | 0x80) == "hint"
    assert tool_category(0x0, 0x200 | 0x80) == "skip"
    assert tool_category(0x8030000, 0x80) == "clip"
    assert tool_category(0x8010000, 0x80) == "playerclip"
    assert tool_category(0x8020000, 0x80) == "npcclip"
    assert tool_category(0x8000, 0x80) == "areaportal"
    assert tool_category(0x30000008, 0x80) == "ladder"
    assert tool_category(0x30001008, 0x80, "left4dead2") == "climb"
    assert tool_category(0x8080000, 0x80, "csgo") == "grenadeclip"
    assert tool_category(0x10000002, 0x80) == "blockbullets"
    assert tool_category(0x10000008, 0x80) == "invisible"
    assert tool_category(0x1, 0x4) == "skybox"
    assert tool_category(0x1, 0x40 | 0x80) == "trigger"
    assert tool_category(0x20, 0x80) == "nodraw"  # the hidden sides of a water brush


def test_patched_material_names_are_undone():
    assert clean_material_name("maps/de_office_h2/plaster/offwllb_622_626_-96") == "plaster/offwllb"
    assert clean_material_name("maps/aim_ag_texture2_d/dev/dev_blendmeasure2_wvt_patch") == "dev/dev_blendmeasure2"
    assert clean_material_name("maps/fy_simpsons_h/maps/fy_simpsons_h/dev/dev_water2_cheap_406_7_304_depth_115") \
        == "dev/dev_water2_cheap"
    assert clean_material_name("MAPS/$2000$/2000_CALOU_CSS") == "MAPS/$2000$/2000_CALOU_CSS"
    assert clean_material_name("concrete/concretefloor001a") == "concrete/concretefloor001a"


# ---- special brush entities -----------------------------------------------------------------
def test_areaportals_and_occluders_are_rebuilt():
    path = _map("valvebsp_testmap")
    vmf = _parsed(path)
    with sourcebsp.open(path) as bsp:
        occ = bsp.occlusion
        polys = [bsp.vertexes["point"][occ.vertex_indices[occ.vertex_range(p)]].astype(float)
                 for p in range(len(occ.polys))]
        keys = sorted({int(k) for k in bsp.areaportals["portal_key"] if k})
    portals = [e for e in vmf.entities if e["classname"] == "func_areaportal"]
    assert len(portals) == len(keys) == 3
    for portal in portals:
        assert len(portal.solids) == 1
        assert {s.mat.lower() for s in portal.solids[0].sides} == {"tools/toolsareaportal"}
        assert "portalnumber" not in portal
    occluders = [e for e in vmf.entities if e["classname"] == "func_occluder"]
    assert len(occluders) == 2 and sum(len(e.solids) for e in occluders) == len(polys)
    fronts = []
    for e in occluders:
        for solid in e.solids:
            polys_here, normals, dists = _solid_geometry(solid)
            fronts += [p for p, s in zip(polys_here, solid.sides) if s.mat.lower() == "tools/toolsoccluder"]
    for poly in polys:
        assert any(len(f) == len(poly) and all(np.linalg.norm(f - q, axis=1).min() < 0.01 for q in poly)
                   for f in fronts)


def test_brush_entities_are_moved_back_by_their_origin():
    # tf2_test_physcollide's func_brush (origin 0 0 -128) is stored around the origin in the BSP.
    vmf = _parsed(_map("tf2_test_physcollide"))
    brush = next(e for e in vmf.entities if e["classname"] == "func_brush")
    corners = np.vstack(_solid_geometry(brush.solids[0])[0])
    assert np.allclose(corners.min(axis=0), [-64, -64, -192]) and np.allclose(corners.max(axis=0), [64, 64, -64])
    assert brush["origin"] == "0 0 -128" and "model" not in brush


# ---- options and the file ---------------------------------------------------------------------
def test_options_leave_out_what_is_asked(tmp_path):
    path = _map("tf2_test2")
    full = _parsed(path)
    stats = decompile(path, tmp_path / "out.vmf", props=False, overlays=False, cubemaps=False,
                      detail_as_world=True)
    lean = parse_vmf(tmp_path / "out.vmf")
    classes = {e["classname"] for e in lean.entities}
    assert not classes & {"prop_static", "info_overlay", "env_cubemap", "func_detail"}
    assert "func_detail" in {e["classname"] for e in full.entities}
    detail = sum(len(e.solids) for e in full.entities if e["classname"] == "func_detail")
    assert len(lean.brushes) == len(full.brushes) + detail
    assert stats.static_props == stats.overlays == stats.detail_solids == 0


def test_build_vmf_reports_progress():
    seen = []
    with sourcebsp.open(_map("tf2_mp_lobby")) as bsp:
        vmf, stats = build_vmf(bsp, DecompileOptions(), seen.append)
    assert seen == ["brushes", "faces", "displacements", "entities", "props", "overlays"]
    assert stats.solids == len(vmf.world.solids) == 6


def test_writes_the_file_and_never_the_input(tmp_path):
    out = tmp_path / "lobby.vmf"
    stats = decompile(_map("tf2_mp_lobby"), out)
    assert out.read_text(encoding="utf-8").startswith("versioninfo\n{\n")
    assert stats.sides == 36 and stats.world_solids == 6


# ---- numbers and a map built in code -------------------------------------------------------
def test_numbers_are_written_as_hammer_writes_them():
    from sourcebsp.converters.vmf.writer import format_many, format_number

    values = np.array([0, -0.0, 16, -100.5, 0.25, 1e-9, -1e-9, 123456.7890123, 1e6, -4.37114e-08, 0.000001])
    assert [format_number(v) for v in values] == \
        ["0", "0", "16", "-100.5", "0.25", "0", "0", "123456.789012", "1000000", "0", "0.000001"]
    noise = np.random.default_rng(0).normal(size=20000) * np.repeat([1e-4, 1, 1e2, 1e4], 5000)
    assert format_many(noise) == [format_number(v) for v in noise]
    whole = np.array([0, 9, 10, 100, -20, 6])
    assert format_many(whole, 0) == [format_number(v, 0) for v in whole] == ["0", "9", "10", "100", "-20", "6"]


def test_a_map_built_in_code():
    """One textured box in a BspFile made with set_lump: a one-solid VMF with the texinfo's axes."""
    from sourcebsp.codecs.entities import Entities, Entity
    from sourcebsp.codecs.textures import TEXDATA, TEXINFO, StringData

    from ..model.test_brushes import synthetic_box_map

    bsp = synthetic_box_map()
    texinfo = np.zeros(1, TEXINFO)
    texinfo["texture_vecs"][0] = [[0, 2, 0, 16], [0, 0, -2, 8]]  # scale 0.5 on the x-facing sides
    texinfo["lightmap_vecs"][0] = [[0, 1 / 32, 0, 0], [0, 0, -1 / 32, 0]]
    texdata = np.zeros(1, TEXDATA)
    bsp.set_lump(LumpId.TEXINFO, texinfo)
    bsp.set_lump(LumpId.TEXDATA, texdata)
    bsp.set_lump(LumpId.TEXDATA_STRING_TABLE, np.zeros(1, "<i4"))
    bsp.set_lump(LumpId.TEXDATA_STRING_DATA, StringData({0: "BRICK/BRICKWALL001A"}))
    bsp.set_lump(LumpId.ENTITIES, Entities([Entity(classname="worldspawn", skyname="sky_day01_01"),
                                            Entity(classname="info_player_start", origin="8 8 1",
                                                   OnUser1="door,Open,,0,-1")]))
    vmf, stats = build_vmf(bsp)
    parsed = parse_vmf(vmf.to_text())
    assert stats.solids == 1 and stats.sides == 6 and stats.point_entities == 1
    (solid,) = parsed.brushes
    assert {s.mat for s in solid.sides} == {"BRICK/BRICKWALL001A"}
    side = next(s for s in solid.sides if np.allclose(side_plane(s)[0], [1, 0, 0]))
    assert tuple(side.uaxis.vec()) == (0, 1, 0) and side.uaxis.scale == 0.5 and side.uaxis.offset == 16
    assert side.lightmap == 32
    top = next(s for s in solid.sides if np.allclose(side_plane(s)[0], [0, 0, 1]))
    assert tuple(top.uaxis.vec()) == (1, 0, 0) and tuple(top.vaxis.vec()) == (0, -1, 0)  # Hammer's defaults
    assert parsed.spawn["skyname"] == "sky_day01_01"
    (start,) = parsed.entities
    assert [(o.output, o.target, o.input) for o in start.outputs] == [("OnUser1", "door", "Open")]

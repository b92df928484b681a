"""Face polygons, fan triangles, displacements and brush models, on every corpus map."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import sourcebsp
from sourcebsp.lump_ids import LumpId
from sourcebsp.model import geometry as g

from ._expected import disp_heights, expected, faces_of, names_of


@functools.lru_cache(maxsize=4)
def _mesh(path, include_tools=False):
    bsp = sourcebsp.open(path)
    return bsp, g.build_mesh(bsp, include_tools=include_tools)


# ---- counts -----------------------------------------------------------------------
@pytest.mark.parametrize("include_tools", [False, True], ids=["drawn", "all-faces"])
def test_triangle_count(map_path, include_tools):
    bsp, mesh = _mesh(map_path, include_tools)
    want = expected(bsp, include_tools=include_tools)
    assert mesh.num_triangles == want.triangles
    got_plain = {int(f) for f in mesh.faces if faces_of(bsp)[int(f)]["dispinfo"] == -1}
    assert got_plain == {f for _, f in want.faces}
    assert set(np.unique(mesh.triangle_face[mesh.triangle_disp >= 0]).tolist()) == {f for _, f, _ in want.disps}
    # Fan triangulation: numedges - 2 triangles per plain face.
    plain = mesh.triangle_disp < 0
    counts = np.bincount(mesh.triangle_face[plain], minlength=len(faces_of(bsp)))
    for _, f in want.faces:
        assert counts[f] == int(faces_of(bsp)[f]["numedges"]) - 2


def test_world_only(map_path):
    bsp = sourcebsp.open(map_path)
    mesh = g.build_mesh(bsp, models="world")
    assert mesh.num_triangles == expected(bsp, world_only=True).triangles
    assert set(np.unique(mesh.triangle_model).tolist()) <= {0}


def test_tool_faces_are_left_out(map_path):
    bsp, mesh = _mesh(map_path)
    names = names_of(bsp)
    texinfo = bsp.texinfo if bsp.entry(LumpId.TEXINFO).filelen else []
    for f in np.unique(mesh.triangle_face).tolist():
        ti = texinfo[int(faces_of(bsp)[f]["texinfo"])]
        assert not int(ti["flags"]) & (g.SURF_NODRAW | g.SURF_SKY | g.SURF_SKY2D | g.SURF_TRIGGER)
        name = names[int(ti["texdata"])].lower()
        assert not name.startswith("tools/") or name == "tools/toolsblack"


# ---- polygons against srctools ------------------------------------------------------
def test_polygons_match_srctools(map_path):
    srctools_bsp = pytest.importorskip("srctools.bsp")
    if map_path.stem in ("vtmb_sp_genesisdevice_1", "x360_shack"):
        pytest.skip("srctools reads neither Vampire (BSP 17) nor Xbox 360 maps: no reference")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = srctools_bsp.BSP(map_path)
    bsp = sourcebsp.open(map_path)
    their_faces = theirs.faces or theirs.hdr_faces
    indices, offsets = g.face_polygons(bsp)
    assert len(offsets) - 1 == len(their_faces)
    points = bsp.vertexes["point"] if len(indices) else np.zeros((0, 3))
    names = g.texture_names(bsp)
    tex = g.face_textures(bsp)
    for k, face in enumerate(their_faces):
        polygon = np.array([[e.a.x, e.a.y, e.a.z] for e in face.edges]).reshape(-1, 3)
        np.testing.assert_allclose(points[indices[offsets[k] : offsets[k + 1]]], polygon, atol=1e-4)
        assert names[tex[k]] == face.texinfo.mat


# ---- geometry facts -----------------------------------------------------------------
def test_vertices_within_model_bounds(map_path):
    bsp, mesh = _mesh(map_path, True)
    heights = disp_heights(bsp)
    vertex_disp = np.full(len(mesh.positions), -1)
    vertex_disp[mesh.triangles[mesh.triangle_disp >= 0].ravel()] = np.repeat(mesh.triangle_disp[mesh.triangle_disp >= 0], 3)
    models = bsp.models
    pos = mesh.positions.astype(np.float64)
    vm = mesh.vertex_model
    plain = vertex_disp < 0
    lo = models["mins"][vm].astype(np.float64) - 0.5
    hi = models["maxs"][vm].astype(np.float64) + 0.5
    assert np.all((pos[plain] >= lo[plain]) & (pos[plain] <= hi[plain]))
    if (~plain).any():
        # A displacement vertex lies over its base face, at most its height away.
        indices, offsets = g.face_polygons(bsp)
        corners = bsp.vertexes["point"][indices].astype(np.float64)
        face = mesh.vertex_face[~plain]
        starts = offsets[face]
        quad = corners[starts[:, None] + np.arange(4)]
        pad = heights[vertex_disp[~plain]][:, None] + 0.01
        assert np.all(pos[~plain] >= quad.min(1) - pad)
        assert np.all(pos[~plain] <= quad.max(1) + pad)
        # ... and within the model's bounds, padded by the heights, when the base faces are.
        base_inside = (quad.min(1) >= models["mins"][vm[~plain]] - 0.5).all(1) & (
            quad.max(1) <= models["maxs"][vm[~plain]] + 0.5).all(1)
        p = pos[~plain][base_inside]
        assert np.all(p >= models["mins"][vm[~plain]][base_inside] - pad[base_inside])
        assert np.all(p <= models["maxs"][vm[~plain]][base_inside] + pad[base_inside])


def test_attributes_finite_and_normals_unit(map_path):
    _, mesh = _mesh(map_path)
    for name in ("positions", "normals", "uv", "luxels", "alpha"):
        assert np.isfinite(getattr(mesh, name)).all(), name
    if mesh.num_vertices:
        np.testing.assert_allclose(np.linalg.norm(mesh.normals, axis=1), 1.0, atol=1e-4)
    if mesh.num_triangles:
        assert int(mesh.triangles.max()) < mesh.num_vertices


def test_winding_faces_the_normal(map_path):
    """Counter-clockwise triangles face their plane's normal (nearly all of the area)."""
    _, mesh = _mesh(map_path)
    if not mesh.num_triangles:
        return
    p = mesh.positions.astype(np.float64)
    t = mesh.triangles.astype(np.int64)
    cross = np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]])
    facing = np.einsum("ij,ij->i", cross, mesh.normals[t].mean(1))
    area = np.linalg.norm(cross, axis=1)
    assert area[facing > 0].sum() >= 0.99 * area.sum()


def test_uvs_follow_texinfo(map_path):
    """u = (xyz . s + s_w) / width, checked against the vertex's own texinfo row."""
    bsp, mesh = _mesh(map_path)
    plain = np.flatnonzero(np.isin(mesh.vertex_face, mesh.triangle_face[mesh.triangle_disp < 0]))[:2000]
    if not len(plain):
        return
    faces = faces_of(bsp)
    for v in plain[:: max(1, len(plain) // 200)].tolist():
        ti = bsp.texinfo[int(faces[int(mesh.vertex_face[v])]["texinfo"])]
        td = bsp.texdata[int(ti["texdata"])]
        s, t = ti["texture_vecs"].astype(np.float64)
        xyz = mesh.positions[v].astype(np.float64)
        assert mesh.uv[v, 0] == pytest.approx((xyz @ s[:3] + s[3]) / td["width"], rel=1e-4, abs=1e-3)
        assert mesh.uv[v, 1] == pytest.approx((xyz @ t[:3] + t[3]) / td["height"], rel=1e-4, abs=1e-3)
        lu = ti["lightmap_vecs"][0].astype(np.float64)
        mins = faces[int(mesh.vertex_face[v])]["lightmap_texture_mins_in_luxels"]
        assert mesh.luxels[v, 0] == pytest.approx(xyz @ lu[:3] + lu[3] - mins[0], rel=1e-4, abs=1e-2)


# ---- displacements --------------------------------------------------------------------
def test_displacement_grids(map_path):
    bsp, mesh = _mesh(map_path, True)
    disp = mesh.triangle_disp >= 0
    if not disp.any():
        assert not bsp.entry(LumpId.DISPINFO).filelen or not any(faces_of(bsp)["dispinfo"] != -1)
        return
    info = bsp.dispinfo
    for d in np.unique(mesh.triangle_disp[disp]).tolist():
        power = int(info[d]["power"])
        tris = np.flatnonzero(mesh.triangle_disp == d)
        assert len(tris) == 2 * 4 ** power
        assert len(np.unique(mesh.triangles[tris])) == (2 ** power + 1) ** 2
        # disptri tags: the DISP_TRIS words of this displacement, in order.
        start = int(info[d]["disp_tri_start"])
        np.testing.assert_array_equal(mesh.triangle_tags[tris], bsp.disp_tris[start : start + len(tris)])
        # The grid's first vertex is the base corner nearest startPosition (plus its offset).
        verts = np.unique(mesh.triangles[tris])
        dv = bsp.disp_verts[int(info[d]["disp_vert_start"])]
        first = mesh.positions[verts[0]] - dv["vec"] * dv["dist"]
        corners = bsp.vertexes["point"][g.face_polygons(bsp, faces_of(bsp)[[int(mesh.triangle_face[tris[0]])]])[0]]
        nearest = corners[np.argmin(np.linalg.norm(corners - info[d]["start_position"], axis=1))]
        np.testing.assert_allclose(first, nearest, atol=1e-3)
        alphas = bsp.disp_verts[int(info[d]["disp_vert_start"]) : int(info[d]["disp_vert_start"]) + len(verts)]["alpha"]
        np.testing.assert_array_equal(mesh.alpha[verts], alphas)


def test_displacement_neighbours_share_edges(map_path):
    """Displacements that DISPINFO calls neighbours meet: vertices along the shared edge coincide."""
    bsp, mesh = _mesh(map_path, True)
    disp = mesh.triangle_disp >= 0
    if not disp.any():
        return
    info = bsp.dispinfo
    if "sub_neighbors" not in (info.dtype["edge_neighbors"].base.names or ()):
        pytest.skip("this dispinfo layout keeps its neighbour tables as bytes")
    neighbours = info["edge_neighbors"]["sub_neighbors"]["neighbor"]
    verts = {d: mesh.positions[np.unique(mesh.triangles[mesh.triangle_disp == d])].astype(np.float64)
             for d in np.unique(mesh.triangle_disp[disp]).tolist()}
    shared = []
    for a in verts:
        for b in set(neighbours[a].ravel().tolist()) - {0xFFFF}:
            if b in verts:
                dist = np.linalg.norm(verts[a][:, None] - verts[b][None], axis=2).min(1)
                shared.append(int((dist < 0.5).sum()))
    if shared:
        # Full edges share 2^power + 1 vertices; half edges (T-junction spans) fewer.
        assert np.mean(np.array(shared) >= 3) >= 0.9
        assert min(shared) >= 1


def test_grid_triangles_alternate():
    tri = g._grid_triangles(2)  # 5x5 vertices, 16 quads
    assert tri.shape == (32, 3)
    # Quad 0 (even first vertex) is split along 0-6, quad 1 (odd) along 2-6.
    assert {0, 6} <= set(tri[0]) and {0, 6} <= set(tri[1])
    assert {2, 6} <= set(tri[2]) and {2, 6} <= set(tri[3])


# ---- brush models ---------------------------------------------------------------------
def test_brush_models_placed_by_their_entity(map_path):
    bsp = sourcebsp.open(map_path)
    models = g.brush_models(bsp)
    assert len(models) == (len(bsp.models) if bsp.entry(LumpId.MODELS).filelen else 0)
    for entity in (bsp.entities if bsp.entry(LumpId.ENTITIES).filelen else []):
        model = entity.get("model") or ""
        if not (model.startswith("*") and model[1:].isdigit()) or int(model[1:]) >= len(models):
            continue
        m = models[int(model[1:])]
        if m.classname != entity.get("classname"):
            continue  # a second entity naming the same model
        origin = [float(v) for v in (entity.get("origin") or "0 0 0").split()]
        np.testing.assert_allclose(m.matrix[:3, 3], origin)
        if entity.get("angles") in (None, "0 0 0"):
            np.testing.assert_allclose(m.matrix[:3, :3], np.eye(3), atol=1e-12)


def _model_facts(models):
    return [(m.index, m.firstface, m.numfaces, m.classname, m.targetname, m.origin.tolist(), m.angles.tolist())
            for m in models]


def test_brush_models_read_entities_without_keeping_them(map_path):
    """The entity list is not decoded (nor cached) for brush models, and gives what the decoded lump gives."""
    with sourcebsp.open(map_path) as bsp:
        streamed = g.brush_models(bsp)
        assert not bsp.is_loaded(LumpId.ENTITIES)
        bsp.get_lump(LumpId.ENTITIES)
        assert _model_facts(g.brush_models(bsp)) == _model_facts(streamed)


def test_meshes_leave_the_hdr_faces_alone(map_path):
    """FACES_HDR describes the same polygons: it is read only when FACES is empty (or HDR is asked for)."""
    with sourcebsp.open(map_path) as bsp:
        g.build_mesh(bsp)
        has_ldr = bsp.entry(LumpId.FACES).filelen > 0
        assert bsp.is_loaded(LumpId.FACES_HDR) == (not has_ldr and bsp.entry(LumpId.FACES_HDR).filelen > 0)
        if has_ldr and bsp.entry(LumpId.FACES_HDR).filelen:
            assert len(g.face_table(bsp, hdr=True)) and bsp.is_loaded(LumpId.FACES_HDR)


def test_brush_models_see_entity_edits(corpus_file):
    with sourcebsp.open(corpus_file("l4d2_map_cannals_escape01.bsp")) as bsp:
        entity = next(e for e in bsp.entities if e.model_index)
        entity["origin"] = "1 2 3"
        entity["targetname"] = "moved"
        model = g.brush_models(bsp)[entity.model_index]
        assert model.origin.tolist() == [1.0, 2.0, 3.0] and model.targetname == "moved"


def test_angles_matrix_is_source_convention():
    # Yaw 90 turns +X (forward) to +Y; pitch 90 looks down (-Z); roll 90 turns +Y (left) to +Z.
    np.testing.assert_allclose(g.angles_matrix([0, 90, 0]) @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(g.angles_matrix([90, 0, 0]) @ [1, 0, 0], [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(g.angles_matrix([0, 0, 90]) @ [0, 1, 0], [0, 0, 1], atol=1e-12)


def test_rotated_brush_entity_world_positions(corpus_file):
    """l4d2 canals: two func_illusionary with angles "-0 -90 0" and an origin."""
    bsp = sourcebsp.open(corpus_file("l4d2_map_cannals_escape01.bsp"))
    mesh = g.build_mesh(bsp)
    rotated = [m for m in mesh.models if m.index and m.angles.any()]
    assert rotated
    world = mesh.world_positions()
    for m in rotated:
        sel = mesh.vertex_model == m.index
        if not sel.any():
            continue
        local = mesh.positions[sel].astype(np.float64)
        # yaw -90: (x, y) -> (y, -x)
        np.testing.assert_allclose(world[sel], np.stack([local[:, 1], -local[:, 0], local[:, 2]], 1) + m.origin,
                                   atol=1e-3)


def test_hdr_only_map_uses_hdr_faces(corpus_file):
    bsp = sourcebsp.open(corpus_file("x360_shack.bsp"))
    assert not bsp.entry(LumpId.FACES).filelen and len(bsp.faces_hdr)
    assert g.build_mesh(bsp).num_triangles == expected(bsp).triangles > 0


# ---- bad input ------------------------------------------------------------------------
def test_bad_references_raise_format_errors(corpus_file):
    bsp = sourcebsp.open(corpus_file("tf2_mp_lobby.bsp"))
    faces = np.array(bsp.faces)
    faces["firstedge"][0] = len(bsp.surfedges) + 10
    bsp.set_lump(LumpId.FACES, faces)
    with pytest.raises(sourcebsp.BspFormatError, match="SURFEDGES") as info:
        g.build_mesh(bsp)
    assert info.value.offset == bsp.entry(LumpId.FACES).fileofs
    bsp = sourcebsp.open(corpus_file("tf2_mp_lobby.bsp"))
    faces = np.array(bsp.faces)
    faces["texinfo"][0] = 30000
    bsp.set_lump(LumpId.FACES, faces)
    with pytest.raises(sourcebsp.BspFormatError, match="TEXINFO"):
        g.build_mesh(bsp, include_tools=True)

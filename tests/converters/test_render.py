"""The CPU preview renderer: synthetic checks of its parts, then every corpus map.

Corpus checks bound what can be measured without a reference picture:
how much of the frame shows the map, and how much its brightness varies.
"""
from __future__ import annotations

import io
import re

import numpy as np
import pytest

import sourcebsp
from sourcebsp.converters import render as rd
from sourcebsp.converters.render import overview as ov
from sourcebsp.converters.render.camera import EYE_HEIGHT, PLAYER_STARTS, player_starts
from sourcebsp.converters.render.raster import Frame, clip_near, project_orthographic, rasterize
from sourcebsp.converters.render.scene import _BOX_TRIANGLES, LUMINANCE
from sourcebsp.errors import BspFormatError
from sourcebsp.examples import build_example_map
from sourcebsp.examples.room import ROOM, WALL_MATERIAL

from ..model._expected import expected


# ---- rasterizer -------------------------------------------------------------------
def test_rasterizer_covers_the_triangle_area():
    # A right triangle over half of a 100x100 square, drawn orthographically.
    screen = np.array([[[0.0, 0.0], [100.0, 0.0], [0.0, 100.0]]])
    owner, _ = rasterize(screen, np.zeros((1, 3)), None, 100, 100)
    assert abs((owner >= 0).sum() - 5000) <= 100
    # Two overlapping squares: the nearer one (smaller depth) wins where they overlap.
    quad = np.array([[0, 0], [60, 0], [60, 60], [0, 60]], np.float64)
    tris = np.concatenate([quad[[0, 1, 2]][None], quad[[0, 2, 3]][None]])
    screen = np.concatenate([tris, tris + 40])
    depth = np.array([[5.0] * 3, [5.0] * 3, [1.0] * 3, [1.0] * 3])
    owner, _ = rasterize(screen, depth, None, 100, 100)
    grid = owner.reshape(100, 100)
    assert grid[50, 50] in (2, 3) and grid[10, 10] in (0, 1) and grid[95, 95] in (2, 3) and grid[95, 5] == -1
    # With a per-pixel floor on the depth key, the nearer square is dropped where it is too near.
    owner, planes = rasterize(screen, depth, None, 100, 100, lambda px, py: np.full(len(px), 3.0))
    grid = owner.reshape(100, 100)
    key = Frame(100, 100, owner, planes, np.arange(4), np.zeros((4, 3, 0))).depth
    assert grid[50, 50] in (0, 1) and grid[95, 95] == -1 and np.all(key[owner >= 0] == 5.0)


def test_near_clipping_keeps_the_visible_part():
    cam = np.array([[[2.0, 0, 0], [0.0, 1, 0], [0.0, -1, 0]]])  # one vertex in front, two behind
    attrs = np.arange(6, dtype=np.float64).reshape(1, 3, 2)
    out, cut, ids = clip_near(cam, attrs, np.array([7]), near=1.0)
    assert out.shape == (1, 3, 3) and np.all(out[..., 0] >= 1.0 - 1e-9) and ids.tolist() == [7]
    # Attributes are cut where the positions are: halfway from vertex 0 to vertex 1.
    np.testing.assert_allclose(cut[0, 1], (attrs[0, 0] + attrs[0, 1]) / 2)
    cam = np.array([[[0.0, 0, 0], [2.0, 1, 0], [2.0, -1, 0]]])  # two in front: a quad, two triangles
    out, _, ids = clip_near(cam, attrs, np.array([3]), near=1.0)
    assert out.shape == (2, 3, 3) and np.all(out[..., 0] >= 1.0 - 1e-9) and ids.tolist() == [3, 3]


def test_orthographic_frame_places_world_points():
    # A 100x100-unit square at z = 10, drawn at 2 units per pixel from the top-left corner (0, 100).
    square = np.array([[[0, 0, 10], [100, 0, 10], [100, 100, 10]], [[0, 0, 10], [100, 100, 10], [0, 100, 10]]], float)
    frame = project_orthographic(square[:, :, :], np.zeros((2, 3, 0)), np.arange(2), 100, 100, (0.0, 100.0), 2.0)
    grid = frame.hit.reshape(100, 100)
    assert grid[:49, :49].all() and not grid[51:, :].any() and not grid[:, 51:].any()
    np.testing.assert_allclose(-frame.depth[frame.hit], 10.0)


def test_box_triangles_face_outwards():
    corners = np.array([[(i >> a) & 1 for a in range(3)] for i in range(8)], float)
    tri = corners[_BOX_TRIANGLES]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    outward = tri.mean(1) - 0.5
    assert np.all(np.einsum("ij,ij->i", normal, outward) > 0) and len(tri) == 12


# ---- overview: reachable floors ---------------------------------------------------
def _quad(x0, y0, x1, y1, z):
    a, b, c, d = [x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]
    return [[a, b, c], [a, c, d]]


def test_components_match_a_breadth_first_search():
    rng = np.random.default_rng(5)
    n = 300
    u, v = rng.integers(0, n, 200), rng.integers(0, n, 200)
    labels = ov._components(n, u, v)
    neighbours = {i: set() for i in range(n)}
    for a, b in zip(u.tolist(), v.tolist()):
        neighbours[a].add(b)
        neighbours[b].add(a)
    seen = {}
    for start in range(n):
        if start in seen:
            continue
        todo, group = [start], {start}
        while todo:
            for nxt in neighbours[todo.pop()]:
                if nxt not in group:
                    group.add(nxt)
                    todo.append(nxt)
        for node in group:
            seen[node] = min(group)
    assert labels.tolist() == [seen[i] for i in range(n)]


def test_floors_reached_by_steps_but_not_roofs():
    floors = np.array(
        _quad(0, 0, 1000, 1000, 0)  # the ground
        + _quad(1000, 0, 1200, 1000, 40)  # a step up a player can jump
        + _quad(1200, 0, 1500, 1000, 80)  # and another
        + _quad(200, 200, 600, 600, 300)  # a roof over part of the ground
        + _quad(2000, 0, 2400, 400, 0),  # a separate yard nobody can walk to
        float)
    found = ov.reachable_floors(floors, np.array([[100.0, 100.0, 16.0]]), max_cells=200)
    cell_of = lambda x, y: (int((found.origin[1] - y) // found.cell), int((x - found.origin[0]) // found.cell))
    assert found.top[cell_of(400, 400)] == pytest.approx(0.0)  # under the roof: the ground shows
    assert found.top[cell_of(1100, 500)] == pytest.approx(40.0)
    assert found.top[cell_of(1400, 500)] == pytest.approx(80.0)
    assert np.isnan(found.top[cell_of(2200, 200)])  # the separate yard
    low, high = found.bounds()
    assert low[0] <= 0 and high[0] >= 1500 and high[0] < 2000
    # Cut heights: the floor plus head room where reachable, nothing elsewhere.
    limit = found.limit_at(np.array([400.0, 2200.0]), np.array([400.0, 200.0]), ov.HEAD_ROOM)
    assert limit[0] == pytest.approx(ov.HEAD_ROOM) and limit[1] == -np.inf


def test_overview_text_matches_the_picture():
    result = rd.render(build_example_map(), view="overview", size=(256, 256))
    text = rd.overview_text(result, "example")
    values = dict(re.findall(r'"(pos_x|pos_y|scale|AltitudeMin|AltitudeMax)"\s+"([-0-9.]+)"', text))
    pos_x, pos_y, scale = float(values["pos_x"]), float(values["pos_y"]), float(values["scale"])
    # The room's inside lies within the picture, framed around it.
    units = scale * 1024 / 256
    assert pos_x <= ROOM.mins[0] and pos_y >= ROOM.maxs[1]
    assert pos_x + 256 * units >= ROOM.maxs[0] and pos_y - 256 * units <= ROOM.mins[1]
    # The room's floor (z = 0) is where the picture is covered, and the shown heights bracket it.
    col = int((0 - pos_x) / units)
    row = int((pos_y - 0) / units)
    assert np.any(result.image[row, col] != rd.BACKGROUND["overview"])
    assert float(values["AltitudeMin"]) <= ROOM.mins[2] <= float(values["AltitudeMax"])


# ---- colours ----------------------------------------------------------------------
def test_real_textures_from_the_pakfile(tmp_path):
    vtf_module = pytest.importorskip("srctools.vtf")
    bsp = build_example_map()
    plain = rd.render(bsp, view="player", size=(96, 54))
    assert not plain.textured
    # A plain red texture for the walls, as the game would find it in the pakfile.
    vtf = vtf_module.VTF(16, 16, fmt=vtf_module.ImageFormats.RGB888)
    vtf.get().copy_from(bytes([220, 30, 30]) * 256, vtf_module.ImageFormats.RGB888)
    buffer = io.BytesIO()
    vtf.save(buffer)
    bsp.pakfile.add("materials/test/red.vtf", buffer.getvalue())
    vmt = b'"LightmappedGeneric"\n{\n"$basetexture" "test/red"\n}\n'
    bsp.pakfile.add(f"materials/{WALL_MATERIAL.lower()}.vmt", vmt)
    textured = rd.render(bsp, view="player", size=(96, 54))
    assert textured.textured and textured.camera == plain.camera
    shown = textured.image.reshape(-1, 3).astype(int)
    assert np.mean(shown[:, 0] > shown[:, 1] + 40) > 0.5  # red walls now
    grey = plain.image.reshape(-1, 3).astype(int)
    assert np.mean(grey[:, 0] > grey[:, 1] + 40) < 0.05
    # The overview can ignore them.
    assert not rd.render(bsp, view="player", size=(96, 54), textures=False).textured


# ---- cameras ----------------------------------------------------------------------
def test_fixed_camera_and_entity_camera():
    bsp = build_example_map()
    result = rd.render(bsp, camera=[0, 0, 64, 0, 90], size=(64, 36))
    assert result.view == "player" and result.camera == (0.0, 0.0, 64.0) and result.angles == (0.0, 90.0, 0.0)
    named = next(e for e in bsp.entities if e.get("targetname"))
    at = rd.render(bsp, at=named["targetname"], size=(64, 36))
    assert at.camera_source == f"entity {named['targetname']}"
    with pytest.raises(rd.CameraError):
        rd.render(bsp, at="no such entity", size=(64, 36))


# ---- every corpus map -------------------------------------------------------------
@pytest.mark.parametrize("view", ["overview", "player", "top"])
def test_render_covers_the_frame(map_path, view):
    bsp = sourcebsp.open(map_path)
    if expected(bsp).triangles == 0:
        with pytest.raises(rd.NothingToDraw):
            rd.render(bsp, view=view, size=(96, 72))
        return
    size = (160, 90) if view == "player" else (160, 160)
    result = rd.render(bsp, view=view, size=size)
    image = result.image
    assert image.shape == (size[1], size[0], 3) and image.dtype == np.uint8
    # A meaningful part of the frame shows the map, or the picture says it does not.
    assert result.covered > (0.25 if view != "top" else 0.2)
    assert (result.covered >= rd.NEARLY_EMPTY) == (not any("nearly empty" in w for w in result.warnings))
    background = np.all(image == rd.BACKGROUND[view], axis=2)
    assert (~background).mean() == pytest.approx(result.covered, abs=0.03)
    # Contrast: shades, but not noise.
    luminance = image[~background].reshape(-1, 3) / 255 @ LUMINANCE
    assert result.contrast == pytest.approx(luminance.std(), abs=0.02)
    assert result.contrast < 0.4
    if result.lit or view != "top":
        assert result.contrast > 0.01 or len(np.unique(image[~background].reshape(-1, 3), axis=0)) > 1


def test_player_view_starts_at_a_spawn(map_path):
    bsp = sourcebsp.open(map_path)
    if expected(bsp).triangles == 0:
        return
    starts = player_starts(bsp)
    result = rd.render(bsp, view="player", size=(64, 36))
    if not starts:
        assert any("no player start" in w for w in result.warnings)
        return
    first = next(e for name in PLAYER_STARTS for e in bsp.entities
                 if (e.get("classname") or "").lower() == name and e.get("origin"))
    origin = np.array([float(v) for v in first["origin"].split()])
    np.testing.assert_allclose(starts[0].eye, origin + [0, 0, EYE_HEIGHT])
    eyes = np.array([s.eye for s in starts])
    assert np.min(np.linalg.norm(eyes - np.array(result.camera), axis=1)) < 1e-6 or \
        "above a floor" in (result.camera_source or "")
    assert result.score is not None and result.score > 0


def test_files_by_extension(tmp_path, corpus_file):
    Image = pytest.importorskip("PIL.Image")
    for suffix, magic in ((".png", b"\x89PNG"), (".jpg", b"\xff\xd8\xff"), (".webp", b"RIFF")):
        out = tmp_path / f"rats{suffix}"
        result = rd.render_file(corpus_file("css_de_rats.bsp"), out, view="overview", size=(128, 96))
        assert out.read_bytes()[:4].startswith(magic)
        with Image.open(out) as image:
            assert image.size == (128, 96)
            if suffix == ".png":
                np.testing.assert_array_equal(np.asarray(image), result.image)
    with pytest.raises(ValueError):
        rd.render_file(corpus_file("css_de_rats.bsp"), tmp_path / "rats.bmp")


# ---- props and game folders -------------------------------------------------------
def _a_model() -> bytes | None:
    from tests.conftest import CORPUS

    path = CORPUS.parent / "games" / "open-deathmatch" / "models" / "police.mdl"
    return path.read_bytes() if path.exists() else None


def test_static_props_drawn_as_model_bounds(tmp_path):
    pytest.importorskip("srctools.mdl")
    from srctools.filesys import VirtualFileSystem
    from srctools.mdl import Model

    from sourcebsp.examples.room import PROP_MODEL

    data = _a_model()
    if data is None:
        pytest.skip("no model file to test with")
    bsp = build_example_map()
    without = rd.render(bsp, view="overview", size=(128, 128))
    assert without.props == 0 and without.props_missing == 1
    # The model in a game folder given with game=..., as the engine would find it.
    model_path = tmp_path / PROP_MODEL
    model_path.parent.mkdir(parents=True)
    model_path.write_bytes(data)
    with_box = rd.render(bsp, view="overview", size=(128, 128), game=tmp_path)
    assert with_box.props == 1 and with_box.props_missing == 0
    # The box stands where the prop is, as tall as srctools says the model is.
    fsys = VirtualFileSystem({"m.mdl": data})
    model = Model(fsys, fsys["m.mdl"])
    hull_top = max(float(model.view_max.z), float(model.hull_max.z))
    prop = bsp.static_props.props[0]
    frame = with_box.overview
    col, row = frame.to_pixels(prop["origin"][:2].astype(float)).astype(int)
    assert np.any(with_box.image[row, col] != without.image[row, col])
    far_corner = frame.to_pixels(np.array([ROOM.mins[0] + 8, ROOM.mins[1] + 8])).astype(int)
    np.testing.assert_array_equal(with_box.image[far_corner[1], far_corner[0]],
                                  without.image[far_corner[1], far_corner[0]])
    assert hull_top > 0


def test_textures_from_a_game_folder(tmp_path):
    vtf_module = pytest.importorskip("srctools.vtf")
    bsp = build_example_map()
    vtf = vtf_module.VTF(8, 8, fmt=vtf_module.ImageFormats.RGB888)
    vtf.get().copy_from(bytes([20, 40, 230]) * 64, vtf_module.ImageFormats.RGB888)
    (tmp_path / "materials" / "test").mkdir(parents=True)
    with open(tmp_path / "materials" / "test" / "blue.vtf", "wb") as handle:
        vtf.save(handle)
    vmt = tmp_path / "materials" / f"{WALL_MATERIAL.lower()}.vmt"
    vmt.parent.mkdir(parents=True, exist_ok=True)
    vmt.write_text('"LightmappedGeneric" { "$basetexture" "test/blue" }')
    result = rd.render(bsp, view="overview", size=(96, 96), game=tmp_path)
    shown = result.image.reshape(-1, 3).astype(int)[result.image.reshape(-1, 3).any(1)]
    assert result.textured and np.mean(shown[:, 2] > shown[:, 0] + 40) > 0.5
    with pytest.raises(FileNotFoundError):
        rd.render(bsp, view="overview", size=(32, 32), game=tmp_path / "missing")


def test_pvs_culling_hides_nothing_that_shows(map_path):
    """The player view drawn with and without PVS culling shows the same faces."""
    from sourcebsp.converters.render.camera import draw_perspective

    bsp = sourcebsp.open(map_path)
    if expected(bsp).triangles == 0:
        return
    starts = player_starts(bsp)
    scene = rd._scene(bsp, False, None, None, False, False)
    culler = ov.pvs_culler(bsp, scene.face)
    if culler is None or not starts:
        return
    for camera in starts[:3]:
        mask = culler(camera.eye)
        if mask is None:
            continue
        full = draw_perspective(scene, camera, 96, 54, 90.0)
        culled = draw_perspective(scene, camera, 96, 54, 90.0, mask)
        assert mask.sum() <= len(mask)
        # Pixels may differ only where coplanar faces tie in depth; no visible face disappears.
        lost = set(scene.face[full.source()[full.hit]].tolist()) - set(scene.face[culled.source()[culled.hit]].tolist())
        assert not lost


def test_levels_sections_and_specks():
    floors = np.array(
        _quad(0, 0, 1000, 1000, 0)  # ground floor
        + _quad(0, 0, 600, 1000, 400)  # an upper floor over part of it (reached by a lift)
        + _quad(5000, 5000, 5016, 5016, -1000),  # a 16-unit box under the map with a spawn in it
        float)
    anchors = np.array([[800, 500, 16], [100, 500, 416], [5008, 5008, -990]], float)
    found = ov.reachable_floors(floors, anchors, max_cells=300)
    np.testing.assert_allclose(found.levels(), [(0.0, 0.0), (400.0, 400.0)], atol=1e-6)  # the box is a speck
    cell_of = lambda x, y: (int((found.origin[1] - y) // found.cell), int((x - found.origin[0]) // found.cell))
    assert found.top[cell_of(300, 500)] == pytest.approx(400.0) and found.top[cell_of(800, 500)] == pytest.approx(0.0)
    lower = found.band(-10, 10)
    assert lower.top[cell_of(300, 500)] == pytest.approx(0.0) and len(lower.levels()) == 1
    # CS:GO sections: the top level is the default picture, lower ones get their own.
    result = rd.RenderResult(np.zeros((1, 1, 3), np.uint8), "overview", 1.0, 0, True, levels=found.levels())
    sections = rd.level_sections(result)
    assert [s[0] for s in sections] == ["default", "level1"]
    assert sections[0][3] is None and sections[1][3] == pytest.approx((0.0, 0.0), abs=1e-6)
    assert sections[1][1] < 0 < sections[1][2] <= 400 <= sections[0][2] and sections[0][1] == sections[1][2]


def test_broken_textures_and_models_are_skipped_with_a_note():
    pytest.importorskip("srctools.vtf")
    from sourcebsp.examples.room import PROP_MODEL

    bsp = build_example_map()
    bsp.pakfile.add("materials/test/broken.vtf", b"VTF\x00" + b"\xff" * 60)
    bsp.pakfile.add(f"materials/{WALL_MATERIAL.lower()}.vmt", b'"LightmappedGeneric" { "$basetexture" "test/broken" }')
    bsp.pakfile.add(PROP_MODEL, b"IDST" + b"\x30\x00\x00\x00" + b"\xff" * 200)
    result = rd.render(bsp, view="player", size=(64, 36))
    assert not result.textured and result.props == 0 and result.props_missing == 1
    assert any("could not be read" in w for w in result.warnings) and result.covered > 0.5


def test_a_wall_at_arms_length_scores_lower():
    from sourcebsp.converters.render.camera import Camera, draw_perspective, score_frame

    bsp = build_example_map()
    scene = rd._scene(bsp, False, None, None, False, False)
    across = Camera(np.array([ROOM.mins[0] + 32.0, 0.0, 64.0]), np.array([0.0, 0.0, 0.0]), "across the room")
    facing_wall = Camera(np.array([ROOM.maxs[0] - 20.0, 0.0, 64.0]), np.array([0.0, 0.0, 0.0]), "at the wall")
    good = score_frame(draw_perspective(scene, across, 64, 36, 90.0), scene)
    poor = score_frame(draw_perspective(scene, facing_wall, 64, 36, 90.0), scene)
    assert 0 <= poor < good / 2 and good <= 1


@pytest.mark.parametrize("view", ["overview", "player", "top"])
def test_damaged_numbers_do_not_crash(view):
    """NaN lightmap vectors (as fuzzed maps have) are left out; a NaN vertex is a typed error."""
    bsp = build_example_map()
    texinfo = bsp.texinfo.copy()
    texinfo["lightmap_vecs"][0] = np.nan
    bsp.texinfo = texinfo
    result = rd.render(bsp, view=view, size=(48, 48))
    assert result.covered > 0.2 and np.all(np.isfinite(result.image))
    vertexes = bsp.vertexes.copy()
    vertexes["point"][0] = np.nan
    bsp.vertexes = vertexes
    with pytest.raises(BspFormatError, match="VERTEXES"):
        rd.render(bsp, view=view, size=(48, 48))

"""The CPU preview renderer: a synthetic check of the rasterizer, then every corpus map."""
from __future__ import annotations

import numpy as np
import pytest

import sourcebsp
from sourcebsp.converters import render as rd

from ..model._expected import expected


def test_rasterizer_covers_the_triangle_area():
    # A right triangle over half of a 100x100 square, drawn orthographically.
    screen = np.array([[[0.0, 0.0], [100.0, 0.0], [0.0, 100.0]]])
    owner, _ = rd._rasterize(screen, np.zeros((1, 3)), None, 100, 100)
    assert abs((owner >= 0).sum() - 5000) <= 100
    # Two overlapping squares: the nearer one (smaller depth) wins where they overlap.
    quad = np.array([[0, 0], [60, 0], [60, 60], [0, 60]], np.float64)
    tris = np.concatenate([quad[[0, 1, 2]][None], quad[[0, 2, 3]][None]])
    screen = np.concatenate([tris, tris + 40])
    depth = np.array([[5.0] * 3, [5.0] * 3, [1.0] * 3, [1.0] * 3])
    owner, _ = rd._rasterize(screen, depth, None, 100, 100)
    grid = owner.reshape(100, 100)
    assert grid[50, 50] in (2, 3) and grid[10, 10] in (0, 1) and grid[95, 95] in (2, 3) and grid[95, 5] == -1


def test_near_clipping_keeps_the_visible_part():
    cam = np.array([[[2.0, 0, 0], [0.0, 1, 0], [0.0, -1, 0]]])  # one vertex in front, two behind
    uv = np.zeros((1, 3, 2))
    out, _, ids = rd._clip_near(cam, uv, np.array([7]), near=1.0)
    assert out.shape == (1, 3, 3) and np.all(out[..., 0] >= 1.0 - 1e-9) and ids.tolist() == [7]
    cam = np.array([[[0.0, 0, 0], [2.0, 1, 0], [2.0, -1, 0]]])  # two in front: a quad, two triangles
    out, _, ids = rd._clip_near(cam, uv, np.array([3]), near=1.0)
    assert out.shape == (2, 3, 3) and np.all(out[..., 0] >= 1.0 - 1e-9) and ids.tolist() == [3, 3]


@pytest.mark.parametrize("view", ["top", "player"])
def test_render_is_not_blank(map_path, view):
    bsp = sourcebsp.open(map_path)
    if expected(bsp).triangles == 0:
        with pytest.raises(rd.NothingToDraw):
            rd.render(bsp, view=view, size=(96, 72))
        return
    result = rd.render(bsp, view=view, size=(160, 120))
    image = result.image
    assert image.shape == (120, 160, 3) and image.dtype == np.uint8
    assert result.covered > 0.1
    background = np.all(image == rd._BACKGROUND[view], axis=2)
    assert (~background).mean() == pytest.approx(result.covered, abs=0.02)
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 1
    if result.lit or view == "player":
        # Lightmaps (or, seen in perspective, faces turned different ways) give shades.
        assert len(np.unique(image[~background].reshape(-1, 3), axis=0)) > 1


def test_player_view_starts_at_the_spawn(map_path):
    bsp = sourcebsp.open(map_path)
    start = None
    for classname in rd.PLAYER_STARTS:
        start = next((e for e in bsp.entities if (e.get("classname") or "").lower() == classname
                      and e.get("origin")), None)
        if start is not None:
            break
    if start is None or expected(bsp).triangles == 0:
        return
    result = rd.render(bsp, view="player", size=(64, 48))
    origin = np.array([float(v) for v in start["origin"].split()])
    np.testing.assert_allclose(result.camera, origin + [0, 0, rd.EYE_HEIGHT])


def test_png_file(tmp_path, corpus_file):
    Image = pytest.importorskip("PIL.Image")
    out = tmp_path / "top.png"
    result = rd.render_png(corpus_file("css_de_rats.bsp"), out, size=(256, 200))
    with Image.open(out) as image:
        assert image.size == (256, 200)
        np.testing.assert_array_equal(np.asarray(image), result.image)
    assert result.lit

"""Renderer memory: from the map's path to the written picture, a small multiple of the
file plus a few bytes an output pixel; and the bands and chunks that keep it so do not
change the picture.

Peaks are measured with tracemalloc (numpy's buffers included) around
``render_file(path, out)``: opening and decoding the map, meshes, the
lightmap atlas, the floor analysis of an overview, rasterization, shading
and the PNG.  The first render of a process imports Pillow's plug-ins and
srctools; a small render first keeps that out of the figure.
"""
from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp.converters import render as rd
from sourcebsp.converters.render import raster as render_raster
from sourcebsp.converters.render.raster import rasterize
from sourcebsp.examples import build_example_map

from ..model._expected import expected

pytest.importorskip("PIL")

FILE_MULTIPLE = 4
BYTES_PER_PIXEL = 32
#: The overview at the size games use, and the player view at the size the CLI draws by default.
SIZES = {"overview": (1024, 1024), "player": (1280, 720)}


def _peak(path: Path, out: Path, view: str, size: tuple[int, int]) -> int:
    tracemalloc.start()
    try:
        rd.render_file(path, out, view=view, size=size)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("view", sorted(SIZES))
def test_render_peak_memory(map_path: Path, tmp_path: Path, view: str) -> None:
    if expected(sourcebsp.open(map_path)).triangles == 0:
        return  # nothing to draw (test_render checks the error)
    rd.render_file(map_path, tmp_path / "warm.png", view=view, size=(16, 16))
    width, height = SIZES[view]
    out = tmp_path / "picture.png"
    peak = _peak(map_path, out, view, (width, height))
    assert out.stat().st_size > 0
    size = map_path.stat().st_size
    # A bound the old renderer (about 300 bytes a pixel) could not meet, nor one that kept
    # a float64 per-pixel buffer for depth, barycentrics and three colour channels.
    bound = FILE_MULTIPLE * size + BYTES_PER_PIXEL * width * height
    assert peak <= bound, (f"{map_path.name} {view}: peak {peak / 2**20:.1f} MiB, bound {bound / 2**20:.1f} MiB "
                           f"({peak / (width * height):.0f} bytes a pixel)")


# ---- bands and chunks do not change the picture --------------------------------------
@pytest.mark.parametrize("view", ["overview", "player", "top"])
def test_bands_and_chunks_leave_the_picture_unchanged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      view: str) -> None:
    """Shading a band of one row at a time and rasterizing a few pixels at a time give the
    picture of one band and one chunk: statistics over the picture (exposure, depth cue,
    lightmap level, the light given to props) and the overview's outlines across band
    edges come out the same."""
    from sourcebsp.examples.room import PROP_MODEL

    from .test_render import _a_model

    bsp = build_example_map()
    model = _a_model()
    if model is not None:  # the example's prop drawn as a box: pixels without a lightmap
        (tmp_path / PROP_MODEL).parent.mkdir(parents=True)
        (tmp_path / PROP_MODEL).write_bytes(model)
    options = {"view": view, "size": (97, 61), "game": tmp_path}
    monkeypatch.setattr(render_raster, "BAND_PIXELS", 1 << 30)
    monkeypatch.setattr(render_raster, "_CHUNK_PIXELS", 1 << 30)
    whole = rd.render(bsp, **options)
    monkeypatch.setattr(render_raster, "BAND_PIXELS", 50)  # one row a band
    monkeypatch.setattr(render_raster, "_CHUNK_PIXELS", 64)  # big triangles cut into pieces of rows
    banded = rd.render(bsp, **options)
    assert whole.covered > 0.2 and whole.lit and whole.props == (model is not None and view != "top")
    np.testing.assert_array_equal(banded.image, whole.image)
    assert banded.contrast == whole.contrast and banded.lit == whole.lit


def test_frame_bands_cover_every_drawn_pixel_once_in_order() -> None:
    screen = np.array([[[3.0, 2.0], [90.0, 10.0], [20.0, 57.0]], [[50.0, 0.0], [99.0, 0.0], [99.0, 40.0]]])
    owner, planes = rasterize(screen, np.array([[1.0] * 3, [2.0] * 3]), None, 100, 60)
    frame = render_raster.Frame(100, 60, owner, planes, np.arange(2), np.zeros((2, 3, 0)))
    bands = list(frame.bands(pixels=700))
    assert [b.first_row for b in bands] == list(range(0, 60, 7)) and sum(b.rows for b in bands) == 60
    np.testing.assert_array_equal(np.concatenate([b.pix for b in bands]), np.flatnonzero(owner >= 0))
    assert [b.part.start for b in bands[1:]] == [b.part.stop for b in bands[:-1]]
    # Depth and barycentrics evaluated again at the pixels: the interpolated plane.
    hit = np.flatnonzero(owner >= 0)
    np.testing.assert_allclose(frame.depth_at(hit), np.where(owner[hit] == 0, 1.0, 2.0))
    w = frame.bary_at(hit)
    assert np.all(w >= -1e-5) and np.all(w.sum(1) <= 1 + 1e-5)

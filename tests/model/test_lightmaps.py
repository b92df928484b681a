"""Lightmap layout, decoding and the atlas, on every corpus map."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import sourcebsp
from sourcebsp.lump_ids import LumpId
from sourcebsp.model import lightmaps as lm
from sourcebsp.model.geometry import SURF_BUMPLIGHT, face_table


def _kinds(bsp):
    return [hdr for hdr, lump in ((False, LumpId.LIGHTING), (True, LumpId.LIGHTING_HDR)) if bsp.entry(lump).filelen]


def _decode_one(raw: bytes, offset: int) -> np.ndarray:
    """One ColorRGBExp32 with struct: byte r, g, b; signed char exponent."""
    r, g, b, e = struct.unpack_from("<BBBb", raw, offset)
    return np.array([r, g, b], np.float64) / 255.0 * 2.0 ** e


def test_layout_blocks_lie_in_the_lump_without_overlap(map_path):
    bsp = sourcebsp.open(map_path)
    for hdr in _kinds(bsp):
        layout = lm.lightmap_layout(bsp, hdr=hdr)
        faces = face_table(bsp, hdr=hdr)
        lit = np.flatnonzero(layout.lit)
        raw_len = len(bsp.lump_bytes(LumpId.LIGHTING_HDR if hdr else LumpId.LIGHTING))
        start = faces["lightofs"][lit].astype(np.int64)
        size = faces["lightmap_texture_size_in_luxels"][lit].astype(np.int64) + 1
        styles = np.array([list(s).index(255) if 255 in s else len(s) for s in faces["styles"][lit]], np.int64)
        texinfo = bsp.texinfo
        sets = np.where(texinfo["flags"][faces["texinfo"][lit]] & SURF_BUMPLIGHT, 4, 1)
        end = start + 4 * styles * sets * size[:, 0] * size[:, 1]
        assert np.all(end <= raw_len)
        order = np.argsort(start)
        # Faces may share a lightmap (identical offsets); otherwise blocks do not overlap.
        s, e = start[order], end[order]
        distinct = np.concatenate([[True], s[1:] != s[:-1]])
        assert np.all(e[distinct][:-1] <= s[distinct][1:])
        np.testing.assert_array_equal(layout.sets[lit], sets)
        np.testing.assert_array_equal(layout.styles[lit], styles)


def test_face_lightmap_decodes_like_struct(map_path):
    bsp = sourcebsp.open(map_path)
    for hdr in _kinds(bsp):
        layout = lm.lightmap_layout(bsp, hdr=hdr)
        raw = bytes(bsp.lump_bytes(LumpId.LIGHTING_HDR if hdr else LumpId.LIGHTING))
        faces = face_table(bsp, hdr=hdr)
        for face in np.flatnonzero(layout.lit)[:: max(1, int(layout.lit.sum()) // 25)].tolist():
            image = lm.face_lightmap(bsp, face, hdr=hdr)
            h, w = int(faces["lightmap_texture_size_in_luxels"][face][1]) + 1, int(
                faces["lightmap_texture_size_in_luxels"][face][0]) + 1
            assert image.shape == (h, w, 3)
            base = int(faces["lightofs"][face])
            for y, x in ((0, 0), (h - 1, w - 1), (h // 2, w // 3)):
                np.testing.assert_allclose(image[y, x], _decode_one(raw, base + 4 * (y * w + x)), rtol=1e-6)
            if layout.sets[face] == 4:
                # The bump blocks follow the flat one.
                bumped = lm.face_lightmap(bsp, face, bump=2, hdr=hdr)
                np.testing.assert_allclose(bumped[0, 0], _decode_one(raw, base + 4 * 2 * w * h), rtol=1e-6)


def test_atlas_holds_every_lit_face(map_path):
    bsp = sourcebsp.open(map_path)
    kinds = _kinds(bsp)
    if not kinds:
        assert lm.build_atlas(bsp) is None and lm.build_atlas(bsp, hdr=True) is None
        return
    for hdr in kinds:
        atlas = lm.build_atlas(bsp, hdr=hdr)
        layout = lm.lightmap_layout(bsp, hdr=hdr)
        assert atlas is not None
        assert np.array_equal(atlas.rects[:, 0] >= 0, layout.lit)
        assert np.isfinite(atlas.image).all() and atlas.image.min() >= 0
        x, y, w, h = atlas.rects[layout.lit].T
        assert np.all((x >= 1) & (y >= 1) & (x + w < atlas.width) & (y + h < atlas.height))
        np.testing.assert_array_equal(w, layout.width[layout.lit])
        # No two faces' rectangles overlap: paint them and count.
        cover = np.zeros((atlas.height, atlas.width), np.int32)
        for rx, ry, rw, rh in zip(x.tolist(), y.tolist(), w.tolist(), h.tolist()):
            cover[ry - 1 : ry + rh + 1, rx - 1 : rx + rw + 1] += 1
        assert cover.max() <= 1
        # Pixels equal the decoded samples, and UVs of luxel corners land on them.
        for face in np.flatnonzero(layout.lit)[:: max(1, int(layout.lit.sum()) // 20)].tolist():
            rx, ry, rw, rh = atlas.rects[face]
            np.testing.assert_allclose(atlas.image[ry : ry + rh, rx : rx + rw], lm.face_lightmap(bsp, face, hdr=hdr))
            uv = atlas.uv(np.array([face, face]), np.array([[0.0, 0.0], [rw - 1.0, rh - 1.0]]))
            np.testing.assert_allclose(uv * [atlas.width, atlas.height], [[rx + 0.5, ry + 0.5],
                                                                         [rx + rw - 0.5, ry + rh - 0.5]], atol=1e-3)
            np.testing.assert_allclose(atlas.sample(uv[:1])[0], atlas.image[ry, rx], rtol=1e-5)


def test_tonemap():
    values = np.array([[0.0, 0.5, 1.0], [2.0, 8.0, 1000.0]], np.float32)
    clip = lm.tonemap(values, method="clip")
    assert clip[0, 0] == 0 and clip[0, 2] == 255 and clip[1, 0] == 255
    assert clip[0, 1] == 188  # sRGB of linear 0.5
    reinhard = lm.tonemap(values, method="reinhard")
    assert reinhard[0, 2] == 188  # 1 / (1 + 1) = 0.5
    assert list(reinhard[1]) == sorted(reinhard[1]) and reinhard[1, 2] < 256
    with pytest.raises(ValueError):
        lm.tonemap(values, method="nope")  # type: ignore[arg-type]


def test_png_written(tmp_path, corpus_file):
    Image = pytest.importorskip("PIL.Image")
    bsp = sourcebsp.open(corpus_file("tf2c_vipr_downfall.bsp"))
    for hdr in (False, True):
        atlas = lm.build_atlas(bsp, hdr=hdr)
        path = atlas.save_png(tmp_path / f"atlas{int(hdr)}.png")
        with Image.open(path) as image:
            assert image.size == (atlas.width, atlas.height) and image.mode == "RGB"
            pixels = np.asarray(image)
        np.testing.assert_array_equal(pixels, atlas.to_rgb8())
        assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 100


def test_png_replaces_a_file_only_when_whole(tmp_path, corpus_file, monkeypatch):
    pytest.importorskip("PIL.Image")
    atlas = lm.build_atlas(sourcebsp.open(corpus_file("tf2_test2.bsp")))
    path = tmp_path / "atlas.png"
    path.write_bytes(b"the user's picture")

    def fails(image):
        raise OSError("no space left")

    monkeypatch.setattr(lm, "encode_png", fails)
    with pytest.raises(OSError):
        atlas.save_png(path)
    assert path.read_bytes() == b"the user's picture" and [p.name for p in tmp_path.iterdir()] == ["atlas.png"]


def test_lightmap_past_the_lump_is_a_format_error(corpus_file):
    bsp = sourcebsp.open(corpus_file("tf2_mp_lobby.bsp"))
    faces = np.array(bsp.faces)
    lit = np.flatnonzero(faces["lightofs"] >= 0)[0]
    faces["lightofs"][lit] = len(bsp.lump_bytes(LumpId.LIGHTING)) - 4
    bsp.set_lump(LumpId.FACES, faces)
    with pytest.raises(sourcebsp.BspFormatError, match="runs past") as info:
        lm.build_atlas(bsp)
    assert info.value.offset == bsp.entry(LumpId.LIGHTING).fileofs + int(faces["lightofs"][lit])


def test_uv_in_runs_and_without_pixels(corpus_file):
    """UVs of more points than one run places equal the per-point formula; an atlas without
    pixels keeps its size and places the same UVs."""
    bsp = sourcebsp.open(corpus_file("tf2_test2.bsp"))
    atlas = lm.build_atlas(bsp, tonemapped=True)
    assert atlas is not None
    rng = np.random.default_rng(5)
    count = 3 * lm._UV_CHUNK + 17
    faces = rng.integers(0, len(atlas.rects), count)
    luxels = rng.uniform(-2, 40, (count, 2)).astype(np.float32)
    uv = atlas.uv(faces, luxels)
    rect = atlas.rects[faces]
    has = rect[:, 0] >= 0
    assert has.any() and not has.all()
    px = np.where(has[:, None], rect[:, :2] + np.clip(luxels, 0, np.maximum(rect[:, 2:] - 1, 0)) + 0.5,
                  atlas.white)
    np.testing.assert_array_equal(uv, (px / [atlas.width, atlas.height]).astype(np.float32))
    bare = atlas.without_pixels()
    assert (bare.width, bare.height) == (atlas.width, atlas.height) and bare.image.base.nbytes <= 8
    np.testing.assert_array_equal(bare.uv(faces, luxels), uv)

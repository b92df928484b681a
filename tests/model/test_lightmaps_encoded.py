"""Atlases built directly as 8-bit sRGB (``build_atlas(..., tonemapped=...)``)."""
from __future__ import annotations

import numpy as np
import pytest

import sourcebsp
from sourcebsp.model import lightmaps as lm


def test_tonemapped_atlas_equals_the_tone_mapped_linear_one(map_path):
    with sourcebsp.open(map_path) as bsp:
        for hdr in (False, True):
            linear = lm.build_atlas(bsp, hdr=hdr)
            if linear is None:
                assert lm.build_atlas(bsp, hdr=hdr, tonemapped=True) is None
                continue
            for method in (True, "clip", "reinhard"):
                encoded = lm.build_atlas(bsp, hdr=hdr, tonemapped=method)
                assert encoded is not None and encoded.image.dtype == np.uint8
                expected_method = ("reinhard" if hdr else "clip") if method is True else method
                assert encoded.tonemapped == expected_method
                np.testing.assert_array_equal(encoded.image, linear.to_rgb8(method=expected_method))
                np.testing.assert_array_equal(encoded.rects, linear.rects)
                assert encoded.white == linear.white
                np.testing.assert_array_equal(encoded.to_rgb8(), encoded.image)


def test_tonemapped_atlas_refuses_linear_uses(corpus_file):
    with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp")) as bsp:
        atlas = lm.build_atlas(bsp, tonemapped="clip")
    with pytest.raises(ValueError):
        atlas.to_rgb8(method="reinhard")
    with pytest.raises(ValueError):
        atlas.to_rgb8(exposure=2.0)
    with pytest.raises(ValueError):
        atlas.sample(np.array([[0.5, 0.5]]))


def test_tonemap_in_chunks_matches_whole_array_arithmetic():
    """The chunked, in-place tone mapping gives what the whole-array formula gives."""
    rng = np.random.default_rng(5)
    values = (rng.random((700, 900, 3)) ** 4 * 6 - 0.05).astype(np.float32)
    for method in ("clip", "reinhard"):
        for exposure in (1.0, 0.3, 2.5):
            v = np.maximum(values * np.float32(exposure), 0)
            if method == "reinhard":
                v = v / (1 + v)
            v = np.minimum(v, 1)
            srgb = np.where(v <= 0.0031308, v * 12.92, 1.055 * np.power(v, 1 / 2.4) - 0.055)
            expected = np.round(srgb * 255).astype(np.uint8)
            np.testing.assert_array_equal(lm.tonemap(values, method=method, exposure=exposure), expected)

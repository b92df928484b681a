"""Textures (VTF): one reader, its mipmap choices (the preview's and the export's) and its errors."""
from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from sourcebsp.content.vtf import read_vtf, srgb_to_linear
from sourcebsp.errors import BspFormatError, MissingExtraError

vtf_module = pytest.importorskip("srctools.vtf")
pytest.importorskip("PIL.Image")


def vtf_bytes(width: int, height: int, mipmaps: bool = True) -> bytes:
    """A ``width`` x ``height`` VTF whose every mipmap is one colour: its own index in red."""
    vtf = vtf_module.VTF(width, height, fmt=vtf_module.ImageFormats.RGBA8888)
    vtf.get().copy_from(bytes((0, 10, 20, 255)) * (width * height))
    if mipmaps:
        vtf.compute_mipmaps()
        for mip in range(1, vtf.mipmap_count):
            frame = vtf.get(mipmap=mip)
            frame.copy_from(bytes((mip * 10, 10, 20, 255)) * (frame.width * frame.height))
    out = io.BytesIO()
    vtf.save(out)
    return out.getvalue()


def test_mipmap_choices() -> None:
    texture = read_vtf(vtf_bytes(256, 64), "wide.vtf")
    assert (texture.width, texture.height, texture.mipmaps) == (256, 64, 6)
    assert [texture.mip_size(m) for m in range(4)] == [(256, 64), (128, 32), (64, 16), (32, 8)]
    # srctools stops at the mipmap whose shorter side is 2: 8 x 2, mipmap 5.
    # The export: the largest mipmap no wider and no taller than the size asked for.
    assert [texture.mip_at_most(s) for s in (1000, 256, 255, 64, 63, 1, 0)] == [0, 0, 1, 2, 3, 5, 5]
    # The preview: the least detail that still covers the size on both sides.
    assert [texture.mip_at_least(s) for s in (1000, 64, 32, 16, 15, 8, 1)] == [0, 0, 1, 2, 2, 3, 5]
    image = texture.rgba(2)
    assert image.mode == "RGBA" and image.size == (64, 16)
    assert np.asarray(image)[0, 0].tolist() == [20, 10, 20, 255]


def test_files_that_are_not_textures() -> None:
    with pytest.raises(BspFormatError, match="cannot read the texture junk.vtf"):
        read_vtf(b"VTF\x00" + b"\xff" * 60, "junk.vtf")
    with pytest.raises(BspFormatError):
        read_vtf(b"", "empty.vtf")
    cut = vtf_bytes(64, 64)
    texture = read_vtf(cut[: len(cut) - 1000], "cut.vtf")  # the header is whole, the largest mipmap is not
    with pytest.raises(BspFormatError, match="cannot decode the texture cut.vtf"):
        texture.rgba(0)


def test_a_cut_texture_is_drawn_in_its_average_colour() -> None:
    """It once stopped the preview with srctools' BufferError."""
    from sourcebsp.converters import render as rd
    from sourcebsp.examples import build_example_map
    from sourcebsp.examples.room import WALL_MATERIAL

    bsp = build_example_map()
    cut = vtf_bytes(64, 64)
    bsp.pakfile.add("materials/test/cut.vtf", cut[: len(cut) - 1000])
    bsp.pakfile.add(f"materials/{WALL_MATERIAL.lower()}.vmt", b'"LightmappedGeneric" { "$basetexture" "test/cut" }')
    result = rd.render(bsp, view="player", size=(64, 36))
    assert not result.textured and any("test/cut" in w and "could not be read" in w for w in result.warnings)


def test_without_srctools_the_extra_is_named(monkeypatch) -> None:
    for name in [n for n in sys.modules if n == "srctools" or n.startswith("srctools.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "srctools", None)
    with pytest.raises(MissingExtraError, match=r"reading textures needs srctools: pip install 'sourcebsp\[deps\]'"):
        read_vtf(b"VTF\x00")


def test_srgb_to_linear() -> None:
    values = np.array([0.0, 0.04045, 0.5, 1.0], np.float32)
    linear = srgb_to_linear(values)
    assert linear.dtype == np.float32
    np.testing.assert_allclose(linear, [0.0, 0.04045 / 12.92, 0.214041, 1.0], rtol=1e-5)

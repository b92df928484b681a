"""glb export memory: exporting a map from its path peaks within 4x the file size.

Measured with tracemalloc (numpy's buffers, liblzma's and zlib's allocations
included) from before the map is opened to after the ``.glb`` is written:
open, LZMA decompression, lump decoding, meshes, the lightmap atlas, its PNG,
the glTF JSON and the write -- what ``sourcebsp export MAP -o OUT.glb`` does.

Each map is exported once before the measured export: the first export of a
process imports modules (codecs, Pillow's plug-ins, lzma) and fills caches,
a cost of the process, not of the map.  That nothing else is
kept is checked too: after the export the traced memory is back near where
it started.

``FIXED_ALLOWANCE`` (512 KiB) is added to the bound for costs that do not
grow with the map: the work done in runs (texture coordinates in runs of
2048 corners at about 200 bytes each, atlas UVs in runs of 1024 points, the
lightmap fill in runs of at least 1024 pixels), liblzma's decoder state, the
pygltflib objects of a minimal scene.  It decides only for maps of a few
hundred kilobytes: the 34 KB tf2_test_physcollide peaks at 0.15 MiB (4.5x),
and x360_shack (215 KB, whose LZMA lumps decompress to 2.3x the file) at
1.12 MiB, 0.3 MiB over 4x.  Every map above 1 MiB stays under 3x.
(Pillow's copy of the atlas pixels and zlib's state are allocated outside
Python's allocator, which tracemalloc does not see; the export's own copy is
freed before Pillow encodes, which the last test checks.)
"""
from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

import sourcebsp

pytest.importorskip("pygltflib")
pytest.importorskip("PIL")

from sourcebsp.converters.gltf import export_glb, glb_bytes  # noqa: E402

FIXED_ALLOWANCE = 512 << 10
FILE_MULTIPLE = 4.0
# What may stay allocated after an export (interned strings, small caches of the libraries):
# the corpus maps leave under 10 KiB.
RESIDUAL_ALLOWANCE = 64 << 10


def _export_peak(path: Path, out: Path) -> tuple[int, int]:
    """Peak and residual traced memory of one export from the path, above the memory before it."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        export_glb(path, out)
        peak = tracemalloc.get_traced_memory()[1]
        gc.collect()  # pygltflib leaves reference cycles: garbage, not memory the export keeps
        current = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return peak - base, current - base


def test_glb_export_from_path_peak_memory(map_path: Path, tmp_path: Path) -> None:
    size = map_path.stat().st_size
    warm, out = tmp_path / "warm.glb", tmp_path / "out.glb"
    export_glb(map_path, warm)
    peak, residual = _export_peak(map_path, out)
    written = out.stat().st_size
    assert out.read_bytes() == warm.read_bytes()
    # The output's pieces exist in memory before they are written: a bound below them could never hold.
    assert peak >= written - FIXED_ALLOWANCE
    assert peak <= FILE_MULTIPLE * size + FIXED_ALLOWANCE, (
        f"{map_path.name}: export peak {peak / 2**20:.2f} MiB = {peak / size:.2f}x the {size / 2**20:.2f} MiB file")
    assert residual <= RESIDUAL_ALLOWANCE, f"{map_path.name}: the export kept {residual / 2**10:.0f} KiB"


def test_export_from_path_writes_what_a_decoded_map_gives(map_path: Path, tmp_path: Path) -> None:
    """The lean path (entities read one at a time, lumps decoded on demand, the file written in
    pieces) gives the bytes of an export of a map whose every lump is decoded."""
    out = tmp_path / "out.glb"
    export_glb(map_path, out)
    with sourcebsp.open(map_path) as bsp:
        bsp.decode_all()
        assert out.read_bytes() == glb_bytes(bsp)


def test_the_atlas_pixels_are_freed_before_the_png_is_encoded(corpus_file, tmp_path: Path, monkeypatch) -> None:
    """Pillow encodes its own copy of the pixels (which tracemalloc does not see): the export's
    copy is gone by then, so the encoder reuses its memory."""
    import weakref

    from sourcebsp.converters import gltf
    from sourcebsp.model.lightmaps import LightmapAtlas

    pixels: list[weakref.ref] = []
    encoded: list[bool] = []
    image_of, encode = LightmapAtlas.pillow_image, gltf.encode_png

    def pillow_image(atlas: LightmapAtlas, **options):
        pixels.append(weakref.ref(atlas.image))
        return image_of(atlas, **options)

    def encode_png(image) -> bytes:
        encoded.append(pixels[-1]() is None)
        return encode(image)

    monkeypatch.setattr(LightmapAtlas, "pillow_image", pillow_image)
    monkeypatch.setattr(gltf, "encode_png", encode_png)
    stats = export_glb(corpus_file("tf2c_vipr_downfall.bsp"), tmp_path / "out.glb")
    assert stats.lightmap == (1024, 512) and encoded == [True]


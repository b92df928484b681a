"""glb export memory: the export's own peak stays within 4x the map's file size.

Measured with tracemalloc (numpy's buffers included) above a map whose lumps
are already decoded, so the figure is the export's: meshes, the lightmap
atlas, the PNG and the GLB pieces, not the codecs' decoded lumps (an LZMA
lump's decompressor, parsed entities).  1 MiB is allowed on top for the
fixed costs that do not scale with the map (pygltflib objects, JSON text),
which only matter on maps of a few hundred kilobytes.
"""
from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

import sourcebsp

pytest.importorskip("pygltflib")
pytest.importorskip("PIL")

from sourcebsp.converters.gltf import glb_bytes  # noqa: E402

FIXED_ALLOWANCE = 1 << 20
FILE_MULTIPLE = 4.0


@pytest.fixture(scope="module", autouse=True)
def _warm_up(corpus_file) -> None:
    """First use of pygltflib and Pillow fills caches and imports plug-ins: not the export's memory."""
    glb_bytes(corpus_file("tf2_test2.bsp"))


def _export_peak(path: Path) -> tuple[int, int]:
    with sourcebsp.open(path) as bsp:
        bsp.decode_all()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            data = glb_bytes(bsp)
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    return peak, len(data)


def test_glb_export_peak_memory(map_path: Path) -> None:
    size = map_path.stat().st_size
    peak, written = _export_peak(map_path)
    # The result itself is part of the peak: a bound below it could never hold.
    assert peak >= written
    assert peak <= FILE_MULTIPLE * size + FIXED_ALLOWANCE, (
        f"{map_path.name}: export peak {peak / 2**20:.1f} MiB = {peak / size:.1f}x the {size / 2**20:.1f} MiB file")

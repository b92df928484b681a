"""Decompile memory: a map's VMF is made within 6x the file size plus 8 MiB.

Measured with tracemalloc around :func:`decompile_text` from the map's path,
after one decompile of the same map (the first of a process imports modules
and fills caches).  The allowance covers what does not grow with the brushes:
the VMF document's Python objects and its text, which for maps made mostly of
entities (``v42_rot_main.bsp``, 3073 of them in 0.8 MB: 11 MiB) outweigh the
file.  Without their runs, matching faces to sides took 68 MiB of
``css_de_rats.bsp``'s 72 MiB (9 MB file): this bound holds it to under 61.
"""
from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from sourcebsp.converters.vmf import decompile_text

FILE_MULTIPLE = 6.0
ALLOWANCE = 8 << 20


def test_decompile_peak_memory(map_path: Path) -> None:
    size = map_path.stat().st_size
    first, _ = decompile_text(map_path)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        text, _ = decompile_text(map_path)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert text == first
    assert peak >= len(text)  # the text itself was made while measuring: the bound is not vacuous
    assert peak <= FILE_MULTIPLE * size + ALLOWANCE, (
        f"{map_path.name}: decompile peak {peak / 2**20:.1f} MiB = {peak / size:.1f}x the {size / 2**20:.2f} MiB file")

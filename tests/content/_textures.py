"""VTF files built in code for the tests (written by srctools, which the tests that use them need)."""
from __future__ import annotations

import io


def vtf_bytes(color: tuple[int, int, int, int], size: int = 64) -> bytes:
    """A VTF of one colour with its mipmaps."""
    from srctools import vtf as vtf_module

    vtf = vtf_module.VTF(size, size, fmt=vtf_module.ImageFormats.RGBA8888)
    vtf.get().copy_from(bytes(color) * (size * size))
    vtf.compute_mipmaps()
    out = io.BytesIO()
    vtf.save(out)
    return out.getvalue()

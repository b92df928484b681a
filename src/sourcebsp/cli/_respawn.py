"""The CLI's Titanfall rBSP paths that remain: ``export`` and ``decompile`` of a map
:mod:`sourcebsp.respawn` reads (the other commands read every map through the one
:class:`~sourcebsp.protocols.MapReader` path).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedError
from ..opening import map_head
from ..respawn import is_respawn

if TYPE_CHECKING:
    from ..converters._common import Units


def is_rbsp(path: str | os.PathLike[str]) -> bool:
    """True when the file at ``path`` starts as a Titanfall or Titanfall 2 map (False when unreadable:
    the Source path then reports the error as for any map)."""
    try:
        return is_respawn(map_head(path))  # a .bsp.bz2 unpacked only as far as its first bytes
    except OSError:
        return False


def decompile(path: str | os.PathLike[str], output: str | os.PathLike[str], **options: Any) -> Any:
    """``decompile`` of a Titanfall map: its collision brushes and entities (see
    :mod:`sourcebsp.converters.vmf.respawn`); returns the decompile's statistics."""
    from ..converters.vmf.respawn import decompile_respawn

    return decompile_respawn(str(path), str(output), **options)


def export(source: str, output: str, *, suffix: str, units: "Units") -> int:
    """``export`` of an rBSP map: its meshes as ``.glb`` (OBJ and the Source options are not offered)."""
    if suffix != ".glb":
        raise UnsupportedError(f"a Titanfall map exports as .glb only, not {suffix}")
    from ..converters.gltf.respawn import export_respawn_glb

    stats = export_respawn_glb(source, output, units=units)
    print(f"{output}: {stats.meshes} meshes ({stats.primitives} primitives), {stats.triangles} triangles, "
          f"{stats.materials} materials, {stats.props} static props"
          + (" (empty nodes: Respawn's models are not read)" if stats.props else ""))
    return 0

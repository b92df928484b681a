"""The CLI's Titanfall rBSP path that remains: ``decompile`` of a map :mod:`sourcebsp.respawn`
reads (the other commands read every map through the one
:class:`~sourcebsp.protocols.MapReader` path).
"""
from __future__ import annotations

import os
from typing import Any

from ..opening import map_head
from ..respawn import is_respawn


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

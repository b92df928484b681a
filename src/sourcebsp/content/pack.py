"""Packing a map's custom content into its pakfile, as bspzip stores it.

What is packed: every dependency found outside the pakfile that is not stock
(the mod's own folder, its ``custom`` addons, ``--content`` folders), under
its lower-case name (the engine lower-cases pakfile names; Linux servers
find nothing else).  Compile-time files (``detail.vbsp``) are not packed.  Stock content (VPKs, folders outside the mod) is packed
only when asked.  Files already in the pakfile stay as they are.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ..codecs.pakfile import Pakfile
from ..lump_ids import LumpId
from ..protocols import MapReader
from .deps import Dependency, DependencyGraph

__all__ = ["PackPlan", "plan_pack", "apply_pack", "STREAMED"]

#: Sounds are streamed and shader caches memory-mapped straight out of the pak: always stored.
STREAMED = re.compile(r"^(sound/.*\.(wav|mp3|ogg)|shaders/.*\.vcs)$")


@dataclass
class PackPlan:
    """What packing would do: files to add (with where they come from), files found nowhere."""

    add: list[Dependency] = field(default_factory=list)
    missing: list[Dependency] = field(default_factory=list)
    skipped_stock: list[Dependency] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "packed": [{"name": d.path, "from": d.location.to_json() if d.location else None} for d in self.add],
            "missing": [{"name": d.path, "kind": d.kind} for d in self.missing],
            "stock_not_packed": len(self.skipped_stock),
        }


def plan_pack(graph: DependencyGraph, *, include_stock: bool = False) -> PackPlan:
    """Which dependencies packing adds to the pakfile."""
    plan = PackPlan()
    for dep in graph:
        location = dep.location
        if dep.compile_only:
            continue  # read by the compiler, not the engine
        if location is None:
            if ":" not in dep.path:  # names no script defines are not files to pack
                plan.missing.append(dep)
            continue
        if location.where == "pakfile":
            continue
        if location.stock and not include_stock:
            plan.skipped_stock.append(dep)
            continue
        plan.add.append(dep)
    return plan


def apply_pack(bsp: MapReader, graph: DependencyGraph, plan: PackPlan, *, lzma: bool = False) -> None:
    """Add the planned files to ``bsp``'s pakfile (stored, or LZMA when asked: sounds and shader
    caches stay stored)."""
    pak = bsp.lump_or_none(LumpId.PAKFILE, "pack files")
    if pak is None:
        pak = Pakfile()
        bsp.set_lump(LumpId.PAKFILE, pak)
    for dep in plan.add:
        assert dep.location is not None  # plan_pack only adds found files
        method: Literal["lzma", "stored"] = "lzma" if lzma and not STREAMED.match(dep.path) else "stored"
        pak.add(dep.path, graph.fs.read(dep.location), compression=method)

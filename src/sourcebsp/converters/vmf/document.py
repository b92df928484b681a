"""What every VMF builder shares, Source's (:mod:`~sourcebsp.converters.vmf.decompile`) and
Titanfall's (:mod:`~sourcebsp.converters.vmf.respawn`): the options, the statistics, and the
last step that gives the document its ids and counts what it holds (:func:`finish_document`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .solids import IdCounter
from .writer import VmfMap

__all__ = ["DecompileOptions", "DecompileStats", "finish_document"]

_ENTITY_SOLID_COLOR = "220 30 220"


@dataclass(frozen=True)
class DecompileOptions:
    props: bool = True  # static props -> prop_static
    overlays: bool = True  # overlays -> info_overlay
    cubemaps: bool = True  # cubemap samples -> env_cubemap
    detail_as_world: bool = False  # CONTENTS_DETAIL brushes stay in the world, not func_detail
    rotation_fix: bool = True  # turn rotated brush entities' solids, drop their angles
    ladders: bool = True  # CONTENTS_LADDER world brushes -> func_ladder
    visgroups: bool = True  # Hammer visgroups for what was rebuilt
    cameras: bool = True  # a Hammer camera at each player start
    visclusters: bool = False  # func_viscluster boxes around clusters only a func_viscluster explains
    io_format: str = "map"  # outputs' separator: "map" (as stored), "old" (commas, Hammer 4.x), "new" (ESC)


@dataclass
class DecompileStats:
    """What a decompile wrote, and what it could not."""

    world_solids: int = 0
    detail_solids: int = 0
    entity_solids: int = 0
    sides: int = 0
    brush_entities: int = 0
    point_entities: int = 0
    displacements: int = 0
    displacement_brushes_made: int = 0
    static_props: int = 0
    overlays: int = 0
    cubemaps: int = 0
    occluder_solids: int = 0
    areaportal_solids: int = 0
    #: Areaportal brushes given to an entity of the lump, by rule: "lump" (the AREAPORTALS entry on
    #: them), "order" (vbsp's numbering), "target" (next to the door the entity names), "references".
    areaportal_owners: dict[str, int] = field(default_factory=dict)
    ladders: int = 0
    skipped_brushes: list[int] = field(default_factory=list)  # BRUSHES rows not closed and convex
    restored_side_ids: int = 0
    restored_tool_textures: int = 0
    default_axes: int = 0
    #: Brush entities with ``angles``: (classname, targetname or model, rule) where rule is
    #: "rotated", "movedir" or "angles-zeroed" (see :func:`rotation_rule`), or "kept" without rotation_fix.
    entity_rotation: list[tuple[str, str, str]] = field(default_factory=list)
    #: What could not be rebuilt, and why.
    not_rebuilt: list[str] = field(default_factory=list)
    perpendicular_axes_fixed: int = 0  # sides whose texture axes were perpendicular to them
    sides_off_plane: int = 0  # BSP sides whose plane points are more than 1e-3 units off the BSP plane
    max_off_plane: float = 0.0
    #: BSP sides whose written points define a plane off their BSP plane by geometry.PLANE_RULE.
    sides_off_plane_rule: int = 0
    #: The side whose defined plane is farthest from its BSP plane (relative to the rule):
    #: {"side": VMF side id, "brush": BRUSHES row, "brushside": BRUSHSIDES row, "normal_error", "dist_error"}.
    worst_plane: dict[str, Any] | None = None
    bsp_brushes: int = 0  # rows of the BRUSHES lump
    cubemap_sides: int = 0  # sides named by env_cubemap "sides", from the materials vbsp patched
    cameras: int = 0
    visgroups: int = 0
    visclusters: int = 0  # func_viscluster entities rebuilt (with the visclusters option)
    problems: list[Any] | None = None  # compile-readiness problems (checks.Problem), None: not checked
    entity_classes: dict[str, int] = field(default_factory=dict)  # entities written, by class

    @property
    def solids(self) -> int:
        return self.world_solids + self.detail_solids + self.entity_solids


def finish_document(vmf: VmfMap, stats: DecompileStats) -> None:
    """Number the document (entities keep a unique ``hammerid``, the rest and every solid get new
    ids) and fill ``stats``' counts of sides, solids and entities."""
    stats.sides = _number(vmf)
    _count(vmf, stats)


def _number(vmf: VmfMap) -> int:
    """Give entities their ``hammerid`` (when unique) or new ids, and solids new ids; returns the side count."""
    seen: set[int] = {1}
    for entity in vmf.entities:
        if entity.id and entity.id not in seen:
            seen.add(entity.id)
        else:
            entity.id = 0
    ids = IdCounter(seen, max(seen) + 1)
    for entity in vmf.entities:
        if not entity.id:
            entity.id = ids.take()
    sides = 0
    for solid in vmf.iter_solids():
        solid.id = ids.take()
        sides += len(solid.sides)
    for entity in vmf.entities:
        if entity.solids:
            entity.color = _ENTITY_SOLID_COLOR
    return sides


def _count(vmf: VmfMap, stats: DecompileStats) -> None:
    classes: dict[str, int] = {}
    for e in vmf.entities:
        classes[e.classname] = classes.get(e.classname, 0) + 1
    stats.entity_classes = dict(sorted(classes.items()))
    stats.world_solids = len(vmf.world.solids)
    stats.detail_solids = sum(len(e.solids) for e in vmf.entities if e.classname == "func_detail")
    stats.entity_solids = sum(len(e.solids) for e in vmf.entities if e.classname != "func_detail")
    stats.brush_entities = sum(1 for e in vmf.entities if e.solids)

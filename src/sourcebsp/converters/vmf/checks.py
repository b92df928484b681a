"""Compile-readiness of a VMF document: the rules Hammer and vbsp hold a map to.

:func:`check_vmf` lists every rule a :class:`~sourcebsp.converters.vmf.writer.VmfMap`
breaks (an empty list: the map is ready to open and compile):

* ``solid-sides``: a solid has at least 4 sides;
* ``solid-duplicate-plane``: no two sides of a solid on one plane (normals
  within 1e-4, distances within 0.01);
* ``solid-open``: the planes of the solid (from the written plane points)
  close a convex volume in which every side has an area (no side is
  redundant, none reaches past :data:`~sourcebsp.model.brushes.BIG`);
* ``texture-axis-perpendicular``: the projection normal ``u x v`` is not
  perpendicular to the side (Hammer's "texture axis perpendicular to face");
* ``overlay-sides``: an ``info_overlay`` names at most :data:`MAX_OVERLAY_SIDES`
  sides (Hammer's limit), and each exists;
* ``cubemap-sides``: each side an ``env_cubemap`` names exists;
* ``disp-power``: a displacement's power is 2, 3 or 4;
* ``ids``: entity and solid ids are unique (one counter), and side ids are unique.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ...model.brushes import BIG, clip_brushes
from .geometry import WRITTEN_DECIMALS, defined_planes
from .textures import perpendicular_axes
from .writer import VmfMap, format_number

__all__ = ["Problem", "check_vmf", "MAX_OVERLAY_SIDES", "RULES"]

MAX_OVERLAY_SIDES = 64
RULES = ("solid-sides", "solid-duplicate-plane", "solid-open", "texture-axis-perpendicular", "overlay-sides",
         "cubemap-sides", "disp-power", "ids")
#: Hammer reads plane points and axes as written: six decimals.
_WRITTEN_DECIMALS = WRITTEN_DECIMALS


@dataclass(frozen=True)
class Problem:
    """One broken rule: its name, where (an entity, solid or side id) and what."""

    rule: str
    where: str
    detail: str


def _written(values: np.ndarray) -> np.ndarray:
    """Numbers as Hammer reads them back from the text."""
    return np.round(np.asarray(values, np.float64), _WRITTEN_DECIMALS)


def _ids(text: str | None) -> list[int]:
    out = []
    for part in (text or "").split():
        if part.lstrip("-").isdigit():
            out.append(int(part))
    return out


def check_vmf(vmf: VmfMap) -> list[Problem]:
    """Every compile-readiness rule the document breaks (see the module documentation)."""
    problems: list[Problem] = []
    solids = list(vmf.iter_solids())
    sides = [side for solid in solids for side in solid.sides]
    # ---- solids ----
    for solid in solids:
        if len(solid.sides) < 4:
            problems.append(Problem("solid-sides", f"solid {solid.id}", f"{len(solid.sides)} sides"))
    if sides:
        normal, dist = defined_planes(np.array([s.points for s in sides]), _WRITTEN_DECIMALS)
        length = np.linalg.norm(normal, axis=1)
        owner = np.repeat(np.arange(len(solids)), [len(s.sides) for s in solids])
        keep, _, points = clip_brushes(normal, dist, owner, len(solids))
        far = np.abs(points).max(initial=0.0) >= BIG / 2
        bad_solid = np.zeros(len(solids), bool)
        np.logical_or.at(bad_solid, owner, ~keep | (length <= 0))
        for k in np.flatnonzero(bad_solid).tolist():
            dup = _duplicate_planes(normal[owner == k], dist[owner == k])
            rule, detail = (("solid-duplicate-plane", "two sides on one plane") if dup else
                            ("solid-open", "a side has no area: the planes do not close the solid"))
            problems.append(Problem(rule, f"solid {solids[k].id}", detail))
        if far:
            problems.append(Problem("solid-open", "map", "a solid reaches past the map's bounds (not closed)"))
        u = _written(np.array([s.uaxis[:3] for s in sides]))
        v = _written(np.array([s.vaxis[:3] for s in sides]))
        for k in np.flatnonzero(perpendicular_axes(u, v, normal, 1e-4)).tolist():
            problems.append(Problem("texture-axis-perpendicular", f"side {sides[k].id}", "u x v lies in the side"))
    for side in sides:
        if side.disp is not None and not 2 <= side.disp.power <= 4:
            problems.append(Problem("disp-power", f"side {side.id}", f"power {side.disp.power}"))
    # ---- ids ----
    object_ids = Counter([vmf.world.id] + [e.id for e in vmf.entities] + [s.id for s in solids])
    side_ids = Counter(side.id for side in sides)
    for ident, count in object_ids.items():
        if count > 1 or ident <= 0:
            problems.append(Problem("ids", f"id {ident}", f"used by {count} entities or solids"))
    for ident, count in side_ids.items():
        if count > 1 or ident <= 0:
            problems.append(Problem("ids", f"side id {ident}", f"used by {count} sides"))
    # ---- sides named by entities ----
    for entity in vmf.entities:
        cls = entity.classname.casefold()
        if cls not in ("info_overlay", "env_cubemap"):
            continue
        named = _ids(entity.get("sides"))
        rule = "overlay-sides" if cls == "info_overlay" else "cubemap-sides"
        if cls == "info_overlay" and len(named) > MAX_OVERLAY_SIDES:
            problems.append(Problem(rule, f"entity {entity.id}", f"{len(named)} sides (at most {MAX_OVERLAY_SIDES})"))
        missing = [i for i in named if i not in side_ids]
        if missing:
            problems.append(Problem(rule, f"entity {entity.id}",
                                    "no side " + " ".join(format_number(i) for i in missing[:8])))
    return problems


def _duplicate_planes(normal: np.ndarray, dist: np.ndarray) -> bool:
    close_n = np.all(np.abs(normal[:, None] - normal[None]) < 1e-4, axis=2)
    close_d = np.abs(dist[:, None] - dist[None]) < 0.01
    same = close_n & close_d
    np.fill_diagonal(same, False)
    return bool(same.any())

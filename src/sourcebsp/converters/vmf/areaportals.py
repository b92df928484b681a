"""Which ``func_areaportal`` owns which areaportal brush of a compiled map.

vbsp moves each areaportal entity's one brush into the world
(``CONTENTS_AREAPORTAL``) and leaves the entity a ``portalnumber``.  The
owner of a brush comes, in order of trust, from:

1. the AREAPORTALS lump: the entry lying on one of the brush's sides
   carries the portal number (:func:`areaportal_keys`);
2. vbsp's order: it numbers areaportal entities 1, 2, ... in the order of
   the entity lump and appends each one's brush to the end of the world's
   brushes as it reads the entity (SDK 2013 ``map.cpp``,
   ``MoveBrushesToWorld``), so when there are as many areaportal brushes as
   entities numbered 1..N, the k-th brush (BRUSHES order) is portal k's.
   A proposal the entity's ``target`` contradicts (the brush more than
   :data:`TARGET_REACH` from every entity the target names) is not taken;
3. the entity's ``target``: an areaportal closes a doorway, its ``target``
   names the door (``func_areaportalwindow``: the fade brush), so its brush
   is the one touching that entity's model or nearest it within
   :data:`TARGET_REACH` units;
4. with no target, the nearest brush to the entities whose outputs name it
   (the door or trigger that opens it).

Every brush goes to one entity at most.  An entity whose nearest brushes are
equally near (within :data:`TIE`), or a brush two entities claim equally,
is left out and reported with the reason; no brush is ever given twice.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...codecs.entities import Output
from ...lump_ids import LumpId
from ...model.brushes import BrushSet
from ...numeric import floats
from ...protocols import MapReader

__all__ = ["AREAPORTAL_CLASSES", "TARGET_REACH", "TIE", "PortalOwners", "areaportal_keys", "areaportal_owners",
           "entity_boxes"]

#: The classes vbsp numbers as area portals (``IsAreaPortal``).
AREAPORTAL_CLASSES = frozenset({"func_areaportal", "func_areaportalwindow"})
#: How far (units, between bounding boxes) an areaportal brush may lie from the door its entity names.
TARGET_REACH = 8.0
#: Distances closer than this (units) do not tell two candidates apart.
TIE = 0.5
_OUTPUT_FIELDS = re.compile("[,\x1b]")


def areaportal_keys(bsp: MapReader, brushes: BrushSet, rows: list[int]) -> dict[int, int]:
    """Portal key (``portalnumber``) of each areaportal brush, by the AREAPORTALS entry on one of its sides."""
    portals = bsp.lump_or_none(LumpId.AREAPORTALS)
    verts = bsp.lump_or_none(LumpId.CLIPPORTALVERTS)
    out: dict[int, int] = {}
    if portals is None or verts is None or not rows:
        return out
    mins, maxs = brushes.bounds()
    pts = verts["point"].astype(np.float64)
    for p in portals:
        first, num = int(p["first_clip_portal_vert"]), int(p["num_clip_portal_verts"])
        if num < 3 or first < 0 or first + num > len(pts) or int(p["portal_key"]) <= 0:
            continue
        centre = pts[first : first + num].mean(axis=0)
        pn = int(p["planenum"])
        for b in rows:
            if b in out:
                continue
            planes = brushes.planenum[brushes.sides_of(b)]
            inside = np.all(centre >= mins[b] - 0.5) and np.all(centre <= maxs[b] + 0.5)
            if inside and (np.any(planes == pn) or np.any(planes == (pn ^ 1))):
                out[b] = int(p["portal_key"])
    return out


@dataclass
class PortalOwners:
    """The entity (index into the entity list) owning each areaportal brush, and what stayed unresolved."""

    owner: dict[int, int] = field(default_factory=dict)  # BRUSHES row -> entity index
    rule: dict[int, str] = field(default_factory=dict)  # BRUSHES row -> "order", "target" or "references"
    unresolved: dict[int, str] = field(default_factory=dict)  # entity index -> why it got no brush


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def _gaps(lo: np.ndarray, hi: np.ndarray, box_lo: np.ndarray, box_hi: np.ndarray) -> np.ndarray:
    """Distance from each box ``(lo, hi)`` (rows) to the box ``(box_lo, box_hi)``; 0 where they touch."""
    gap = np.maximum(np.maximum(box_lo - hi, lo - box_hi), 0.0)
    out: np.ndarray = np.linalg.norm(gap, axis=1)
    return out


def entity_boxes(bsp: MapReader, entities: list[Any],
                 placement: dict[int, tuple[np.ndarray, np.ndarray]]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """World bounds of each entity with a place: its brush model's box (MODELS, placed by
    ``placement[model] = (origin, rotation)``), else the point of its ``origin``."""
    models = bsp.lump_or_none(LumpId.MODELS)
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for i, e in enumerate(entities):
        m = e.model_index
        if m is not None and models is not None and 0 < m < len(models) and m in placement:
            lo, hi = floats(models["mins"][m]), floats(models["maxs"][m])
            origin, rotation = placement[m]
            with np.errstate(invalid="ignore", over="ignore"):  # a damaged box: not finite, left out below
                corners = np.array(np.meshgrid(*zip(lo, hi))).reshape(3, -1).T @ rotation.T + origin
            if np.all(np.isfinite(corners)):
                out[i] = (corners.min(axis=0), corners.max(axis=0))
            continue
        try:
            point = np.array([float(v) for v in (e.get("origin") or "").split()])
        except ValueError:
            continue
        if point.shape == (3,) and np.all(np.isfinite(point)):
            out[i] = (point, point)
    return out


def _referrers(entities: list[Any]) -> dict[str, list[int]]:
    """Per targetname (case-folded), the entities whose outputs name it."""
    out: dict[str, list[int]] = {}
    for i, e in enumerate(entities):
        for key, value in e.items():
            parsed = Output.parse(key, value)
            if parsed is not None:
                target = _OUTPUT_FIELDS.split(value, 1)[0].strip().casefold()
                if target and i not in out.setdefault(target, []):
                    out[target].append(i)
    return out


def _order_proposals(entities: list[Any], portals: list[int], rows: list[int]) -> dict[int, int]:
    """vbsp's order: the k-th areaportal brush is the brush of the entity numbered k (see the module)."""
    numbers = [_int(entities[i].get("portalnumber")) for i in portals]
    if len(rows) != len(portals) or sorted(n or 0 for n in numbers) != list(range(1, len(portals) + 1)):
        return {}
    return {i: rows[n - 1] for i, n in zip(portals, numbers) if n}


def areaportal_owners(entities: list[Any], rows: list[int], taken: dict[int, int], lo: np.ndarray, hi: np.ndarray,
                      boxes: dict[int, tuple[np.ndarray, np.ndarray]]) -> PortalOwners:
    """The owner of each areaportal brush the AREAPORTALS lump left without one.

    ``rows``: every world areaportal brush (BRUSHES order); ``taken``: those
    the lump gave a portal key, with the key; ``lo`` / ``hi``: world bounds
    of each brush (BRUSHES rows); ``boxes``: world bounds of each entity
    (index into ``entities``) that has a place (its model's box, or its origin).
    """
    result = PortalOwners()
    portals = [i for i, e in enumerate(entities) if (e.classname or "").casefold() in AREAPORTAL_CLASSES]
    keyed = set(taken.values())
    waiting = [i for i in portals if _int(entities[i].get("portalnumber")) not in keyed]
    free = [r for r in rows if r not in taken]
    if not waiting or not free:
        return result
    by_name: dict[str, list[int]] = {}
    for i, e in enumerate(entities):
        if name := (e.get("targetname") or "").casefold():
            by_name.setdefault(name, []).append(i)
    referrers = _referrers(entities)
    free_rows = np.array(free, np.int64)
    position = {r: k for k, r in enumerate(free)}
    order = {} if taken else _order_proposals(entities, portals, rows)
    # Per entity: its candidates as (tier, brush positions in `free` best first, rule), and the
    # distance of every free brush from what it names (its target's entities, or its referrers).
    wants: dict[int, list[tuple[int, list[int], str]]] = {}
    near: dict[int, np.ndarray] = {}
    why_none: dict[int, str] = {}
    for i in waiting:
        e = entities[i]
        target = (e.get("target") or "").casefold()
        name = (e.get("targetname") or "").casefold()
        places = [j for j in by_name.get(target, []) if j != i and j in boxes] if target else \
            [j for j in referrers.get(name, []) if j in boxes] if name else []
        d = (np.min([_gaps(lo[free_rows], hi[free_rows], *boxes[j]) for j in places], axis=0) if places
             else np.zeros(len(free)))
        near[i] = d
        options: list[tuple[int, list[int], str]] = []
        k = position.get(order.get(i, -1), -1)
        if k >= 0:
            if not (target and places) or d[k] <= TARGET_REACH:
                options.append((0, [k], "order"))
        ranked = np.argsort(d, kind="stable").tolist()
        if target and places:
            options.append((1, [k for k in ranked if d[k] <= TARGET_REACH], "target"))
            if d.min() > TARGET_REACH:
                why_none[i] = f"no areaportal brush within {TARGET_REACH:g} units of its target {target!r}"
        elif target:
            why_none[i] = f"its target {target!r} names no entity with a place"
        elif places:
            options.append((2, ranked, "references"))
        else:
            why_none[i] = "no target, and no entity's outputs name it"
        wants[i] = options
    _assign(waiting, wants, near, free, result, why_none)
    return result


def _assign(waiting: list[int], wants: dict[int, list[tuple[int, list[int], str]]], near: dict[int, np.ndarray],
            free: list[int], result: PortalOwners, why_none: dict[int, str]) -> None:
    """Give brushes to entities, surest rule first, leaving out (and reporting) what stays ambiguous.

    Each round, per rule: every entity still waiting names its nearest open
    brush; a brush named by several goes to the nearest of them (a tie: to
    none); after a round that gave anything the rules start over, so what
    one entity took settles another's choice.  Rounds cost entities x
    candidates each, and there are at most as many as brushes given.
    """
    owned: set[int] = set()  # positions in `free` given away
    done: set[int] = set()
    ambiguous: dict[int, str] = {}
    progress = True
    while progress:
        progress = False
        ambiguous.clear()
        for tier in (0, 1, 2):
            claims: dict[int, list[tuple[float, int, str]]] = {}
            for i in waiting:
                if i in done:
                    continue
                for t, ranked, rule in wants[i]:
                    if t != tier:
                        continue
                    open_ = (k for k in ranked if k not in owned)
                    best = next(open_, None)
                    if best is None:
                        continue
                    d = float(near[i][best])
                    ties = 1
                    for k in open_:
                        if near[i][k] - d > TIE:
                            break
                        ties += 1
                    if tier and ties > 1:
                        ambiguous[i] = f"{ties} areaportal brushes equally near its {rule}"
                    else:
                        claims.setdefault(best, []).append((d, i, rule))
            for best, claimants in claims.items():
                claimants.sort()
                d, i, rule = claimants[0]
                tied = [j for dj, j, _ in claimants if dj - d <= TIE]
                if tier and len(tied) > 1:
                    for j in tied:
                        ambiguous[j] = f"an areaportal brush as near to {len(tied)} entities' {rule}s"
                    continue
                owned.add(best)
                done.add(i)
                result.owner[free[best]] = i
                result.rule[free[best]] = rule
                progress = True
            if progress:
                break
    for i in waiting:
        if i not in done:
            result.unresolved[i] = (ambiguous.get(i) or why_none.get(i)
                                    or "every areaportal brush near it went to another entity")

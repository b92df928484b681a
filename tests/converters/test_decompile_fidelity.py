"""Decompile fidelity on every corpus map, measured against the BSP's own lumps.

Each written side is traced back to a BSP plane by its three plane points
(srctools' parse of the VMF text, planes looked up in the PLANES lump with
plain numpy, no decompiler code): the points and the solid's corners (by
vertex enumeration of the written planes) must lie within 1e-3 units of
that plane.  A solid of a brush entity is first moved back into its model's
space: by the entity's ``origin``, and by its ``angles`` when the VMF
dropped them (the decompiler turned the solids).  BSP brushes are then
found by their set of planes.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np

import sourcebsp
from sourcebsp.lump_ids import LumpId

from ._vmf_reference import polygons, side_plane
from .test_decompile import _decompiled, _parsed

ON_PLANE = 1e-3  # the acceptance tolerance, in map units
LADDER, AREAPORTAL = 0x20000000, 0x8000  # bspflags.h CONTENTS_LADDER, CONTENTS_AREAPORTAL
#: Entities whose solids the decompiler made (not BSP brushes).
MADE = {"func_occluder"}


def _rotation(angles: np.ndarray) -> np.ndarray:
    """Source's AngleMatrix: Rz(yaw) Ry(pitch) Rx(roll), written out independently."""
    p, y, r = np.radians(angles)
    rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    ry = np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
    rx = np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]])
    return rz @ ry @ rx


def _numbers(text: str | None) -> np.ndarray | None:
    try:
        v = np.array([float(x) for x in (text or "").split()])
    except ValueError:
        return None
    return v if len(v) == 3 else None


class _Planes:
    """The PLANES lump, searchable by (normal, dist) within a tolerance."""

    STEP_N, STEP_D = 0.05, 4.0

    def __init__(self, normal: np.ndarray, dist: np.ndarray) -> None:
        self.normal, self.dist = normal, dist
        self.buckets: dict[tuple[int, ...], list[int]] = {}
        keys = np.floor(np.c_[normal / self.STEP_N, dist / self.STEP_D]).astype(np.int64)
        for i, k in enumerate(map(tuple, keys.tolist())):
            self.buckets.setdefault(k, []).append(i)

    @functools.cached_property
    def canonical(self) -> np.ndarray:
        """Per plane, the lowest index of the planes equal to it within 1e-3 (normal) and 0.01 (dist).

        vbsp keeps some planes that far apart; a brush is found by its planes up to that.
        """
        return np.array([min(self.near(n, d, 1e-3, 0.01), default=i)
                         for i, (n, d) in enumerate(zip(self.normal, self.dist))], np.int64)

    def near(self, n: np.ndarray, d: float, tol_n: float = 1e-2, tol_d: float = 0.5) -> list[int]:
        """Every plane within the tolerances of ``(n, d)``."""
        value = np.r_[n / self.STEP_N, d / self.STEP_D]
        reach = np.r_[[tol_n / self.STEP_N] * 3, tol_d / self.STEP_D]
        lo, hi = np.floor(value - reach).astype(int), np.floor(value + reach).astype(int)
        out = []
        for a in range(lo[0], hi[0] + 1):
            for b in range(lo[1], hi[1] + 1):
                for c in range(lo[2], hi[2] + 1):
                    for e in range(lo[3], hi[3] + 1):
                        out += [i for i in self.buckets.get((a, b, c, e), ())
                                if np.abs(self.normal[i] - n).max() <= tol_n and abs(self.dist[i] - d) <= tol_d]
        return out


@functools.lru_cache(maxsize=None)
def _bsp_facts(path: Path):
    with sourcebsp.open(path) as bsp:
        planes = bsp.planes
        normal = planes["normal"].astype(np.float64)
        dist = planes["dist"].astype(np.float64)
        has_brushes = bsp.entry(LumpId.BRUSHES).filelen > 0
        brushes = np.array(bsp.brushes) if has_brushes else None
        sides = np.array(bsp.brushsides) if has_brushes else None
        entities = [e for e in bsp.entities if e.classname != "worldspawn"] if bsp.entry(LumpId.ENTITIES).filelen \
            else []
    plane_index = _Planes(normal, dist)
    canonical = plane_index.canonical
    sets = []
    if brushes is not None:
        for b in brushes:
            rows = sides[int(b["firstside"]) : int(b["firstside"]) + int(b["numsides"])]
            sets.append(frozenset(int(canonical[pn]) for pn, bevel in zip(rows["planenum"], rows["bevel"])
                                  if not bevel and 0 <= pn < len(canonical)))
    contents = brushes["contents"].astype(np.int64) if brushes is not None else np.zeros(0, np.int64)
    return plane_index, sets, contents, entities


def _solids_in_model_space(path: Path):
    """(classname, solid, origin, rotation) of every written solid; the transform leads to model space."""
    vmf = _parsed(path)
    _, _, _, bsp_entities = _bsp_facts(path)
    out = [("world", s, np.zeros(3), np.eye(3)) for s in vmf.brushes]
    # The lump's entities come first in the VMF, in order (test_decompile checks it).
    for i, ent in enumerate(vmf.entities):
        cls = ent["classname"]
        origin, rotation = np.zeros(3), np.eye(3)
        if i < len(bsp_entities) and bsp_entities[i].model_index:
            compiled = bsp_entities[i]
            origin = _numbers(compiled.get("origin"))
            origin = np.zeros(3) if origin is None else origin
            angles = _numbers(compiled.get("angles"))
            if angles is not None and np.any(angles != 0) and not ent["angles"]:
                rotation = _rotation(angles)
        for solid in ent.solids:
            out.append((cls, solid, origin, rotation))
    return out


def _model_planes(solid, origin: np.ndarray, rotation: np.ndarray):
    """Plane points and planes of a solid's sides, in its model's space."""
    pts = np.array([[tuple(p) for p in side.planes] for side in solid.sides], float)
    local = (pts - origin) @ rotation  # R^T (p - o), row vectors
    normals, dists = [], []
    for p in local:
        n = np.cross(p[2] - p[0], p[1] - p[0])
        n /= np.linalg.norm(n)
        normals.append(n)
        dists.append(float(n @ p[0]))
    return local, np.array(normals), np.array(dists)


@functools.lru_cache(maxsize=None)
def _traced(path: Path):
    """Per written BSP-brush solid: (classname, BSP plane of each side (-1: none), points error, corner error,
    the planes each side lies on)."""
    planes, _, _, _ = _bsp_facts(path)
    out = []
    for cls, solid, origin, rotation in _solids_in_model_space(path):
        if cls in MADE or any(s.disp_power for s in solid.sides):
            continue
        local, normals, dists = _model_planes(solid, origin, rotation)
        normals32, dists32 = _vbsp_planes(solid, origin, rotation)
        # Corners within 1e-4 of a written plane count as its own: a looser tolerance would take
        # in the neighbours of near-coplanar sides (37-sided cylinders) and measure them instead.
        corners = polygons(normals, dists, 1e-4)
        found: list[int] = []
        options: list[frozenset[int]] = []
        defined: list[tuple[float, float]] = []
        read32: list[tuple[float, float]] = []
        point_err, corner_err = 0.0, 0.0
        for k, (n, d) in enumerate(zip(normals, dists)):
            # vbsp may keep planes a few thousandths apart: the side's is the one its points lie on.
            errors = [(float(np.abs(local[k] @ planes.normal[i] - planes.dist[i]).max()), i) for i in planes.near(n, d)]
            if not errors:
                found.append(-1)
                options.append(frozenset())
                defined.append((np.inf, np.inf))
                read32.append((np.inf, np.inf))
                continue
            err, pn = min(errors)
            # A side whose points lie on two near-twin planes (a short side of whole-number corners)
            # is each one's: its defined plane must be one of them by the rule.
            defined.append(min((_defined_error(n, d, planes.normal[i], planes.dist[i])
                                for e, i in errors if e <= ON_PLANE), key=lambda x: max(x[0] / RULE_NORMAL,
                                                                                         x[1] / RULE_DIST)))
            # vbsp's own reading (floats) must find one of those planes within its own tolerances.
            read32.append(min((float(np.abs(normals32[k] - planes.normal[i]).max()) / VBSP_NORMAL,
                               abs(float(dists32[k]) - float(planes.dist[i])) / VBSP_DIST)
                              for e, i in errors if e <= ON_PLANE))
            found.append(int(planes.canonical[pn]))
            # Planes that meet within a side are all its plane there (vbsp keeps such near twins).
            options.append(frozenset(int(planes.canonical[i]) for e, i in errors if e <= ON_PLANE) | {found[-1]})
            bn, bd = planes.normal[pn], planes.dist[pn]
            point_err = max(point_err, err)
            if len(corners[k]):
                corner_err = max(corner_err, float(np.abs(corners[k] @ bn - bd).max()))
        out.append((cls, found, point_err, corner_err, options, defined, read32))
    return out


#: vbsp's plane lookup (SDK 2013 map.cpp FindFloatPlane): normals within 1e-5, distances within 0.01.
VBSP_NORMAL, VBSP_DIST = 1e-5, 0.01


def _vbsp_planes(solid, origin: np.ndarray, rotation: np.ndarray):
    """The planes vbsp makes of a solid's sides: points read as floats (``Vector planepts[3]``),
    ``(p0 - p1) x (p2 - p1)`` normalized and ``normal . p0`` in float, then moved into the model."""
    pts = np.array([[tuple(p) for p in side.planes] for side in solid.sides], float).astype(np.float32)
    n = np.cross(pts[:, 0] - pts[:, 1], pts[:, 2] - pts[:, 1])
    n = (n / np.linalg.norm(n, axis=1, keepdims=True)).astype(np.float32)
    d = np.einsum("ij,ij->i", n, pts[:, 0]).astype(np.float32).astype(float)
    n = n.astype(float)
    return n @ rotation, d - n @ origin


#: Hammer and vbsp read the plane the three points define: its unit normal within 1e-5 per
#: component of the BSP plane's, its distance within 1e-3 (issue 28).
RULE_NORMAL, RULE_DIST = 1e-5, 1e-3


def _defined_error(n: np.ndarray, d: float, bsp_n: np.ndarray, bsp_d: float) -> tuple[float, float]:
    """(normal, distance) error of a defined plane against a BSP plane read both ways: as stored, and
    scaled to a unit normal (a float normal is unit only to a few 1e-7, a few thousandths of distance
    far from the origin)."""
    length = float(np.linalg.norm(bsp_n))
    err_n = max(float(np.abs(n - bsp_n).max()), float(np.abs(n - bsp_n / length).max()))
    return err_n, max(abs(d - bsp_d), abs(d - bsp_d / length))


def test_every_side_lies_on_its_bsp_plane(map_path):
    traced = _traced(map_path)
    unfound = sum(1 for t in traced for pn in t[1] if pn < 0)
    assert unfound == 0
    assert max((t[2] for t in traced), default=0.0) <= ON_PLANE
    assert max((t[3] for t in traced), default=0.0) <= ON_PLANE


def test_every_side_defines_its_bsp_plane(map_path):
    """The plane the written points define (srctools' parse: doubles, as Hammer reads them), not the
    points' distances: vbsp looks the plane up by it, and a plane of points close together tilts."""
    traced = _traced(map_path)
    errors = np.array([e for t in traced for e in t[5]]).reshape(-1, 2)
    off = (errors[:, 0] > RULE_NORMAL) | (errors[:, 1] > RULE_DIST)
    assert len(errors) > 0 and off.sum() == 0, (int(off.sum()), errors.max(axis=0).tolist())


def test_vbsp_reading_floats_finds_every_side_plane(map_path):
    """vbsp reads plane points as floats: far from the origin a float holds a point only to a
    thousandth, so points close together would define a plane it does not find."""
    traced = _traced(map_path)
    ratios = np.array([r for t in traced for r in t[6]]).reshape(-1, 2)
    assert len(ratios) > 0 and np.all(ratios <= 1.0), ratios.max(axis=0).tolist()


def test_the_report_names_the_worst_side(map_path):
    """``decompile --report``'s ``sides.worst_plane``: a written side, its errors the ones measured here
    from the VMF text against the plane of the BRUSHSIDES row it names."""
    from sourcebsp.converters.vmf import decompile_report

    report = decompile_report(_decompiled(map_path)[1])["sides"]
    worst = report["worst_plane"]
    planes, _, _, _ = _bsp_facts(map_path)
    if worst is None:
        assert not planes.normal.size or not _traced(map_path)
        return
    assert report["off_plane_rule"] == 0
    assert worst["normal_error"] <= RULE_NORMAL and worst["dist_error"] <= RULE_DIST
    with sourcebsp.open(map_path) as bsp:
        pn = int(bsp.brushsides["planenum"][worst["brushside"]])
    for _, solid, origin, rotation in _solids_in_model_space(map_path):
        ids = [side.id for side in solid.sides]
        if worst["side"] in ids:
            _, normals, dists = _model_planes(solid, origin, rotation)
            k = ids.index(worst["side"])
            err_n, err_d = _defined_error(normals[k], dists[k], planes.normal[pn], planes.dist[pn])
            assert abs(err_n - worst["normal_error"]) <= 1e-9 and abs(err_d - worst["dist_error"]) <= 1e-6
            return
    raise AssertionError(f"side {worst['side']} is not in the VMF")


def test_no_texture_axis_is_perpendicular_to_its_face(map_path):
    """Hammer's check: the projection normal u x v against the side's normal."""
    vmf = _parsed(map_path)
    bad = 0
    for solid in list(vmf.brushes) + [s for e in vmf.entities for s in e.solids]:
        for side in solid.sides:
            n, _ = side_plane(side)
            proj = np.cross(tuple(side.uaxis.vec()), tuple(side.vaxis.vec()))
            length = np.linalg.norm(proj)
            if length < 1e-9 or abs(proj @ n) / length <= 1e-4:
                bad += 1
    assert bad == 0


def _covers(options: list[frozenset[int]], brush_set: frozenset[int]) -> bool:
    """Each side lies on a plane of the brush, and the sides take every plane of it but sides with no area."""
    if not all(o & brush_set for o in options):
        return False
    taken = frozenset().union(*options) & brush_set
    return len(options) >= 4 and len(taken) >= len(options)


def test_bsp_brushes_are_found_by_their_planes(map_path):
    _, sets, contents, _ = _bsp_facts(map_path)
    traced = _traced(map_path)
    by_set: dict[frozenset[int], list[int]] = {}
    by_plane: dict[int, list[int]] = {}
    for k, t in enumerate(traced):
        by_set.setdefault(frozenset(t[1]), []).append(k)
        for pn in t[1]:
            by_plane.setdefault(pn, []).append(k)
    used: set[int] = set()
    owner_class: dict[int, str] = {}
    # vbsp keeps a side that only touches its brush (no area): the decompiler drops it, so a
    # written solid may have fewer planes.  Displacement brushes are rebuilt around their surface.
    for b, brush_set in enumerate(sets):
        exact = [k for k in by_set.get(brush_set, []) if k not in used]
        near = exact or [k for pn in brush_set for k in by_plane.get(pn, [])
                         if k not in used and _covers(traced[k][4], brush_set)]
        if near:
            used.add(near[0])
            owner_class[b] = traced[near[0]][0]
    assert not sets or len(owner_class) / len(sets) >= 0.995, (len(owner_class), len(sets))
    # Every ladder brush is in an entity (a func_ladder when it was the world's), never a world brush.
    ladders = [b for b in owner_class if contents[b] & LADDER]
    assert not {"world", "func_detail"} & {owner_class[b] for b in ladders}
    assert len(ladders) == sum(1 for b in range(len(sets)) if contents[b] & LADDER)


def test_the_vmf_is_ready_to_compile(map_path):
    from sourcebsp.converters.vmf import build_vmf, check_vmf

    with sourcebsp.open(map_path) as bsp:
        vmf, _ = build_vmf(bsp)
    assert check_vmf(vmf) == []


_PATCHED_FOR = re.compile(r"^maps/[^/]+/(.+)_(-?\d+)_(-?\d+)_(-?\d+)$", re.IGNORECASE)


def test_cubemap_sides_are_the_sides_patched_for_them(map_path):
    """Each side an env_cubemap lists has a material vbsp patched for that cubemap's origin."""
    vmf = _parsed(map_path)
    with sourcebsp.open(map_path) as bsp:
        if not bsp.entry(LumpId.TEXDATA).filelen:
            return
        table, data = bsp.texdata_string_table, bsp.texdata_string_data
        raw = [data.at(int(table[i])) for i in bsp.texdata["name_string_table_id"]]
    patched: dict[tuple[int, int, int], set[str]] = {}
    for name in raw:
        while (stripped := re.sub(r"(_depth_-?\d+|_wvt_patch)$", "", name, flags=re.I)) != name:
            name = stripped
        found = _PATCHED_FOR.match(name)
        if found:
            base = found.group(1).lower()
            while (inner := re.match(r"^maps/[^/]+/(.+)$", base)) is not None:
                base = inner.group(1)
            patched.setdefault(tuple(int(found.group(k)) for k in (2, 3, 4)), set()).add(base)
    sides = {s.id: s for solid in list(vmf.brushes) + [x for e in vmf.entities for x in e.solids] for s in solid.sides}
    listed, patched_cubemaps = 0, 0
    for ent in vmf.entities:
        if ent["classname"] != "env_cubemap":
            continue
        origin = tuple(int(float(v)) for v in ent["origin"].split())
        patched_cubemaps += origin in patched
        for sid in (int(v) for v in ent["sides"].split()):
            assert sides[sid].mat.lower() in patched.get(origin, set()), (origin, sid, sides[sid].mat)
            listed += 1
    # Where vbsp patched materials for the map's cubemaps, their sides come back.
    assert listed >= (1 if patched_cubemaps else 0)

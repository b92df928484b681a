"""Independent reading of VMF files for the decompile tests.

Plain numpy over srctools' parse of the VMF text; no code shared with
sourcebsp's decompiler.  A brush is its set of planes ``(normal, dist)``
from each side's three plane points (outward normal ``(p2 - p0) x (p1 - p0)``);
corners come from intersecting every triple of planes and keeping the
points inside all of them (vertex enumeration, not clipping).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
from srctools.keyvalues import Keyvalues
from srctools.vmf import VMF

#: Tolerances of the brush fidelity measure: normals within 1e-3 per component,
#: distances within 0.05 units.
NORMAL_TOL = 1e-3
DIST_TOL = 0.05
#: Materials of brushes the compiler does not keep as brushes.
SKIP_HINT = {"tools/toolsskip", "tools/toolshint"}


def parse_vmf(text_or_path: str | Path) -> VMF:
    if isinstance(text_or_path, Path):
        text = text_or_path.read_text(encoding="utf-8", errors="surrogateescape")
    else:
        text = text_or_path
    return VMF.parse(Keyvalues.parse(text))


def side_plane(side) -> tuple[np.ndarray, float]:
    p0, p1, p2 = (np.array(tuple(p), float) for p in side.planes)
    n = np.cross(p2 - p0, p1 - p0)
    n /= np.linalg.norm(n)
    return n, float(n @ p0)


@dataclass
class RefBrush:
    owner: str  # "world", or the entity classname
    normals: np.ndarray
    dists: np.ndarray
    materials: list[str]
    disp: bool
    hidden: bool = False
    sides: list = field(default_factory=list)

    @property
    def kept_by_compiler(self) -> bool:
        """World, func_detail and brush entity brushes but displacement and skip/hint-only brushes."""
        if self.disp or self.hidden:
            return False
        return not all(m.lower() in SKIP_HINT for m in self.materials)


def brushes_of(vmf: VMF) -> list[RefBrush]:
    out = []
    owners = [("world", s, False) for s in vmf.brushes]
    for ent in vmf.entities:
        hidden = bool(getattr(ent, "hidden", False))
        owners += [(ent["classname"], s, hidden) for s in ent.solids]
    for owner, solid, hidden in owners:
        planes = [side_plane(s) for s in solid.sides]
        out.append(RefBrush(owner, np.array([p[0] for p in planes]), np.array([p[1] for p in planes]),
                            [s.mat for s in solid.sides], any(s.disp_power for s in solid.sides),
                            hidden or bool(getattr(solid, "hidden", False)), list(solid.sides)))
    return out


def same_planes(a: RefBrush, b: RefBrush) -> bool:
    """Every plane of ``a`` is a plane of ``b`` and the other way round (within the tolerances)."""
    def covered(x: RefBrush, y: RefBrush) -> bool:
        for n, d in zip(x.normals, x.dists):
            close = np.all(np.abs(y.normals - n) < NORMAL_TOL, axis=1) & (np.abs(y.dists - d) < DIST_TOL)
            if not close.any():
                return False
        return True
    return covered(a, b) and covered(b, a)


def match_brushes(source: list[RefBrush], decompiled: list[RefBrush]) -> tuple[int, list[RefBrush]]:
    """``(matched, missed)`` over the source brushes the compiler keeps; each decompiled brush used once."""
    used: set[int] = set()
    matched, missed = 0, []
    for brush in source:
        if not brush.kept_by_compiler:
            continue
        for j, cand in enumerate(decompiled):
            if j not in used and same_planes(brush, cand):
                used.add(j)
                matched += 1
                break
        else:
            missed.append(brush)
    return matched, missed


def corners(normals: np.ndarray, dists: np.ndarray, eps: float = 1e-3) -> np.ndarray:
    """Corners of the solid: every triple of planes intersected, the points inside all planes kept."""
    tri = np.array(list(combinations(range(len(normals)), 3)))
    a = normals[tri]
    ok = np.abs(np.linalg.det(a)) > 1e-9
    pts = np.linalg.solve(a[ok], dists[tri[ok]][:, :, None])[:, :, 0]
    pts = pts[np.all(pts @ normals.T - dists <= eps, axis=1)]
    unique: list[np.ndarray] = []
    for p in pts:
        if not any(np.linalg.norm(p - q) < 1e-3 for q in unique):
            unique.append(p)
    return np.array(unique).reshape(-1, 3)


def polygons(normals: np.ndarray, dists: np.ndarray, eps: float = 1e-3) -> list[np.ndarray]:
    """Corners of every side (those on its plane), clockwise seen from outside."""
    pts = corners(normals, dists, eps)
    out = []
    for n, d in zip(normals, dists):
        on = pts[np.abs(pts @ n - d) <= eps]
        if len(on) < 3:
            out.append(on)
            continue
        centre = on.mean(axis=0)
        u = on[0] - centre
        u /= np.linalg.norm(u)
        v = np.cross(n, u)
        angle = np.arctan2((on - centre) @ v, (on - centre) @ u)
        out.append(on[np.argsort(-angle)])  # decreasing angle about the normal: clockwise from outside
    return out


def polygon(normals: np.ndarray, dists: np.ndarray, k: int, eps: float = 1e-3) -> np.ndarray:
    """Corners of side ``k``, clockwise seen from outside."""
    return polygons(normals, dists, eps)[k]


@dataclass
class RefDisp:
    power: int
    start: np.ndarray
    positions: np.ndarray  # (V, 3)
    side_id: int


def displacements_of(vmf: VMF) -> list[RefDisp]:
    """Every displacement with its vertex positions (flat grid + normal * distance + offset)."""
    out = []
    solids = list(vmf.brushes) + [s for e in vmf.entities for s in e.solids]
    for solid in solids:
        planes = [side_plane(s) for s in solid.sides]
        normals = np.array([p[0] for p in planes])
        dists = np.array([p[1] for p in planes])
        for k, side in enumerate(solid.sides):
            if not side.disp_power:
                continue
            corners = polygon(normals, dists, k)
            start = np.array(tuple(side.disp_pos), float)
            first = int(np.argmin(np.linalg.norm(corners - start, axis=1)))
            c = np.roll(corners, -first, axis=0)
            w = 2 ** side.disp_power + 1
            t = np.arange(w) / (w - 1)
            pos = []
            for i in range(w):
                a = c[0] + (c[1] - c[0]) * t[i]
                b = c[3] + (c[2] - c[3]) * t[i]
                for j in range(w):
                    pos.append(a + (b - a) * t[j])
            flat = np.array(pos)
            verts = side._disp_verts
            offset = np.array([tuple(v.normal * v.distance + v.offset) for v in verts], float)
            out.append(RefDisp(int(side.disp_power), start, flat + offset + normals[k] * side.disp_elevation,
                               int(side.id)))
    return out

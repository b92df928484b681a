"""Geometry and lighting helpers of the example map: boxes, face polygons, lightmaps.

Small, general pieces a compiler needs for axial brushes: an axis-aligned
box, the corners of one of its sides in the engine's winding order, the
lightmap extents of a face (as vbsp's ``CalcFaceExtents``), where each
lightmap sample lies, the direct light of a point light (as vrad's
``emit_point`` with quadratic falloff, without shadows) and the
``ColorRGBExp32`` encoding of linear light.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..codecs.arrays import COLOR_RGB_EXP32

__all__ = [
    "Vec3",
    "Box",
    "vec3",
    "axis_vector",
    "texture_axes",
    "box_face_polygon",
    "polygon_area",
    "light_intensity",
    "direct_light",
    "to_rgbexp",
    "lightmap_extents",
    "luxel_positions",
]

Vec3 = tuple[float, float, float]


def vec3(values: Iterable[float]) -> Vec3:
    """Three floats as a tuple."""
    x, y, z = (float(v) for v in values)
    return (x, y, z)


@dataclass(frozen=True)
class Box:
    """An axis-aligned box (``mins`` <= ``maxs`` on each axis)."""

    mins: Vec3
    maxs: Vec3

    def grow(self, amount: float) -> "Box":
        """The box with every side moved out by ``amount``."""
        return Box(vec3(v - amount for v in self.mins), vec3(v + amount for v in self.maxs))

    def offset(self, by: Iterable[float]) -> "Box":
        """The box moved by ``by``."""
        shift = vec3(by)
        return Box(vec3(a + d for a, d in zip(self.mins, shift)), vec3(a + d for a, d in zip(self.maxs, shift)))

    def split(self, axis: int, value: float) -> tuple["Box", "Box"]:
        """The parts at or above ``value`` on ``axis`` (front) and below it (back)."""
        front_mins, back_maxs = list(self.mins), list(self.maxs)
        front_mins[axis] = back_maxs[axis] = value
        return Box(vec3(front_mins), self.maxs), Box(self.mins, vec3(back_maxs))

    def overlaps(self, other: "Box") -> bool:
        """Whether the two boxes share a volume (touching sides do not count)."""
        return all(a0 < b1 and b0 < a1 for a0, a1, b0, b1 in zip(self.mins, self.maxs, other.mins, other.maxs))

    def contains(self, point: Iterable[float]) -> bool:
        """Whether ``point`` is inside the box or on its surface."""
        return all(lo <= p <= hi for lo, p, hi in zip(self.mins, point, self.maxs))

    @property
    def center(self) -> Vec3:
        return vec3((a + b) / 2 for a, b in zip(self.mins, self.maxs))


def axis_vector(axis: int, sign: float = 1.0) -> Vec3:
    """The unit vector along ``axis`` (0, 1, 2 for x, y, z) times ``sign``."""
    v = [0.0, 0.0, 0.0]
    v[axis] = sign
    return vec3(v)


def texture_axes(normal: Vec3) -> tuple[Vec3, Vec3]:
    """Hammer's world-aligned texture axes (u, v) for a face with this normal.

    Chosen by the normal's largest component: floors and ceilings use
    (x, -y), walls facing x use (y, -z), walls facing y use (x, -z).
    """
    axis = int(np.argmax(np.abs(normal)))
    if axis == 2:
        return (1.0, 0.0, 0.0), (0.0, -1.0, 0.0)
    if axis == 0:
        return (0.0, 1.0, 0.0), (0.0, 0.0, -1.0)
    return (1.0, 0.0, 0.0), (0.0, 0.0, -1.0)


def box_face_polygon(box: Box, axis: int, side: str, normal_sign: float) -> np.ndarray:
    """The four corners of one side of ``box``, in the order the engine stores them.

    The face lies on the ``side`` (``"min"`` or ``"max"``) plane of ``axis``
    and faces ``normal_sign`` along it.  Source windings are clockwise seen
    from the front: ``cross(p1 - p0, p2 - p0)`` points away from the normal.
    """
    u_axis, v_axis = [a for a in range(3) if a != axis]
    coordinate = box.mins[axis] if side == "min" else box.maxs[axis]
    corners = []
    # The corners in order around the side, then turned to run clockwise.
    for u, v in ((box.mins[u_axis], box.mins[v_axis]), (box.maxs[u_axis], box.mins[v_axis]),
                 (box.maxs[u_axis], box.maxs[v_axis]), (box.mins[u_axis], box.maxs[v_axis])):
        point = [0.0, 0.0, 0.0]
        point[axis], point[u_axis], point[v_axis] = coordinate, u, v
        corners.append(point)
    polygon = np.array(corners, np.float64)
    normal = np.array(axis_vector(axis, normal_sign))
    if np.dot(np.cross(polygon[1] - polygon[0], polygon[2] - polygon[0]), normal) > 0:
        polygon = polygon[::-1]
    return polygon


def polygon_area(polygon: np.ndarray) -> float:
    """Area of a planar convex polygon ``(n, 3)``."""
    fan = np.cross(polygon[1:-1] - polygon[0], polygon[2:] - polygon[0])
    return float(np.linalg.norm(fan.sum(axis=0)) / 2)


# ---- lighting ----------------------------------------------------------------------
def light_intensity(color: tuple[float, float, float, float]) -> np.ndarray:
    """``dworldlight_t.intensity`` of a ``light`` with ``_quadratic_attn 1``, as vrad computes it.

    ``color`` is the entity's ``_light`` (r, g, b, brightness).  The colour
    is made linear (gamma 2.2), scaled by brightness / 255, then by
    ``constant + 100 * linear + 100**2 * quadratic`` so that the light has
    that value at 100 units.
    """
    rgb = (np.array(color[:3], np.float64) / 255.0) ** 2.2
    return rgb * (color[3] / 255.0) * 100.0**2


def direct_light(points: np.ndarray, normals: np.ndarray, light: Iterable[float], intensity: np.ndarray,
                 ambient: Iterable[float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    """Linear RGB arriving at ``points`` ``(n, 3)`` facing ``normals`` from one point light.

    Lambert's cosine law and an inverse-square falloff (vrad's
    ``emit_point`` with ``quadratic_attn`` 1), no shadows; ``ambient`` is
    added everywhere.
    """
    to_light = np.asarray(tuple(light), np.float64) - points
    distance2 = np.maximum(np.einsum("ij,ij->i", to_light, to_light), 1.0)
    cosine = np.maximum(np.einsum("ij,ij->i", to_light, normals), 0.0) / np.sqrt(distance2)
    return (cosine / distance2)[:, None] * intensity + np.asarray(tuple(ambient))  # type: ignore[no-any-return]


def to_rgbexp(linear: np.ndarray) -> np.ndarray:
    """Linear RGB ``(n, 3)`` as ``ColorRGBExp32`` samples (the inverse of ``rgbexp_to_float``).

    The exponent is the smallest that keeps the largest component at or
    below 255: ``c = round(value / 2**exponent * 255)``.
    """
    linear = np.maximum(np.asarray(linear, np.float64), 0.0)
    peak = linear.max(axis=1)
    exponent = np.where(peak > 0, np.ceil(np.log2(np.maximum(peak, 1e-30))), 0).clip(-128, 127).astype(np.int64)
    scaled = np.rint(linear / np.ldexp(1.0, exponent)[:, None] * 255.0).clip(0, 255)
    out = np.zeros(len(linear), COLOR_RGB_EXP32)
    out["r"], out["g"], out["b"] = scaled[:, 0], scaled[:, 1], scaled[:, 2]
    out["exponent"] = exponent
    return out


def lightmap_extents(polygon: np.ndarray, lightmap_vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``m_LightmapTextureMinsInLuxels`` and ``m_LightmapTextureSizeInLuxels`` of a face.

    The corners' luxel coordinates (``vecs . p + offset``), floored and
    ceiled, as vbsp's ``CalcFaceExtents``.
    """
    coords = polygon @ lightmap_vecs[:, :3].T + lightmap_vecs[:, 3]
    mins = np.floor(coords.min(axis=0) + 1e-6)
    maxs = np.ceil(coords.max(axis=0) - 1e-6)
    return mins.astype(np.int32), (maxs - mins).astype(np.int32)


def luxel_positions(mins: np.ndarray, size: np.ndarray, lightmap_vecs: np.ndarray, normal: np.ndarray,
                    dist: float) -> np.ndarray:
    """Where each lightmap sample of a face is: ``((size + 1).prod(), 3)``, row by row (t, then s).

    Solves ``s_vec . p + s_offset = s``, ``t_vec . p + t_offset = t``,
    ``normal . p = dist`` for every sample (s, t).
    """
    s, t = np.meshgrid(mins[0] + np.arange(size[0] + 1), mins[1] + np.arange(size[1] + 1))
    rhs = np.stack([s.ravel() - lightmap_vecs[0, 3], t.ravel() - lightmap_vecs[1, 3],
                    np.full(s.size, dist)], axis=1)
    system = np.stack([lightmap_vecs[0, :3], lightmap_vecs[1, :3], normal])
    return np.linalg.solve(system, rhs.T).T

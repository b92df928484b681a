"""What the renderer draws: the map's triangles and what colours them.

A :class:`Scene` holds world-space triangles (brush faces, displacements,
static prop boxes) with per-corner attributes (lightmap atlas UV, texture
UV) and per-triangle colour sources: the texture's average colour
(TEXDATA ``reflectivity``, linear) and, when real textures were found, an
index into a stack of small texture images.  Shading is deferred: once a
:class:`~sourcebsp.converters.render.raster.Frame` is drawn, each covered
pixel is shaded by :mod:`~sourcebsp.converters.render.shade`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...errors import BspError
from ...model.geometry import MapMesh, reflectivity
from ...model.lightmaps import LightmapAtlas
from ...protocols import MapReader
from .textures import NEUTRAL

if TYPE_CHECKING:
    from .textures import PropGeometry

__all__ = ["Scene", "NothingToDraw", "PackedAtlas", "build_scene", "LUMINANCE"]

LUMINANCE = np.array([0.2126, 0.7152, 0.0722], np.float32)
#: Colour of the markers of props whose model is not found (linear; a strong orange).
MARKER = np.array([0.9, 0.25, 0.02])
# Attribute columns of Scene.attrs.
LM_UV, TEX_UV = 0, 2
_PACK_CHUNK = 1 << 18  # atlas texels converted at once


class NothingToDraw(BspError):
    """The map has no drawn faces (only entities, or only tool faces)."""


@dataclass
class PackedAtlas:
    """A lightmap atlas as float16 RGBA texels, one 64-bit word each.

    Each bilinear tap is then a single gather (gathers of float rows are
    what cost time at a million pixels), and the atlas takes 8 bytes a
    texel instead of the float32 image's 12.
    """

    words: np.ndarray
    width: int
    height: int

    @classmethod
    def of(cls, atlas: LightmapAtlas) -> "PackedAtlas":
        flat = atlas.image.reshape(-1, 3)
        packed = np.zeros((len(flat), 4), np.float16)
        for begin in range(0, len(flat), _PACK_CHUNK):
            packed[begin:begin + _PACK_CHUNK, :3] = np.minimum(flat[begin:begin + _PACK_CHUNK], 60000)
        return cls(packed.view(np.uint64).ravel(), atlas.width, atlas.height)

    def sample(self, uv: np.ndarray) -> np.ndarray:
        """Bilinear samples ``(N, 3)`` float32 at UVs ``(N, 2)``, as :meth:`LightmapAtlas.sample`."""
        w, h = self.width, self.height
        uv = np.nan_to_num(uv.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)  # garbage lightmap vectors
        x = np.clip(uv[:, 0] * w - 0.5, 0, w - 1)
        y = np.clip(uv[:, 1] * h - 0.5, 0, h - 1)
        fx, fy = np.floor(x), np.floor(y)
        x0, y0 = fx.astype(np.int64), fy.astype(np.int64)
        dx = np.minimum(x0 + 1, w - 1) - x0
        dy = (np.minimum(y0 + 1, h - 1) - y0) * w
        i = y0 * w + x0
        # Weights in float32 (exact: the fraction of a float32 below 2**24), so is the light.
        fx = np.subtract(x, fx, out=fx)[:, None]
        fy = np.subtract(y, fy, out=fy)[:, None]

        def tap(index: np.ndarray) -> np.ndarray:
            return self.words.take(index).view(np.float16).reshape(-1, 4)[:, :3].astype(np.float32)

        # top = a + (b - a) fx, bottom = c + (d - c) fx, then top + (bottom - top) fy; in place.
        top, right = tap(i), tap(i + dx)
        right -= top
        right *= fx
        top += right
        i += dy
        bottom, right = tap(i), tap(i + dx)
        right -= bottom
        right *= fx
        bottom += right
        bottom -= top
        bottom *= fy
        top += bottom
        return top


@dataclass
class Scene:
    """World-space triangles and what colours them (see the module notes)."""

    corners: np.ndarray  # (T, 3, 3) float64
    normal: np.ndarray  # (T, 3) unit
    face: np.ndarray  # (T,) map face, -1 for props
    attrs: np.ndarray  # (T, 3, 4): lightmap atlas UV, texture UV
    albedo: np.ndarray  # (T, 3) linear average colour
    texture: np.ndarray  # (T,) index into ``images`` or -1
    lit_by_atlas: np.ndarray  # (T,) bool: the lightmap UV means something
    atlas: PackedAtlas | None
    images: np.ndarray | None = None  # (N, S, S, 3) float32 linear texture images
    props_drawn: int = 0
    props_missing: int = 0
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.corners)

    def subset(self, keep: np.ndarray) -> "Scene":
        """The scene with only the triangles ``keep`` (bool or indices)."""
        return Scene(self.corners[keep], self.normal[keep], self.face[keep], self.attrs[keep],
                     self.albedo[keep], self.texture[keep], self.lit_by_atlas[keep], self.atlas,
                     self.images, self.props_drawn, self.props_missing, self.notes)


def _reflectivity(bsp: MapReader, count: int) -> np.ndarray:
    """Linear average colour of every texdata entry (0.5 grey where unknown)."""
    out = np.full((max(count, 1), 3), 0.5)
    value = reflectivity(bsp.lump_or_none("TEXDATA"), 0.5)
    n = min(len(value), len(out))
    out[:n] = value[:n]
    return out


def build_scene(bsp: MapReader, mesh: MapMesh, atlas: LightmapAtlas | None, *,
                texture_images: tuple[np.ndarray, np.ndarray] | None = None,
                boxes: np.ndarray | None = None, props: "PropGeometry | None" = None) -> Scene:
    """The scene of a map's mesh, plus static prop ``boxes`` ``(P, 8, 3)`` world corners, or the
    props' meshes, boxes and markers (``props``).

    ``texture_images`` is ``(images, index)``: ``images`` ``(N, S, S, 3)``
    linear, ``index[texdata]`` the image of each texdata entry (``-1``: none).
    """
    points = mesh.world_positions()
    tri = mesh.triangles.astype(np.int64)
    corners = points[tri]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    attrs = np.zeros(tri.shape + (4,), np.float64)
    if atlas is not None:
        attrs[..., LM_UV:LM_UV + 2] = atlas.uv(mesh.vertex_face, mesh.luxels)[tri]
    attrs[..., TEX_UV:TEX_UV + 2] = mesh.uv[tri]
    td = mesh.triangle_texture
    average_colour = _reflectivity(bsp, len(mesh.textures))
    valid = (td >= 0) & (td < len(average_colour))
    albedo = average_colour[np.where(valid, td, 0)]
    images = None
    texture = np.full(len(tri), -1, np.int64)
    if texture_images is not None:
        images, index = texture_images
        ok = valid & (td < len(index))
        texture[ok] = index[td[ok]]
    face = mesh.triangle_face.astype(np.int64)
    lit = np.full(len(tri), atlas is not None)
    scene = Scene(corners, normal, face, attrs, albedo, texture, lit, None if atlas is None else PackedAtlas.of(atlas),
                  images)
    finite = np.isfinite(corners).all((1, 2)) & np.isfinite(attrs).all((1, 2))
    if not finite.all():  # a damaged map's NaN or infinite vertices are not drawn
        scene = scene.subset(finite)
    if boxes is not None and len(boxes):
        scene = _with_boxes(scene, boxes)
    if props is not None:
        scene = _with_triangles(scene, props.corners, props.albedo, props.meshed)
        scene = _with_boxes(scene, props.boxes)
        scene = _with_boxes(scene, props.markers, MARKER, drawn=False)
    return scene


# The 12 triangles of a box with corners numbered by bits (x: 1, y: 2, z: 4),
# counter-clockwise seen from outside.
_BOX_TRIANGLES = np.array([
    [0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6],  # bottom (-z), top (+z)
    [0, 1, 5], [0, 5, 4], [2, 6, 7], [2, 7, 3],  # -y, +y
    [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5],  # -x, +x
])


def _with_boxes(scene: Scene, boxes: np.ndarray, colour: np.ndarray = NEUTRAL, *, drawn: bool = True) -> Scene:
    """The scene with boxes ``(B, 8, 3)`` added (counted as props drawn when ``drawn``)."""
    corners = boxes[:, _BOX_TRIANGLES].reshape(-1, 3, 3)
    return _with_triangles(scene, corners, np.broadcast_to(colour, (len(corners), 3)), len(boxes) if drawn else 0)


def _with_triangles(scene: Scene, corners: np.ndarray, albedo: np.ndarray, count: int) -> Scene:
    """The scene with unlit, untextured triangles ``(T, 3, 3)`` of colours ``(T, 3)`` added: ``count`` props."""
    if not len(corners):
        return scene
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    n = len(corners)
    return Scene(
        np.concatenate([scene.corners, corners]), np.concatenate([scene.normal, normal]),
        np.concatenate([scene.face, np.full(n, -1, np.int64)]),
        np.concatenate([scene.attrs, np.zeros((n, 3, 4))]),
        np.concatenate([scene.albedo, albedo]),
        np.concatenate([scene.texture, np.full(n, -1, np.int64)]),
        np.concatenate([scene.lit_by_atlas, np.zeros(n, bool)]),
        scene.atlas, scene.images, scene.props_drawn + count, scene.props_missing, scene.notes,
    )

"""What the renderer draws: the map's triangles with their colours, and how pixels are shaded.

A :class:`Scene` holds world-space triangles (brush faces, displacements,
static prop boxes) with per-corner attributes (lightmap atlas UV, texture
UV) and per-triangle colour sources: the texture's average colour
(TEXDATA ``reflectivity``, linear) and, when real textures were found, an
index into a stack of small texture images.  Shading is deferred: once a
:class:`~sourcebsp.converters.render_raster.Frame` is drawn, each covered
pixel interpolates its triangle's UVs and samples the lightmap atlas (and
texture); the colour is albedo times light, with an automatic exposure.
Without usable lightmaps the light comes from the face normal and a fixed
sun direction.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.geometry import MapMesh, reflectivity
from ..model.lightmaps import LightmapAtlas, tonemap
from ..protocols import MapReader
from .render_raster import Frame

__all__ = ["Scene", "build_scene", "shade", "LUMINANCE"]

_SUN = (np.array([0.35, 0.25, 0.9]) / np.linalg.norm([0.35, 0.25, 0.9])).astype(np.float32)
LUMINANCE = np.array([0.2126, 0.7152, 0.0722], np.float32)
#: Colour of objects whose colour is not known (props without their textures).
NEUTRAL = np.array([0.45, 0.45, 0.42])
# Attribute columns of Scene.attrs.
LM_UV, TEX_UV = 0, 2


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
    atlas: LightmapAtlas | None
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
    value = reflectivity(bsp.find_lump("TEXDATA"), 0.5)
    n = min(len(value), len(out))
    out[:n] = value[:n]
    return out


def build_scene(bsp: MapReader, mesh: MapMesh, atlas: LightmapAtlas | None, *,
                texture_images: tuple[np.ndarray, np.ndarray] | None = None,
                boxes: np.ndarray | None = None) -> Scene:
    """The scene of a map's mesh, plus static prop ``boxes`` ``(P, 8, 3)`` world corners.

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
    scene = Scene(corners, normal, face, attrs, albedo, texture, lit, atlas, images)
    finite = np.isfinite(corners).all((1, 2)) & np.isfinite(attrs).all((1, 2))
    if not finite.all():  # a damaged map's NaN or infinite vertices are not drawn
        scene = scene.subset(finite)
    if boxes is not None and len(boxes):
        scene = _with_boxes(scene, boxes)
    return scene


# The 12 triangles of a box with corners numbered by bits (x: 1, y: 2, z: 4),
# counter-clockwise seen from outside.
_BOX_TRIANGLES = np.array([
    [0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6],  # bottom (-z), top (+z)
    [0, 1, 5], [0, 5, 4], [2, 6, 7], [2, 7, 3],  # -y, +y
    [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5],  # -x, +x
])


def _with_boxes(scene: Scene, boxes: np.ndarray) -> Scene:
    corners = boxes[:, _BOX_TRIANGLES].reshape(-1, 3, 3)
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    n = len(corners)
    return Scene(
        np.concatenate([scene.corners, corners]), np.concatenate([scene.normal, normal]),
        np.concatenate([scene.face, np.full(n, -1, np.int64)]),
        np.concatenate([scene.attrs, np.zeros((n, 3, 4))]),
        np.concatenate([scene.albedo, np.tile(NEUTRAL, (n, 1))]),
        np.concatenate([scene.texture, np.full(n, -1, np.int64)]),
        np.concatenate([scene.lit_by_atlas, np.zeros(n, bool)]),
        scene.atlas, scene.images, len(boxes), scene.props_missing, scene.notes,
    )


def sample_atlas(atlas: LightmapAtlas, uv: np.ndarray) -> np.ndarray:
    """Bilinear samples of the atlas at UVs ``(N, 2)``, as :meth:`LightmapAtlas.sample`, but faster.

    The atlas is packed as float16 RGBA in one 64-bit word per texel, so
    each of the four taps is a single gather (gathers of float rows are what
    cost time at a million pixels).
    """
    w, h = atlas.width, atlas.height
    packed = np.zeros((h * w, 4), np.float16)
    packed[:, :3] = np.minimum(atlas.image.reshape(-1, 3), 60000)
    words = packed.view(np.uint64).ravel()
    uv = np.nan_to_num(uv.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)  # garbage lightmap vectors
    x = np.clip(uv[:, 0] * w - 0.5, 0, w - 1)
    y = np.clip(uv[:, 1] * h - 0.5, 0, h - 1)
    x0 = x.astype(np.int64)
    y0 = y.astype(np.int64)
    dx = np.minimum(x0 + 1, w - 1) - x0
    dy = (np.minimum(y0 + 1, h - 1) - y0) * w
    fx = (x - x0)[:, None]
    fy = (y - y0)[:, None]
    i = y0 * w + x0

    def tap(index: np.ndarray) -> np.ndarray:
        return words.take(index).view(np.float16).reshape(-1, 4)[:, :3].astype(np.float32)

    a, b = tap(i), tap(i + dx)
    top = a + (b - a) * fx
    c, d = tap(i + dy), tap(i + dy + dx)
    bottom = c + (d - c) * fx
    return top + (bottom - top) * fy  # type: ignore[no-any-return]


def _sample_textures(images: np.ndarray, which: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Nearest texel of image ``which`` at repeating UVs ``(N, 2)``: linear ``(N, 3)``."""
    size = images.shape[1]
    uv = np.nan_to_num(uv, nan=0.0, posinf=0.0, neginf=0.0)
    u = np.floor(np.mod(uv[:, 0], 1.0) * size).astype(np.int64) % size
    v = np.floor(np.mod(uv[:, 1], 1.0) * size).astype(np.int64) % size
    return images[which, v, u]  # type: ignore[no-any-return]


@dataclass
class Shaded:
    """Linear colour of every covered pixel and facts about the shading."""

    hit: np.ndarray  # flat indices of covered pixels
    colour: np.ndarray  # (len(hit), 3) linear
    lit: bool
    textured: bool


def shade_linear(frame: Frame, scene: Scene) -> Shaded:
    """Albedo (texture or average colour) times light at every covered pixel."""
    hit = np.flatnonzero(frame.owner >= 0)
    if not len(hit):
        return Shaded(hit, np.zeros((0, 3)), False, False)
    source = frame.ids[frame.owner[hit]]
    n = scene.normal[source].astype(np.float32)
    sun = np.float32(0.45) + np.float32(0.55) * np.clip(n @ _SUN, 0, 1)
    light = None
    if scene.atlas is not None:
        lm = frame.interpolate(hit, LM_UV, 2)
        light = sample_atlas(scene.atlas, lm)
        unlit = ~scene.lit_by_atlas[source]
        level = light[~unlit].mean(1) if (~unlit).any() else np.zeros(1)
        # A map compiled without lights has lightmaps of one flat value (or
        # black): shading by normals then shows more.
        # Lightmaps darker than one 8-bit step everywhere (VTMB's) are as good as none.
        if float(np.percentile(level, 98)) < 1 / 512 or float(np.std(level)) <= 0.01 * float(np.mean(level)):
            light = None
        else:
            light *= np.float32(0.85) + np.float32(0.15) * sun[:, None]
            if unlit.any():  # props: the median light of the picture, shaded by the sun
                typical = np.median(light[~unlit], axis=0) if (~unlit).any() else np.ones(3, np.float32)
                light[unlit] = typical * sun[unlit, None]
    lit = light is not None
    if light is None:
        light = np.repeat(sun[:, None], 3, 1)
    albedo = scene.albedo[source].astype(np.float32)
    textured = False
    if scene.images is not None:
        tex = scene.texture[source]
        has = tex >= 0
        if has.any():
            uv = frame.interpolate(hit[has], TEX_UV, 2)
            albedo[has] = _sample_textures(scene.images, tex[has], uv)
            textured = True
    colour = (np.float32(0.12) + np.float32(0.88) * albedo) * light
    return Shaded(hit, colour, lit, textured)


def expose(colour: np.ndarray, target: float = 0.9) -> np.ndarray:
    """8-bit sRGB of linear colours, the 98th percentile of luminance brought to ``target``."""
    luminance = colour @ LUMINANCE
    top = float(np.percentile(luminance, 98)) if len(luminance) else 1.0
    exposure = target / top if top > 0 else 1.0
    return tonemap(colour, method="clip", exposure=exposure)


def shade(frame: Frame, scene: Scene, background: np.ndarray, *, depth_cue: bool = False) -> tuple[np.ndarray, Shaded]:
    """The picture ``(H, W, 3)`` uint8 of a frame, and how it was shaded.

    ``depth_cue`` darkens what is far (up to a third at the far end of the
    view), so a flat floor or a long wall shows its shape.
    """
    image = np.empty((frame.width * frame.height, 3), np.uint8)
    image[:] = background
    shaded = shade_linear(frame, scene)
    if len(shaded.hit):
        colour = shaded.colour
        if depth_cue:
            depth = frame.depth[shaded.hit]
            far = max(float(np.percentile(depth, 98)), 1.0)
            colour = colour * (1.0 - 0.35 * np.clip(depth / far, 0, 1))[:, None]
        image[shaded.hit] = expose(colour)
    return image.reshape(frame.height, frame.width, 3), shaded

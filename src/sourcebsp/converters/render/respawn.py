"""Preview pictures of a Titanfall rBSP map (:mod:`sourcebsp.respawn`): the same views as a
Source map's, drawn from its meshes.

What differs from a Source map: the colour of a triangle is its TEXTURE_DATA
``reflectivity`` (grey where the map leaves it black), lit by its normal (rBSP
lightmaps are not read); meshes flagged sky, skip or trigger, and ``tools/``
materials, are left out, as a Source map's tool faces are, and so are triangles
with a corner that is not a number or lies beyond
:data:`~sourcebsp.model.geometry.MAX_COORDINATE` (damage); the player starts
are the spawn points of both Source's and Titanfall's classes
(``info_spawnpoint_human_start`` and the rest, see
:data:`~sourcebsp.converters.render.camera.PLAYER_STARTS`), the ENTITIES lump's and
the ``.ent`` files'; there is no visibility data, so every part of the map counts
as playable and nothing is culled by a PVS; static props are not drawn (Respawn's
models are not read).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...model.geometry import MAX_COORDINATE
from ...model.respawn import build_respawn_mesh
from ...numeric import floats
from . import overview as ov
from .camera import camera_of, starts_of
from .scene import TEX_UV, NothingToDraw, Scene
from .sight import Sight

if TYPE_CHECKING:
    from ...respawn import RespawnBsp

__all__ = ["respawn_scene_and_sight", "HIDDEN_MESH_FLAGS"]

#: MESHES.flags of meshes not drawn: SKY_2D, SKY, SKIP, TRIGGER (bsp_tool's titanfall.MeshFlags).
HIDDEN_MESH_FLAGS = 0x0002 | 0x0004 | 0x20000 | 0x40000
#: The colour of a material whose reflectivity the map leaves black (linear).
GREY = 0.5


def respawn_scene_and_sight(bsp: RespawnBsp) -> tuple[Scene, Sight]:
    """The drawable triangles of a Titanfall map and what the views know of it (see the module).

    Raises :class:`~sourcebsp.converters.render.NothingToDraw` when no mesh is left to draw.
    """
    mesh = build_respawn_mesh(bsp)
    flags = bsp.array("MESHES")["flags"].astype(np.int64)
    tools = np.array([name.replace("\\", "/").lower().startswith("tools/") for name in mesh.texture_names], bool)
    mesh_texture = mesh.mesh_texture.astype(np.int64)  # checked against TEXTURE_DATA by build_respawn_mesh
    hidden = ((flags & HIDDEN_MESH_FLAGS) != 0) | tools[mesh_texture]
    corners = mesh.corners.reshape(-1, 3)
    points = floats(mesh.position)[corners]  # (T, 3, 3)
    with np.errstate(invalid="ignore"):  # damaged corners (NaN, or beyond any map) are not drawn
        keep = ~hidden[mesh.triangle_mesh] & (np.abs(points) <= MAX_COORDINATE).all(axis=(1, 2))
    if not keep.any():
        raise NothingToDraw("the map has no drawn meshes to render (only sky, tool or trigger meshes)")
    triangles = np.flatnonzero(keep)
    points = points[keep]
    normal = np.cross(points[:, 1] - points[:, 0], points[:, 2] - points[:, 0])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    reflectivity = floats(bsp.array("TEXTURE_DATA")["reflectivity"]).reshape(-1, 3)
    colour = np.where(np.isfinite(reflectivity).all(1, keepdims=True) & (reflectivity.max(1, keepdims=True) > 0),
                      np.clip(reflectivity, 0.0, 1.0), GREY)
    texture = mesh_texture[mesh.triangle_mesh[keep]]
    albedo = colour[np.clip(texture, 0, max(len(colour) - 1, 0))] if len(colour) else np.full((len(texture), 3), GREY)
    attrs = np.zeros(points.shape[:2] + (4,))
    attrs[..., TEX_UV:TEX_UV + 2] = floats(mesh.uv)[corners[keep]]
    attrs = np.where(np.isfinite(attrs), attrs, 0.0)
    scene = Scene(points, normal, triangles.astype(np.int64), attrs, albedo, np.full(len(points), -1, np.int64),
                  np.zeros(len(points), bool), None)
    return scene, _sight(bsp)


def _sight(bsp: RespawnBsp) -> Sight:
    """The views' knowledge of a Titanfall map: its entities (lump and ``.ent`` files); no tree, no PVS."""
    entities = [entity for _, found in bsp.entity_sets() for entity in found]
    models = bsp.array("MODELS")

    def model_box(index: int) -> tuple[np.ndarray, np.ndarray] | None:
        if 0 < index < len(models):
            box = floats(models["mins"][index]), floats(models["maxs"][index])
            return box if np.isfinite(box).all() else None
        return None

    def model_centre(index: int) -> np.ndarray | None:
        box = model_box(index)
        return None if box is None else (box[0] + box[1]) / 2

    return Sight(lambda: starts_of(entities), lambda: ov.markers_of(entities, model_box),
                 lambda name: camera_of(entities, name, model_centre), lambda: None, None,
                 lambda corners, normal: np.full(len(corners), -1, np.int64), lambda anchors: None)

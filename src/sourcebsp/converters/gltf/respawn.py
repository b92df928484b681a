"""A Titanfall rBSP map's meshes as glTF binary: one node per model (model 0 the world), one
primitive per material, Y-up, in Hammer units or metres, and one empty node per static prop
(``sprp``), named after its model and placed as the Source export places them
(:func:`.prop_node_fields`; Respawn's models, MDL v52/v53, are not read).  The GLB framing and
buffer views are every export's (:class:`.document.GlbBuilder`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._extras import needs_extra
from ..._io import atomic_write
from ...codecs.entities import Entity
from ...model.respawn import RespawnMesh, build_respawn_mesh
from ...numeric import floats, sorted_unique
from ...respawn import RespawnBsp
from .._common import Units, to_y_up
from .document import ELEMENT_ARRAY_BUFFER, GlbBuilder, prop_node_fields
from .options import ExportStats, GltfOptions

with needs_extra("glTF export", "export"):
    import pygltflib

__all__ = ["RespawnExportStats", "respawn_glb_pieces", "export_respawn_glb"]


@dataclass
class RespawnExportStats(ExportStats):
    """What :func:`export_respawn_glb` wrote (``props``: static props, each an empty node named
    after its model)."""

    nodes: int = 0
    primitives: int = 0

    def summary(self, output: str, options: GltfOptions) -> str:
        return (f"{output}: {self.meshes} meshes ({self.primitives} primitives), {self.triangles} triangles, "
                f"{self.materials} materials, {self.props} static props"
                + (" (empty nodes: Respawn's models are not read)" if self.props else ""))

    def notes(self, options: GltfOptions) -> list[str]:
        return []


def respawn_glb_pieces(bsp: RespawnBsp, *, units: Units = "hammer",
                       stats: RespawnExportStats | None = None) -> list[bytes | memoryview]:
    """The ``.glb`` file's bytes, in pieces (see :func:`export_respawn_glb`)."""
    document = GlbBuilder(units, format=f"rBSP {bsp.version} ({bsp.variant.name})")
    gltf, scale = document.gltf, document.scale
    mesh = build_respawn_mesh(bsp)
    stats = stats if stats is not None else RespawnExportStats()
    material_of: dict[int, int] = {}
    for texture in sorted_unique(mesh.mesh_texture).tolist():
        material_of[texture] = len(gltf.materials)
        pbr = pygltflib.PbrMetallicRoughness(metallicFactor=0.0)
        gltf.materials.append(pygltflib.Material(name=mesh.texture_names[texture], doubleSided=False,
                                                 pbrMetallicRoughness=pbr))
    # Each brush entity's model named as the Source export names it: "*N classname targetname".
    users: dict[int, Entity] = {}
    for _, entities in bsp.entity_sets():
        for entity in entities:
            index = entity.model_index
            if index and index not in users:
                users[index] = entity
    nodes = []
    for number, model in enumerate(mesh.models):
        first, count = int(model["first_mesh"]), int(model["num_meshes"])
        triangles = np.flatnonzero((mesh.triangle_mesh >= first) & (mesh.triangle_mesh < first + count))
        primitives = _primitives(document, mesh, triangles, material_of)
        if not primitives:
            continue
        user = users.get(number)
        classname = "worldspawn" if number == 0 else (user.classname or "") if user is not None else ""
        label = "world" if number == 0 else " ".join(
            p for p in (f"*{number}", classname, (user.get("targetname") or "") if user is not None else "") if p)
        gltf.meshes.append(pygltflib.Mesh(name=label, primitives=primitives))
        nodes.append(len(gltf.nodes))
        gltf.nodes.append(pygltflib.Node(name=label, mesh=len(gltf.meshes) - 1,
                                         extras={"model": number, "classname": classname}))
        stats.primitives += len(primitives)
        stats.triangles += len(triangles)
    found = bsp.static_props
    if len(found):
        props = found.props
        models = [found.names[t].replace("\\", "/").lower() for t in props["prop_type"].tolist()]
        size = np.ones((len(props), 3)) * np.where(floats(props["scale"]) > 0, floats(props["scale"]), 1.0)[:, None]
        placed = prop_node_fields(models, floats(props["origin"]), floats(props["angles"]), size,
                            props["skin"].tolist(), scale)
        nodes.extend(range(len(gltf.nodes), len(gltf.nodes) + len(placed)))
        gltf.nodes.extend(pygltflib.Node(**fields) for fields in placed)
        stats.props = len(placed)
    gltf.scenes = [pygltflib.Scene(name=bsp.path.stem if bsp.path is not None else "map", nodes=nodes)]
    gltf.scene = 0
    stats.nodes, stats.meshes, stats.materials = len(nodes), len(gltf.meshes), len(gltf.materials)
    return document.pieces()


def _primitives(document: GlbBuilder, mesh: RespawnMesh, triangles: np.ndarray,
                material_of: dict[int, int]) -> list[pygltflib.Primitive]:
    """One primitive per material of these triangles, each with its own vertices."""
    texture = mesh.mesh_texture[mesh.triangle_mesh[triangles]]
    order = np.argsort(texture, kind="stable")
    triangles, texture = triangles[order], texture[order]
    cuts = np.flatnonzero(np.diff(texture)) + 1
    primitives = []
    for group in np.split(np.arange(len(triangles)), cuts):
        if not len(group):
            continue
        corners = mesh.corners.reshape(-1, 3)[triangles[group]].ravel()
        used, local = np.unique(corners, return_inverse=True)
        position = to_y_up(mesh.position, document.scale, rows=used, dtype=np.float32)
        normal = to_y_up(mesh.normal, rows=used)  # float64: a damaged normal's length may not fit a float32
        with np.errstate(over="ignore", invalid="ignore"):
            length = np.linalg.norm(normal, axis=1, keepdims=True)
            unit = normal / np.maximum(length, 1e-12)
        # glTF wants unit normals: a zero, huge or NaN one becomes up.
        usable = np.isfinite(unit).all(axis=1, keepdims=True) & (length > 1e-6)
        normal = np.where(usable, unit, [0.0, 1.0, 0.0]).astype(np.float32)
        uv = np.nan_to_num(mesh.uv[used].astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
        attributes = pygltflib.Attributes(POSITION=document.accessor(position, "VEC3", bounds=True),
                                          NORMAL=document.accessor(normal, "VEC3"),
                                          TEXCOORD_0=document.accessor(uv, "VEC2"))
        indices = document.accessor(local.astype(np.uint32).ravel(), "SCALAR", target=ELEMENT_ARRAY_BUFFER)
        primitives.append(pygltflib.Primitive(attributes=attributes, indices=indices,
                                              material=material_of[int(texture[group[0]])]))
    return primitives


def export_respawn_glb(path_or_bsp: str | Path | RespawnBsp, output: str | Path, *,
                       units: Units = "hammer") -> RespawnExportStats:
    """Write a Titanfall map's meshes to ``output`` as ``.glb`` (atomically).

    Raises
    ------
    BspFormatError
        A mesh, material sort or vertex indexes outside its lump (named, with the offset).
    MissingExtraError
        pygltflib is not installed.
    """
    bsp = path_or_bsp if isinstance(path_or_bsp, RespawnBsp) else RespawnBsp.open(path_or_bsp)
    stats = RespawnExportStats()
    atomic_write(output, *respawn_glb_pieces(bsp, units=units, stats=stats))
    return stats

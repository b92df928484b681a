"""The triangles of a Titanfall rBSP map's meshes, gathered in numpy.

A mesh (MESHES) names ``3 * num_triangles`` entries of MESH_INDICES from
``first_mesh_index``; each entry, plus its material sort's ``vertex_offset``,
indexes the vertex lump ``flags & 0x600`` picks (lit flat, lit bump, unlit,
unlit TS), whose records index VERTICES and VERTEX_NORMALS.  Every index is
checked before it is used: a bad one is a :class:`BspFormatError` naming the
lump and the record's file offset.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

import numpy as np

from ..codecs.respawn import MASK_VERTEX, VERTEX_LUMP_OF_FLAGS
from ..errors import BspFormatError
from ..numeric import range_rows
from ..respawn import RespawnBsp

if TYPE_CHECKING:
    from ..protocols import MapReader

__all__ = ["RespawnMesh", "build_respawn_mesh", "is_respawn_map"]


def is_respawn_map(bsp: MapReader) -> TypeGuard[RespawnBsp]:
    """Whether ``bsp`` is a Titanfall map (its branch read by the rBSP container): the one question a
    converter asks before it takes the map's meshes and collision brushes instead of faces and brushes."""
    return bsp.variant.container == "respawn"


@dataclass
class RespawnMesh:
    """Triangle corners of every mesh, with what each corner's vertex holds.

    ``corners`` (3T,) index ``position``/``normal``/``uv`` (the vertices the meshes use,
    each once); ``triangle_mesh`` (T,) is each triangle's mesh, ``mesh_texture`` each
    mesh's TEXTURE_DATA index and ``texture_names`` their names.
    """

    position: np.ndarray
    normal: np.ndarray
    uv: np.ndarray
    corners: np.ndarray
    triangle_mesh: np.ndarray
    mesh_texture: np.ndarray
    texture_names: list[str]
    models: np.ndarray  # MODELS records: first_mesh, num_meshes


def _check(values: np.ndarray, limit: int, lump: str, bsp: RespawnBsp, record: int, what: str) -> None:
    """Raise when a value of ``values`` (one per record of ``lump``) is not in ``0..limit-1``."""
    bad = (values < 0) | (values >= limit)
    if bad.any():
        row = int(np.argmax(bad))
        index = bsp.lump_index(lump)
        offset = (0 if index in bsp.external else bsp.lumps[index].fileofs) + row * record
        raise BspFormatError(f"record {row}: {what} {int(values[row])} is not below {limit}", lump=lump,
                             offset=offset)


def build_respawn_mesh(bsp: RespawnBsp) -> RespawnMesh:
    """Gather every mesh's triangles (see the module's docstring); vectorized over meshes and corners."""
    meshes = bsp.array("MESHES")
    indices = bsp.array("MESH_INDICES")
    sorts = bsp.array("MATERIAL_SORTS")
    textures = bsp.array("TEXTURE_DATA")
    size = meshes.dtype.itemsize
    _check(meshes["material_sort"].astype(np.int64), len(sorts), "MESHES", bsp, size, "material sort")
    sort = sorts[meshes["material_sort"]]
    _check(sorts["texture_data"].astype(np.int64), len(textures), "MATERIAL_SORTS", bsp, sorts.dtype.itemsize,
           "texture data")
    first = meshes["first_mesh_index"].astype(np.int64)
    counts = 3 * meshes["num_triangles"].astype(np.int64)
    _check(first + counts, len(indices) + 1, "MESHES", bsp, size, "end of its mesh indices")
    # The vertex lumps side by side: a corner's row in the joined table is its lump's base + index.
    lumps = sorted(set(VERTEX_LUMP_OF_FLAGS.values()))
    tables = [bsp.array(lump) for lump in lumps]
    bases = np.cumsum([0] + [len(t) for t in tables])
    lump_of = np.array([VERTEX_LUMP_OF_FLAGS[f] for f in range(0, MASK_VERTEX + 1, 0x200)])
    kind = (meshes["flags"].astype(np.int64) & MASK_VERTEX) >> 9
    which = np.searchsorted(lumps, lump_of[kind])
    mesh_of_corner, where = range_rows(first, counts)  # each corner's mesh and row of MESH_INDICES
    local = indices[where].astype(np.int64) + sort["vertex_offset"].astype(np.int64)[mesh_of_corner]
    limits = np.array([len(t) for t in tables])[which][mesh_of_corner]
    bad = (local < 0) | (local >= limits)
    if bad.any():
        corner = int(np.argmax(bad))
        raise BspFormatError(f"mesh {int(mesh_of_corner[corner])}: vertex {int(local[corner])} of "
                             f"{bsp.names[lumps[which[mesh_of_corner[corner]]]]} is not below {int(limits[corner])}",
                             lump="MESH_INDICES", offset=bsp.lumps[0x4F].fileofs + 2 * int(where[corner]))
    joined = local + bases[which][mesh_of_corner]
    used, corners = np.unique(joined, return_inverse=True)
    position_index = np.concatenate([t["position_index"] for t in tables]).astype(np.int64)[used]
    normal_index = np.concatenate([t["normal_index"] for t in tables]).astype(np.int64)[used]
    uv = np.concatenate([t["uv"] for t in tables])[used] if len(used) else np.zeros((0, 2), np.float32)
    vertices, normals = bsp.array("VERTICES"), bsp.array("VERTEX_NORMALS")
    for values, limit, lump in ((position_index, len(vertices), "VERTICES"),
                                (normal_index, len(normals), "VERTEX_NORMALS")):
        bad = values >= limit
        if bad.any():
            raise BspFormatError(f"a mesh vertex indexes record {int(values[bad][0])} of {limit}", lump=lump,
                                 offset=bsp.lumps[bsp.lump_index(lump)].fileofs)
    position = vertices[position_index]
    finite = np.isfinite(position).all(axis=1)
    if not finite.all():
        row = int(position_index[np.argmin(finite)])
        raise BspFormatError(f"vertex {row} is not a finite point: {vertices[row].tolist()}", lump="VERTICES",
                             offset=bsp.lumps[0x03].fileofs + 12 * row)
    models = bsp.array("MODELS")
    _check(models["first_mesh"].astype(np.int64) + models["num_meshes"], len(meshes) + 1, "MODELS", bsp,
           models.dtype.itemsize, "end of its meshes")
    return RespawnMesh(
        position=position, normal=normals[normal_index], uv=np.asarray(uv, np.float32),
        corners=corners.astype(np.uint32).ravel(), triangle_mesh=np.repeat(np.arange(len(meshes)), counts // 3),
        mesh_texture=sort["texture_data"].astype(np.int64), texture_names=bsp.texture_names(), models=models)

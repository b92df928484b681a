"""The ``.vtx`` file (optimised index data), version 7: triangle strips and lists per LOD.

Structs of ``public/optimize.h`` (``#pragma pack(1)``): ``FileHeader_t`` (36
bytes), ``BodyPartHeader_t`` (8), ``ModelHeader_t`` (8), ``ModelLODHeader_t``
(12), ``MeshHeader_t`` (9), ``StripGroupHeader_t`` (25), ``StripHeader_t``
(27), ``Vertex_t`` (9).  Later engines (Left 4 Dead 2 onwards) append two
ints of topology to strip groups and strips (33 and 35 bytes) without a
version change; a file is read with the SDK 2013 layout, else with that one.
Every offset counts from the start of the struct that holds it.

Besides triangles, each mesh gives its strip-group vertices in file order
(``Vertex_t.origMeshVertID``, strip group after strip group): the vertex
buffer the engine draws, one entry per vertex that per-vertex data of the
map (a static prop's ``.vhv`` colours) is stored for.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._common import ModelFormatError, Tables

__all__ = ["VTX_HEADER", "VTX_BODYPART", "VTX_MODEL", "VTX_LOD", "VTX_MESH", "VTX_STRIPGROUP",
           "VTX_STRIPGROUP_TOPOLOGY", "VTX_STRIP", "VTX_STRIP_TOPOLOGY", "VTX_VERTEX", "STRIP_IS_TRILIST",
           "STRIP_IS_TRISTRIP", "VtxMesh", "read_vtx"]

_I = "<i4"
VTX_HEADER = np.dtype([("version", _I), ("vertCacheSize", _I), ("maxBonesPerStrip", "<u2"),
                       ("maxBonesPerTri", "<u2"), ("maxBonesPerVert", _I), ("checkSum", _I), ("numLODs", _I),
                       ("materialReplacementListOffset", _I), ("numBodyParts", _I), ("bodyPartOffset", _I)])
VTX_BODYPART = np.dtype([("numModels", _I), ("modelOffset", _I)])
VTX_MODEL = np.dtype([("numLODs", _I), ("lodOffset", _I)])
VTX_LOD = np.dtype([("numMeshes", _I), ("meshOffset", _I), ("switchPoint", "<f4")])
VTX_MESH = np.dtype([("numStripGroups", _I), ("stripGroupHeaderOffset", _I), ("flags", "u1")])
_GROUP = [("numVerts", _I), ("vertOffset", _I), ("numIndices", _I), ("indexOffset", _I), ("numStrips", _I),
          ("stripOffset", _I), ("flags", "u1")]
VTX_STRIPGROUP = np.dtype(_GROUP)
VTX_STRIPGROUP_TOPOLOGY = np.dtype(_GROUP + [("numTopologyIndices", _I), ("topologyOffset", _I)])
_STRIP = [("numIndices", _I), ("indexOffset", _I), ("numVerts", _I), ("vertOffset", _I), ("numBones", "<i2"),
          ("flags", "u1"), ("numBoneStateChanges", _I), ("boneStateChangeOffset", _I)]
VTX_STRIP = np.dtype(_STRIP)
VTX_STRIP_TOPOLOGY = np.dtype(_STRIP + [("numTopologyIndices", _I), ("topologyOffset", _I)])
VTX_VERTEX = np.dtype([("boneWeightIndex", "u1", (3,)), ("numBones", "u1"), ("origMeshVertID", "<u2"),
                       ("boneID", "i1", (3,))])
STRIP_IS_TRILIST, STRIP_IS_TRISTRIP = 1, 2


@dataclass
class VtxMesh:
    """One ``MeshHeader_t`` of a LOD: its triangles and its strip-group vertices, as mesh vertex ids."""

    triangles: np.ndarray  # (n, 3) int64, the file's (clockwise) winding
    vertex_ids: np.ndarray  # (strip-group vertices,) int64: origMeshVertID, strip groups one after another


def _strip_triangles(ids: np.ndarray, flags: int) -> np.ndarray:
    """(n, 3) mesh vertex ids of one strip's triangles, wound as a list's (clockwise, Direct3D's front)."""
    if flags & STRIP_IS_TRISTRIP and not flags & STRIP_IS_TRILIST:
        if len(ids) < 3:
            return np.empty((0, 3), np.int64)
        k = np.arange(len(ids) - 2)
        tris = np.stack([ids[k], ids[k + 1], ids[k + 2]], axis=1)
        odd = (k % 2).astype(bool)
        tris[odd] = tris[odd][:, [1, 0, 2]]  # every other triangle of a strip turns the other way
        keep = (tris[:, 0] != tris[:, 1]) & (tris[:, 1] != tris[:, 2]) & (tris[:, 0] != tris[:, 2])
        kept: np.ndarray = tris[keep]  # degenerate triangles join strips; they draw nothing
        return kept
    return ids[: len(ids) - len(ids) % 3].reshape(-1, 3)


def _read(buf: bytes | memoryview, file: str, lod: int, group_dtype: np.dtype,
          strip_dtype: np.dtype) -> tuple[int, list[list[list[VtxMesh]]]]:
    tables = Tables(buf, file)
    hdr = tables(0, 1, VTX_HEADER, "FileHeader_t")[0]
    if int(hdr["version"]) != 7:
        raise ModelFormatError(f"VTX version {int(hdr['version'])} (version 7 is read)", file=file, offset=0)
    out: list[list[list[VtxMesh]]] = []
    bp_at = int(hdr["bodyPartOffset"])
    for b, bp in enumerate(tables(bp_at, int(hdr["numBodyParts"]), VTX_BODYPART, "body parts")):
        at = bp_at + b * VTX_BODYPART.itemsize
        m_at = at + int(bp["modelOffset"])
        models: list[list[VtxMesh]] = []
        for m, model in enumerate(tables(m_at, int(bp["numModels"]), VTX_MODEL, f"body part {b} models")):
            at_model = m_at + m * VTX_MODEL.itemsize
            lods = tables(at_model + int(model["lodOffset"]), int(model["numLODs"]), VTX_LOD,
                         f"body part {b} model {m} LODs")
            meshes: list[VtxMesh] = []
            if lod < len(lods):
                l_at = at_model + int(model["lodOffset"]) + lod * VTX_LOD.itemsize
                me_at = l_at + int(lods[lod]["meshOffset"])
                for k, mesh in enumerate(tables(me_at, int(lods[lod]["numMeshes"]), VTX_MESH,
                                               f"body part {b} model {m} meshes")):
                    meshes.append(_mesh(tables, me_at + k * VTX_MESH.itemsize, mesh, group_dtype, strip_dtype,
                                        f"body part {b} model {m} mesh {k}"))
            models.append(meshes)
        out.append(models)
    return int(hdr["checkSum"]), out


def _mesh(tables: Tables, at: int, mesh: np.void, group_dtype: np.dtype, strip_dtype: np.dtype,
          what: str) -> VtxMesh:
    """The triangles and strip-group vertices of one mesh, as ids of the mesh's own vertices (``origMeshVertID``)."""
    file = tables.file
    g_at = at + int(mesh["stripGroupHeaderOffset"])
    parts = []
    vertex_ids = []
    for g, group in enumerate(tables(g_at, int(mesh["numStripGroups"]), group_dtype, f"{what} strip groups")):
        at_group = g_at + g * group_dtype.itemsize
        where = f"{what} strip group {g}"
        verts = tables(at_group + int(group["vertOffset"]), int(group["numVerts"]), VTX_VERTEX,
                      f"{where} vertices")
        indices = tables(at_group + int(group["indexOffset"]), int(group["numIndices"]), np.dtype("<u2"),
                        f"{where} indices")
        if len(indices) and int(indices.max()) >= len(verts):
            raise ModelFormatError(f"{where}: index {int(indices.max())} of {len(verts)} vertices", file=file,
                                   offset=at_group + int(group["indexOffset"]))
        ids = verts["origMeshVertID"].astype(np.int64)
        vertex_ids.append(ids)
        s_at = at_group + int(group["stripOffset"])
        for s, strip in enumerate(tables(s_at, int(group["numStrips"]), strip_dtype, f"{where} strips")):
            first, count = int(strip["indexOffset"]), int(strip["numIndices"])
            if first < 0 or count < 0 or first + count > len(indices):
                raise ModelFormatError(f"{where} strip {s}: indices {first}+{count} beyond the group's "
                                       f"{len(indices)}", file=file, offset=s_at + s * strip_dtype.itemsize)
            tables.claim(2 * count, f"{where} strip {s}", s_at + s * strip_dtype.itemsize)  # strips sharing indices
            parts.append(_strip_triangles(ids[indices[first:first + count]], int(strip["flags"])))
    return VtxMesh(np.concatenate(parts) if parts else np.empty((0, 3), np.int64),
                   np.concatenate(vertex_ids) if vertex_ids else np.empty(0, np.int64))


def read_vtx(buf: bytes | memoryview, file: str, lod: int = 0) -> tuple[int, list[list[list[VtxMesh]]]]:
    """``(checksum, meshes)``: ``meshes[bodypart][model][mesh]`` holds the mesh's triangles for ``lod``
    (an (n, 3) array of its vertex ids, ``origMeshVertID``, in the file's clockwise winding) and its
    strip-group vertices."""
    try:
        return _read(buf, file, lod, VTX_STRIPGROUP, VTX_STRIP)
    except ModelFormatError as first:
        try:
            return _read(buf, file, lod, VTX_STRIPGROUP_TOPOLOGY, VTX_STRIP_TOPOLOGY)
        except ModelFormatError:
            raise first from None

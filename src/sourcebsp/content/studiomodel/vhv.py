"""Static prop vertex lighting: the ``sp_<prop>.vhv`` / ``sp_hdr_<prop>.vhv`` files of a map's pakfile.

vrad writes one file per lit static prop (``-staticproplighting``), named by
the prop's index in the static prop lump, ``sp_hdr_`` for the HDR pass.
Structs of ``public/vhv.h`` (namespace ``HardwareVerts``): ``FileHeader_t``
(40 bytes: version 2, the model's checksum, vertex format flags, vertex
size, vertex count, mesh count, 4 unused ints) then ``MeshHeader_t`` records
(28 bytes: LOD, vertex count, byte offset, 4 unused ints), one per mesh of
every LOD of every body part model, in the order body part, model, LOD, mesh.
Each mesh's colours are 4 bytes a vertex, blue, green, red, alpha (vrad
swaps its RGBA8888 to Direct3D's order), one per vertex of the mesh's
``.vtx`` strip groups.  Checked on the 141 files of 3 corpus maps: data
starts at byte 512, meshes follow each other, their counts sum to the
header's, alpha is 255 and files are padded to 512 bytes.

A colour byte ``c`` is vrad's ``LinearToVertexLight`` of the light: gamma
2.2 at half scale, ``min(1, L ** (1 / 2.2) / 2)``; the model shaders undo it
as ``GammaToLinear(2 c)`` (``cOverbright`` 2), so the light is
``(2 c / 255) ** 2.2`` (:func:`vertex_light_linear`): 128 is 1.0, brighter
bytes are overbright.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ...errors import UnsupportedError
from ._common import ModelFormatError, Tables

__all__ = ["VHV_HEADER", "VHV_MESH", "PropVertexLighting", "read_vhv", "vhv_files", "vertex_light_linear"]

_U = "<u4"
VHV_HEADER = np.dtype([("m_nVersion", "<i4"), ("m_nChecksum", _U), ("m_nVertexFlags", _U), ("m_nVertexSize", _U),
                       ("m_nVertexes", _U), ("m_nMeshes", "<i4"), ("m_nUnused", _U, (4,))])
VHV_MESH = np.dtype([("m_nLod", _U), ("m_nVertexes", _U), ("m_nOffset", _U), ("m_nUnused", _U, (4,))])
VHV_VERSION = 2
_COLOR_SIZE = 4  # the one vertex format vrad writes: a Direct3D colour
_NAME = re.compile(r"^sp_(hdr_)?(\d+)\.vhv$", re.I)


@dataclass
class PropVertexLighting:
    """One ``.vhv`` file: per-mesh vertex colours of a static prop."""

    file: str
    checksum: int  # the model's (``studiohdr_t.checksum``): the file fits only that compile
    vertex_flags: int
    lods: np.ndarray  # (meshes,) int64: the LOD of each mesh
    counts: np.ndarray  # (meshes,) int64: vertices of each mesh
    colors: np.ndarray  # (vertices, 4) uint8 RGBA, the meshes one after the other

    def mesh_colors(self, lod: int = 0) -> list[np.ndarray]:
        """The (n, 4) RGBA colours of each mesh of ``lod``, in file order."""
        starts = np.concatenate([[0], np.cumsum(self.counts)])
        return [self.colors[starts[i]:starts[i + 1]] for i in np.flatnonzero(self.lods == lod)]

    def vertex_counts(self, lod: int = 0) -> list[int]:
        """The vertex count of each mesh of ``lod``."""
        return [int(n) for n in self.counts[self.lods == lod]]

    def summary(self) -> dict[str, object]:
        """Plain data for JSON: checksum and per-LOD mesh vertex counts."""
        return {"file": self.file, "checksum": self.checksum,
                "lods": {str(lod): self.vertex_counts(int(lod)) for lod in np.unique(self.lods)}}


def read_vhv(buf: bytes | memoryview, file: str) -> PropVertexLighting:
    """The vertex colours of a ``.vhv`` file (``file`` names it in errors)."""
    tables = Tables(buf, file)
    hdr = tables(0, 1, VHV_HEADER, "FileHeader_t")[0]
    if int(hdr["m_nVersion"]) != VHV_VERSION:
        raise ModelFormatError(f"VHV version {int(hdr['m_nVersion'])} (version {VHV_VERSION} is read)",
                               file=file, offset=0)
    if int(hdr["m_nVertexSize"]) != _COLOR_SIZE:
        raise UnsupportedError(f"{file}: {int(hdr['m_nVertexSize'])}-byte vertices (4-byte colours are read)",
                               offset=12)
    meshes = tables(VHV_HEADER.itemsize, int(hdr["m_nMeshes"]), VHV_MESH, "MeshHeader_t")
    counts = meshes["m_nVertexes"].astype(np.int64)
    if int(counts.sum()) != int(hdr["m_nVertexes"]):
        raise ModelFormatError(f"its meshes hold {int(counts.sum())} vertices, the header {int(hdr['m_nVertexes'])}",
                               file=file, offset=16)
    color = np.dtype(("u1", (_COLOR_SIZE,)))
    parts = [tables(int(m["m_nOffset"]), int(m["m_nVertexes"]), color, f"mesh {i} colours")
             for i, m in enumerate(meshes)]
    bgra = np.concatenate(parts) if parts else np.empty((0, 4), np.uint8)
    return PropVertexLighting(file, int(hdr["m_nChecksum"]), int(hdr["m_nVertexFlags"]),
                              meshes["m_nLod"].astype(np.int64), counts, bgra[:, [2, 1, 0, 3]])


def vertex_light_linear(rgba: np.ndarray) -> np.ndarray:
    """(n, 3) float32 linear light of (n, 3 or 4) uint8 vertex colours of a ``.vhv`` (see the module notes)."""
    gamma = np.asarray(rgba)[:, :3].astype(np.float32) * np.float32(2.0 / 255.0)
    linear: np.ndarray = gamma ** np.float32(2.2)
    return linear


def vhv_files(names: Iterable[str]) -> dict[int, dict[str, str]]:
    """The vertex lighting files among pakfile ``names``: prop index -> {"ldr"/"hdr": name}."""
    out: dict[int, dict[str, str]] = {}
    for name in names:
        match = _NAME.match(name.rsplit("/", 1)[-1])
        if match is not None and "/" not in name.strip("/"):
            out.setdefault(int(match.group(2)), {})["hdr" if match.group(1) else "ldr"] = name
    return out

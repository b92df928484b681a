"""The ``.vvd`` file (vertex data), version 4: vertices of every LOD, reordered by fixups.

Structs of ``public/studio.h``: ``vertexFileHeader_t`` (64 bytes),
``vertexFileFixup_t`` (12) and ``mstudiovertex_t`` (48: bone weights,
position, normal, texture coordinate).  Positions are in model space at the
bind (reference) pose, the pose studiomdl compiled them in: a bone-weighted
model needs no skinning to be drawn as it was modelled.
"""
from __future__ import annotations

import numpy as np

from ._common import ModelFormatError, Tables

__all__ = ["VVD_HEADER", "VVD_FIXUP", "VVD_VERTEX", "read_vvd"]

_I = "<i4"
VVD_HEADER = np.dtype([("id", "S4"), ("version", _I), ("checksum", _I), ("numLODs", _I),
                       ("numLODVertexes", _I, (8,)), ("numFixups", _I), ("fixupTableStart", _I),
                       ("vertexDataStart", _I), ("tangentDataStart", _I)])
VVD_FIXUP = np.dtype([("lod", _I), ("sourceVertexID", _I), ("numVertexes", _I)])
VVD_VERTEX = np.dtype([("weight", "<f4", (3,)), ("bone", "i1", (3,)), ("numbones", "u1"),
                       ("vecPosition", "<f4", (3,)), ("vecNormal", "<f4", (3,)), ("vecTexCoord", "<f4", (2,))])


def read_vvd(buf: bytes | memoryview, file: str, lod: int = 0) -> tuple[int, np.ndarray]:
    """``(checksum, vertices)``: the VVD_VERTEX records of ``lod`` in the order the meshes index them."""
    tables = Tables(buf, file)
    hdr = tables(0, 1, VVD_HEADER, "vertexFileHeader_t")[0]
    if hdr["id"] != b"IDSV":
        raise ModelFormatError(f"not a vertex file (starts {bytes(hdr['id'])!r}, not b'IDSV')", file=file, offset=0)
    if int(hdr["version"]) != 4:
        raise ModelFormatError(f"VVD version {int(hdr['version'])} (version 4 is read)", file=file, offset=4)
    count = int(hdr["numLODVertexes"][0])  # LOD 0 holds every vertex any LOD uses
    raw = tables(int(hdr["vertexDataStart"]), count, VVD_VERTEX, "vertices")
    fixups = tables(int(hdr["fixupTableStart"]), int(hdr["numFixups"]), VVD_FIXUP, "fixups")
    if not len(fixups):
        return int(hdr["checksum"]), raw
    # The engine copies, for each fixup of a LOD at least ``lod``, its run of source vertices, in order.
    fixups = fixups[fixups["lod"] >= lod]
    first = fixups["sourceVertexID"].astype(np.int64)
    size = fixups["numVertexes"].astype(np.int64)
    bad = (first < 0) | (size < 0) | (first + size > count)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ModelFormatError(f"fixup {i}: vertices {int(first[i])}+{int(size[i])} beyond the {count} vertices",
                               file=file, offset=int(hdr["fixupTableStart"]) + i * VVD_FIXUP.itemsize)
    total = int(size.sum())
    if total > count:  # the runs of a LOD are a reordering of its vertices, never more of them
        raise ModelFormatError(f"fixups of LOD {lod} copy {total} vertices, the file has {count}", file=file,
                               offset=int(hdr["fixupTableStart"]))
    starts = np.repeat(first - np.concatenate(([0], np.cumsum(size)[:-1])), size)
    return int(hdr["checksum"]), raw[np.arange(total) + starts]

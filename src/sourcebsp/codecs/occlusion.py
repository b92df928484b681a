"""The occlusion lump (lump 9): the func_occluder polygons vbsp compiled.

bspfile.h ``LUMP_OCCLUSION`` holds three arrays, each after its int count:

* ``doccluderdata_t`` {int flags; int firstpoly; int polycount; Vector mins;
  Vector maxs; int area} (lump version 2, 40 bytes; version 1 has no
  ``area``: ``doccluderdataV1_t``, 36 bytes),
* ``doccluderpolydata_t`` {int firstvertexindex; int vertexcount; int planenum},
* the vertex indices (int, into the VERTEXES lump).

An occluder's polygons are ``polys[firstpoly : firstpoly + polycount]``; a
polygon's vertices are ``vertexes[vertex_indices[firstvertexindex :
firstvertexindex + vertexcount]]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import BspFormatError, LumpSizeError, TruncatedError
from .base import LumpContext, Record
from .records import COUNT, OCCLUDER, OCCLUDER_POLY, OCCLUDER_V1, OCCLUDER_VERTEX_INDEX

__all__ = [
    "Occlusion",
    "OcclusionCodec",
    "OCCLUSION_CODEC",
    "OCCLUSION_V1_CODEC",
]

OCCLUDER_FLAGS_INACTIVE = 0x1


def _empty(record: Record) -> np.ndarray:
    return np.zeros(0, record.dtype)


@dataclass
class Occlusion:
    """The three arrays of the occlusion lump (read-only views when decoded)."""

    occluders: np.ndarray = field(default_factory=lambda: _empty(OCCLUDER))
    polys: np.ndarray = field(default_factory=lambda: _empty(OCCLUDER_POLY))
    vertex_indices: np.ndarray = field(default_factory=lambda: _empty(OCCLUDER_VERTEX_INDEX))

    def __len__(self) -> int:
        return len(self.occluders)

    def poly_range(self, occluder: int) -> slice:
        row = self.occluders[occluder]
        return slice(int(row["firstpoly"]), int(row["firstpoly"]) + int(row["polycount"]))

    def vertex_range(self, poly: int) -> slice:
        row = self.polys[poly]
        return slice(int(row["firstvertexindex"]), int(row["firstvertexindex"]) + int(row["vertexcount"]))


def _as_dtype(values: np.ndarray, dtype: np.dtype, what: str, ctx: LumpContext) -> np.ndarray:
    """``values`` in exactly ``dtype`` (byte order included), field by field."""
    values = np.asarray(values)
    if values.dtype == dtype:
        return np.ascontiguousarray(values)
    if dtype.names is None:
        return np.ascontiguousarray(values, dtype=dtype)
    missing = [n for n in dtype.names if values.dtype.names is None or n not in values.dtype.names]
    if missing:
        raise BspFormatError(f"{what} lack the field(s) {', '.join(missing)} of lump version {ctx.version}",
                             lump=ctx.name)
    out = np.empty(len(values), dtype)
    for name in dtype.names:
        out[name] = values[name]
    return out


class OcclusionCodec:
    """Lump 9 for one occluder layout (lump version 1 or 2)."""

    mutable = True

    def __init__(self, occluder: np.dtype) -> None:
        self.occluder = occluder

    def __repr__(self) -> str:
        return f"OcclusionCodec({self.occluder.itemsize}-byte doccluderdata_t)"

    def _parts(self, ctx: LumpContext) -> list[tuple[str, np.dtype]]:
        return [
            ("occluders", self.occluder.newbyteorder(ctx.endian)),
            ("polys", OCCLUDER_POLY.dtype.newbyteorder(ctx.endian)),
            ("vertex_indices", OCCLUDER_VERTEX_INDEX.dtype.newbyteorder(ctx.endian)),
        ]

    def decode(self, data: memoryview, ctx: LumpContext) -> Occlusion:
        count_record = COUNT.struct(ctx.endian)
        length, position = len(data), 0
        arrays = {}
        for name, dtype in self._parts(ctx):
            if position + 4 > length:
                raise TruncatedError(
                    f"the lump ends at {length} bytes, before the count of {name}",
                    lump=ctx.name, offset=ctx.file_offset + position, needed=position + 4, available=length,
                )
            count: int = count_record.unpack_from(data, position)[0]
            position += 4
            end = position + count * dtype.itemsize
            if count < 0 or end > length:
                raise TruncatedError(
                    f"{count} {name} of {dtype.itemsize} bytes do not fit in the "
                    f"{length - position} bytes left (lump version {ctx.version})",
                    lump=ctx.name, offset=ctx.file_offset + position - 4, needed=end, available=length,
                )
            arrays[name] = np.frombuffer(data, dtype, count, position)
            position = end
        if position != length:
            raise LumpSizeError(
                f"{length - position} unexpected bytes after the vertex indices "
                f"(lump version {ctx.version}, {self.occluder.itemsize}-byte occluders)",
                lump=ctx.name, offset=ctx.file_offset + position, needed=position, available=length,
            )
        return Occlusion(**arrays)

    def encode(self, value: Occlusion, ctx: LumpContext) -> bytes:
        count_dtype = COUNT.dtype.newbyteorder(ctx.endian)
        parts = []
        for name, dtype in self._parts(ctx):
            array = _as_dtype(getattr(value, name), dtype, name, ctx)
            parts.append(np.array(len(array), count_dtype).tobytes())
            parts.append(array.tobytes())
        return b"".join(parts)

    def count(self, value: Occlusion) -> int:
        return len(value.occluders)


OCCLUSION_V1_CODEC = OcclusionCodec(OCCLUDER_V1.dtype)
OCCLUSION_CODEC = OcclusionCodec(OCCLUDER.dtype)

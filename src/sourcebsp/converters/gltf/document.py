"""A glTF document under construction and its binary chunk, framed as a ``.glb`` file: what the
map, rBSP map and studio model exports share.

pygltflib (the ``export`` extra) is imported here, with the message naming the
extra when it is missing: this package loads only when a ``.glb`` is made.
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ..._extras import needs_extra
from ...errors import BspFormatError
from ...model.geometry import angles_matrix
from .._common import Units, Z_UP_TO_Y_UP, quaternions, to_y_up, unit_scale

with needs_extra("glTF export", "export"):
    import pygltflib

__all__ = ["ARRAY_BUFFER", "ELEMENT_ARRAY_BUFFER", "GlbBuilder", "finite", "glb_pieces", "prop_node_fields"]

# Buffer view targets and accessor component types (glTF 2.0, the OpenGL enums).
ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963
_COMPONENT_TYPES = {np.dtype(np.float32): 5126, np.dtype(np.uint16): 5123, np.dtype(np.uint32): 5125}


class GlbBuilder:
    """A glTF document being built (``gltf``) and its binary chunk, built from 4-byte aligned pieces.

    ``units`` and ``scale`` (exported units per Hammer unit) are those of the
    whole document; the asset's extras record them, with ``asset_extras`` after.
    """

    def __init__(self, units: Units, **asset_extras: str) -> None:
        self.units = units
        self.scale = unit_scale(units)
        self.gltf = pygltflib.GLTF2()
        self.gltf.asset = pygltflib.Asset(version="2.0", generator="sourcebsp",
                                          extras={"units": units, "up": "Y",
                                                  "source_units_per_unit": 1.0 / self.scale, **asset_extras})
        self.parts: list[bytes | memoryview] = []
        self.size = 0

    def view(self, data: bytes | memoryview, target: int | None = None) -> int:
        """A buffer view of ``data`` (kept as given, not copied); its index."""
        pad = (-self.size) % 4
        if pad:
            self.parts.append(b"\0" * pad)
            self.size += pad
        length = memoryview(data).nbytes
        view = pygltflib.BufferView(buffer=0, byteOffset=self.size, byteLength=length)
        if target is not None:
            view.target = target
        self.parts.append(data)
        self.size += length
        self.gltf.bufferViews.append(view)
        return len(self.gltf.bufferViews) - 1

    def accessor(self, array: np.ndarray, kind: str, *, target: int | None = ARRAY_BUFFER,
                 bounds: bool = False, normalized: bool = False) -> int:
        """An accessor of ``array`` (float32, uint16 or uint32 rows of type ``kind``: "VEC3", "SCALAR"...);
        its index.  ``bounds``: with min and max (which positions need); ``normalized``: integers read as [0, 1]."""
        component = _COMPONENT_TYPES[array.dtype]
        # Little-endian and contiguous (a copy only when it is not already); the
        # buffer itself goes into the file, without a bytes copy.
        array = np.ascontiguousarray(array, array.dtype.newbyteorder("<"))
        accessor = pygltflib.Accessor(bufferView=self.view(memoryview(array.data).cast("B"), target),
                                      componentType=component, count=int(array.shape[0]), type=kind)
        if normalized:
            accessor.normalized = True
        if bounds:
            flat = finite(array.reshape(len(array), -1), "vertex positions")
            accessor.min = [float(v) for v in flat.min(0)]
            accessor.max = [float(v) for v in flat.max(0)]
        self.gltf.accessors.append(accessor)
        return len(self.gltf.accessors) - 1

    def pieces(self) -> list[bytes | memoryview]:
        """The finished ``.glb`` file's bytes, in pieces (see :func:`glb_pieces`)."""
        if self.size:
            self.gltf.buffers = [pygltflib.Buffer(byteLength=self.size + (-self.size) % 4)]
        document = self.gltf.gltf_to_json(separators=(",", ":"), indent=None).encode("utf-8")
        return glb_pieces(document, self.parts, self.size)


def glb_pieces(document: bytes, parts: list[bytes | memoryview], size: int) -> list[bytes | memoryview]:
    """The GLB container's pieces: a 12-byte header, the JSON chunk, the BIN chunk if any.

    Chunks are padded to 4 bytes (JSON with spaces, BIN with zeros); a file
    without binary data has no BIN chunk at all, as the specification asks.
    The binary parts (``size`` bytes) are among the pieces as they are, not copied.
    """
    document += b" " * ((-len(document)) % 4)
    pieces: list[bytes | memoryview] = [struct.pack("<I4s", len(document), b"JSON"), document]
    if size:
        padded = size + (-size) % 4
        pieces += [struct.pack("<I4s", padded, b"BIN\0"), *parts, b"\0" * (padded - size)]
    total = sum(memoryview(piece).nbytes for piece in pieces)
    return [struct.pack("<4sII", b"glTF", 2, 12 + total), *pieces]


def finite(values: np.ndarray, what: str) -> np.ndarray:
    """``values``, or a BspFormatError when one is NaN or infinite (JSON has no such numbers)."""
    values = np.asarray(values)
    if not np.isfinite(values).all():
        row = int(np.flatnonzero(~np.isfinite(values.reshape(len(values), -1)).all(axis=1))[0]) \
            if values.ndim > 1 else 0
        raise BspFormatError(f"cannot export to glTF: {what} hold a value that is not a finite number "
                             f"(row {row}: {values[row].tolist()})")
    return values


def prop_node_fields(models: list[str], origins: np.ndarray, angles: np.ndarray, sizes: np.ndarray,
                     skins: list[int], scale: float) -> list[dict[str, Any]]:
    """Node fields of props placed at ``origins`` ``(N, 3)`` with ``angles`` (pitch yaw roll) and
    ``sizes`` ``(N, 3)`` (Hammer's axes, Z up), each named after its model: the glTF node of a
    static prop, in any map format."""
    origin = to_y_up(origins, scale)
    rotation = Z_UP_TO_Y_UP @ angles_matrix(angles) @ Z_UP_TO_Y_UP.T
    quat = quaternions(rotation)
    size = np.asarray(sizes, np.float64)[:, [0, 2, 1]]
    finite(np.concatenate([origin, quat, size], axis=1), "static prop origins, angles and scales")
    out = []
    for i, model in enumerate(models):
        node: dict[str, Any] = {
            "name": model,
            "translation": [float(v) for v in origin[i]],
            "rotation": [float(v) for v in quat[i]],
            "extras": {"model": model, "skin": int(skins[i]), "static_prop": i},
        }
        if not np.allclose(size[i], 1.0):
            node["scale"] = [float(v) for v in size[i]]
        out.append(node)
    return out

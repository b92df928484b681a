"""glTF 2.0 binary (``.glb``) export through pygltflib.

What the file holds:

* one mesh per brush model that has drawn faces (the world is model 0),
  each a node named ``world`` or ``*N classname targetname``, placed by the
  entity's origin and angles; one primitive per material;
* one material per texture, named after the texture path as stored in the
  map (``concrete/concretefloor001a``), so an importer can find the
  material; its base colour factor is the texture's reflectivity (its
  average colour, linear) and, when the map is lit, its base colour texture
  is the lightmap atlas through ``TEXCOORD_1``.  Lightmaps hold finished
  lighting, so the materials use ``KHR_materials_unlit``; a viewer then shows
  reflectivity times baked light, a fair preview of the map;
* vertex attributes: ``POSITION``, ``NORMAL``, ``TEXCOORD_0`` (texture UV,
  1.0 = one texture repeat), ``TEXCOORD_1`` (lightmap atlas UV, when lit)
  and, in meshes with displacements, ``COLOR_0`` = (1, 1, 1, blend alpha);
* the lightmap atlas embedded as a PNG image;
* static props as nodes without meshes, named after their model path, with
  their position, rotation and scale, under a ``static_props`` node;
* units: Hammer units (inches) or metres (1 unit = 0.0254 m); Source's Z-up
  axes become glTF's Y-up ones (``(x, y, z) -> (x, z, -y)``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..lump_ids import LumpId
from ..errors import BspFormatError
from ..numeric import floats, sorted_unique
from ..model.geometry import MapMesh, angles_matrix, build_mesh, iter_models, reflectivity
from ..model.lightmaps import LightmapAtlas, build_atlas, encode_png
from ._common import (Progress, Units, Z_UP_TO_Y_UP, opened, quaternions, report, require, to_y_up,
                      unit_scale)

if TYPE_CHECKING:
    from ..protocols import MapReader, MapSource

__all__ = ["ExportStats", "export_glb", "glb_bytes", "EXPORT_STEPS"]

EXPORT_STEPS = ("meshes", "lightmaps", "gltf", "write")

_ARRAY_BUFFER = 34962
_ELEMENT_ARRAY_BUFFER = 34963
_FLOAT = 5126
_UNSIGNED_SHORT = 5123
_UNSIGNED_INT = 5125
_LINEAR = 9729
_CLAMP_TO_EDGE = 33071
_REPEAT = 10497


@dataclass
class ExportStats:
    """What an export wrote."""

    triangles: int = 0
    vertices: int = 0
    meshes: int = 0
    materials: int = 0
    props: int = 0
    lightmap: tuple[int, int] | None = None  # atlas width, height
    mesh_names: list[str] = field(default_factory=list)
    material_names: list[str] = field(default_factory=list)


class _Blob:
    """The binary chunk, built from 4-byte aligned pieces."""

    def __init__(self, gltf: Any, lib: Any) -> None:
        self.gltf, self.lib = gltf, lib
        self.parts: list[bytes | memoryview] = []
        self.size = 0

    def view(self, data: bytes | memoryview, target: int | None = None) -> int:
        pad = (-self.size) % 4
        if pad:
            self.parts.append(b"\0" * pad)
            self.size += pad
        length = memoryview(data).nbytes
        view = self.lib.BufferView(buffer=0, byteOffset=self.size, byteLength=length)
        if target is not None:
            view.target = target
        self.parts.append(data)
        self.size += length
        self.gltf.bufferViews.append(view)
        return len(self.gltf.bufferViews) - 1

    def accessor(self, array: np.ndarray, kind: str, *, target: int | None = _ARRAY_BUFFER,
                 bounds: bool = False) -> int:
        component = {np.dtype(np.float32): _FLOAT, np.dtype(np.uint16): _UNSIGNED_SHORT,
                     np.dtype(np.uint32): _UNSIGNED_INT}[array.dtype]
        # Little-endian and contiguous (a copy only when it is not already); the
        # buffer itself goes into the file, without a bytes copy.
        array = np.ascontiguousarray(array, array.dtype.newbyteorder("<"))
        accessor = self.lib.Accessor(bufferView=self.view(memoryview(array.data).cast("B"), target),
                                     componentType=component, count=int(array.shape[0]), type=kind)
        if bounds:
            flat = _finite(array.reshape(len(array), -1), "vertex positions")
            accessor.min = [float(v) for v in flat.min(0)]
            accessor.max = [float(v) for v in flat.max(0)]
        self.gltf.accessors.append(accessor)
        return len(self.gltf.accessors) - 1



def _pick_atlas(bsp: MapReader, hdr: bool | None) -> LightmapAtlas | None:
    # Built directly as 8-bit sRGB: the PNG is all the export needs of its pixels.
    if hdr is None:
        return build_atlas(bsp, hdr=False, tonemapped=True) or build_atlas(bsp, hdr=True, tonemapped=True)
    return build_atlas(bsp, hdr=hdr, tonemapped=True)


def glb_bytes(bsp_or_path: MapSource, *, models: Any = "all", include_tools: bool = False,
              units: Units = "hammer", hdr: bool | None = None, props: bool = True,
              progress: Progress | None = None, stats: ExportStats | None = None) -> bytes:
    """The map as a binary glTF file (see the module notes for what it holds).

    ``hdr``: None uses the LDR lightmaps when present, else the HDR ones;
    True / False asks for one kind.  ``stats``, when given, is filled in.
    """
    return b"".join(_glb_pieces(bsp_or_path, models=models, include_tools=include_tools, units=units, hdr=hdr,
                                props=props, progress=progress, stats=stats))


def export_glb(bsp_or_path: MapSource, path: str | Path, **options: Any) -> ExportStats:
    """Write the map to ``path`` as ``.glb`` (atomically); options as :func:`glb_bytes`.

    The file is written piece by piece: the whole ``.glb`` never exists in memory at once.
    """
    from .._io import atomic_write

    stats = ExportStats()
    atomic_write(path, *_glb_pieces(bsp_or_path, stats=stats, **options))
    report(options.get("progress"), "write")
    return stats


def _glb_pieces(bsp_or_path: MapSource, *, models: Any = "all", include_tools: bool = False,
                units: Units = "hammer", hdr: bool | None = None, props: bool = True,
                progress: Progress | None = None, stats: ExportStats | None = None) -> list[bytes | memoryview]:
    """The bytes of the ``.glb`` file, in the pieces they were made in (see :func:`glb_bytes`)."""
    lib = require("pygltflib", "glTF export")
    scale = unit_scale(units)
    with opened(bsp_or_path) as bsp:
        mesh = build_mesh(bsp, models=models, include_tools=include_tools)
        report(progress, "meshes")
        atlas = _pick_atlas(bsp, hdr)
        prop_nodes = _static_props(bsp, scale) if props else []
        name = bsp.path.stem if bsp.path is not None else "map"
        texdata = bsp.lump_or_none(LumpId.TEXDATA)
        texdata = None if texdata is None else np.array(texdata)  # a copy: the map is closed after this block
    png = None
    if atlas is not None:
        # Encoded once a map opened here is closed (its lighting lump gone), and once Pillow holds
        # its copy of the pixels, ours are dropped: from here on only their layout is needed.
        image = atlas.pillow_image()
        atlas = atlas.without_pixels()
        png = encode_png(image)
        del image
    report(progress, "lightmaps")
    gltf, blob, info = _build(lib, mesh, atlas, png, texdata, scale, units, name, prop_nodes)
    del mesh, atlas, png
    report(progress, "gltf")
    if blob.size:
        gltf.buffers = [lib.Buffer(byteLength=blob.size + (-blob.size) % 4)]
    document = gltf.gltf_to_json(separators=(",", ":"), indent=None).encode("utf-8")
    if stats is not None:
        stats.__dict__.update(info.__dict__)
    return _glb(document, blob.parts, blob.size)


def _glb(document: bytes, parts: list[bytes | memoryview], size: int) -> list[bytes | memoryview]:
    """The GLB container's pieces: a 12-byte header, the JSON chunk, the BIN chunk if any.

    Chunks are padded to 4 bytes (JSON with spaces, BIN with zeros); a file
    without binary data has no BIN chunk at all, as the specification asks.
    The binary parts (``size`` bytes) are among the pieces as they are, not copied.
    """
    import struct

    document += b" " * ((-len(document)) % 4)
    pieces: list[bytes | memoryview] = [struct.pack("<I4s", len(document), b"JSON"), document]
    if size:
        padded = size + (-size) % 4
        pieces += [struct.pack("<I4s", padded, b"BIN\0"), *parts, b"\0" * (padded - size)]
    total = sum(memoryview(piece).nbytes for piece in pieces)
    return [struct.pack("<4sII", b"glTF", 2, 12 + total), *pieces]


def _materials(lib: Any, gltf: Any, textures: list[str], used: np.ndarray, texdata: Any,
               has_atlas: bool) -> dict[int, int]:
    """One material per used texdata index; returns {texdata index: material index}."""
    index = {}
    for td in used.tolist():
        name = textures[td] if 0 <= td < len(textures) else ""
        color = [0.8, 0.8, 0.8]
        extras: dict[str, Any] = {"texture": name}
        if texdata is not None and 0 <= td < len(texdata):
            color = reflectivity(texdata[td : td + 1], 0.8)[0].tolist()
            extras["width"] = int(texdata["width"][td])
            extras["height"] = int(texdata["height"][td])
        pbr = lib.PbrMetallicRoughness(baseColorFactor=color + [1.0], metallicFactor=0.0, roughnessFactor=1.0)
        if has_atlas:
            pbr.baseColorTexture = lib.TextureInfo(index=0, texCoord=1)
        material = lib.Material(name=name or f"texdata_{td}", pbrMetallicRoughness=pbr,
                                extensions={"KHR_materials_unlit": {}}, extras=extras)
        gltf.materials.append(material)
        index[td] = len(gltf.materials) - 1
    return index


def _build(lib: Any, mesh: MapMesh, atlas: LightmapAtlas | None, png: bytes | None, texdata: Any, scale: float,
           units: str, name: str, prop_nodes: list[dict[str, Any]]) -> tuple[Any, _Blob, ExportStats]:
    gltf = lib.GLTF2()
    gltf.asset = lib.Asset(version="2.0", generator="sourcebsp",
                           extras={"units": units, "up": "Y", "source_units_per_unit": 1.0 / scale})
    blob = _Blob(gltf, lib)
    stats = ExportStats(props=len(prop_nodes))
    if atlas is not None and png is not None:
        gltf.images.append(lib.Image(bufferView=blob.view(png), mimeType="image/png", name="lightmap_atlas"))
        gltf.samplers.append(lib.Sampler(magFilter=_LINEAR, minFilter=_LINEAR,
                                         wrapS=_CLAMP_TO_EDGE, wrapT=_CLAMP_TO_EDGE))
        gltf.textures.append(lib.Texture(source=0, sampler=0, name="lightmap_atlas"))
        stats.lightmap = (atlas.width, atlas.height)
    tex = mesh.triangle_texture
    material_of = _materials(lib, gltf, mesh.textures, sorted_unique(tex), texdata, atlas is not None)
    root_children = []
    for model, tris in iter_models(mesh):
        vertex_ids = sorted_unique(mesh.triangles[tris].ravel())
        remap = np.full(len(mesh.positions), -1, np.int64)
        remap[vertex_ids] = np.arange(len(vertex_ids))
        position = to_y_up(mesh.positions, scale, rows=vertex_ids, dtype=np.float32)
        normal = to_y_up(mesh.normals, rows=vertex_ids, dtype=np.float32)
        normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
        attributes = lib.Attributes(
            POSITION=blob.accessor(position, "VEC3", bounds=True),
            NORMAL=blob.accessor(normal, "VEC3"),
            TEXCOORD_0=blob.accessor(mesh.uv[vertex_ids].astype(np.float32), "VEC2"),
        )
        if atlas is not None:
            lm = atlas.uv(mesh.vertex_face[vertex_ids], mesh.luxels[vertex_ids])
            attributes.TEXCOORD_1 = blob.accessor(lm, "VEC2")
        if (mesh.triangle_disp[tris] >= 0).any():
            color = np.ones((len(vertex_ids), 4), np.float32)
            color[:, 3] = np.clip(mesh.alpha[vertex_ids] / 255.0, 0, 1)
            attributes.COLOR_0 = blob.accessor(color, "VEC4")
        primitives = []
        order = np.argsort(tex[tris], kind="stable")
        groups = np.split(tris[order], np.flatnonzero(np.diff(tex[tris][order])) + 1)
        index_type = np.uint16 if len(vertex_ids) < 65536 else np.uint32
        for group in groups:
            indices = remap[mesh.triangles[group]].astype(index_type).ravel()
            primitives.append(lib.Primitive(
                attributes=attributes, material=material_of[int(tex[group[0]])], mode=4,
                indices=blob.accessor(indices, "SCALAR", target=_ELEMENT_ARRAY_BUFFER),
            ))
        gltf.meshes.append(lib.Mesh(name=model.name, primitives=primitives))
        node = lib.Node(name=model.name, mesh=len(gltf.meshes) - 1,
                        extras={"model": model.index, "classname": model.classname or ""})
        if model.index and model.angles.any():
            rotation = Z_UP_TO_Y_UP @ model.rotation @ Z_UP_TO_Y_UP.T
            node.rotation = [float(v) for v in _finite(quaternions(rotation[None])[0], f"{model.name}'s angles")]
        if model.index and model.origin.any():
            node.translation = [float(v) for v in _finite(to_y_up(model.origin[None], scale)[0],
                                                          f"{model.name}'s origin")]
        gltf.nodes.append(node)
        root_children.append(len(gltf.nodes) - 1)
        stats.meshes += 1
        stats.triangles += len(tris)
        stats.vertices += len(vertex_ids)
        stats.mesh_names.append(model.name)
    if prop_nodes:
        first = len(gltf.nodes)
        gltf.nodes.extend(lib.Node(**p) for p in prop_nodes)
        gltf.nodes.append(lib.Node(name="static_props", children=list(range(first, first + len(prop_nodes)))))
        root_children.append(len(gltf.nodes) - 1)
    gltf.nodes.append(lib.Node(name=name, children=root_children or None))
    gltf.scenes = [lib.Scene(name=name, nodes=[len(gltf.nodes) - 1])]
    gltf.scene = 0
    if gltf.materials:
        gltf.extensionsUsed = ["KHR_materials_unlit"]
    stats.materials = len(gltf.materials)
    stats.material_names = [m.name for m in gltf.materials]
    return gltf, blob, stats


def _finite(values: np.ndarray, what: str) -> np.ndarray:
    """``values``, or a BspFormatError when one is NaN or infinite (JSON has no such numbers)."""
    values = np.asarray(values)
    if not np.isfinite(values).all():
        row = int(np.flatnonzero(~np.isfinite(values.reshape(len(values), -1)).all(axis=1))[0]) \
            if values.ndim > 1 else 0
        raise BspFormatError(f"cannot export to glTF: {what} hold a value that is not a finite number "
                             f"(row {row}: {values[row].tolist()})")
    return values


def _static_props(bsp: MapReader, scale: float) -> list[dict[str, Any]]:
    """Node fields (name, translation, rotation, scale, extras) of every static prop."""
    try:
        props = bsp.static_props
    except AttributeError:  # pragma: no cover - an older container without static props
        return []
    records = props.props
    if not len(records):
        return []
    names = props.model_names()
    fields = records.dtype.names or ()
    origin = to_y_up(floats(records["origin"]), scale)
    rotation = Z_UP_TO_Y_UP @ angles_matrix(floats(records["angles"])) @ Z_UP_TO_Y_UP.T
    quat = quaternions(rotation)
    size = np.ones((len(records), 3))
    if "uniform_scale" in fields:
        uniform = records["uniform_scale"].astype(np.float64)
        size *= np.where(uniform > 0, uniform, 1.0)[:, None]
    if "non_uniform_scale" in fields:
        vec = records["non_uniform_scale"].astype(np.float64)[:, [0, 2, 1]]
        size *= np.where(vec > 0, vec, 1.0)
    skins = records["skin"].tolist() if "skin" in fields else [0] * len(records)
    _finite(np.concatenate([origin, quat, size], axis=1), "static prop origins, angles and scales")
    out = []
    for i, model in enumerate(names):
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

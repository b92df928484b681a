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
* static props as nodes named after their model path, with their position,
  rotation and scale, under a ``static_props`` node; with a game mounted
  (``game=``), a prop whose model is found (the map's pakfile first) uses
  that model's LOD 0 mesh, one glTF mesh per model named after it as the
  prop dictionary spells it, lower-cased with forward slashes
  (``models/props/barrel01.mdl``), shared by every prop of that model (a
  second mesh of the same name and vertices per other skin family used);
  props whose model is not found stay nodes without a mesh; a prop the map
  lights (its ``sp_*.vhv`` vertex colours, else the leaf ambient cube at its
  lighting origin along each vertex normal: :mod:`.proplight`) gets a mesh
  of its own, of the same name, that shares the model's accessors and adds
  ``COLOR_0`` (linear light in [0, 1], normalized unsigned short RGBA);
* with ``skybox=True``, the 3D skybox (the world's faces, and the static
  props, in the box of ``sky_camera``'s area) as a ``skybox`` node of its
  own, scaled by ``sky_camera``'s scale about its origin, so it stands
  around the playable space as a player sees it;
* units: Hammer units (inches) or metres (1 unit = 0.0254 m); Source's Z-up
  axes become glTF's Y-up ones (``(x, y, z) -> (x, z, -y)``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import queries
from ..._extras import needs_extra
from ..._io import atomic_write
from ...content import studiomodel
from ...content.gamefs import GameFS, fold
from ...errors import BspError
from ...lump_ids import LumpId
from ...numeric import floats, sorted_unique
from ...model.geometry import (BrushModel, MapMesh, build_mesh, iter_models,
                               reflectivity)
from ...model.lightmaps import LightmapAtlas, build_atlas, encode_png
from ...model.respawn import is_respawn_map
from .._common import Progress, Units, Z_UP_TO_Y_UP, opened, quaternions, report, to_y_up, unit_scale
from .document import ELEMENT_ARRAY_BUFFER, GlbBuilder, finite, prop_node_fields
from .options import ExportStats, GltfOptions
from .proplight import light_props
from .respawn import RespawnExportStats, respawn_glb_pieces
from .textures import DEFAULT_TEXTURE_SIZE, TextureLibrary

with needs_extra("glTF export", "export"):
    import pygltflib

if TYPE_CHECKING:
    from ...content.studiomodel import StudioModel
    from ...protocols import MapReader, MapSource
    from .proplight import PropLight

__all__ = ["ExportStats", "GltfOptions", "export_glb", "glb_bytes", "model_glb_bytes", "export_model_glb",
           "EXPORT_STEPS"]

EXPORT_STEPS = ("meshes", "lightmaps", "gltf", "write")

_LINEAR = 9729
_CLAMP_TO_EDGE = 33071
_REPEAT = 10497


def _pick_atlas(bsp: MapReader, hdr: bool | None) -> LightmapAtlas | None:
    # Built directly as 8-bit sRGB: the PNG is all the export needs of its pixels.
    if hdr is None:
        return build_atlas(bsp, hdr=False, tonemapped=True) or build_atlas(bsp, hdr=True, tonemapped=True)
    return build_atlas(bsp, hdr=hdr, tonemapped=True)


def _options(options: GltfOptions | None, fields: dict[str, Any]) -> GltfOptions:
    """``options`` (default: the defaults) with the keyword arguments named as its fields in their place."""
    options = options or GltfOptions()
    return replace(options, **fields) if fields else options


def glb_bytes(bsp_or_path: MapSource, options: GltfOptions | None = None, *, progress: Progress | None = None,
              stats: ExportStats | None = None, **fields: Any) -> bytes:
    """The map as a binary glTF file (see the module notes for what it holds).

    ``options`` (:class:`GltfOptions`), or its fields as keyword arguments
    (``glb_bytes(bsp, units="meters", skybox=True)``), which replace those of
    ``options`` when both are given.  ``stats``, when given, is filled in;
    ``progress`` is called with each finished step of :data:`EXPORT_STEPS`.
    """
    pieces, found = _glb_pieces(bsp_or_path, _options(options, fields), progress)
    if stats is not None:
        stats.__dict__.update(found.__dict__)
    return b"".join(pieces)


def export_glb(bsp_or_path: MapSource, path: str | Path, options: GltfOptions | None = None, *,
               progress: Progress | None = None, **fields: Any) -> ExportStats:
    """Write the map to ``path`` as ``.glb`` (atomically); options as :func:`glb_bytes`.

    The file is written piece by piece: the whole ``.glb`` never exists in memory at once.
    A Titanfall map gives a :class:`~.respawn.RespawnExportStats`.
    """
    pieces, stats = _glb_pieces(bsp_or_path, _options(options, fields), progress)
    atomic_write(path, *pieces)
    report(progress, "write")
    return stats


@dataclass(frozen=True)
class _MapParts:
    """What the export read from the map while it was open."""

    name: str
    mesh: MapMesh
    texdata: np.ndarray | None
    atlas: LightmapAtlas | None  # its layout: the pixels are in ``png``
    png: bytes | None
    prop_nodes: list[dict[str, Any]]
    prop_models: dict[str, StudioModel | str] | None  # None: no game mounted
    prop_light: PropLight | None
    library: TextureLibrary | None  # None: no textures
    skybox: SkyBox | None


def _glb_pieces(bsp_or_path: MapSource, options: GltfOptions,
                progress: Progress | None) -> tuple[list[bytes | memoryview], ExportStats]:
    """The bytes of the ``.glb`` file, in the pieces they were made in, and what they hold
    (see :func:`glb_bytes`)."""
    scale = unit_scale(options.units)
    game = options.game
    with opened(bsp_or_path) as bsp:
        if is_respawn_map(bsp):  # Titanfall: its meshes and prop nodes (the options past units do not apply)
            respawn_stats = RespawnExportStats()
            pieces = respawn_glb_pieces(bsp, units=options.units, stats=respawn_stats)
            for step in EXPORT_STEPS[:-1]:
                report(progress, step)
            return pieces, respawn_stats
        mesh = build_mesh(bsp, models=options.models, include_tools=options.include_tools)
        report(progress, "meshes")
        atlas = _pick_atlas(bsp, options.hdr)
        prop_nodes = _static_props(bsp, scale) if options.props else []
        sky = find_skybox(bsp) if options.skybox else None
        if sky is not None and prop_nodes:
            origins = floats(bsp.static_props.props["origin"])
            for node, inside in zip(prop_nodes, sky.contains(origins).tolist()):
                if inside:
                    node["extras"]["skybox"] = True
        if options.textures and game is None:
            game = GameFS()  # the pakfile alone
        if game is not None:
            game.attach_pakfile(bsp.lump_or_none(LumpId.PAKFILE), str(getattr(bsp, "path", "") or "map"))
        prop_models = _prop_models(game, prop_nodes) if game is not None and prop_nodes else None
        prop_light = None
        if prop_models and options.prop_lighting:
            prop_light = light_props(bsp, prop_nodes, prop_models, options.hdr if atlas is None else atlas.hdr)
        library = _load_textures(game, mesh, prop_models or {}, options.texture_size) \
            if options.textures and game is not None else None
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
    document = GlbBuilder(options.units)
    info = _build(document, _MapParts(name, mesh, texdata, atlas, png, prop_nodes, prop_models, prop_light,
                                      library, sky))
    del mesh, atlas, png
    report(progress, "gltf")
    return document.pieces(), info


def _materials(document: GlbBuilder, parts: _MapParts, images: "_Images | None") -> dict[int, int]:
    """One material per texdata index the meshes use; returns {texdata index: material index}."""
    gltf, textures, texdata, has_atlas = document.gltf, parts.mesh.textures, parts.texdata, parts.atlas is not None
    index = {}
    for td in sorted_unique(parts.mesh.triangle_texture).tolist():
        name = textures[td] if 0 <= td < len(textures) else ""
        color = [0.8, 0.8, 0.8]
        extras: dict[str, Any] = {"texture": name}
        if texdata is not None and 0 <= td < len(texdata):
            color = reflectivity(texdata[td : td + 1], 0.8)[0].tolist()
            extras["width"] = int(texdata["width"][td])
            extras["height"] = int(texdata["height"][td])
        pbr = pygltflib.PbrMetallicRoughness(baseColorFactor=color + [1.0], metallicFactor=0.0, roughnessFactor=1.0)
        material = pygltflib.Material(name=name or f"texdata_{td}", pbrMetallicRoughness=pbr, extras=extras)
        if images is None or not images.dress(material, name, lightmap=has_atlas):
            if has_atlas:
                pbr.baseColorTexture = pygltflib.TextureInfo(index=0, texCoord=1)
            material.extensions = {"KHR_materials_unlit": {}}
        gltf.materials.append(material)
        index[td] = len(gltf.materials) - 1
    return index


def _build(document: GlbBuilder, parts: _MapParts) -> ExportStats:
    """Fill ``document`` with the map's meshes, materials, images and nodes; what it holds."""
    gltf, atlas = document.gltf, parts.atlas
    stats = ExportStats(props=len(parts.prop_nodes))
    if atlas is not None and parts.png is not None:
        gltf.images.append(pygltflib.Image(bufferView=document.view(parts.png), mimeType="image/png",
                                           name="lightmap_atlas"))
        gltf.samplers.append(pygltflib.Sampler(magFilter=_LINEAR, minFilter=_LINEAR,
                                               wrapS=_CLAMP_TO_EDGE, wrapT=_CLAMP_TO_EDGE))
        gltf.textures.append(pygltflib.Texture(source=0, sampler=0, name="lightmap_atlas"))
        stats.lightmap = (atlas.width, atlas.height)
    images = None if parts.library is None else _Images(document, parts.library)
    material_of = _materials(document, parts, images)
    root_children = []
    sky_node = None
    for model, tris, sky in _brush_parts(parts):
        node, vertices = _brush_node(document, parts, model, tris, sky, material_of)
        if sky:
            sky_node = node
        gltf.nodes.append(node)
        root_children.append(len(gltf.nodes) - 1)
        stats.meshes += 1
        stats.triangles += len(tris)
        stats.vertices += vertices
        stats.mesh_names.append(node.name)
    if parts.prop_nodes:
        root_children.append(_static_prop_nodes(document, parts, images, sky_node, stats))
    gltf.nodes.append(pygltflib.Node(name=parts.name, children=root_children or None))
    gltf.scenes = [pygltflib.Scene(name=parts.name, nodes=[len(gltf.nodes) - 1])]
    gltf.scene = 0
    if any((m.extensions or {}).get("KHR_materials_unlit") is not None for m in gltf.materials):
        gltf.extensionsUsed = ["KHR_materials_unlit"]
    if images is not None:
        stats.textures = len(images.index)
    stats.materials = len(gltf.materials)
    stats.material_names = [m.name for m in gltf.materials]
    return stats


def _brush_parts(parts: _MapParts) -> list[tuple[BrushModel, np.ndarray, bool]]:
    """``(model, triangle indices, in the 3D skybox)`` of each brush model; with a skybox, the
    world's triangles inside its box are a part of their own."""
    mesh, skybox = parts.mesh, parts.skybox
    models = [(model, tris, False) for model, tris in iter_models(mesh)]
    if skybox is not None and models and models[0][0].index == 0:
        world, tris = models[0][0], models[0][1]
        inside = skybox.contains(mesh.positions[mesh.triangles[tris]].mean(axis=1))
        models[0] = (world, tris[~inside], False)
        if inside.any():
            models.append((world, tris[inside], True))
        models = [part for part in models if len(part[1])]
    return models


def _brush_node(document: GlbBuilder, parts: _MapParts, model: BrushModel, tris: np.ndarray, sky: bool,
                material_of: dict[int, int]) -> tuple[pygltflib.Node, int]:
    """The node of a brush model's triangles ``tris`` and their mesh (one primitive per material,
    added to ``document``), and how many vertices the mesh has."""
    gltf, mesh, atlas, skybox, scale = document.gltf, parts.mesh, parts.atlas, parts.skybox, document.scale
    tex = mesh.triangle_texture
    vertex_ids = sorted_unique(mesh.triangles[tris].ravel())
    remap = np.full(len(mesh.positions), -1, np.int64)
    remap[vertex_ids] = np.arange(len(vertex_ids))
    position = to_y_up(mesh.positions, scale, rows=vertex_ids, dtype=np.float32)
    normal = to_y_up(mesh.normals, rows=vertex_ids, dtype=np.float32)
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    attributes = pygltflib.Attributes(
        POSITION=document.accessor(position, "VEC3", bounds=True),
        NORMAL=document.accessor(normal, "VEC3"),
        TEXCOORD_0=document.accessor(mesh.uv[vertex_ids].astype(np.float32), "VEC2"),
    )
    if atlas is not None:
        lm = atlas.uv(mesh.vertex_face[vertex_ids], mesh.luxels[vertex_ids])
        attributes.TEXCOORD_1 = document.accessor(lm, "VEC2")
    if (mesh.triangle_disp[tris] >= 0).any():
        color = np.ones((len(vertex_ids), 4), np.float32)
        color[:, 3] = np.clip(mesh.alpha[vertex_ids] / 255.0, 0, 1)
        attributes.COLOR_0 = document.accessor(color, "VEC4")
    primitives = []
    order = np.argsort(tex[tris], kind="stable")
    groups = np.split(tris[order], np.flatnonzero(np.diff(tex[tris][order])) + 1)
    index_type = np.uint16 if len(vertex_ids) < 65536 else np.uint32
    for group in groups:
        indices = remap[mesh.triangles[group]].astype(index_type).ravel()
        primitives.append(pygltflib.Primitive(
            attributes=attributes, material=material_of[int(tex[group[0]])], mode=4,
            indices=document.accessor(indices, "SCALAR", target=ELEMENT_ARRAY_BUFFER),
        ))
    mesh_name = "skybox" if sky else model.name
    gltf.meshes.append(pygltflib.Mesh(name=mesh_name, primitives=primitives))
    node = pygltflib.Node(name=mesh_name, mesh=len(gltf.meshes) - 1,
                          extras={"model": model.index, "classname": model.classname or ""})
    if sky and skybox is not None:
        # The engine draws the 3D skybox as seen from sky_camera, the player's view shrunk by
        # its scale: world = (sky - sky_camera origin) * scale.
        node.scale = [skybox.scale] * 3
        node.translation = [float(v) for v in to_y_up(-skybox.origin[None] * skybox.scale, scale)[0]]
        node.extras = {**node.extras, "skybox": True, "sky_camera_scale": skybox.scale}
    elif model.index and model.angles.any():
        rotation = Z_UP_TO_Y_UP @ model.rotation @ Z_UP_TO_Y_UP.T
        node.rotation = [float(v) for v in finite(quaternions(rotation[None])[0], f"{model.name}'s angles")]
    if model.index and model.origin.any():
        node.translation = [float(v) for v in finite(to_y_up(model.origin[None], scale)[0],
                                                     f"{model.name}'s origin")]
    return node, len(vertex_ids)


def _static_prop_nodes(document: GlbBuilder, parts: _MapParts, images: "_Images | None",
                       sky_node: pygltflib.Node | None, stats: ExportStats) -> int:
    """Add a node per static prop (with its model's mesh when a game is mounted) and the
    ``static_props`` node above those outside the skybox; its index.  The skybox's props become
    children of ``sky_node``, so they shrink with it."""
    gltf, prop_nodes = document.gltf, parts.prop_nodes
    if parts.prop_models is not None:
        _place_prop_meshes(_ModelMeshes(document, images), parts, stats)
    first = len(gltf.nodes)
    gltf.nodes.extend(pygltflib.Node(**p) for p in prop_nodes)
    in_sky = [first + i for i, p in enumerate(prop_nodes) if p["extras"].get("skybox")]
    if in_sky and sky_node is not None:
        sky_node.children = in_sky
    in_world = [first + i for i, p in enumerate(prop_nodes) if first + i not in set(sky_node.children or ())] \
        if sky_node is not None else list(range(first, first + len(prop_nodes)))
    gltf.nodes.append(pygltflib.Node(name="static_props", children=in_world or None))
    return len(gltf.nodes) - 1


def _static_props(bsp: MapReader, scale: float) -> list[dict[str, Any]]:
    """Node fields (name, translation, rotation, scale, extras) of every static prop."""
    try:
        props = bsp.static_props
    except AttributeError:  # pragma: no cover - an older container without static props
        return []
    records = props.props
    if not len(records):
        return []
    fields = records.dtype.names or ()
    size = np.ones((len(records), 3))
    if "uniform_scale" in fields:
        uniform = records["uniform_scale"].astype(np.float64)
        size *= np.where(uniform > 0, uniform, 1.0)[:, None]
    if "non_uniform_scale" in fields:
        vec = records["non_uniform_scale"].astype(np.float64)
        size *= np.where(vec > 0, vec, 1.0)
    if props.scales is not None:  # Vindictus's scale array
        vec = props.scale_vectors()
        size *= np.where(vec > 0, vec, 1.0)
    skins = records["skin"].tolist() if "skin" in fields else [0] * len(records)
    return prop_node_fields(props.model_names(), floats(records["origin"]), floats(records["angles"]), size,
                            skins, scale)


# ---- studio models: static props and ``sourcebsp model`` -------------------------------

def _prop_models(game: "GameFS", prop_nodes: list[dict[str, Any]]) -> "dict[str, StudioModel | str]":
    """{prop model name: its model, or why it is not drawn}, each model read once, the map's pakfile first."""
    read: dict[str, StudioModel | str] = {}  # by the name the engine looks up: each file read once
    found: dict[str, StudioModel | str] = {}
    for node in prop_nodes:
        name = node["extras"]["model"]
        if name in found:
            continue
        key = fold(name)
        if key not in read:
            try:
                model = studiomodel.load_model(game, name)
            except BspError as exc:
                read[key] = str(exc)
            else:
                read[key] = "not found" if model is None else model
        found[name] = read[key]
    return found


class _ModelMeshes:
    """glTF meshes of studio models: vertex data written once per model, one mesh per (model, skin family)."""

    def __init__(self, document: GlbBuilder, images: "_Images | None" = None) -> None:
        self.document, self.gltf, self.scale, self.images = document, document.gltf, document.scale, images
        # id(model) -> (attributes, index accessors)
        self.attributes: dict[int, tuple[pygltflib.Attributes, list[int]]] = {}
        self.meshes: dict[tuple[int, int, str], int] = {}
        self.materials: dict[str, int] = {}

    def material(self, name: str) -> int:
        if name not in self.materials:
            pbr = pygltflib.PbrMetallicRoughness(baseColorFactor=[0.8, 0.8, 0.8, 1.0], metallicFactor=0.0,
                                                 roughnessFactor=1.0)
            material = pygltflib.Material(name=name, pbrMetallicRoughness=pbr, extras={"texture": name})
            if self.images is not None:
                self.images.dress(material, name, lightmap=False)
            self.gltf.materials.append(material)
            self.materials[name] = len(self.gltf.materials) - 1
        return self.materials[name]

    def mesh(self, model: "StudioModel", mesh_name: str, skin: int, colors: np.ndarray | None = None,
             extras: dict[str, Any] | None = None) -> int | None:
        """The index of the model's mesh in skin family ``skin`` (None for a model without triangles).

        With ``colors`` ((num_vertices, 4) uint16, normalized linear RGBA: see
        :mod:`.proplight`), a mesh of its own that shares the model's accessors
        and adds them as ``COLOR_0``.
        """
        if not model.num_triangles:
            return None
        family = skin if 0 <= skin < max(len(model.skins), 1) else 0
        key = (id(model), family, mesh_name)
        if key in self.meshes and colors is None:
            return self.meshes[key]
        if id(model) not in self.attributes:
            document = self.document
            position = finite(to_y_up(model.positions, self.scale, dtype=np.float32), f"{mesh_name}'s vertices")
            normal = to_y_up(model.normals, dtype=np.float32)
            normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
            normal[~np.isfinite(normal).all(axis=1)] = (0.0, 1.0, 0.0)
            normal[np.linalg.norm(normal, axis=1) < 0.5] = (0.0, 1.0, 0.0)  # a zero normal is not a unit one
            uv = np.where(np.isfinite(model.uvs), model.uvs, 0.0).astype(np.float32)
            attributes = pygltflib.Attributes(POSITION=document.accessor(position, "VEC3", bounds=True),
                                              NORMAL=document.accessor(normal, "VEC3"),
                                              TEXCOORD_0=document.accessor(uv, "VEC2"))
            index_type = np.uint16 if model.num_vertices < 65536 else np.uint32
            indices = [document.accessor(m.triangles.astype(index_type).ravel(), "SCALAR",
                                         target=ELEMENT_ARRAY_BUFFER) if len(m.triangles) else -1
                       for m in model.meshes]
            self.attributes[id(model)] = (attributes, indices)
        attributes, indices = self.attributes[id(model)]
        if colors is not None:
            attributes = pygltflib.Attributes(POSITION=attributes.POSITION, NORMAL=attributes.NORMAL,
                                              TEXCOORD_0=attributes.TEXCOORD_0,
                                              COLOR_0=self.document.accessor(colors, "VEC4", normalized=True))
        primitives = [pygltflib.Primitive(attributes=attributes, indices=index, mode=4,
                                          material=self.material(model.material_of(m, family)))
                      for m, index in zip(model.meshes, indices) if index >= 0]
        self.gltf.meshes.append(pygltflib.Mesh(name=mesh_name, primitives=primitives,
                                               extras={"skin": family, "triangles": model.num_triangles,
                                                       **(extras or {})}))
        if colors is not None:
            return len(self.gltf.meshes) - 1
        self.meshes[key] = len(self.gltf.meshes) - 1
        return self.meshes[key]


def _place_prop_meshes(meshes: _ModelMeshes, parts: _MapParts, stats: ExportStats) -> None:
    """Give each prop node its model's mesh (a lit prop: its own, with its colours); count the props drawn
    and those left empty."""
    prop_nodes, models, light = parts.prop_nodes, parts.prop_models or {}, parts.prop_light
    for i, node in enumerate(prop_nodes):
        name = node["extras"]["model"]
        model = models.get(name)
        if model is None or isinstance(model, str):
            stats.props_missing += 1
            continue
        colors = light.colors[i] if light is not None else None
        source = light.sources[i] if light is not None else None
        extras = None if source is None else {"lighting": source, "static_prop": node["extras"]["static_prop"]}
        index = meshes.mesh(model, name.lower().replace("\\", "/"), int(node["extras"]["skin"]), colors, extras)
        if index is None:
            stats.props_missing += 1
            continue
        node["mesh"] = index
        stats.props_meshed += 1
        stats.props_vertex_lit += source == "vertex"
        stats.props_ambient_lit += source == "ambient"
        if source is not None:
            node["extras"]["lighting"] = source
    if light is not None:
        stats.lighting_problems = list(light.problems)
    stats.prop_models = len({id(m) for m in models.values() if not isinstance(m, str)})
    stats.missing_models = sorted(f"{name}: {why}" for name, why in models.items() if isinstance(why, str))


def model_glb_pieces(model: "StudioModel", *, skin: int = 0, units: Units = "hammer") -> list[bytes | memoryview]:
    """A studio model's LOD 0 mesh (skin family ``skin``) as the pieces of a ``.glb`` file."""
    document = GlbBuilder(units)
    gltf = document.gltf
    name = model.name.replace("\\", "/")
    index = _ModelMeshes(document).mesh(model, name, skin)
    gltf.nodes.append(pygltflib.Node(name=name, mesh=index, extras={"skin": skin}))
    gltf.scenes = [pygltflib.Scene(name=name, nodes=[0])]
    gltf.scene = 0
    return document.pieces()


def model_glb_bytes(model: "StudioModel", *, skin: int = 0, units: Units = "hammer") -> bytes:
    """A studio model's LOD 0 mesh as a binary glTF file (see :func:`model_glb_pieces`)."""
    return b"".join(model_glb_pieces(model, skin=skin, units=units))


def export_model_glb(model: "StudioModel", path: str | Path, *, skin: int = 0, units: Units = "hammer") -> None:
    """Write a studio model's LOD 0 mesh to ``path`` as ``.glb`` (atomically)."""
    atomic_write(path, *model_glb_pieces(model, skin=skin, units=units))



# ---- textures (``textures=True``) --------------------------------------------------------

def _load_textures(game: "GameFS", mesh: MapMesh, prop_models: "dict[str, StudioModel | str]",
                   size: int | None) -> "TextureLibrary":
    """Every material's look and texture read while the map (and its pakfile) is open."""
    library = TextureLibrary.for_game(game, DEFAULT_TEXTURE_SIZE if size is None else size)
    names = [t for t in mesh.textures if t]
    for model in {id(m): m for m in prop_models.values() if not isinstance(m, str)}.values():
        names += [model.material_of(part, family) for part in model.meshes
                  for family in range(max(len(model.skins), 1))]
    for name in dict.fromkeys(names):
        look = library.look(name)
        if look is not None:
            for texture in (look.base, look.base2):
                if texture:
                    library.image(texture)
    return library


class _Images:
    """Texture images in the glTF, each once, and the materials that use them."""

    def __init__(self, document: GlbBuilder, library: "TextureLibrary") -> None:
        self.gltf, self.blob, self.library = document.gltf, document, library
        self.index: dict[str, int] = {}  # texture name -> glTF texture index
        self.sampler: int | None = None

    def texture(self, name: str) -> int | None:
        key = fold(name)
        if key not in self.index:
            image = self.library.image(name)
            if image is None:
                return None
            if self.sampler is None:
                self.gltf.samplers.append(pygltflib.Sampler(magFilter=_LINEAR, minFilter=_LINEAR,
                                                            wrapS=_REPEAT, wrapT=_REPEAT))
                self.sampler = len(self.gltf.samplers) - 1
            self.gltf.images.append(pygltflib.Image(bufferView=self.blob.view(image.png), mimeType="image/png",
                                                    name=key))
            self.gltf.textures.append(pygltflib.Texture(source=len(self.gltf.images) - 1, sampler=self.sampler,
                                                        name=key))
            self.index[key] = len(self.gltf.textures) - 1
        return self.index[key]

    def dress(self, material: pygltflib.Material, name: str, *, lightmap: bool) -> bool:
        """Give ``material`` its VMT's base texture and alpha / culling; False when no texture was found.

        The baked light of a brush face stays on ``TEXCOORD_1`` as the
        occlusion texture (glTF has no slot for light that multiplies the
        colour but the unlit extension's, which the texture now takes).
        """
        look = self.library.look(name)
        if look is None or not look.base:
            return False
        index = self.texture(look.base)
        if index is None:
            return False
        pbr = material.pbrMetallicRoughness
        pbr.baseColorTexture = pygltflib.TextureInfo(index=index, texCoord=0)
        pbr.baseColorFactor = [1.0, 1.0, 1.0, 1.0]
        if lightmap:
            material.occlusionTexture = pygltflib.OcclusionTextureInfo(index=0, texCoord=1)
        if look.base2:
            second = self.texture(look.base2)
            if second is not None:  # the blend's second texture, for an importer that knows it
                material.extras = {**(material.extras or {}), "baseColorTexture2": {"index": second, "texCoord": 0}}
        if look.translucent:
            material.alphaMode = "BLEND"
        elif look.alpha_test:
            material.alphaMode = "MASK"
            material.alphaCutoff = look.alpha_cutoff
        material.doubleSided = look.two_sided
        return True



# ---- the 3D skybox (``skybox=True``) ------------------------------------------------------

@dataclass(frozen=True)
class SkyBox:
    """The 3D skybox: the box of the leaves of ``sky_camera``'s area, its origin and scale."""

    low: np.ndarray
    high: np.ndarray
    origin: np.ndarray
    scale: float

    def contains(self, points: np.ndarray) -> np.ndarray:
        points = np.asarray(points, np.float64)
        inside: np.ndarray = np.all((points >= self.low) & (points <= self.high), axis=1)
        return inside


def find_skybox(bsp: MapReader) -> SkyBox | None:
    """The map's 3D skybox, or None without a ``sky_camera`` inside an area of its own."""
    camera = next((e for e in bsp.entities if str(e.get("classname", "")).lower() == "sky_camera"), None)
    if camera is None or not bsp.has_lump(LumpId.LEAFS) or not bsp.has_lump(LumpId.NODES):
        return None
    try:
        origin = np.array([float(v) for v in str(camera.get("origin", "")).split()], np.float64)
        size = float(str(camera.get("scale", "16")).split()[0])
    except (ValueError, IndexError):
        return None
    if origin.shape != (3,) or not np.isfinite(origin).all() or not np.isfinite(size) or size <= 0:
        return None
    leaf = int(np.asarray(queries.leaf_at(bsp, origin[None]))[0])
    leafs = bsp.lump_or_none(LumpId.LEAFS)  # None: kept raw (a layout sourcebsp does not know)
    if leafs is None or not 0 <= leaf < len(leafs) or "area_flags" not in (leafs.dtype.names or ()):
        return None
    area = leafs["area_flags"].astype(np.int64) & 0x1FF  # bspfile.h: short area:9, flags:7
    if area[leaf] == 0:  # area 0 is the solid outside: no skybox area to cut out
        return None
    mine = area == area[leaf]
    return SkyBox(leafs["mins"][mine].min(axis=0).astype(np.float64),
                  leafs["maxs"][mine].max(axis=0).astype(np.float64), origin, size)

"""Studio models (``.mdl`` + ``.vvd`` + ``.vtx``) read as meshes, with numpy and no other dependency.

:func:`load_model` finds a model's three files (case-insensitively, in a
folder, a mounted game or a map's pakfile) and builds the LOD 0 mesh of its
chosen body groups: positions, normals, texture coordinates (model space,
Source's Z-up axes, bind pose) and one triangle list per mesh with its
skin reference, plus what the ``.mdl`` names: textures, ``cdmaterials``,
skin families, body parts, ``$includemodel`` files.

One module per file format: :mod:`.mdl`, :mod:`.vvd`, :mod:`.vtx`, and
:mod:`.vhv` for the per-vertex light a map bakes for a static prop, which
:meth:`StudioModel.vertex_colors` lays onto the model's vertices.  Files
come from strangers: every count and offset is checked before use, and a
broken file raises :class:`ModelFormatError` (a ``BspError``) naming the file
and the byte.  Arrays are views of the file's bytes or sized from counts
checked against them, so memory stays within a small multiple of the files.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ...errors import BspError
from ._common import ModelFormatError, ModelTruncatedError
from .mdl import MdlHeader, read_mdl
from .vhv import PropVertexLighting
from .vtx import VtxMesh, read_vtx
from .vvd import read_vvd

if TYPE_CHECKING:
    from ..gamefs import GameFS

__all__ = ["StudioModel", "ModelMesh", "ModelFormatError", "ModelTruncatedError", "MissingModelFiles",
           "load_model", "load_model_file", "build_model", "VTX_SUFFIXES"]

VTX_SUFFIXES = (".dx90.vtx", ".dx80.vtx", ".sw.vtx", ".vtx")  # the engine's order of preference


class MissingModelFiles(BspError):
    """A model whose ``.mdl`` has vertices but whose ``.vvd`` or ``.vtx`` is not found."""


@dataclass
class ModelMesh:
    """One ``mstudiomesh_t`` of LOD 0: triangles (counter-clockwise, indices into the model's vertices)
    and the skin reference that picks its texture from a skin family."""

    bodypart: int
    model: int
    mesh: int
    skinref: int
    triangles: np.ndarray  # (n, 3) int64


@dataclass
class StudioModel:
    """A studio model's LOD 0 mesh for one choice of body groups, and what it names.

    ``positions``, ``normals`` (float32, (n, 3)) and ``uvs`` ((n, 2)) hold only
    the vertices the chosen body groups' triangles use, in ``.vvd`` order.
    """

    name: str
    header: MdlHeader
    positions: np.ndarray
    normals: np.ndarray
    uvs: np.ndarray
    meshes: list[ModelMesh]
    choices: list[int]  # the model chosen in each body part
    has_mesh_files: bool = True
    materials: list[str] = field(default_factory=list)  # per texture: its material path, found or first guess
    # The .vvd vertex (LOD 0, after fixups) of each of ``positions``: sorted, distinct.
    vertex_ids: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    # Per LOD 0 mesh of every body part's every model (file order: body part, model, mesh), the .vvd
    # vertex of each of its strip-group vertices; None when the files disagree on a model not chosen.
    strip_vertices: list[np.ndarray] | None = field(default_factory=list)

    @property
    def version(self) -> int:
        return self.header.version

    @property
    def num_vertices(self) -> int:
        return len(self.positions)

    @property
    def num_triangles(self) -> int:
        return sum(len(m.triangles) for m in self.meshes)

    @property
    def textures(self) -> list[str]:
        return self.header.textures

    @property
    def skins(self) -> np.ndarray:
        return self.header.skins

    @property
    def includes(self) -> list[str]:
        return self.header.includes

    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(min, max) of the mesh's vertices, or None without vertices."""
        if not len(self.positions):
            return None
        return self.positions.min(0), self.positions.max(0)

    def texture_of(self, mesh: ModelMesh, skin: int = 0) -> int:
        """The texture index a mesh draws with in skin family ``skin`` (family 0 when out of range)."""
        skins = self.header.skins
        if not skins.size:
            return mesh.skinref
        family = skin if 0 <= skin < len(skins) else 0
        return int(skins[family, mesh.skinref]) if 0 <= mesh.skinref < skins.shape[1] else 0

    def material_of(self, mesh: ModelMesh, skin: int = 0) -> str:
        """The material path (``models/props/barrel01``) of a mesh in skin family ``skin``."""
        index = self.texture_of(mesh, skin)
        return self.materials[index] if 0 <= index < len(self.materials) else f"texture_{index}"

    @property
    def num_strip_vertices(self) -> int:
        """Strip-group vertices of LOD 0 over every body part model: the colours a ``.vhv`` holds for it."""
        return sum(len(ids) for ids in self.strip_vertices or ())

    def vertex_colors(self, lighting: PropVertexLighting) -> np.ndarray:
        """The (num_vertices, 4) uint8 RGBA colours a static prop's ``.vhv`` gives this model's vertices.

        vrad stores one colour per strip-group vertex of each LOD 0 mesh of every
        body part model, in the ``.vtx`` order; each lands on the ``.vvd`` vertex
        that strip-group vertex draws.  A file from another compile of the model
        (checksum) or of another layout (mesh or vertex counts) raises
        :class:`ModelFormatError` naming the ``.vhv``, as the engine ignores it.
        """
        if lighting.checksum != self.header.checksum % (1 << 32):
            raise ModelFormatError(f"checksum {lighting.checksum} is not its model's {self.header.checksum}: "
                                   f"lit for another compile of {self.name}", file=lighting.file, offset=4)
        if self.strip_vertices is None:
            raise ModelFormatError(f"{self.name}'s .vtx and .mdl disagree on a body part model: its vertex "
                                   f"order is unknown", file=lighting.file)
        counts = lighting.vertex_counts(0)
        expected = [len(ids) for ids in self.strip_vertices]
        if counts != expected:
            first = next((i for i, (a, b) in enumerate(zip(counts, expected)) if a != b), min(len(counts),
                                                                                            len(expected)))
            raise ModelFormatError(f"LOD 0 meshes of {counts[:8]} vertices, {self.name}'s strip groups "
                                   f"have {expected[:8]} (mesh {first} differs)", file=lighting.file,
                                   offset=40 + 28 * first)
        colors = np.zeros((self.num_vertices, 4), np.uint8)
        if not self.num_vertices or not expected:
            return colors
        strip = np.concatenate(self.strip_vertices)
        given = np.concatenate(lighting.mesh_colors(0))
        at = np.minimum(np.searchsorted(self.vertex_ids, strip), self.num_vertices - 1)
        drawn = self.vertex_ids[at] == strip  # strip vertices of the chosen body group models
        colors[at[drawn]] = given[drawn]
        return colors

    def summary(self) -> dict[str, Any]:
        """The facts ``sourcebsp model --json`` prints."""
        bounds = self.bounds()
        return {
            "name": self.name, "version": self.version, "checksum": self.header.checksum,
            "vertices": self.num_vertices, "triangles": self.num_triangles,
            "meshes": len(self.meshes), "has_mesh_files": self.has_mesh_files,
            "materials": self.materials, "textures": self.textures, "cdmaterials": self.header.cdmaterials,
            "skins": [[self.materials[t] if 0 <= t < len(self.materials) else f"texture_{t}" for t in family]
                      for family in self.header.skins.tolist()],
            "bodyparts": [{"name": bp.name, "models": [m.name for m in bp.models], "default": self.choices[i]}
                          for i, bp in enumerate(self.header.bodyparts)],
            "bbox": None if bounds is None else [[float(v) for v in bounds[0]], [float(v) for v in bounds[1]]],
            "hull": [list(self.header.hull[0]), list(self.header.hull[1])],
            "includes": self.includes, "surfaceprop": self.header.surfaceprop,
        }


Reader = Callable[[str], "tuple[str, bytes] | None"]  # a file name -> (name as found, bytes) or None


def build_model(name: str, mdl: bytes, vvd: tuple[str, bytes] | None, vtx: tuple[str, bytes] | None, *,
                bodygroups: Sequence[int] | None = None, lod: int = 0,
                material_exists: Callable[[str], bool] | None = None) -> StudioModel:
    """A :class:`StudioModel` from the bytes of its files (``vvd``/``vtx``: ``(name, bytes)`` or None).

    ``bodygroups`` picks the model of each body part (default: the first);
    ``material_exists`` (``"models/x/y"`` -> bool) picks the ``cdmaterials``
    folder each texture is found in, as the engine tries them in order.
    """
    header = read_mdl(mdl, name)
    choices = [0] * len(header.bodyparts)
    for i, pick in enumerate(bodygroups or ()):
        if i < len(choices) and 0 <= pick < len(header.bodyparts[i].models):
            choices[i] = pick
    materials = _materials(header, material_exists)
    chosen = [(b, choices[b], bp.models[choices[b]]) for b, bp in enumerate(header.bodyparts) if bp.models]
    if not any(len(model.meshes) and model.num_vertices for _, _, model in chosen):
        empty = np.empty((0, 3), np.float32)
        return StudioModel(name, header, empty, empty.copy(), np.empty((0, 2), np.float32), [], choices,
                           vvd is not None and vtx is not None, materials)
    missing = [what for what, found in (("vvd", vvd), ("vtx", vtx)) if found is None]
    if vvd is None or vtx is None:
        raise MissingModelFiles(f"{name}: its mesh files are missing ({' and '.join('.' + m for m in missing)})")
    vvd_checksum, vertices = read_vvd(vvd[1], vvd[0], lod)
    vtx_checksum, strips = read_vtx(vtx[1], vtx[0], lod)
    for file, checksum in ((vvd[0], vvd_checksum), (vtx[0], vtx_checksum)):
        if checksum != header.checksum:
            raise ModelFormatError(f"checksum {checksum} is not its model's {header.checksum}: the files are "
                                   f"from different compiles", file=file, offset=8)
    if len(strips) != len(header.bodyparts):
        raise ModelFormatError(f"{len(strips)} body parts, the model has {len(header.bodyparts)}", file=vtx[0],
                               offset=28)
    meshes: list[ModelMesh] = []
    for b, m, model in chosen:
        if m >= len(strips[b]):
            raise ModelFormatError(f"body part {b} has {len(strips[b])} models, the .mdl {len(header.bodyparts[b].models)}",
                                   file=vtx[0])
        parts = strips[b][m]
        if parts and len(parts) != len(model.meshes):
            raise ModelFormatError(f"body part {b} model {m}: {len(parts)} meshes, the .mdl has "
                                   f"{len(model.meshes)}", file=vtx[0])
        for k, part in enumerate(parts):
            tris = part.triangles
            mesh = model.meshes[k]
            base = model.first_vertex + int(mesh["vertexoffset"])
            if len(tris) and (base < 0 or base + int(tris.max()) >= len(vertices)):
                raise ModelFormatError(f"body part {b} model {m} mesh {k}: vertex {base + int(tris.max())} of "
                                       f"{len(vertices)}", file=vtx[0])
            # Direct3D's clockwise front faces become glTF's counter-clockwise ones.
            meshes.append(ModelMesh(b, m, k, int(mesh["material"]), (tris[:, ::-1] + base)))
    used = np.unique(np.concatenate([mesh.triangles.ravel() for mesh in meshes])) if meshes else np.empty(0, np.int64)
    remap = np.zeros(len(vertices), np.int64)
    remap[used] = np.arange(len(used))
    for mesh in meshes:
        mesh.triangles = remap[mesh.triangles]
    picked = vertices[used]
    return StudioModel(name, header, np.ascontiguousarray(picked["vecPosition"], np.float32),
                       np.ascontiguousarray(picked["vecNormal"], np.float32),
                       np.ascontiguousarray(picked["vecTexCoord"], np.float32), meshes, choices, True, materials,
                       used, _strip_vertices(header, strips, len(vertices)))


def _strip_vertices(header: MdlHeader, strips: list[list[list[VtxMesh]]], num_vertices: int) -> list[np.ndarray] | None:
    """The .vvd vertex of every LOD 0 strip-group vertex, per mesh of every body part model (see StudioModel)."""
    out = []
    for bodypart, models in zip(header.bodyparts, strips):
        if len(models) != len(bodypart.models):
            return None
        for model, parts in zip(bodypart.models, models):
            if parts and len(parts) != len(model.meshes):
                return None
            for mesh, part in zip(model.meshes, parts):
                ids = part.vertex_ids + (model.first_vertex + int(mesh["vertexoffset"]))
                if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= num_vertices):
                    return None
                out.append(ids)
    return out


def _materials(header: MdlHeader, exists: Callable[[str], bool] | None) -> list[str]:
    """Per texture, ``cdmaterials`` folder + name: the first folder holding it (then the materials root),
    else the first folder."""
    out = []
    folders = [f.strip("/") for f in header.cdmaterials] or [""]
    for texture in header.textures:
        tex = texture.strip("/").lower()
        candidates = [f"{folder}/{tex}".strip("/").lower() for folder in folders]
        # The materials root is tried last, as the engine does when no folder holds the texture.
        found = next((c for c in candidates + [tex] if exists is not None and exists(c)), candidates[0])
        out.append(found)
    return out


def _folder_reader(folder: Path) -> Reader:
    """Look-ups in one folder that ignore case, as the engine's do on Windows."""
    listing: dict[str, str] | None = None

    def read(name: str) -> tuple[str, bytes] | None:
        nonlocal listing
        if listing is None:
            try:
                listing = {entry.lower(): entry for entry in sorted(os.listdir(folder), reverse=True)}
            except OSError:
                listing = {}
        stored = listing.get(name.lower())
        if stored is None:
            return None
        path = folder / stored
        return str(path), path.read_bytes()

    return read


def _mesh_files(stem: str, read: Reader) -> tuple[tuple[str, bytes] | None, tuple[str, bytes] | None]:
    vvd = read(stem + ".vvd")
    vtx = None
    for suffix in VTX_SUFFIXES:
        vtx = read(stem + suffix)
        if vtx is not None:
            break
    return vvd, vtx


def load_model_file(path: str | os.PathLike[str], *, bodygroups: Sequence[int] | None = None,
                    materials_root: Callable[[str], bool] | None = None) -> StudioModel:
    """The model at ``path`` (an ``.mdl`` file), its mesh files found beside it whatever their case."""
    path = Path(path)
    try:
        mdl = path.read_bytes()
    except OSError as exc:
        raise BspError(f"cannot read {path}: {exc.strerror or exc}") from exc
    stem = path.name[: -len(".mdl")] if path.name.lower().endswith(".mdl") else path.name
    vvd, vtx = _mesh_files(stem, _folder_reader(path.parent))
    return build_model(str(path), mdl, vvd, vtx, bodygroups=bodygroups, material_exists=materials_root)


def load_model(fs: "GameFS", name: str, *, bodygroups: Sequence[int] | None = None,
               max_size: int | None = None) -> StudioModel | None:
    """The model ``name`` (``models/props/barrel01.mdl``) from a mounted game (its pakfile first),
    or None when its ``.mdl`` is found nowhere; a file of more than ``max_size`` bytes counts as not found."""

    def read(file: str) -> tuple[str, bytes] | None:
        found = fs.fetch(file, max_size=max_size)
        return None if found is None else (found[0].describe(), found[1])

    mdl = read(name)
    if mdl is None:
        return None
    lowered = name.lower()
    stem = name[: -len(".mdl")] if lowered.endswith(".mdl") else name
    vvd, vtx = _mesh_files(stem, read)
    return build_model(mdl[0], mdl[1], vvd, vtx, bodygroups=bodygroups,
                       material_exists=lambda m: fs.find(f"materials/{m}.vmt") is not None)

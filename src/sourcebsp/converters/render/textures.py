"""Real textures and prop bounds for previews, read with srctools (the ``render`` extra).

Files are looked up in the map's pakfile first, then in a game folder: a
folder with ``gameinfo.txt`` is mounted with its search paths and VPKs as every
command mounts it (:func:`sourcebsp.content.mount`); any other folder is read as it is (``materials/``,
``models/`` under it).  Materials (VMT) are parsed by ``srctools.vmt``:
``patch`` materials (the per-map cubemap copies vbsp writes into the
pakfile) are followed through their ``include`` to the material that
names ``$basetexture``.  Textures (VTF) are decoded by ``srctools.vtf``
from the smallest mipmap at least :data:`TEXTURE_SIZE` wide and resized to
``TEXTURE_SIZE`` squared; previews sample them nearest-texel.

Static props are drawn as their models' LOD 0 meshes
(:mod:`sourcebsp.content.studiomodel`), coloured by the average colour of
each mesh's base texture (grey when it is not found); a model whose mesh
files are missing or broken is drawn as its bounding box: the MDL header's
view bounds (``view_bbmin``/``view_bbmax``, the hull when those are empty);
a prop whose model is not found at all is a small
marker at its origin, so no prop is left out of the picture.
"""
from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..._extras import needs_extra
from ...errors import BspError
from ...model.geometry import angles_matrix
from ...protocols import MapReader
from ...numeric import sorted_unique

__all__ = ["GameFiles", "texture_images", "prop_geometry", "PropGeometry", "TEXTURE_SIZE",
           "MAX_PROP_TRIANGLES"]

TEXTURE_SIZE = 64
#: Colour of objects whose colour is not known (props without their textures).
NEUTRAL = np.array([0.45, 0.45, 0.42])
_MAX_FILE = 64 << 20  # bytes: a texture or model larger than this is not read
# What srctools raises on files it cannot parse (it has no single error class).
_PARSE_ERRORS = (ValueError, KeyError, IndexError, EOFError, OSError, NotImplementedError, TypeError,
                 AttributeError, ArithmeticError, UnicodeError, struct.error)
_MAX_DECODED = 2048  # texels per side of the mipmap decoded (a larger one is not read)


def _srctools() -> bool:
    try:
        import srctools  # noqa: F401
    except ImportError:
        return False
    return True


class GameFiles:
    """Files a map needs, from its pakfile and from a game folder (see the module notes)."""

    def __init__(self, pakfile: Any, game: Any, notes: list[str]) -> None:
        self._pak = pakfile
        self._game = game
        self.notes = notes

    @classmethod
    def for_map(cls, bsp: MapReader, game: str | Path | None = None) -> "GameFiles | None":
        """The files of ``bsp`` (and ``game``); None when srctools is missing."""
        notes: list[str] = []
        if not _srctools():
            if game is not None:
                with needs_extra("textures from a game folder", "render"):
                    import srctools  # noqa: F401 - raises, naming the extra
            return None
        pak = bsp.lump_or_none("PAKFILE")
        fsys = None
        if game is not None:
            fsys = _mount(Path(game), notes)
        return cls(pak if pak is not None and len(pak) else None, fsys, notes)

    def read(self, name: str) -> bytes | None:
        """A file's bytes, or None when neither the pakfile nor the game has it."""
        name = name.replace("\\", "/").lower()
        if self._pak is not None and self._pak.has_file(name):
            try:
                if self._pak.get_entry(name).size <= _MAX_FILE:
                    return bytes(self._pak.read(name))
            except (KeyError, ValueError, OSError):
                pass
            return None
        if self._game is not None:
            try:
                location = self._game.find(name, pakfile=False)
                data = self._game.read(location) if location is not None else None
            except (BspError, OSError, ValueError):
                return None
            return data if data is not None and len(data) <= _MAX_FILE else None
        return None


def _mount(folder: Path, notes: list[str]) -> Any:
    """The game as every command mounts it (:func:`sourcebsp.content.mount`): a folder with
    ``gameinfo.txt`` by its search paths, any other folder as it is."""
    from ...content import mount

    if not folder.is_dir():
        raise FileNotFoundError(2, "no such game folder", str(folder))
    fs = mount(folder)
    if fs.unresolved:
        # Search paths into an installed game (|appid_...|) cannot be followed here.
        notes.append(f"{len(fs.unresolved)} search path{'s' if len(fs.unresolved) > 1 else ''} of {folder} not "
                     f"mounted (first: {fs.unresolved[0]}): textures only they hold are drawn in average colours")
    return fs


def _base_texture(files: GameFiles, material: str) -> str | None:
    """The ``$basetexture`` of a material, following ``patch`` includes."""
    from srctools.vmt import Material

    name = f"materials/{material.lower().replace(chr(92), '/')}.vmt"
    for _ in range(4):
        data = files.read(name)
        if data is None:
            return None
        try:
            # Lines keep their ends: a // comment ends at its line, not at the file's end.
            mat = Material.parse(data.decode("utf-8", "replace").splitlines(keepends=True), name)
        except (*_PARSE_ERRORS, _token_error()):
            return None
        if mat.shader.lower() == "patch":
            found = _patch_value(mat, "$basetexture")
            if found:
                return found
            include = mat.get("include", "")
            if not include:
                return None
            name = include.replace("\\", "/").lower()
            continue
        value = mat.get("$basetexture", "")
        return value or None
    return None


def _token_error() -> type[Exception]:
    from srctools.tokenizer import TokenSyntaxError

    return TokenSyntaxError


def _patch_value(mat: Any, key: str) -> str | None:
    for block in getattr(mat, "blocks", ()):
        for prop in getattr(block, "iter_tree", lambda: ())():
            if prop.name == key.lower() and not prop.has_children():
                return str(prop.value)
    return None


def _decode(files: GameFiles, texture: str) -> np.ndarray | None:
    """Linear RGB ``(S, S, 3)`` of a VTF texture, or None."""
    from PIL import Image
    from srctools.vtf import VTF

    data = files.read(f"materials/{texture.lower().replace(chr(92), '/')}.vtf")
    if data is None:
        return None
    try:
        vtf = VTF.read(io.BytesIO(data))
        mip = 0
        while mip + 1 < vtf.mipmap_count and (vtf.width >> (mip + 1)) >= TEXTURE_SIZE \
                and (vtf.height >> (mip + 1)) >= TEXTURE_SIZE:
            mip += 1
        if max(vtf.width >> mip, vtf.height >> mip) > _MAX_DECODED:
            return None
        picture = vtf.get(mipmap=mip).to_PIL().convert("RGB")
    except _PARSE_ERRORS:
        return None
    picture = picture.resize((TEXTURE_SIZE, TEXTURE_SIZE), Image.Resampling.BILINEAR)
    srgb = np.asarray(picture, np.float32) / 255
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def texture_images(files: GameFiles, materials: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(images, index)``: decoded textures and, per texdata entry, its image (``-1``: not found)."""
    index = np.full(len(materials), -1, np.int64)
    images: list[np.ndarray] = []
    seen: dict[str, int] = {}
    failed: list[str] = []
    for k, material in enumerate(materials):
        if not material or material.lower().startswith("tools/"):
            continue
        texture = _base_texture(files, material)
        if texture is None:
            continue
        key = texture.lower()
        if key not in seen:
            image = _decode(files, texture)
            if image is None:
                failed.append(texture)
            seen[key] = -1 if image is None else len(images)
            if image is not None:
                images.append(image)
        index[k] = seen[key]
    if failed:
        shown = ", ".join(failed[:5]) + (f" and {len(failed) - 5} more" if len(failed) > 5 else "")
        files.notes.append(f"{len(failed)} texture{'s' if len(failed) > 1 else ''} could not be read "
                           f"({shown}); {'their' if len(failed) > 1 else 'its'} average colour is used")
    if not images:
        return None
    return np.stack(images).astype(np.float32), index


def _model_bounds(files: GameFiles, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The model's box from its ``.mdl`` header: the view bounds, the hull when those are empty."""
    from ...content.studiomodel.mdl import read_mdl
    from ...errors import BspError

    path = name.replace("\\", "/").lower()
    data = files.read(path)
    if data is None:
        return None
    try:
        header = read_mdl(data, path)
    except BspError:
        return None
    lo, hi = np.array(header.view[0], np.float64), np.array(header.view[1], np.float64)
    if not np.any(hi > lo):
        lo, hi = np.array(header.hull[0], np.float64), np.array(header.hull[1], np.float64)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)) or np.any(hi - lo > 65536):
        return None
    return lo, hi


MAX_PROP_TRIANGLES = 2_000_000  # props beyond this many triangles in all are drawn as their boxes
MARKER_SIZE = 8.0  # half the side of the cube that marks a prop whose model is not found
_BOX_BITS = np.array([[(i >> a) & 1 for a in range(3)] for i in range(8)], bool)  # corner i: x bit 0, y 1, z 2


@dataclass
class PropGeometry:
    """Static props to draw: mesh triangles, boxes (models without mesh files), markers (no model)."""

    corners: np.ndarray  # (T, 3, 3) world corners of the props drawn as meshes
    albedo: np.ndarray  # (T, 3) linear colour of each triangle
    meshed: int  # props drawn as meshes
    boxes: np.ndarray  # (B, 8, 3) world corners of the props drawn as boxes
    markers: np.ndarray  # (M, 8, 3) world corners of the markers


def _load_model(files: GameFiles, name: str) -> Any:
    """The studio model ``name`` with its mesh (None when its files are missing or broken)."""
    from ...content.studiomodel import VTX_SUFFIXES, build_model
    from ...errors import BspError

    path = name.replace("\\", "/").lower()
    mdl = files.read(path)
    if mdl is None:
        return None
    stem = path[:-4] if path.endswith(".mdl") else path
    vvd = files.read(stem + ".vvd")
    vtx = next(((stem + s, d) for s in VTX_SUFFIXES for d in [files.read(stem + s)] if d is not None), None)
    try:
        model = build_model(path, mdl, None if vvd is None else (stem + ".vvd", vvd), vtx)
    except BspError:
        return None
    return model if model.num_triangles else None


def _mesh_colours(files: GameFiles, model: Any, skin: int, cache: dict[str, np.ndarray]) -> np.ndarray:
    """(T, 3) linear colour of each triangle of ``model`` in skin family ``skin``."""
    parts = []
    for mesh in model.meshes:
        material = model.material_of(mesh, skin)
        if material not in cache:
            texture = _base_texture(files, material)
            image = None if texture is None else _decode(files, texture)
            cache[material] = NEUTRAL if image is None else image.reshape(-1, 3).mean(0)
        parts.append(np.broadcast_to(cache[material], (len(mesh.triangles), 3)))
    return np.concatenate(parts) if parts else np.empty((0, 3))


def _placed(records: np.ndarray, local: np.ndarray) -> np.ndarray:
    """``local`` points ``(P, N, 3)`` or ``(N, 3)`` placed by each record's angles, scale and origin."""
    rotation = angles_matrix(records["angles"].astype(np.float64))
    scale = np.ones(len(records))
    if "uniform_scale" in (records.dtype.names or ()):
        uniform = records["uniform_scale"].astype(np.float64)
        scale = np.where(uniform > 0, uniform, 1.0)
    spec = "pij,pkj->pki" if local.ndim == 3 else "pij,kj->pki"
    placed: np.ndarray = np.einsum(spec, rotation, local) * scale[:, None, None] \
        + records["origin"].astype(np.float64)[:, None, :]
    return placed


def prop_geometry(bsp: MapReader, files: GameFiles | None, *, markers: bool = True,
                  max_triangles: int = MAX_PROP_TRIANGLES) -> tuple[PropGeometry | None, int]:
    """The static props as meshes, boxes and markers, and how many props had no model found."""
    if not bsp.has_lump("GAME_LUMP"):
        return None, 0
    try:
        props = bsp.static_props
    except (KeyError, ValueError, AttributeError):
        return None, 0
    if props is None or not len(props):
        return None, 0
    records = props.props
    kind = records["prop_type"].astype(np.int64)
    names = list(props.names)
    skins = records["skin"].astype(np.int64) if "skin" in (records.dtype.names or ()) else np.zeros(len(kind), np.int64)
    corners, albedo, boxes = [], [], []
    meshed_mask = np.zeros(len(records), bool)
    boxed_mask = np.zeros(len(records), bool)
    budget = max_triangles
    colours: dict[str, np.ndarray] = {}
    if files is not None:
        for k in sorted_unique(kind).tolist():
            if not 0 <= k < len(names):
                continue
            chosen = np.flatnonzero(kind == k)
            model = _load_model(files, names[k])
            if model is not None and model.num_triangles * len(chosen) <= budget:
                budget -= model.num_triangles * len(chosen)
                tris = np.concatenate([m.triangles for m in model.meshes])
                for skin in sorted_unique(skins[chosen]).tolist():
                    group = chosen[skins[chosen] == skin]
                    world = _placed(records[group], model.positions.astype(np.float64))  # (P, V, 3)
                    corners.append(world[:, tris].reshape(-1, 3, 3))
                    albedo.append(np.tile(_mesh_colours(files, model, skin, colours), (len(group), 1)))
                meshed_mask[chosen] = True
                continue
            bounds = _model_bounds(files, names[k])
            if bounds is not None:
                local = np.where(_BOX_BITS, bounds[1], bounds[0])
                boxes.append(_placed(records[chosen], local))
                boxed_mask[chosen] = True
    missing = ~(meshed_mask | boxed_mask)
    marks = np.empty((0, 8, 3))
    if markers and missing.any():
        local = np.where(_BOX_BITS, MARKER_SIZE, -MARKER_SIZE) + np.array([0.0, 0.0, MARKER_SIZE])
        marks = records["origin"][missing].astype(np.float64)[:, None, :] + local[None]
    geometry = PropGeometry(np.concatenate(corners) if corners else np.empty((0, 3, 3)),
                            np.concatenate(albedo) if albedo else np.empty((0, 3)), int(meshed_mask.sum()),
                            np.concatenate(boxes) if boxes else np.empty((0, 8, 3)), marks)
    finite = np.isfinite(geometry.corners).all(axis=(1, 2))
    if not finite.all():  # a prop with NaN angles or origin is not drawn
        geometry.corners, geometry.albedo = geometry.corners[finite], geometry.albedo[finite]
    return geometry, int(missing.sum())

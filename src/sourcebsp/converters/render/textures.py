"""Real textures and prop bounds for previews, read with srctools (the ``render`` extra).

Files are looked up as every command looks them up (:class:`~sourcebsp.content.gamefs.GameFS`):
in the map's pakfile first, then in a game folder: a folder with
``gameinfo.txt`` is mounted with its search paths and VPKs
(:func:`sourcebsp.content.mount`); any other folder is read as it is
(``materials/``, ``models/`` under it).  A material's ``$basetexture`` is
read by :func:`sourcebsp.content.materials.material_params` (``patch``
materials followed through their ``include``); a texture is decoded by
:mod:`sourcebsp.content.vtf` from the smallest mipmap at least
:data:`TEXTURE_SIZE` wide and tall and resized to ``TEXTURE_SIZE``
squared; previews sample them nearest-texel.

Static props are drawn as their models' LOD 0 meshes
(:func:`sourcebsp.content.studiomodel.load_model`), coloured by the average colour of
each mesh's base texture (grey when it is not found); a model whose mesh
files are missing or broken is drawn as its bounding box: the MDL header's
view bounds (``view_bbmin``/``view_bbmax``, the hull when those are empty);
a prop whose model is not found at all is a small
marker at its origin, so no prop is left out of the picture.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._extras import needs_extra
from ...content import mount
from ...content.gamefs import GameFS
from ...content.materials import material_params, texture_path
from ...content.studiomodel import StudioModel, load_model
from ...content.studiomodel.mdl import read_mdl
from ...content.vtf import read_vtf, srgb_to_linear
from ...errors import BspError, BspFormatError
from ...lump_ids import LumpId
from ...model.geometry import angles_matrix
from ...protocols import MapReader
from ...numeric import sorted_unique

__all__ = ["game_files", "texture_images", "prop_geometry", "PropGeometry", "TEXTURE_SIZE", "MAX_PROP_TRIANGLES"]

TEXTURE_SIZE = 64
#: Colour of objects whose colour is not known (props without their textures).
NEUTRAL = np.array([0.45, 0.45, 0.42])
_MAX_FILE = 64 << 20  # bytes: a texture or model larger than this is not read
_MAX_DECODED = 2048  # texels per side of the mipmap decoded (a larger one is not read)
# A file that cannot be read is drawn as one that is not found.
_READ_ERRORS = (BspError, OSError, ValueError, KeyError)


def _srctools() -> bool:
    try:
        import srctools  # noqa: F401 - an optional extra: only asked whether it is installed
    except ImportError:
        return False
    return True


def game_files(bsp: MapReader, game: str | Path | None, notes: list[str]) -> GameFS | None:
    """The files of ``bsp`` (its pakfile) and ``game``; None when srctools is missing.

    What is worth telling about the mount (search paths it could not follow) is added to ``notes``.
    """
    if not _srctools():
        if game is not None:
            with needs_extra("textures from a game folder", "render"):
                import srctools  # noqa: F401 - raises, naming the extra
        return None
    fs = GameFS() if game is None else _mount(Path(game), notes)
    fs.attach_pakfile(bsp.lump_or_none(LumpId.PAKFILE), str(getattr(bsp, "path", "") or "map"))
    return fs


def _mount(folder: Path, notes: list[str]) -> GameFS:
    """The game as every command mounts it (:func:`sourcebsp.content.mount`): a folder with
    ``gameinfo.txt`` by its search paths, any other folder as it is."""
    if not folder.is_dir():
        raise FileNotFoundError(2, "no such game folder", str(folder))
    fs = mount(folder)
    if fs.unresolved:
        # Search paths into an installed game (|appid_...|) cannot be followed here.
        notes.append(f"{len(fs.unresolved)} search path{'s' if len(fs.unresolved) > 1 else ''} of {folder} not "
                     f"mounted (first: {fs.unresolved[0]}): textures only they hold are drawn in average colours")
    return fs


def _read(files: GameFS, name: str) -> bytes | None:
    """A file's bytes, or None when it is found nowhere, is too large or cannot be read."""
    try:
        return files.read_file(name, max_size=_MAX_FILE)
    except _READ_ERRORS:
        return None


def _base_texture(files: GameFS, material: str) -> str | None:
    """The ``$basetexture`` of a material (``patch`` materials followed), or None."""
    params = material_params(lambda name: _read(files, name), material)
    return None if params is None else params.get("$basetexture") or None


def _decode(files: GameFS, texture: str) -> np.ndarray | None:
    """Linear RGB ``(S, S, 3)`` of a VTF texture, or None."""
    from PIL import Image  # an optional extra (export): imported where used

    name = texture_path(texture)
    data = _read(files, name)
    if data is None:
        return None
    try:
        vtf = read_vtf(data, name)
        mip = vtf.mip_at_least(TEXTURE_SIZE)
        if max(vtf.mip_size(mip)) > _MAX_DECODED:
            return None
        picture = vtf.rgba(mip).convert("RGB")
    except BspFormatError:
        return None
    picture = picture.resize((TEXTURE_SIZE, TEXTURE_SIZE), Image.Resampling.BILINEAR)
    return srgb_to_linear(np.asarray(picture, np.float32) / 255)


def texture_images(files: GameFS, materials: list[str], notes: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(images, index)``: decoded textures and, per texdata entry, its image (``-1``: not found); the
    textures that could not be read are told in ``notes``."""
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
        notes.append(f"{len(failed)} texture{'s' if len(failed) > 1 else ''} could not be read "
                           f"({shown}); {'their' if len(failed) > 1 else 'its'} average colour is used")
    if not images:
        return None
    return np.stack(images).astype(np.float32), index


def _model_bounds(files: GameFS, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The model's box from its ``.mdl`` header: the view bounds, the hull when those are empty."""
    data = _read(files, name)
    if data is None:
        return None
    try:
        header = read_mdl(data, name)
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


def _load_model(files: GameFS, name: str) -> StudioModel | None:
    """The studio model ``name`` with its mesh (None when its files are missing or broken)."""
    try:
        model = load_model(files, name, max_size=_MAX_FILE)
    except _READ_ERRORS:
        return None
    return model if model is not None and model.num_triangles else None


def _mesh_colours(files: GameFS, model: StudioModel, skin: int, cache: dict[str, np.ndarray]) -> np.ndarray:
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


def prop_geometry(bsp: MapReader, files: GameFS | None, *, markers: bool = True,
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

"""Real textures and prop bounds for previews, read with srctools (the ``render`` extra).

Files are looked up in the map's pakfile first, then in a game folder: a
folder with ``gameinfo.txt`` is mounted with its search paths and VPKs by
``srctools.game.Game``; any other folder is read as it is (``materials/``,
``models/`` under it).  Materials (VMT) are parsed by ``srctools.vmt``:
``patch`` materials (the per-map cubemap copies vbsp writes into the
pakfile) are followed through their ``include`` to the material that
names ``$basetexture``.  Textures (VTF) are decoded by ``srctools.vtf``
from the smallest mipmap at least :data:`TEXTURE_SIZE` wide and resized to
``TEXTURE_SIZE`` squared; previews sample them nearest-texel.

Static props are drawn as the bounding boxes of their models: the MDL
header's view bounds (``view_bbmin``/``view_bbmax``, the hull when those
are empty), read by ``srctools.mdl``.  srctools does not read the vertex
files (VVD/VTX), and no maintained Python library here does, so props are
not drawn as meshes.
"""
from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import numpy as np

from .._extras import needs_extra
from ..model.geometry import angles_matrix
from ..protocols import MapReader
from ..numeric import sorted_unique

__all__ = ["GameFiles", "texture_images", "prop_boxes", "TEXTURE_SIZE"]

TEXTURE_SIZE = 64
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
                file = self._game[name]
                with file.open_bin() as handle:
                    data = handle.read(_MAX_FILE + 1)
                return data if len(data) <= _MAX_FILE else None
            except (FileNotFoundError, KeyError, OSError):
                return None
        return None


def _mount(folder: Path, notes: list[str]) -> Any:
    from srctools.filesys import RawFileSystem

    if not folder.is_dir():
        raise FileNotFoundError(2, "no such game folder", str(folder))
    if (folder / "gameinfo.txt").is_file():
        from srctools.game import Game

        try:
            return Game(folder).get_filesystem()
        except _PARSE_ERRORS as exc:
            # Search paths into an installed game (|appid_...|) cannot be followed here.
            notes.append(f"gameinfo.txt could not be mounted ({exc}); reading {folder} as it is")
    return RawFileSystem(folder)


def _base_texture(files: GameFiles, material: str) -> str | None:
    """The ``$basetexture`` of a material, following ``patch`` includes."""
    from srctools.vmt import Material

    name = f"materials/{material.lower().replace(chr(92), '/')}.vmt"
    for _ in range(4):
        data = files.read(name)
        if data is None:
            return None
        try:
            mat = Material.parse(data.decode("utf-8", "replace").splitlines(), name)
        except _PARSE_ERRORS:
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
    failed = 0
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
                failed += 1
            seen[key] = -1 if image is None else len(images)
            if image is not None:
                images.append(image)
        index[k] = seen[key]
    if failed:
        files.notes.append(f"{failed} textures could not be read; their average colour is used")
    if not images:
        return None
    return np.stack(images).astype(np.float32), index


def _model_bounds(files: GameFiles, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    from srctools.filesys import VirtualFileSystem
    from srctools.mdl import Model

    path = name.replace("\\", "/").lower()
    data = files.read(path)
    if data is None:
        return None
    fsys = VirtualFileSystem({path: data})
    try:
        model = Model(fsys, fsys[path])
    except _PARSE_ERRORS:
        return None
    lo, hi = np.array(list(model.view_min), np.float64), np.array(list(model.view_max), np.float64)
    if not np.any(hi > lo):
        lo, hi = np.array(list(model.hull_min), np.float64), np.array(list(model.hull_max), np.float64)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)) or np.any(hi - lo > 65536):
        return None
    return lo, hi


def prop_boxes(bsp: MapReader, files: GameFiles | None) -> tuple[np.ndarray | None, int]:
    """World corners ``(P, 8, 3)`` of the static props whose models were found, and how many were not."""
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
    if files is None:
        return None, len(records)
    bounds: dict[int, tuple[np.ndarray, np.ndarray] | None] = {}
    for k in sorted_unique(kind).tolist():
        bounds[k] = _model_bounds(files, names[k]) if 0 <= k < len(names) else None
    found = np.array([bounds[int(k)] is not None for k in kind], bool)
    if not found.any():
        return None, len(records)
    lo = np.array([bounds[int(k)][0] for k in kind[found]])  # type: ignore[index]
    hi = np.array([bounds[int(k)][1] for k in kind[found]])  # type: ignore[index]
    bits = np.array([[(i >> a) & 1 for a in range(3)] for i in range(8)], bool)  # corner i: x bit 0, y 1, z 2
    local = np.where(bits[None], hi[:, None, :], lo[:, None, :])
    rotation = angles_matrix(records["angles"][found].astype(np.float64))
    world = np.einsum("pij,pkj->pki", rotation, local) + records["origin"][found].astype(np.float64)[:, None, :]
    return world, int((~found).sum())

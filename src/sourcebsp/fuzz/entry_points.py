"""Every public way into a map, as small functions a fuzzer can call.

Each entry point takes the path of a map and a scratch folder and exercises
one part of the library the way a user would (opening the map itself).  Those
that read what every container has (the directory, entities, props, pakfile,
saving) open any map with :func:`sourcebsp.open`, Titanfall's too; the
``respawn_*`` ones run Titanfall's own converters.  The
promise being tested: whatever the bytes, each one returns or raises a
:class:`~sourcebsp.errors.BspError`, within the resource rule of the package
(see :mod:`sourcebsp.budgets`).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .. import BspFile
from ..codecs.pakfile import Pakfile
from ..converters.gltf import export_glb
from ..converters.gltf.respawn import export_respawn_glb
from ..converters.obj import export_obj
from ..converters.render import render  # a Titanfall map's meshes too (converters.render.respawn)
from ..converters.vmf import decompile
from ..lump_ids import LumpId
from ..model.brushes import build_brushes, closed_brushes, model_brushes
from ..model.geometry import build_mesh, face_polygons
from ..model.lightmaps import build_atlas
from ..opening import open as open_map
from ..queries import ambient_cubes, ambient_light
from ..respawn import RespawnBsp

if TYPE_CHECKING:
    from ..protocols import MapReader

__all__ = ["ENTRY_POINTS", "EntryPoint"]

EntryPoint = Callable[[Path, Path], None]


def _open(path: Path, scratch: Path) -> None:
    with open_map(path) as bsp:
        for index, entry in bsp.iter_lumps():
            bsp.entry(index)
        repr(bsp)


def _decode_all(path: Path, scratch: Path) -> None:
    """Every lump decoded and counted (as ``info`` and ``scan`` read them), and the material names."""
    with open_map(path) as bsp:
        bsp.decode_all()
        for index, _ in bsp.iter_lumps():
            bsp.count(index)
        bsp.texture_names()


def _entities(path: Path, scratch: Path) -> None:
    """The entity lump's entities, and a Titanfall map's ``.ent`` files'."""
    with open_map(path) as bsp:
        for _partition, entities in bsp.entity_sets():
            for entity in entities:
                entity.classname
                list(entity.items())


def _static_props(path: Path, scratch: Path) -> None:
    with open_map(path) as bsp:
        props = bsp.static_props
        props.model_names()
        props.to_records()
        len(props.props)
        bsp.detail_props


def _pakfile(bsp: MapReader) -> Any:
    """The decoded pakfile, or None for a map without one."""
    value = bsp.lump_or_none(LumpId.PAKFILE)
    return value if isinstance(value, Pakfile) else None


def _pak_list(path: Path, scratch: Path) -> None:
    with open_map(path) as bsp:
        if (pak := _pakfile(bsp)) is not None:
            pak.entries()


def _pak_read(path: Path, scratch: Path) -> None:
    with open_map(path) as bsp:
        if (pak := _pakfile(bsp)) is not None:
            for _name, _data in pak.iter_files():
                pass


def _pak_extract(path: Path, scratch: Path) -> None:
    with open_map(path) as bsp:
        if (pak := _pakfile(bsp)) is not None:
            pak.extract_all(scratch / "pak")


def _visibility(path: Path, scratch: Path) -> None:
    with BspFile.open(path) as bsp:
        count = bsp.num_clusters
        for cluster in {-1, 0, count // 2, count - 1}:
            if -1 <= cluster < count:
                bsp.pvs(cluster)
                bsp.pas(cluster)


def _probe_points(bsp: MapReader) -> np.ndarray:
    """A few points inside the world: the corners and centre of model 0, and the origin."""
    points = [np.zeros(3)]
    models = bsp.lump_or_none(LumpId.MODELS)
    if models is not None and len(models):
        # The probe is the harness's, not the library's: it may not warn on a damaged model.
        with np.errstate(all="ignore"):
            lo = np.clip(np.nan_to_num(np.asarray(models["mins"][0], np.float64)), -1e6, 1e6)
            hi = np.clip(np.nan_to_num(np.asarray(models["maxs"][0], np.float64)), -1e6, 1e6)
        points += [lo, hi, (lo + hi) / 2]
    return np.array(points)


def _leaf_at(path: Path, scratch: Path) -> None:
    with BspFile.open(path) as bsp:
        points = _probe_points(bsp)
        bsp.leaf_at(points)
        bsp.leaf_at(points[0])
        bsp.cluster_at(points)
        bsp.is_visible(points[0], points[-1])        # scalar path
        bsp.is_visible(points, points[::-1])         # array path
        count = bsp.num_clusters
        if count:
            bsp.is_visible(0, count - 1)


def _ambient(path: Path, scratch: Path) -> None:
    with BspFile.open(path) as bsp:
        points = _probe_points(bsp)
        for hdr in (None, True):
            cubes = ambient_cubes(bsp, points, hdr=hdr)
            if cubes is not None:
                ambient_light(cubes, np.tile([0.0, 0.0, 1.0], (len(points), 1)))


def _geometry(path: Path, scratch: Path) -> None:
    with BspFile.open(path) as bsp:
        face_polygons(bsp)
        build_mesh(bsp, models="all", include_tools=True)


def _brushes(path: Path, scratch: Path) -> None:
    with BspFile.open(path) as bsp:
        brushes = build_brushes(bsp)
        closed_brushes(brushes)
        model_brushes(bsp)


def _lightmaps(path: Path, scratch: Path) -> None:
    with BspFile.open(path) as bsp:
        for hdr in (False, True):
            atlas = build_atlas(bsp, hdr=hdr)
            if atlas is not None:
                atlas.to_rgb8()


def _render(path: Path, scratch: Path) -> None:
    for view in ("overview", "top", "player"):
        render(path, view=view, size=(64, 48))


def _gltf(path: Path, scratch: Path) -> None:
    export_glb(path, scratch / "out.glb")


def _obj(path: Path, scratch: Path) -> None:
    export_obj(path, scratch / "out.obj")


def _decompile(path: Path, scratch: Path) -> None:
    decompile(path, scratch / "out.vmf")


def _save(path: Path, scratch: Path) -> None:
    # overwrite: the scratch folder holds the previous input's files.
    with open_map(path) as bsp:
        bsp.save(scratch / "same.bsp", overwrite=True, fsync=False)
    with open_map(path) as bsp:
        bsp.save(scratch / "reencoded.bsp", reencode=True, overwrite=True, fsync=False)
    with open_map(path) as bsp:
        # A grown entity lump moves every lump after it (and a Titanfall map's game lump
        # offsets): the save lays the map out again.
        entities = bsp.entities
        if len(entities):
            entities[0]["sourcebsp_fuzz"] = "moved"
        bsp.save(scratch / "edited.bsp", overwrite=True, fsync=False)


def _respawn_export(path: Path, scratch: Path) -> None:
    export_respawn_glb(path, scratch / "respawn.glb")


def _respawn_decompile(path: Path, scratch: Path) -> None:
    decompile(RespawnBsp.open(path), scratch / "respawn.vmf")


#: name -> entry point, in the order a user meets them.
ENTRY_POINTS: dict[str, EntryPoint] = {
    "open": _open,
    "decode_all": _decode_all,
    "entities": _entities,
    "static_props": _static_props,
    "pak_list": _pak_list,
    "pak_read": _pak_read,
    "pak_extract": _pak_extract,
    "visibility": _visibility,
    "leaf_at": _leaf_at,
    "ambient": _ambient,
    "geometry": _geometry,
    "brushes": _brushes,
    "lightmaps": _lightmaps,
    "render": _render,
    "gltf": _gltf,
    "obj": _obj,
    "decompile": _decompile,
    "save": _save,
    "respawn_export": _respawn_export,
    "respawn_decompile": _respawn_decompile,
}

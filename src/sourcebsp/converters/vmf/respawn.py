"""Decompile a Titanfall rBSP map into a Hammer VMF: its collision brushes and its entities.

What comes back:

* the world's brushes: every CM_BRUSHES brush that closes into a convex solid
  (:mod:`sourcebsp.model.respawn_brushes`: a box cut by further planes), one
  VMF side per side that bounds the solid; each side's three ``plane`` points
  define the brush's plane by :data:`~sourcebsp.converters.vmf.geometry.PLANE_RULE`
  (:func:`~sourcebsp.converters.vmf.geometry.plane_points`, as for Source maps);
  its material is the name of its property's TEXTURE_DATA (backslashes made
  slashes) and its texture axes those of CM_BRUSH_SIDE_TEXTURE_VECTORS, or
  Hammer's default axes where the map has none (or they are perpendicular to
  the side);
* every entity of the ENTITIES lump and of the ``.ent`` partition files beside
  the map (keys and outputs as for Source maps), and with ``props`` the static
  props (``sprp``) as ``prop_static``;
* a camera at each player start (``cameras``).

Not rebuilt: which brushes belong to brush entities (the MODELS lump names
meshes, not brushes; every brush goes to the world), the meshes' own
geometry (only the collision hulls are brushes), patches and displacements
(TRICOLL), and lightmap scales (the VMF's default).  A map compiled with
placeholder side properties (MRVN-Radiant's early compiler wrote texture data 1
on every side) decompiles with that one material everywhere.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..._io import atomic_write
from ...codecs.respawn import CM_BRUSH_SIDE_TEXTURE_VECTORS
from ...model.respawn_brushes import build_respawn_brushes
from ...numeric import floats
from .._common import report
from .decompile import (DecompileOptions, DecompileStats, _count, _number, _outputs, _world_entity, player_cameras)
from .entities import split_keys
from .geometry import PLANE_RULE, defined_plane_errors, plane_points
from .textures import vector_axes
from .writer import VmfEntity, VmfMap, VmfSide, VmfSolid, format_number, format_numbers

if TYPE_CHECKING:
    from ...codecs.entities import Entity
    from ...respawn import RespawnBsp

__all__ = ["RESPAWN_STEPS", "build_respawn_vmf", "decompile_respawn"]

RESPAWN_STEPS = ("brushes", "entities", "props", "write")


def _solids(bsp: RespawnBsp, stats: DecompileStats) -> list[VmfSolid]:
    """One solid per closed brush (see the module's docstring)."""
    found = build_respawn_brushes(bsp)
    brushes = found.brushes
    stats.bsp_brushes = len(brushes)
    names = [name.replace("\\", "/") for name in bsp.texture_names()]
    points = plane_points(brushes.points, brushes.poly_offsets, brushes.normal, brushes.dist)
    err_n, err_d = defined_plane_errors(points, brushes.normal, brushes.dist)
    written = brushes.closed[brushes.side_brush] if len(brushes.side_index) else np.zeros(0, bool)
    rule_n, rule_d = PLANE_RULE
    stats.sides_off_plane_rule = int((written & ~((err_n <= rule_n) & (err_d <= rule_d))).sum())
    stats.sides_off_plane = int((written & (err_d > 1e-3)).sum())
    stats.max_off_plane = float(np.where(written, err_d, 0.0).max(initial=0.0))
    vectors = bsp.array(CM_BRUSH_SIDE_TEXTURE_VECTORS)
    rows = brushes.side_index
    has = rows < len(vectors)
    vecs = np.zeros((len(rows), 2, 4))
    if has.any():
        vecs[has, 0] = floats(vectors["s"][rows[has]])  # a signalling NaN warns in a plain cast
        vecs[has, 1] = floats(vectors["t"][rows[has]])
        has &= np.isfinite(vecs).all(axis=(1, 2))
        vecs[~has] = 0.0  # damaged vectors: Hammer's default axes, as for sides without any
    axes = vector_axes(vecs, np.zeros_like(vecs), has, brushes.normal)
    stats.default_axes = int(axes["restored_axes"].sum())
    stats.perpendicular_axes_fixed = int(axes["perpendicular"].sum())
    solids: list[VmfSolid] = []
    side_ids = iter(range(1, len(rows) + 1))  # sides are numbered apart from solids and entities
    for b in range(len(brushes)):
        if not brushes.closed[b]:
            stats.skipped_brushes.append(b)
            continue
        sides = [VmfSide(id=next(side_ids), points=points[s], material=names[int(brushes.texinfo[s])],
                         uaxis=axes["uaxis"][s], uscale=float(axes["uscale"][s]), vaxis=axes["vaxis"][s],
                         vscale=float(axes["vscale"][s]), vertices=brushes.polygon(s),
                         brushside=int(brushes.side_index[s]))
                 for s in brushes.sides_of(b)]
        solids.append(VmfSolid(0, sides, b))
    return solids


def _entity(entity: Entity, io_format: str) -> VmfEntity:
    keys, outputs = split_keys(entity.items(), drop=("classname",))
    return VmfEntity(0, [("classname", entity.classname or "")] + keys, _outputs(outputs, io_format))


def _props(bsp: RespawnBsp) -> list[VmfEntity]:
    """The ``sprp`` props as ``prop_static`` (origin, angles, model, skin, solid, fade scale)."""
    found = bsp.static_props()
    if found is None:
        return []
    props = found.props
    out = []
    for i in range(len(props)):
        prop = props[i]
        pairs = [("classname", "prop_static"), ("origin", format_numbers(prop["origin"])),
                 ("angles", format_numbers(prop["angles"])), ("model", found.names[int(prop["prop_type"])]),
                 ("skin", str(int(prop["skin"]))), ("solid", str(int(prop["solid"]))),
                 ("fadescale", format_number(float(prop["forced_fade_scale"])))]
        if "scale" in (props.dtype.names or ()):
            pairs.append(("modelscale", format_number(float(prop["scale"]))))
        out.append(VmfEntity(0, pairs))
    return out


def build_respawn_vmf(bsp: RespawnBsp, options: DecompileOptions | None = None,
                      progress: Callable[[str], None] | None = None) -> tuple[VmfMap, DecompileStats]:
    """The VMF document of a Titanfall map and the statistics of the decompile."""
    options = options or DecompileOptions()
    if options.io_format not in ("map", "old", "new"):
        raise ValueError(f"io_format must be 'map', 'old' or 'new', not {options.io_format!r}")
    stats = DecompileStats()
    solids = _solids(bsp, stats)
    report(progress, "brushes")
    entities = [entity for _, found in bsp.entity_sets() for entity in found]
    worldspawn = next((e for e in entities if (e.classname or "").casefold() == "worldspawn"), None)
    world, mapversion = _world_entity(worldspawn, options.io_format)
    world.solids = solids
    vmf = VmfMap(world, mapversion=mapversion)
    vmf.entities = [_entity(e, options.io_format) for e in entities if e is not worldspawn]
    stats.point_entities = len(vmf.entities)
    stats.not_rebuilt.append("brush entities' brushes: the MODELS lump names meshes, not brushes (all in the world)")
    report(progress, "entities")
    if options.props:
        props = _props(bsp)
        stats.static_props = len(props)
        vmf.entities += props
    report(progress, "props")
    if options.cameras:
        vmf.cameras = player_cameras(entities)
        stats.cameras = len(vmf.cameras)
    stats.sides = _number(vmf)
    _count(vmf, stats)
    return vmf, stats


def decompile_respawn(bsp_or_path: str | Path | RespawnBsp, path: str | Path, *,
                      progress: Callable[[str], None] | None = None, check: bool = False,
                      **options: Any) -> DecompileStats:
    """Decompile a Titanfall map (a :class:`~sourcebsp.respawn.RespawnBsp` or a path) into the VMF
    file ``path`` (written atomically); ``options`` are :class:`DecompileOptions`' fields (those
    an rBSP map has no use for are accepted and ignored)."""
    from ...respawn import RespawnBsp
    from .checks import check_vmf

    bsp = RespawnBsp.open(bsp_or_path) if isinstance(bsp_or_path, (str, Path)) else bsp_or_path
    vmf, stats = build_respawn_vmf(bsp, DecompileOptions(**options), progress)
    if check:
        stats.problems = check_vmf(vmf)
    atomic_write(Path(path), vmf.to_text().encode("utf-8", "surrogateescape"))
    report(progress, "write")
    return stats

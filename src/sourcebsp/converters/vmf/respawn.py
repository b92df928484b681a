"""Decompile a Titanfall rBSP map into a Hammer VMF: its collision brushes and its entities.

:func:`~sourcebsp.converters.vmf.decompile` and :func:`~sourcebsp.converters.vmf.build_vmf`
come here for a Titanfall map (or its path); the options a Titanfall map has no use for
(``overlays``, ``cubemaps``, ``rotation_fix``, ``ladders``, ``visgroups``, ``visclusters``) are
ignored.

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
* world brushes whose contents (``CM_UNIQUE_CONTENTS``) have ``CONTENTS_DETAIL`` in one
  ``func_detail``, as for Source maps (``detail_as_world`` keeps them in the world);
* brush entities' brushes: a brush whose collision grid cell is that of MODELS
  row ``N`` (:func:`~sourcebsp.model.respawn_brushes.brush_owners`) goes to the
  entity with ``"model" "*N"``, as MRVN-Radiant's decompiler gives them (a model
  no entity names leaves its brushes in the world);
* trigger brushes, which Respawn's compiler writes as entity keys
  (``"*trigger_brush_B_plane_P" "a b c d"``: plane ``P`` of brush ``B``, its
  outward normal and distance, in world space; MRVN-Radiant's
  ``EmitTriggerBrushPlaneKeyValues`` writes them, Northstar's ``ns_showtriggers``
  draws them so): each brush a solid of ``tools/toolstrigger`` in its entity, the
  keys (and ``*trigger_bounds_mins``/``maxs``, which the compiler derives) left out;
* every entity of the ENTITIES lump and of the ``.ent`` partition files beside
  the map (keys and outputs as for Source maps), and with ``props`` the static
  props (``sprp``) as ``prop_static``;
* a camera at each player start (``cameras``).

Not rebuilt: the meshes' own geometry (only the collision hulls are brushes),
patches and displacements (TRICOLL), and lightmap scales (the VMF's default).
A map compiled with placeholder side properties (MRVN-Radiant's early compiler
wrote texture data 1 on every side) decompiles with that one material everywhere.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

import numpy as np

from ...codecs.respawn import CM_BRUSH_SIDE_TEXTURE_VECTORS
from ...model.brushes import BIG, clipping_bytes
from ...model.respawn_brushes import brush_owners, build_respawn_brushes
from ...numeric import floats
from ...resources import check_memory
from .._common import report
from .document import DecompileOptions, DecompileStats, finish_document
from .entities import format_outputs, player_cameras, split_keys, world_entity
from .geometry import PLANE_RULE, defined_plane_errors, plane_points
from .solids import IdCounter, PlaneSpec, solids_from_planes
from .textures import vector_axes
from .writer import VmfEntity, VmfMap, VmfSide, VmfSolid, format_number, format_numbers

if TYPE_CHECKING:
    from ...codecs.entities import Entity
    from ...respawn import RespawnBsp

__all__ = ["RESPAWN_STEPS", "build_respawn_vmf"]

RESPAWN_STEPS = ("brushes", "entities", "props", "write")
#: The detail flag of a brush's contents (CM_UNIQUE_CONTENTS): CONTENTS_DETAIL in Titanfall's
#: scripts (r1 ``_consts.nut``, bsp_tool's titanfall.Contents), Source's value too.
CONTENTS_DETAIL = 0x8000000
#: The material of a trigger brush rebuilt from its entity's keys.
TRIGGER_MATERIAL = "tools/toolstrigger"
_TRIGGER_PLANE = re.compile(r"\*trigger_brush_(\d+)_plane_(\d+)", re.IGNORECASE)
#: Keys Respawn's compiler writes from an entity's brushes, left out of the VMF.
_TRIGGER_BOUNDS = ("*trigger_bounds_mins", "*trigger_bounds_maxs")


def _solids(bsp: RespawnBsp, stats: DecompileStats) -> dict[int, VmfSolid]:
    """One solid per closed brush, by CM_BRUSHES row (see the module's docstring)."""
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
    solids: dict[int, VmfSolid] = {}
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
        solids[b] = VmfSolid(0, sides, b)
    return solids


def _trigger_planes(entity: Entity) -> list[PlaneSpec | None]:
    """The ``*trigger_brush_B_plane_P`` brushes of an entity, by B: unit outward normals and
    distances, or None for a brush with a plane that is not four finite numbers with a direction."""
    found: dict[int, dict[int, str]] = {}
    for key, value in entity.items():
        match = _TRIGGER_PLANE.fullmatch(key)
        if match:
            found.setdefault(int(match[1]), {})[int(match[2])] = value
    specs: list[PlaneSpec | None] = []
    for brush in sorted(found):
        try:
            rows = np.array([[float(v) for v in found[brush][p].split()] for p in sorted(found[brush])])
        except ValueError:
            rows = np.zeros((0, 0))
        if rows.ndim != 2 or rows.shape[1] != 4 or len(rows) < 4 or not np.isfinite(rows).all():
            specs.append(None)
            continue
        length = np.linalg.norm(rows[:, :3], axis=1)
        if not (length > 1e-6).all():
            specs.append(None)
            continue
        specs.append((rows[:, :3] / length[:, None], rows[:, 3] / length, [TRIGGER_MATERIAL] * len(rows),
                      [-1] * len(rows)))
    return specs


def _default_axes(texinfos: np.ndarray, normals: np.ndarray) -> dict[str, np.ndarray]:
    """Hammer's default texture axes for sides that have no texture vectors."""
    zeros = np.zeros((len(normals), 2, 4))
    return vector_axes(zeros, zeros, np.zeros(len(normals), bool), normals)


def _trigger_solids(bsp: RespawnBsp, entities: list[Entity], stats: DecompileStats,
                    first_side_id: int) -> dict[int, list[VmfSolid]]:
    """The solids of every entity's trigger keys, by the entity's position in ``entities``; their
    sides numbered from ``first_side_id``.  Planes that leave a brush open (its faces reach the
    clipping square, :data:`~sourcebsp.model.brushes.BIG`) make no solid.

    Raises
    ------
    LimitExceededError
        Clipping the planes would need more memory than the budget allows (a trigger of
        thousands of planes).
    """
    owners: list[int] = []
    specs: list[PlaneSpec] = []
    unreadable = 0
    for i, entity in enumerate(entities):
        for spec in _trigger_planes(entity):
            if spec is None:
                unreadable += 1
            else:
                owners.append(i)
                specs.append(spec)
    sides = np.array([len(spec[0]) for spec in specs], np.int64)
    check_memory(bsp.file_size, clipping_bytes(sides), f"clipping {len(specs)} trigger brushes of up to "
                 f"{int(sides.max(initial=0))} planes", lump="ENTITIES", offset=bsp.lumps[0].fileofs)
    made = solids_from_planes(specs, IdCounter(set(), first_side_id), _default_axes)
    out: dict[int, list[VmfSolid]] = {}
    for owner, result in zip(owners, made):
        if result is None or max(float(np.abs(np.asarray(side.vertices)).max()) for side in result[0].sides) >= BIG / 2:
            unreadable += 1
        else:
            out.setdefault(owner, []).append(result[0])
    if unreadable:
        stats.not_rebuilt.append(f"{unreadable} trigger brush{'es' if unreadable != 1 else ''} whose "
                                 f"*trigger_brush planes do not close a solid")
    return out


def _entity(entity: Entity, io_format: str, solids: list[VmfSolid]) -> VmfEntity:
    """A VMF entity with its solids; the keys the compiler writes from brushes left out."""
    pairs = [(k, v) for k, v in entity.items()
             if not _TRIGGER_PLANE.fullmatch(k) and k.casefold() not in _TRIGGER_BOUNDS
             and not (k.casefold() == "model" and v.startswith("*"))]
    keys, outputs = split_keys(pairs, drop=("classname",))
    return VmfEntity(0, [("classname", entity.classname or "")] + keys, format_outputs(outputs, io_format),
                     solids=solids)


def _props(bsp: RespawnBsp) -> list[VmfEntity]:
    """The ``sprp`` props as ``prop_static`` (origin, angles, model, skin, solid, fade scale)."""
    found = bsp.static_props
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
    owners = brush_owners(bsp)
    report(progress, "brushes")
    entities = [entity for _, found in bsp.entity_sets() for entity in found]
    worldspawn = next((e for e in entities if (e.classname or "").casefold() == "worldspawn"), None)
    world, mapversion = world_entity(worldspawn, options.io_format)
    claimed = {e.model_index for e in entities if e is not worldspawn and e.model_index}
    by_model: dict[int, list[VmfSolid]] = {}
    for b, solid in solids.items():
        m = int(owners.model[b])
        by_model.setdefault(m if m in claimed else 0, []).append(solid)
    world.solids = by_model.pop(0, [])
    detail = [] if options.detail_as_world else \
        [solid for solid in world.solids if int(owners.contents[solid.brush]) & CONTENTS_DETAIL]
    if detail:  # as vbsp's func_detail brushes come back from a Source map
        world.solids = [solid for solid in world.solids if not int(owners.contents[solid.brush]) & CONTENTS_DETAIL]
    triggers = _trigger_solids(bsp, entities, stats, 1 + sum(len(solid.sides) for solid in solids.values()))
    vmf = VmfMap(world, mapversion=mapversion)
    for i, e in enumerate(entities):
        if e is not worldspawn:  # a model two entities name goes to the first
            own = by_model.pop(e.model_index, []) if e.model_index else []
            vmf.entities.append(_entity(e, options.io_format, own + triggers.get(i, [])))
    if detail:  # first: the solids' text keeps CM_BRUSHES' order where the models allow it
        vmf.entities.insert(0, VmfEntity(0, [("classname", "func_detail")], [], detail))
    if len(owners.conflicts):
        stats.not_rebuilt.append(f"{len(owners.conflicts)} brushes in the collision cells of two models "
                                 f"(given to the later model)")
    stats.point_entities = sum(1 for e in vmf.entities if not e.solids)
    report(progress, "entities")
    if options.props:
        props = _props(bsp)
        stats.static_props = len(props)
        vmf.entities += props
    report(progress, "props")
    if options.cameras:
        vmf.cameras = player_cameras(entities)
        stats.cameras = len(vmf.cameras)
    finish_document(vmf, stats)
    return vmf, stats


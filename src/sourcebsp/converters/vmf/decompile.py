"""Build the VMF document of a compiled map (see :mod:`sourcebsp.converters.vmf`).

:func:`build_vmf` runs the stages in order; each is a function of what it
is given and returns what it made (no stage reads a value another stage
left behind).  Where each part of the VMF comes from:

* world brushes: the brushes of model 0 (:func:`~sourcebsp.model.brushes.brush_models_of`);
  those with ``CONTENTS_DETAIL`` go into one ``func_detail`` (or stay in
  the world with ``detail_as_world``); those with ``CONTENTS_LADDER`` into
  one ``func_ladder`` each (vbsp merges ``func_ladder`` into the world);
  those with ``CONTENTS_AREAPORTAL`` to their ``func_areaportal``
  (:mod:`~sourcebsp.converters.vmf.areaportals`: the AREAPORTALS entry on
  one of their sides, else vbsp's numbering, the entity's target or what
  opens it);
* brush entities: an entity with ``"model" "*N"`` gets model N's brushes,
  which vbsp stored around the entity's ``origin`` without turning them.
  The game turns the model by ``angles``, so with ``rotation_fix`` the
  solids are turned by ``angles`` and moved to the origin, and ``angles``
  is dropped (Hammer then shows what the game shows).  Two kinds of class
  are left as stored, ``angles`` kept (:func:`rotation_rule`):
  :data:`MOVEDIR_CLASSES`, whose ``angles`` is a direction of movement,
  and :data:`ANGLES_ZEROED_CLASSES`, whose spawn code zeroes ``angles``
  (SDK 2013 ``SetLocalAngles( vec3_angle )``), so the game shows them
  unturned;
* ``func_occluder``: each polygon of its occluder (OCCLUSION lump) becomes a
  brush, the polygon extruded :data:`OCCLUDER_DEPTH` units behind it, its
  front ``tools/toolsoccluder`` and its other sides nodraw;
* displacements: see :mod:`sourcebsp.converters.vmf.disp`;
* ``func_viscluster`` (only with ``visclusters``): see :func:`viscluster_boxes`;
* side ids: where the map has a FACEIDS lump (the Hammer side id of each
  face), a side takes the id most of its faces carry; the other sides get
  new ids above every restored one.  Entity ids come from ``hammerid``;
  solids get new ids.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...flags import Contents
from ...lump_ids import LumpId
from ...model.brushes import BrushSet, brush_models_of, build_brushes, leaf_models
from ...model.geometry import angles_matrix, texture_names
from ...model.respawn import is_respawn_map
from ...protocols import MapReader
from ...queries import leaf_at
from .document import DecompileOptions, DecompileStats, finish_document
from .entities import (
    COMPILER_KEYS, cubemap_pairs, format_outputs, output_text, overlay_pairs, parse_int, parse_vector,
    player_cameras, split_keys, static_prop_pairs, world_entity,
)
from .areaportals import (
    AREAPORTAL_CLASSES, PortalOwners, areaportal_keys, areaportal_owners, entity_boxes,
)
from .geometry import PLANE_RULE, prism_planes
from .respawn import RESPAWN_STEPS, build_respawn_vmf
from .solids import (
    FaceMatch, IdCounter, PlaneSpec, SideTable, attach_displacements, brush_frames, brush_solids, made_solids,
    match_faces, restore_side_ids, side_table,
)
from .textures import default_axes, game_of, material_names, tool_name
from .writer import VmfEntity, VmfMap, VmfSolid, format_numbers

if TYPE_CHECKING:
    from ...codecs.entities import Entity
    from ...codecs.occlusion import Occlusion

__all__ = ["DecompileOptions", "DecompileStats", "DECOMPILE_STEPS", "OCCLUDER_DEPTH", "MOVEDIR_CLASSES",
           "ANGLES_ZEROED_CLASSES", "build_vmf", "decompile_steps", "rotation_rule", "output_text", "viscluster_boxes"]

DECOMPILE_STEPS = ("brushes", "faces", "displacements", "entities", "props", "overlays", "write")
OCCLUDER_DEPTH = 1.0

#: Classes whose ``angles`` the game reads as a direction of movement: the
#: ``SetMovedir`` callers of the Source SDK before 2013 (SDK 2013 reads
#: ``movedir`` / ``pushdir`` keys instead, but maps built for the older code
#: keep ``angles``), and ``env_embers`` (its particles fly along ``angles``).
MOVEDIR_CLASSES = frozenset({
    "func_door", "func_water", "func_button", "func_movelinear", "momentary_door", "func_water_analog",
    "func_conveyor", "trigger_push", "env_embers",
})
#: Classes whose spawn code zeroes ``angles`` (Source SDK 2013: bmodels.cpp
#: ``CFuncWall``, ``CFuncVehicleClip``, ``CFuncIllusionary``; func_break.cpp
#: ``CBreakable``; trains.cpp ``CFuncPlat::Setup``): the game shows them unturned.
ANGLES_ZEROED_CLASSES = frozenset({
    "func_wall", "func_wall_toggle", "func_vehicleclip", "func_illusionary", "func_breakable", "func_plat",
    "func_platrot",
})


# ---- brush entities and their rotation ------------------------------------------------------
def rotation_rule(classname: str, angles: np.ndarray | None, rotation_fix: bool = True) -> str:
    """How a brush entity's solids are placed: ``"none"`` (no turn), ``"rotated"``, ``"movedir"``,
    ``"angles-zeroed"`` or ``"kept"`` (turned in the game, but ``rotation_fix`` is off)."""
    if angles is None or not np.any(np.abs(np.mod(angles + 180.0, 360.0) - 180.0) > 1e-6):
        return "none"
    folded = classname.casefold()
    if folded in MOVEDIR_CLASSES:
        return "movedir"
    if folded in ANGLES_ZEROED_CLASSES:
        return "angles-zeroed"
    return "rotated" if rotation_fix else "kept"


@dataclass(frozen=True)
class _Placement:
    entity: int  # index into the entity list
    origin: np.ndarray
    rotation: np.ndarray
    rule: str


def model_placements(entities: list[Any], rotation_fix: bool) -> dict[int, _Placement]:
    """The first entity of each brush model (``"model" "*N"``, N > 0) and how its solids are placed."""
    out: dict[int, _Placement] = {}
    for i, e in enumerate(entities):
        m = e.model_index
        if m is None or m <= 0 or m in out:
            continue
        origin = parse_vector(e.get("origin"))
        angles = parse_vector(e.get("angles"))
        rule = rotation_rule(e.classname or "", angles, rotation_fix)
        rotation = angles_matrix(angles) if rule == "rotated" and angles is not None else np.eye(3)
        out[m] = _Placement(i, origin if origin is not None else np.zeros(3), rotation, rule)
    return out


# ---- sorting brushes into entities ----------------------------------------------------------
@dataclass
class _BrushGroups:
    world: list[VmfSolid] = field(default_factory=list)
    detail: list[VmfSolid] = field(default_factory=list)
    ladders: list[VmfSolid] = field(default_factory=list)
    areaportal: dict[int, list[VmfSolid]] = field(default_factory=dict)  # portal key -> solids
    portal_entity: dict[int, list[VmfSolid]] = field(default_factory=dict)  # entity index -> its areaportal brush
    portal_unresolved: dict[int, str] = field(default_factory=dict)  # entity index -> why it got no brush
    loose_portals: list[VmfSolid] = field(default_factory=list)
    model: dict[int, list[VmfSolid]] = field(default_factory=dict)


def _group_brushes(solids: dict[int, VmfSolid], brushes: BrushSet, owner: np.ndarray,
                   placements: dict[int, _Placement], portal_of: dict[int, int], portals: PortalOwners,
                   options: DecompileOptions) -> _BrushGroups:
    groups = _BrushGroups(portal_unresolved=dict(portals.unresolved))
    for b, solid in solids.items():
        m = int(owner[b])
        contents = int(brushes.contents[b])
        if m > 0 and m in placements:
            groups.model.setdefault(m, []).append(solid)
        elif contents & Contents.AREAPORTAL and m == 0:
            key, entity = portal_of.get(b), portals.owner.get(b)
            if key is not None:
                groups.areaportal.setdefault(key, []).append(solid)
            elif entity is not None:
                groups.portal_entity.setdefault(entity, []).append(solid)
            else:
                groups.loose_portals.append(solid)
        elif contents & Contents.LADDER and m == 0 and options.ladders:
            groups.ladders.append(solid)
        elif contents & Contents.DETAIL and not options.detail_as_world:
            groups.detail.append(solid)
        else:
            groups.world.append(solid)
    return groups


def occluder_specs(bsp: MapReader, occlusion: Occlusion, index: int, game: str) -> list[PlaneSpec]:
    """The planes of a brush for each polygon of occluder ``index``."""
    vertexes = bsp.vertexes["point"].astype(np.float64)
    planes = bsp.planes
    specs: list[PlaneSpec] = []
    occluder_mat = tool_name("occluder", game)
    nodraw = tool_name("nodraw", game)
    for poly in range(*occlusion.poly_range(index).indices(len(occlusion.polys))):
        idx = np.asarray(occlusion.vertex_indices[occlusion.vertex_range(poly)], np.int64)
        pn = int(occlusion.polys["planenum"][poly])
        if len(idx) < 3 or idx.min() < 0 or idx.max() >= len(vertexes) or not 0 <= pn < len(planes):
            continue
        polygon = vertexes[idx]
        normal = planes["normal"][pn].astype(np.float64)
        # Clockwise seen from the front: Newell's normal points away from the viewer.
        newell = np.cross(polygon, np.roll(polygon, -1, axis=0)).sum(axis=0)
        if newell @ normal > 0:
            polygon = polygon[::-1]
        normals, dists = prism_planes(polygon, normal, OCCLUDER_DEPTH)
        specs.append((normals, dists, [occluder_mat] + [nodraw] * (len(normals) - 1), [-1] * len(normals)))
    return specs


# ---- func_viscluster --------------------------------------------------------------------------
def _leaf_areas(leafs: np.ndarray) -> np.ndarray:
    """``dleaf_t.area``: the low 9 bits of ``area_flags`` (17 in the 32-bit leaves of BSP 25)."""
    mask = 0x1FFFF if leafs.dtype["area_flags"].itemsize == 4 else 0x1FF
    return leafs["area_flags"].astype(np.int64) & mask


def viscluster_boxes(bsp: MapReader, entities: list[Any]) -> tuple[list[tuple[int, np.ndarray, np.ndarray]], str | None]:
    """``(cluster, mins, maxs)`` of each cluster that only a ``func_viscluster`` explains, and why none can be.

    vbsp (SDK 2013 ``prtfile.cpp`` ``NumberLeafs``) gives every non-solid
    leaf of the world its own cluster, with two exceptions: the leaves a
    ``func_viscluster`` covers (10% of their volume) share one cluster, and
    so do all leaves of a 3D skybox area (the area of a ``sky_camera``'s
    leaf) unless vbsp ran with ``-skyvis``.  Detail brushes do not split
    leaves (they are filtered into the structural tree's leaves).  So a
    cluster of two or more world leaves, not all in a 3D skybox area, was a
    ``func_viscluster``; its box is the union of its leaves' bounds
    (``dleaf_t`` mins/maxs).  A func_viscluster covering one leaf, or lying
    in the 3D skybox, cannot be told from an ordinary cluster.

    When a solid world leaf has a cluster, vbsp never numbered the clusters
    (it writes no portal file for a map that leaks): the second value says so.
    """
    leafs = bsp.lump_or_none(LumpId.LEAFS)
    if leafs is None or not len(leafs) or bsp.lump_or_none(LumpId.MODELS) is None:
        return [], None
    world = leaf_models(bsp) == 0
    cluster = leafs["cluster"].astype(np.int64)
    solid = (leafs["contents"].astype(np.int64) & int(Contents.SOLID)) != 0
    if np.any(world & solid & (cluster >= 0)):
        return [], "func_viscluster: the clusters were never numbered (solid leaves have clusters; vbsp " \
                   "writes no portal file when a map leaks)"
    areas = _leaf_areas(leafs)
    cameras = [o for e in entities if (e.classname or "").casefold() == "sky_camera"
               and (o := parse_vector(e.get("origin"))) is not None]
    sky_areas = areas[np.atleast_1d(leaf_at(bsp, np.array(cameras)))] if cameras else np.zeros(0, np.int64)
    rows = np.flatnonzero(world & ~solid & (cluster >= 0))
    ids, which, counts = np.unique(cluster[rows], return_inverse=True, return_counts=True)
    outside_sky = np.bincount(which, weights=~np.isin(areas[rows], sky_areas), minlength=len(ids))
    mins = np.full((len(ids), 3), np.inf)
    maxs = np.full((len(ids), 3), -np.inf)
    np.minimum.at(mins, which, leafs["mins"][rows].astype(np.float64))
    np.maximum.at(maxs, which, leafs["maxs"][rows].astype(np.float64))
    keep = np.flatnonzero((counts > 1) & (outside_sky > 0))
    return [(int(ids[k]), mins[k], maxs[k]) for k in keep.tolist()], None


def _box_spec(mins: np.ndarray, maxs: np.ndarray, material: str) -> PlaneSpec:
    """The six planes of an axis-aligned box, each side ``material`` (Hammer's default axes)."""
    eye = np.eye(3)
    normals = np.concatenate([eye, -eye])
    dists = np.concatenate([maxs, -mins])
    return normals, dists, [material] * 6, [-1] * 6


def _visclusters(bsp: MapReader, entities: list[Any], game: str, counter: IdCounter,
                 stats: DecompileStats) -> list[VmfEntity]:
    boxes, reason = viscluster_boxes(bsp, entities)
    if reason is not None:
        stats.not_rebuilt.append(reason)
    flat = [c for c, lo, hi in boxes if not np.all(hi > lo)]
    if flat:
        stats.not_rebuilt.append(f"func_viscluster: clusters {flat} have leaves without volume")
    boxes = [b for b in boxes if np.all(b[2] > b[1])]
    trigger = tool_name("trigger", game)
    made = made_solids([_box_spec(lo, hi, trigger) for _, lo, hi in boxes], bsp, counter)
    out = [VmfEntity(0, [("classname", "func_viscluster")], [], [m[0]]) for m in made if m]
    stats.visclusters = len(out)
    return out


# ---- entities ---------------------------------------------------------------------------------
def _lump_entity(entity: Entity, index: int, groups: _BrushGroups, placements: dict[int, _Placement],
                 occluder_solids: Callable[[int], list[VmfSolid]], stats: DecompileStats,
                 io_format: str = "map") -> VmfEntity:
    """One entity of the entity lump, with the solids that belong to it."""
    keys, outputs = split_keys(entity.items(), drop=("classname",))
    outputs = format_outputs(outputs, io_format)
    m = entity.model_index
    solids: list[VmfSolid] = []
    placement = placements.get(m) if m is not None else None
    if m is not None and placement is not None and placement.entity == index:
        solids = groups.model.get(m, [])
        if placement.rule != "none":
            label = entity.get("targetname") or entity.get("model") or ""
            stats.entity_rotation.append((entity.classname or "", label, placement.rule))
        if placement.rule == "rotated":
            keys = [(k, v) for k, v in keys if k.casefold() != "angles"]
    portal = parse_int(entity.get("portalnumber"))
    if portal is not None and portal in groups.areaportal:
        solids = solids + groups.areaportal.pop(portal)
    elif index in groups.portal_entity:
        solids = solids + groups.portal_entity.pop(index)
    elif (entity.classname or "").casefold() in AREAPORTAL_CLASSES and not solids:
        reason = groups.portal_unresolved.get(index, "no areaportal brush in the map for its portal")
        label = entity.get("targetname") or portal
        stats.not_rebuilt.append(f"{entity.classname} {label}: {reason}")
    occluder = parse_int(entity.get("occludernumber"))
    if occluder is not None:
        solids = solids + occluder_solids(occluder)
    if solids or m is not None:
        keys = [(k, v) for k, v in keys if k.casefold() != "model" or not (v == "" or v.startswith("*"))]
    hid = parse_int(entity.get("hammerid"))
    return VmfEntity(hid if hid and hid > 1 else 0, [("classname", entity.classname or "")] + keys, outputs, solids)


def _entities(bsp: MapReader, entities: list[Any], groups: _BrushGroups, placements: dict[int, _Placement],
              extra_world: list[VmfSolid], game: str, counter: IdCounter, stats: DecompileStats,
              io_format: str = "map") -> VmfMap:
    """The world and every entity of the lump, then the brush entities the decompiler rebuilt."""
    worldspawn = next((e for e in entities if (e.classname or "").casefold() == "worldspawn"), None)
    world, mapversion = world_entity(worldspawn, io_format)
    world.solids = groups.world + extra_world
    vmf = VmfMap(world, mapversion=mapversion)
    occlusion = bsp.lump_or_none(LumpId.OCCLUSION)

    def occluder_solids(index: int) -> list[VmfSolid]:
        if occlusion is None or not 0 <= index < len(occlusion):
            return []
        made = [m[0] for m in made_solids(occluder_specs(bsp, occlusion, index, game), bsp, counter) if m]
        stats.occluder_solids += len(made)
        return made

    for index, entity in enumerate(entities):
        if entity is not worldspawn:
            vmf.entities.append(_lump_entity(entity, index, groups, placements, occluder_solids, stats, io_format))
    portal_keys = [("StartOpen", "1"), ("PortalVersion", "1")]
    for solid_list in list(groups.areaportal.values()) + [[s] for s in groups.loose_portals]:
        vmf.entities.append(VmfEntity(0, [("classname", "func_areaportal")] + portal_keys, [], solid_list))
    for solid in groups.ladders:
        vmf.entities.append(VmfEntity(0, [("classname", "func_ladder")], [], [solid]))
    if groups.detail:
        vmf.entities.append(VmfEntity(0, [("classname", "func_detail")], [], groups.detail))
    stats.ladders = len(groups.ladders)
    stats.areaportal_solids = sum(len(v) for v in groups.areaportal.values()) + len(groups.loose_portals)
    return vmf


def _props(bsp: MapReader) -> list[VmfEntity]:
    out = []
    for number, (pairs, lighting) in enumerate(static_prop_pairs(bsp)):
        if lighting is not None:
            name = f"sourcebsp_lighting_{number}"
            out.append(VmfEntity(0, [("classname", "info_lighting"), ("targetname", name),
                                     ("origin", format_numbers(lighting))]))
            pairs = pairs[:-1] + [("lightingorigin", name), pairs[-1]]
        out.append(VmfEntity(0, pairs, color="255 255 0"))
    return out


def _overlays(bsp: MapReader, face_ids: np.ndarray, names: list[str]) -> list[VmfEntity]:
    return [VmfEntity(0, pairs, color="80 150 225") for pairs in overlay_pairs(bsp, face_ids, names)]


_PATCH_SUFFIX = re.compile(r"(_depth_-?\d+|_wvt_patch)$", re.IGNORECASE)
_CUBEMAP_SUFFIX = re.compile(r"^maps/.+_(-?\d+)_(-?\d+)_(-?\d+)$", re.IGNORECASE)


def _face_side_ids(match: FaceMatch, side_ids: np.ndarray, disp_side_id: dict[int, int]) -> np.ndarray:
    """The VMF side id each face was cut from (-1: none)."""
    ids = np.full(len(match.faces), -1, np.int64)
    mapped = match.side >= 0
    ids[mapped] = side_ids[match.side[mapped]]
    for face, sid in disp_side_id.items():
        ids[face] = sid
    return ids


def cubemap_sides(bsp: MapReader, faces: np.ndarray, face_ids: np.ndarray) -> dict[int, list[int]]:
    """The side ids of each cubemap (CUBEMAPS row): sides with faces whose material vbsp patched for it.

    vbsp names a material copy fixed up for the sample at ``(x, y, z)``
    ``maps/<map>/<material>_x_y_z`` (then maybe ``_depth_<n>`` or ``_wvt_patch``).
    """
    cubemaps = bsp.lump_or_none(LumpId.CUBEMAPS)
    texinfo = bsp.lump_or_none(LumpId.TEXINFO)
    if cubemaps is None or texinfo is None or not len(faces):
        return {}
    by_origin: dict[tuple[int, int, int], int] = {}
    for i, origin in enumerate(np.asarray(cubemaps["origin"]).astype(np.int64).tolist()):
        by_origin.setdefault(tuple(origin), i)
    owner_of_texdata: dict[int, int] = {}
    for td, raw in enumerate(texture_names(bsp)):
        name = raw
        while (stripped := _PATCH_SUFFIX.sub("", name)) != name:
            name = stripped
        found = _CUBEMAP_SUFFIX.match(name)
        if found is not None:
            key = (int(found.group(1)), int(found.group(2)), int(found.group(3)))
            if key in by_origin:
                owner_of_texdata[td] = by_origin[key]
    if not owner_of_texdata:
        return {}
    ti = faces["texinfo"].astype(np.int64)
    ok = (ti >= 0) & (ti < len(texinfo)) & (face_ids > 0)
    texdata = np.full(len(faces), -1, np.int64)
    texdata[ok] = texinfo["texdata"][ti[ok]]
    out: dict[int, list[int]] = {}
    for td, sid in zip(texdata[ok].tolist(), face_ids[ok].tolist()):
        cube = owner_of_texdata.get(td)
        if cube is not None:
            out.setdefault(cube, [])
            if sid not in out[cube]:
                out[cube].append(sid)
    return out


#: Hammer visgroups for what the decompiler rebuilt: (name, color).
VISGROUPS = {"detail": ("Detail", "0 192 255"), "areaportals": ("Areaportals", "255 0 255"),
             "ladders": ("Ladders", "255 160 0"), "displacements": ("Displacements", "0 255 0"),
             "reconstructed": ("Reconstructed", "255 255 0")}


def _visgroups(vmf: VmfMap, made: list[VmfSolid]) -> None:
    """Put the rebuilt parts of ``vmf`` in the :data:`VISGROUPS` (only those with members are written)."""
    ids: dict[str, int] = {}

    def group(key: str) -> int:
        if key not in ids:
            ids[key] = len(ids) + 1
            vmf.visgroups.append((ids[key], *VISGROUPS[key]))
        return ids[key]

    by_class = {"func_detail": "detail", "func_areaportal": "areaportals", "func_ladder": "ladders",
                "func_viscluster": "reconstructed"}
    for entity in vmf.entities:
        key = by_class.get(entity.classname.casefold())
        if key is not None:
            entity.visgroups.append(group(key))
        if entity.classname.casefold() == "func_occluder":
            for solid in entity.solids:
                solid.visgroups.append(group("reconstructed"))
    made_ids = {id(s) for s in made}
    for solid in vmf.iter_solids():
        if any(side.disp is not None for side in solid.sides):
            solid.visgroups.append(group("displacements"))
        if id(solid) in made_ids:
            solid.visgroups.append(group("reconstructed"))


def _plane_rule(brushes: BrushSet, table: SideTable, side_ids: np.ndarray) -> tuple[int, dict[str, Any] | None]:
    """Written BSP sides whose points define a plane off the rule, and the worst side (see DecompileStats)."""
    written = brushes.closed[brushes.side_brush] if len(brushes.side_index) else np.zeros(0, bool)
    if not written.any():
        return 0, None
    rule_n, rule_d = PLANE_RULE
    err_n, err_d = table.plane_normal_error, table.plane_dist_error
    with np.errstate(invalid="ignore"):
        score = np.where(written, np.fmax(err_n / rule_n, err_d / rule_d), -1.0)
    score = np.where(np.isnan(score), np.inf, score)
    worst = int(np.argmax(score))
    return int((score > 1.0).sum()), {
        "side": int(side_ids[worst]), "brush": int(brushes.side_brush[worst]),
        "brushside": int(brushes.side_index[worst]), "normal_error": float(err_n[worst]),
        "dist_error": float(err_d[worst])}


# ---- the whole map ------------------------------------------------------------------------------
def decompile_steps(bsp: MapReader) -> tuple[str, ...]:
    """The steps a decompile of ``bsp`` reports, writing included (:data:`DECOMPILE_STEPS`, or
    :data:`~sourcebsp.converters.vmf.respawn.RESPAWN_STEPS` for a Titanfall map)."""
    return RESPAWN_STEPS if is_respawn_map(bsp) else DECOMPILE_STEPS


def build_vmf(bsp: MapReader, options: DecompileOptions | None = None,
              progress: Callable[[str], None] | None = None) -> tuple[VmfMap, DecompileStats]:
    """The VMF document of ``bsp``, a map of any branch, and the statistics of the decompile (a
    Titanfall map's from its collision brushes: :func:`~sourcebsp.converters.vmf.respawn.build_respawn_vmf`)."""
    if is_respawn_map(bsp):
        return build_respawn_vmf(bsp, options, progress)
    options = options or DecompileOptions()
    if options.io_format not in ("map", "old", "new"):
        raise ValueError(f"io_format must be 'map', 'old' or 'new', not {options.io_format!r}")
    stats = DecompileStats()

    def report(step: str) -> None:
        if progress is not None:
            progress(step)

    names = material_names(bsp)
    game = game_of(bsp)
    lump = bsp.lump_or_none(LumpId.ENTITIES)
    entities = list(lump) if lump is not None else []

    brushes = build_brushes(bsp)
    owner = brush_models_of(bsp)
    placements = model_placements(entities, options.rotation_fix)
    frames = brush_frames(owner, {m: (p.origin, p.rotation) for m, p in placements.items()})
    report("brushes")

    match = match_faces(bsp, brushes, owner)
    report("faces")

    table: SideTable = side_table(bsp, brushes, frames, names)
    stats.restored_tool_textures = table.restored_tool_textures
    stats.default_axes = table.default_axes
    stats.perpendicular_axes_fixed = table.perpendicular_axes
    stats.sides_off_plane = int((table.off_plane > 1e-3).sum())
    stats.max_off_plane = float(table.off_plane.max(initial=0.0))
    stats.bsp_brushes = len(brushes)
    side_ids, smoothing, stats.restored_side_ids, taken = restore_side_ids(table, match, len(brushes.side_index))
    counter = IdCounter(taken, (max(taken) + 1) if taken else 1)
    solids, stats.skipped_brushes = brush_solids(brushes, table, side_ids, smoothing, counter)
    stats.sides_off_plane_rule, stats.worst_plane = _plane_rule(brushes, table, side_ids)
    disps = attach_displacements(bsp, brushes, owner, solids, match, {int(v) for v in side_ids.tolist() if v},
                                 names, game, counter)
    stats.displacements, stats.displacement_brushes_made = disps.attached, disps.brushes_made
    report("displacements")

    ap_rows = sorted(b for b in solids if owner[b] == 0 and brushes.contents[b] & Contents.AREAPORTAL)
    keys = areaportal_keys(bsp, brushes, ap_rows)
    lo, hi = brushes.bounds()
    portals = areaportal_owners(entities, ap_rows, keys, lo, hi, entity_boxes(
        bsp, entities, {m: (p.origin, p.rotation) for m, p in placements.items()}))
    stats.areaportal_owners = {rule: sum(1 for r in portals.rule.values() if r == rule)
                               for rule in ("order", "target", "references")}
    stats.areaportal_owners["lump"] = len(keys)
    groups = _group_brushes(solids, brushes, owner, placements, keys, portals, options)
    vmf = _entities(bsp, entities, groups, placements, disps.solids, game, counter, stats, options.io_format)
    stats.point_entities = sum(1 for e in vmf.entities if not e.solids)
    if options.visclusters:
        vmf.entities += _visclusters(bsp, entities, game, counter, stats)
    report("entities")

    if options.props:
        props = _props(bsp)
        stats.static_props = sum(1 for e in props if e.classname == "prop_static")
        vmf.entities += props
    face_ids = _face_side_ids(match, side_ids, disps.side_id)
    if options.cubemaps:
        sides_of = cubemap_sides(bsp, match.faces, face_ids)
        cubemaps = [VmfEntity(0, [(k, " ".join(map(str, sides_of.get(i, []))) if k == "sides" else v)
                                  for k, v in pairs]) for i, pairs in enumerate(cubemap_pairs(bsp))]
        stats.cubemaps = len(cubemaps)
        stats.cubemap_sides = sum(len(v) for v in sides_of.values())
        vmf.entities += cubemaps
    report("props")
    if options.overlays:
        overlays = _overlays(bsp, face_ids, names)
        stats.overlays = len(overlays)
        vmf.entities += overlays
    report("overlays")
    if options.cameras:
        vmf.cameras = player_cameras(entities)
        stats.cameras = len(vmf.cameras)
    if options.visgroups:
        _visgroups(vmf, disps.solids)
        stats.visgroups = len(vmf.visgroups)
    finish_document(vmf, stats)
    return vmf, stats


# Re-exported for callers that want Hammer's default axes.
__all__ += ["default_axes", "COMPILER_KEYS"]

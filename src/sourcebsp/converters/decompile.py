"""Build the VMF document of a compiled map (see :mod:`sourcebsp.converters.vmf`).

Where each part of the VMF comes from:

* world brushes: the brushes of model 0 (:func:`~sourcebsp.model.brushes.brush_models_of`);
  those with ``CONTENTS_DETAIL`` go into one ``func_detail`` (or stay in
  the world with ``detail_as_world``); those with ``CONTENTS_AREAPORTAL``
  go to the ``func_areaportal`` whose ``portalnumber`` is the key of the
  AREAPORTALS entry lying on one of their sides;
* brush entities: an entity with ``"model" "*N"`` gets model N's brushes.
  vbsp moved them by the entity's ``origin`` (it subtracts the origin from
  every plane and texture shift) and never rotates them, so they are moved
  back by the origin only; the ``angles`` key is kept, so a recompile gives
  the same model, turned the same way in the game;
* ``func_occluder``: each polygon of its occluder (OCCLUSION lump) becomes a
  brush, the polygon extruded :data:`OCCLUDER_DEPTH` units behind it, its
  front ``tools/toolsoccluder`` and its other sides nodraw;
* displacements: see :mod:`sourcebsp.converters.vmf_disp`;
* side ids: where the map has a FACEIDS lump (the Hammer side id of each
  face), a side takes the id most of its faces carry (faces are matched to
  sides by :func:`~sourcebsp.converters.vmf_geometry.face_sides`); the
  other sides get new ids above every restored one.  Entity ids come from
  ``hammerid``; solids get new ids.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..codecs.base import RawLump
from ..lump_ids import LumpId
from ..model.brushes import CONTENTS, BrushSet, brush_models_of, build_brushes, clip_brushes
from ..model.geometry import face_table
from .vmf_disp import CORNER_EPSILON, DISP_BRUSH_DEPTH, DispFace, disp_block, displacement_faces
from .vmf_entities import (
    COMPILER_KEYS, cubemap_pairs, overlay_pairs, split_keys, static_prop_pairs,
)
from .vmf_geometry import face_corner_points, face_sides, faces_within, plane_points, prism_planes
from .vmf_textures import default_axes, material_names, side_materials, texture_axes, tool_name, game_of
from .vmf_writer import VmfEntity, VmfMap, VmfSide, VmfSolid, format_numbers

__all__ = ["DecompileOptions", "DecompileStats", "DECOMPILE_STEPS", "OCCLUDER_DEPTH", "build_vmf"]

DECOMPILE_STEPS = ("brushes", "faces", "displacements", "entities", "props", "overlays", "write")
OCCLUDER_DEPTH = 1.0
_ENTITY_SOLID_COLOR = "220 30 220"


@dataclass(frozen=True)
class DecompileOptions:
    props: bool = True  # static props -> prop_static
    overlays: bool = True  # overlays -> info_overlay
    cubemaps: bool = True  # cubemap samples -> env_cubemap
    detail_as_world: bool = False  # CONTENTS_DETAIL brushes stay in the world, not func_detail


@dataclass
class DecompileStats:
    """What a decompile wrote, and what it could not."""

    world_solids: int = 0
    detail_solids: int = 0
    entity_solids: int = 0
    sides: int = 0
    brush_entities: int = 0
    point_entities: int = 0
    displacements: int = 0
    displacement_brushes_made: int = 0
    static_props: int = 0
    overlays: int = 0
    cubemaps: int = 0
    occluder_solids: int = 0
    areaportal_solids: int = 0
    skipped_brushes: list[int] = field(default_factory=list)  # BRUSHES rows not closed and convex
    restored_side_ids: int = 0
    restored_tool_textures: int = 0
    default_axes: int = 0

    @property
    def solids(self) -> int:
        return self.world_solids + self.detail_solids + self.entity_solids


class _Ids:
    """A counter that skips ids already taken."""

    def __init__(self, taken: set[int], start: int = 1) -> None:
        self.taken = set(taken)
        self.next = start

    def take(self) -> int:
        while self.next in self.taken:
            self.next += 1
        self.taken.add(self.next)
        self.next += 1
        return self.next - 1


def _lump(bsp: Any, lump: LumpId) -> Any:
    if not bsp.entry(lump).filelen and not bsp.is_loaded(lump):
        return None
    value = bsp.get_lump(lump)
    return None if isinstance(value, RawLump) else value


def _vector(text: str | None) -> np.ndarray | None:
    try:
        values = [float(p) for p in (text or "").split()]
    except ValueError:
        return None
    return np.array(values) if len(values) == 3 else None


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


@dataclass
class _SideTable:
    """Everything needed to write each side row of a BrushSet, world space."""

    points: np.ndarray  # (3 per side, 3) plane points
    vertices: np.ndarray  # world-space polygon corners (flat)
    materials: list[str]
    axes: dict[str, np.ndarray]
    ids: np.ndarray  # VMF side id, 0 until given
    smoothing: np.ndarray


class _Builder:
    def __init__(self, bsp: Any, options: DecompileOptions, progress: Callable[[str], None] | None) -> None:
        self.bsp = bsp
        self.options = options
        self.progress = progress
        self.stats = DecompileStats()
        self.names = material_names(bsp)
        self.game = game_of(bsp)
        entities = _lump(bsp, LumpId.ENTITIES)
        self.entities = list(entities) if entities is not None else []
        self.side_ids = _Ids(set())

    def report(self, step: str) -> None:
        if self.progress is not None:
            self.progress(step)

    # ---- brushes ----------------------------------------------------------------------
    def build(self) -> VmfMap:
        bsp = self.bsp
        self.brushes = build_brushes(bsp)
        self.owner = brush_models_of(bsp)
        self.model_entity: dict[int, int] = {}
        for i, e in enumerate(self.entities):
            m = e.model_index
            if m is not None and m > 0 and m not in self.model_entity:
                self.model_entity[m] = i
        origin_of_model = {m: (_vector(self.entities[i].get("origin")) if _vector(self.entities[i].get("origin"))
                               is not None else np.zeros(3)) for m, i in self.model_entity.items()}
        n_brushes = len(self.brushes)
        self.brush_origin = np.zeros((n_brushes, 3))
        for b in np.flatnonzero(self.owner > 0).tolist():
            self.brush_origin[b] = origin_of_model.get(int(self.owner[b]), np.zeros(3))
        self.report("brushes")
        self._faces()
        self.report("faces")
        self.table = self._side_table(self.brushes, self.brush_origin)
        self._assign_side_ids()
        solids = self._solids()
        self._displacements(solids)
        self.report("displacements")
        vmf = self._entities(solids)
        self.report("entities")
        if self.options.props:
            self._props(vmf)
        if self.options.cubemaps:
            self._cubemaps(vmf)
        self.report("props")
        if self.options.overlays:
            self._overlays(vmf)
        self.report("overlays")
        self._number(vmf)
        return vmf

    def _faces(self) -> None:
        bsp = self.bsp
        self.faces = face_table(bsp)
        if len(self.faces) and _lump(bsp, LumpId.VERTEXES) is not None:
            self.face_points, self.face_offsets = face_corner_points(bsp, self.faces)
        else:
            self.face_points, self.face_offsets = np.zeros((0, 3)), np.zeros(len(self.faces) + 1, np.int64)
        face_side = face_sides(self.faces, self.face_points, self.face_offsets, self.brushes)
        if len(self.faces):
            face_side[self.faces["dispinfo"] != -1] = -1
        self.face_side = face_side
        self.face_whole = faces_within(self.face_points, self.face_offsets, face_side, self.brushes)
        faceids = _lump(bsp, LumpId.FACEIDS)
        uses_ldr = bsp.entry(LumpId.FACES).filelen > 0
        self.faceids = (np.asarray(faceids).astype(np.int64)
                        if faceids is not None and len(faceids) == len(self.faces) and uses_ldr else None)

    def _side_table(self, brushes: BrushSet, brush_origin: np.ndarray) -> _SideTable:
        side_brush = brushes.side_brush
        side_origin = brush_origin[side_brush] if len(side_brush) else np.zeros((0, 3))
        point_origin = np.repeat(side_origin, brushes.side_counts, axis=0)
        vertices = brushes.points + point_origin
        dist = brushes.dist + np.einsum("ij,ij->i", brushes.normal, side_origin)
        points = plane_points(vertices, brushes.poly_offsets, brushes.normal, dist)
        contents = brushes.contents[side_brush] if len(side_brush) else np.zeros(0, np.int64)
        materials, restored = side_materials(brushes.texinfo, contents, self.bsp, self.names)
        axes = texture_axes(brushes.texinfo, brushes.normal, side_origin, self.bsp)
        self.stats.restored_tool_textures += int(restored.sum())
        self.stats.default_axes += int(axes["restored_axes"].sum())
        smoothing = np.zeros(len(side_brush), np.int64)
        return _SideTable(points, vertices, materials, axes, np.zeros(len(side_brush), np.int64), smoothing)

    def _assign_side_ids(self) -> None:
        """Hammer side ids from FACEIDS: each side takes the most common id of the faces wholly on it."""
        table, fs = self.table, self.face_side
        mapped = np.flatnonzero(fs >= 0)
        if len(mapped) and len(self.faces):
            np.bitwise_or.at(table.smoothing, fs[mapped], self.faces["smoothing_groups"][mapped].astype(np.int64)
                             if "smoothing_groups" in (self.faces.dtype.names or ()) else 0)
        # A face merged across coplanar sides carries one of their ids: it does not vote.
        mapped = np.flatnonzero((fs >= 0) & self.face_whole)
        taken: set[int] = set()
        if self.faceids is not None and len(mapped):
            pairs = np.stack([fs[mapped], self.faceids[mapped]], axis=1)
            uniq, votes = np.unique(pairs, axis=0, return_counts=True)
            # Strongest claims first: one id per side, one side per id.
            for k in np.lexsort((uniq[:, 0], -votes)).tolist():
                side, fid = int(uniq[k, 0]), int(uniq[k, 1])
                if fid <= 0 or table.ids[side] or fid in taken:
                    continue
                table.ids[side] = fid
                taken.add(fid)
            self.stats.restored_side_ids = len(taken)
        if self.faceids is not None:
            taken |= {int(v) for v in self.faceids[self.faces["dispinfo"] != -1].tolist() if v > 0}
        self.side_ids = _Ids(taken, (max(taken) + 1) if taken else 1)

    def _vmf_sides(self, table: _SideTable, rows: range, brushes: BrushSet) -> list[VmfSide]:
        out = []
        ax = table.axes
        for s in rows:
            sid = int(table.ids[s]) or self.side_ids.take()
            table.ids[s] = sid
            out.append(VmfSide(
                id=sid, points=table.points[s], material=table.materials[s],
                uaxis=ax["uaxis"][s], uscale=float(ax["uscale"][s]),
                vaxis=ax["vaxis"][s], vscale=float(ax["vscale"][s]),
                lightmapscale=int(ax["lightmapscale"][s]), smoothing_groups=int(table.smoothing[s]),
                vertices=table.vertices[brushes.poly_offsets[s] : brushes.poly_offsets[s + 1]],
                brushside=int(brushes.side_index[s]),
            ))
        return out

    def _solids(self) -> dict[int, VmfSolid]:
        """One solid per closed, convex brush, keyed by BRUSHES row."""
        out: dict[int, VmfSolid] = {}
        for b in range(len(self.brushes)):
            if not self.brushes.closed[b]:
                self.stats.skipped_brushes.append(b)
                continue
            sides = self._vmf_sides(self.table, self.brushes.sides_of(b), self.brushes)
            out[b] = VmfSolid(0, sides, b)
        return out

    def _made_solids(self, specs: list[tuple[np.ndarray, np.ndarray, list[str], list[int]]]
                     ) -> list[tuple[VmfSolid, np.ndarray] | None]:
        """New solids from planes, all clipped at once.

        Each spec is ``(normals, dists, materials, texinfos)``; a side with
        texinfo -1 gets Hammer's default axes.  Gives ``(solid, kept plane
        rows)`` per spec, or None when the planes do not close a solid.
        """
        if not specs:
            return []
        normals = np.concatenate([s[0] for s in specs])
        dists = np.concatenate([s[1] for s in specs])
        owner = np.repeat(np.arange(len(specs)), [len(s[0]) for s in specs])
        texinfos = np.concatenate([np.asarray(s[3], np.int64) for s in specs])
        materials = [m for s in specs for m in s[2]]
        keep, offsets, points = clip_brushes(normals, dists, owner, len(specs))
        rows = np.flatnonzero(keep)
        pts3 = plane_points(points, offsets, normals[rows], dists[rows])
        axes = texture_axes(texinfos[rows], normals[rows], None, self.bsp)
        first = np.r_[0, np.cumsum([len(s[0]) for s in specs])]
        out: list[tuple[VmfSolid, np.ndarray] | None] = []
        for b in range(len(specs)):
            mine = np.flatnonzero(owner[rows] == b)
            if len(mine) < 4:
                out.append(None)
                continue
            sides = []
            for k in mine.tolist():
                r = int(rows[k])
                sides.append(VmfSide(
                    id=self.side_ids.take(), points=pts3[k], material=materials[r],
                    uaxis=axes["uaxis"][k], uscale=float(axes["uscale"][k]),
                    vaxis=axes["vaxis"][k], vscale=float(axes["vscale"][k]),
                    lightmapscale=int(axes["lightmapscale"][k]),
                    vertices=points[offsets[k] : offsets[k + 1]],
                ))
            out.append((VmfSolid(0, sides), rows[mine] - first[b]))
        return out

    # ---- displacements ------------------------------------------------------------------
    def _displacements(self, solids: dict[int, VmfSolid]) -> None:
        disps = displacement_faces(self.bsp, self.faces, self.face_points, self.face_offsets)
        self.disp_solids: list[VmfSolid] = []
        self.disp_side_id: dict[int, int] = {}  # FACES row -> VMF side id
        if not disps:
            return
        by_plane: dict[int, list[tuple[int, VmfSide]]] = {}
        for b, solid in solids.items():
            if self.owner[b] != 0:
                continue
            for row, side in zip(self.brushes.sides_of(b), solid.sides):
                if side.vertices is not None and len(side.vertices) == 4:
                    by_plane.setdefault(int(self.brushes.planenum[row]), []).append((b, side))
        restored = {int(v) for v in self.table.ids.tolist() if v}
        nodraw = tool_name("nodraw", self.game)
        matched: list[VmfSide | None] = [self._matching_side(disp, by_plane.get(disp.planenum, []))
                                         for disp in disps]
        need = [i for i, side in enumerate(matched) if side is None]
        made = self._made_solids([self._disp_prism(disps[i], nodraw) for i in need])
        for i, result in zip(need, made):
            if result is not None and result[1][0] == 0:
                self.disp_solids.append(result[0])
                matched[i] = result[0].sides[0]
                self.stats.displacement_brushes_made += 1
        for disp, target in zip(disps, matched):
            if target is None:
                continue
            target.disp = disp_block(self.bsp, disp, disp.normal)
            if self.faceids is not None and self.faceids[disp.face] > 0:
                wanted = int(self.faceids[disp.face])
                if target.id != wanted and wanted not in restored:
                    target.id = wanted
                    restored.add(wanted)
            self.disp_side_id[disp.face] = target.id
            self.stats.displacements += 1

    @staticmethod
    def _matching_side(disp: DispFace, candidates: list[tuple[int, VmfSide]]) -> VmfSide | None:
        for _, side in candidates:
            if side.disp is not None or side.vertices is None:
                continue
            d = np.linalg.norm(side.vertices[:, None, :] - disp.corners[None, :, :], axis=2)
            if d.min(axis=0).max() <= CORNER_EPSILON and d.min(axis=1).max() <= CORNER_EPSILON:
                return side
        return None

    def _disp_prism(self, disp: DispFace, nodraw: str) -> tuple[np.ndarray, np.ndarray, list[str], list[int]]:
        """The planes of a brush for a displacement: its face, extruded behind it."""
        normals, dists = prism_planes(disp.corners, disp.normal, DISP_BRUSH_DEPTH)
        front_material = side_materials(np.array([disp.texinfo]), np.array([CONTENTS["SOLID"]]), self.bsp,
                                        self.names)[0][0]
        return (normals, dists, [front_material] + [nodraw] * (len(normals) - 1),
                [disp.texinfo] + [-1] * (len(normals) - 1))

    # ---- entities -----------------------------------------------------------------------
    def _entities(self, solids: dict[int, VmfSolid]) -> VmfMap:
        bsp = self.bsp
        world_pairs: list[tuple[str, str]] = [("classname", "worldspawn")]
        worldspawn = next((e for e in self.entities if (e.classname or "").casefold() == "worldspawn"), None)
        mapversion = 1
        world_outputs: list[tuple[str, str]] = []
        if worldspawn is not None:
            keys, world_outputs = split_keys(worldspawn.items(), drop=("classname",))
            world_pairs += keys
            mapversion = _int(worldspawn.get("mapversion")) or 1
        world = VmfEntity(1, world_pairs, world_outputs)
        vmf = VmfMap(world, mapversion=mapversion)
        detail: list[VmfSolid] = []
        areaportal: dict[int, list[VmfSolid]] = {}
        loose_portals: list[VmfSolid] = []
        model_solids: dict[int, list[VmfSolid]] = {}
        portal_of = self._areaportal_keys([b for b in solids if self.owner[b] == 0
                                           and self.brushes.contents[b] & CONTENTS["AREAPORTAL"]])
        for b, solid in solids.items():
            m = int(self.owner[b])
            contents = int(self.brushes.contents[b])
            if m > 0 and m in self.model_entity:
                model_solids.setdefault(m, []).append(solid)
                self.stats.entity_solids += 1
            elif contents & CONTENTS["AREAPORTAL"] and m == 0:
                key = portal_of.get(b)
                (areaportal.setdefault(key, []) if key is not None else loose_portals).append(solid)
                self.stats.areaportal_solids += 1
                self.stats.entity_solids += 1
            elif contents & CONTENTS["DETAIL"] and not self.options.detail_as_world:
                detail.append(solid)
                self.stats.detail_solids += 1
            else:
                world.solids.append(solid)
                self.stats.world_solids += 1
        world.solids += self.disp_solids
        self.stats.world_solids += len(self.disp_solids)
        occlusion = _lump(bsp, LumpId.OCCLUSION)
        for index, entity in enumerate(self.entities):
            if entity is worldspawn:
                continue
            keys, outputs = split_keys(entity.items(), drop=("classname",))
            m = entity.model_index
            solids_here: list[VmfSolid] = []
            if m is not None and self.model_entity.get(m) == index:
                solids_here = model_solids.get(m, [])
            portal = _int(entity.get("portalnumber"))
            if portal is not None and portal in areaportal:
                solids_here = solids_here + areaportal.pop(portal)
            occluder = _int(entity.get("occludernumber"))
            if occluder is not None and occlusion is not None and 0 <= occluder < len(occlusion):
                solids_here = solids_here + self._occluder_solids(occlusion, occluder)
            if solids_here or m is not None:
                keys = [(k, v) for k, v in keys if k.casefold() != "model" or not (v == "" or v.startswith("*"))]
            hid = _int(entity.get("hammerid"))
            ent = VmfEntity(hid if hid and hid > 1 else 0, [("classname", entity.classname or "")] + keys,
                            outputs, solids_here)
            if solids_here:
                self.stats.brush_entities += 1
            else:
                self.stats.point_entities += 1
            vmf.entities.append(ent)
        for solid_list in list(areaportal.values()) + [[s] for s in loose_portals]:
            vmf.entities.append(VmfEntity(0, [("classname", "func_areaportal"), ("StartOpen", "1"),
                                              ("PortalVersion", "1")], [], solid_list))
            self.stats.brush_entities += 1
        if detail:
            vmf.entities.append(VmfEntity(0, [("classname", "func_detail")], [], detail))
            self.stats.brush_entities += 1
        return vmf

    def _areaportal_keys(self, brushes: list[int]) -> dict[int, int]:
        """Portal key (``portalnumber``) of each areaportal brush, by the AREAPORTALS entry on one of its sides."""
        portals = _lump(self.bsp, LumpId.AREAPORTALS)
        verts = _lump(self.bsp, LumpId.CLIPPORTALVERTS)
        out: dict[int, int] = {}
        if portals is None or verts is None or not brushes:
            return out
        mins, maxs = self.brushes.bounds()
        pts = verts["point"].astype(np.float64)
        for p in portals:
            first, num = int(p["first_clip_portal_vert"]), int(p["num_clip_portal_verts"])
            if num < 3 or first + num > len(pts) or int(p["portal_key"]) <= 0:
                continue
            centre = pts[first : first + num].mean(axis=0)
            pn = int(p["planenum"])
            for b in brushes:
                if b in out:
                    continue
                planes = self.brushes.planenum[self.brushes.sides_of(b)]
                inside = np.all(centre >= mins[b] - 0.5) and np.all(centre <= maxs[b] + 0.5)
                if inside and (np.any(planes == pn) or np.any(planes == (pn ^ 1))):
                    out[b] = int(p["portal_key"])
        return out

    def _occluder_solids(self, occlusion: Any, index: int) -> list[VmfSolid]:
        vertexes = self.bsp.vertexes["point"].astype(np.float64)
        planes = self.bsp.planes
        out: list[VmfSolid] = []
        specs: list[tuple[np.ndarray, np.ndarray, list[str], list[int]]] = []
        occluder_mat = tool_name("occluder", self.game)
        nodraw = tool_name("nodraw", self.game)
        for poly in range(*occlusion.poly_range(index).indices(len(occlusion.polys))):
            idx = np.asarray(occlusion.vertex_indices[occlusion.vertex_range(poly)], np.int64)
            if len(idx) < 3 or idx.min() < 0 or idx.max() >= len(vertexes):
                continue
            polygon = vertexes[idx]
            pn = int(occlusion.polys["planenum"][poly])
            normal = planes["normal"][pn].astype(np.float64)
            # Clockwise seen from the front: Newell's normal points away from the viewer.
            newell = np.cross(polygon, np.roll(polygon, -1, axis=0)).sum(axis=0)
            if newell @ normal > 0:
                polygon = polygon[::-1]
            normals, dists = prism_planes(polygon, normal, OCCLUDER_DEPTH)
            specs.append((normals, dists, [occluder_mat] + [nodraw] * (len(normals) - 1), [-1] * len(normals)))
        for made in self._made_solids(specs):
            if made is not None:
                out.append(made[0])
                self.stats.occluder_solids += 1
                self.stats.entity_solids += 1
        return out

    def _props(self, vmf: VmfMap) -> None:
        for pairs, lighting in static_prop_pairs(self.bsp):
            if lighting is not None:
                name = f"sourcebsp_lighting_{self.stats.static_props}"
                vmf.entities.append(VmfEntity(0, [("classname", "info_lighting"), ("targetname", name),
                                                  ("origin", format_numbers(lighting))]))
                pairs = pairs[:-1] + [("lightingorigin", name), pairs[-1]]
            vmf.entities.append(VmfEntity(0, pairs, color="255 255 0"))
            self.stats.static_props += 1

    def _cubemaps(self, vmf: VmfMap) -> None:
        for pairs in cubemap_pairs(self.bsp):
            vmf.entities.append(VmfEntity(0, pairs))
            self.stats.cubemaps += 1

    def _overlays(self, vmf: VmfMap) -> None:
        ids = np.full(len(self.faces), -1, np.int64)
        mapped = self.face_side >= 0
        ids[mapped] = self.table.ids[self.face_side[mapped]]
        for face, sid in self.disp_side_id.items():
            ids[face] = sid
        for pairs in overlay_pairs(self.bsp, ids, self.names):
            vmf.entities.append(VmfEntity(0, pairs, color="80 150 225"))
            self.stats.overlays += 1

    # ---- ids ------------------------------------------------------------------------
    def _number(self, vmf: VmfMap) -> None:
        seen: set[int] = {1}
        for entity in vmf.entities:
            if entity.id and entity.id not in seen:
                seen.add(entity.id)
            else:
                entity.id = 0
        ids = _Ids(seen, max(seen) + 1)
        for entity in vmf.entities:
            if not entity.id:
                entity.id = ids.take()
        for solid in vmf.iter_solids():
            solid.id = ids.take()
            self.stats.sides += len(solid.sides)
        for entity in vmf.entities:
            if entity.solids:
                entity.color = _ENTITY_SOLID_COLOR


def build_vmf(bsp: Any, options: DecompileOptions | None = None,
              progress: Callable[[str], None] | None = None) -> tuple[VmfMap, DecompileStats]:
    """The VMF document of ``bsp`` and the statistics of the decompile."""
    builder = _Builder(bsp, options or DecompileOptions(), progress)
    vmf = builder.build()
    return vmf, builder.stats


# Re-exported for callers that want Hammer's default axes.
__all__ += ["default_axes", "COMPILER_KEYS"]

"""Solids of a decompiled map: brush sides placed in the world, side ids, made solids, displacements.

Each stage is a function of what it is given (the map, the brushes, the
results of earlier stages) and returns new values:

* :func:`brush_frames`: where each brush's model is placed: its entity's
  origin and, for rotated brush entities, its rotation;
* :func:`match_faces`: the brush side each face was cut from
  (:func:`~sourcebsp.converters.vmf.geometry.face_sides`), and FACEIDS;
* :func:`side_table`: every side's plane points, material and texture axes
  in world space;
* :func:`restore_side_ids`: Hammer's side ids from FACEIDS;
* :func:`brush_solids`, :func:`made_solids`: ``solid`` blocks from brushes,
  and from planes (occluders, displacement brushes);
* :func:`attach_displacements`: a ``dispinfo`` on the side each displacement
  lies on (or on a brush made for it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...flags import Contents
from ...lump_ids import LumpId
from ...model.brushes import BrushSet, clip_brushes
from ...model.geometry import face_table
from ...protocols import MapReader
from .disp import CORNER_EPSILON, DISP_BRUSH_DEPTH, DispFace, disp_block, displacement_faces
from .geometry import (
    defined_plane_errors, face_corner_points, face_sides, faces_within, plane_points, prism_planes,
)
from .textures import side_materials, texture_axes, tool_name
from .writer import VmfSide, VmfSolid

__all__ = [
    "IdCounter", "BrushFrames", "FaceMatch", "SideTable", "DispResult", "PlaneSpec",
    "brush_frames", "match_faces", "side_table", "restore_side_ids", "brush_solids", "made_solids",
    "attach_displacements",
]

#: A solid to make from planes: ``(normals, dists, materials, texinfos)``; texinfo -1 gets default axes.
PlaneSpec = tuple[np.ndarray, np.ndarray, list[str], list[int]]


class IdCounter:
    """Hands out ids, skipping those already taken."""

    def __init__(self, taken: set[int], start: int = 1) -> None:
        self.taken = set(taken)
        self.next = start

    def take(self) -> int:
        while self.next in self.taken:
            self.next += 1
        self.taken.add(self.next)
        self.next += 1
        return self.next - 1


@dataclass(frozen=True)
class BrushFrames:
    """Per brush: where its model is placed (``origin`` ``(B, 3)``, ``rotation`` ``(B, 3, 3)``)."""

    origin: np.ndarray
    rotation: np.ndarray


def brush_frames(owner: np.ndarray, placement: dict[int, tuple[np.ndarray, np.ndarray]]) -> BrushFrames:
    """Frames of brushes owned by models (``owner``) placed as ``{model: (origin, rotation)}``."""
    n = len(owner)
    origin = np.zeros((n, 3))
    rotation = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
    for model, (o, r) in placement.items():
        rows = owner == model
        origin[rows] = o
        rotation[rows] = r
    return BrushFrames(origin, rotation)


@dataclass(frozen=True)
class FaceMatch:
    """The faces of the map and the brush side each was cut from."""

    faces: np.ndarray
    points: np.ndarray  # corners of every face
    offsets: np.ndarray
    side: np.ndarray  # (F,) side row, -1: none
    whole: np.ndarray  # (F,) the face lies wholly inside its side
    faceids: np.ndarray | None  # (F,) Hammer side id of each face (FACEIDS), when the map has them


def _face_models(bsp: MapReader, n_faces: int) -> np.ndarray:
    """The model of each face (``dmodel_t`` firstface/numfaces), -1 for faces of none."""
    out = np.full(n_faces, -1, np.int64)
    models = bsp.lump_or_none(LumpId.MODELS)
    if models is None:
        return out
    first = models["firstface"].astype(np.int64)
    num = np.maximum(models["numfaces"].astype(np.int64), 0)
    ok = (first >= 0) & (first + num <= n_faces)
    for m in np.flatnonzero(ok).tolist():
        out[first[m] : first[m] + num[m]] = m
    return out


def match_faces(bsp: MapReader, brushes: BrushSet, owner: np.ndarray) -> FaceMatch:
    """The faces of ``bsp`` matched to the sides of ``brushes`` (owned by the models ``owner``)."""
    faces = face_table(bsp)
    if len(faces) and bsp.lump_or_none(LumpId.VERTEXES) is not None:
        points, offsets = face_corner_points(bsp, faces)
    else:
        points, offsets = np.zeros((0, 3)), np.zeros(len(faces) + 1, np.int64)
    side_model = owner[brushes.side_brush] if len(brushes.side_index) else np.zeros(0, np.int64)
    side = face_sides(faces, points, offsets, brushes, face_model=_face_models(bsp, len(faces)),
                      side_model=side_model)
    if len(faces):
        side[faces["dispinfo"] != -1] = -1
    whole = faces_within(points, offsets, side, brushes)
    faceids = bsp.lump_or_none(LumpId.FACEIDS)
    uses_ldr = bsp.lump_or_none(LumpId.FACES) is not None  # FACEIDS follow the LDR faces
    ids = (np.asarray(faceids).astype(np.int64)
           if faceids is not None and len(faceids) == len(faces) and uses_ldr else None)
    return FaceMatch(faces, points, offsets, side, whole, ids)


@dataclass(frozen=True)
class SideTable:
    """Everything needed to write each side row of a BrushSet, world space."""

    points: np.ndarray  # (S, 3, 3) plane points
    vertices: np.ndarray  # world-space polygon corners (flat, rows of brushes.poly_offsets)
    normal: np.ndarray  # (S, 3) world-space normals
    materials: list[str]
    axes: dict[str, np.ndarray]
    restored_tool_textures: int
    default_axes: int
    perpendicular_axes: int  # sides whose texinfo axes were perpendicular to them (given default axes)
    off_plane: np.ndarray  # (S,) farthest plane point from the side's BSP plane
    #: (S,) how far the plane the written points define is from the BSP plane: largest normal
    #: component, distance (geometry.defined_plane_errors; the rule is geometry.PLANE_RULE).
    plane_normal_error: np.ndarray
    plane_dist_error: np.ndarray


def side_table(bsp: MapReader, brushes: BrushSet, frames: BrushFrames, names: list[str]) -> SideTable:
    """Every side of ``brushes`` placed by ``frames``: plane points, polygon, material, texture axes."""
    side_brush = brushes.side_brush
    n_sides = len(side_brush)
    origin = frames.origin[side_brush] if n_sides else np.zeros((0, 3))
    rotation = frames.rotation[side_brush] if n_sides else np.zeros((0, 3, 3))
    normal = np.einsum("sij,sj->si", rotation, brushes.normal) if n_sides else np.zeros((0, 3))
    point_rotation = np.repeat(rotation, brushes.side_counts, axis=0)
    point_origin = np.repeat(origin, brushes.side_counts, axis=0)
    vertices = (np.einsum("pij,pj->pi", point_rotation, brushes.points) + point_origin
                if len(brushes.points) else np.zeros((0, 3)))
    dist = brushes.dist + np.einsum("ij,ij->i", normal, origin)
    points = plane_points(vertices, brushes.poly_offsets, normal, brushes.dist, origin)
    contents = brushes.contents[side_brush] if n_sides else np.zeros(0, np.int64)
    materials, restored = side_materials(brushes.texinfo, contents, bsp, names, side_brush)
    axes = texture_axes(brushes.texinfo, normal, origin, bsp, rotation)
    off_plane = np.abs(np.einsum("spj,sj->sp", points, normal) - dist[:, None]).max(axis=1) if n_sides \
        else np.zeros(0)
    err_n, err_d = defined_plane_errors(points, brushes.normal, brushes.dist, origin=origin, rotation=rotation)
    return SideTable(points, vertices, normal, materials, axes, int(restored.sum()),
                     int(axes["restored_axes"].sum()), int(axes["perpendicular"].sum()), off_plane, err_n, err_d)


def restore_side_ids(table: SideTable, match: FaceMatch, n_sides: int) -> tuple[np.ndarray, np.ndarray, int, set[int]]:
    """Hammer side ids from FACEIDS: each side takes the most common id of the faces wholly on it.

    Returns ``(ids, smoothing, restored, taken)``: the id of each side row (0:
    none yet), its smoothing groups (OR of its faces'), how many ids were
    restored and every id already used (displacement faces' included).
    """
    ids = np.zeros(n_sides, np.int64)
    smoothing = np.zeros(n_sides, np.int64)
    fs, faces = match.side, match.faces
    mapped = np.flatnonzero(fs >= 0)
    if len(mapped) and "smoothing_groups" in (faces.dtype.names or ()):
        np.bitwise_or.at(smoothing, fs[mapped], faces["smoothing_groups"][mapped].astype(np.int64))
    # A face merged across coplanar sides carries one of their ids: it does not vote.
    mapped = np.flatnonzero((fs >= 0) & match.whole)
    taken: set[int] = set()
    if match.faceids is not None and len(mapped):
        pairs = np.stack([fs[mapped], match.faceids[mapped]], axis=1)
        uniq, votes = np.unique(pairs, axis=0, return_counts=True)
        # Strongest claims first: one id per side, one side per id.
        for k in np.lexsort((uniq[:, 0], -votes)).tolist():
            side, fid = int(uniq[k, 0]), int(uniq[k, 1])
            if fid <= 0 or ids[side] or fid in taken:
                continue
            ids[side] = fid
            taken.add(fid)
    restored = len(taken)
    if match.faceids is not None:
        taken |= {int(v) for v in match.faceids[faces["dispinfo"] != -1].tolist() if v > 0}
    return ids, smoothing, restored, taken


def _vmf_sides(table: SideTable, ids: np.ndarray, smoothing: np.ndarray, rows: range, brushes: BrushSet,
               counter: IdCounter) -> list[VmfSide]:
    out = []
    ax = table.axes
    for s in rows:
        sid = int(ids[s]) or counter.take()
        ids[s] = sid
        out.append(VmfSide(
            id=sid, points=table.points[s], material=table.materials[s],
            uaxis=ax["uaxis"][s], uscale=float(ax["uscale"][s]),
            vaxis=ax["vaxis"][s], vscale=float(ax["vscale"][s]),
            lightmapscale=int(ax["lightmapscale"][s]), smoothing_groups=int(smoothing[s]),
            vertices=table.vertices[brushes.poly_offsets[s] : brushes.poly_offsets[s + 1]],
            brushside=int(brushes.side_index[s]),
        ))
    return out


def brush_solids(brushes: BrushSet, table: SideTable, ids: np.ndarray, smoothing: np.ndarray,
                 counter: IdCounter) -> tuple[dict[int, VmfSolid], list[int]]:
    """One solid per closed, convex brush, keyed by BRUSHES row; and the rows skipped.

    ``ids`` is filled in with the id each side gets.
    """
    out: dict[int, VmfSolid] = {}
    skipped: list[int] = []
    for b in range(len(brushes)):
        if not brushes.closed[b]:
            skipped.append(b)
            continue
        out[b] = VmfSolid(0, _vmf_sides(table, ids, smoothing, brushes.sides_of(b), brushes, counter), b)
    return out, skipped


def made_solids(specs: list[PlaneSpec], bsp: MapReader, counter: IdCounter) -> list[tuple[VmfSolid, np.ndarray] | None]:
    """New solids from planes, all clipped at once.

    Gives ``(solid, kept plane rows)`` per spec, or None when the planes do
    not close a solid.
    """
    return solids_from_planes(specs, counter, lambda texinfos, normals: texture_axes(texinfos, normals, None, bsp))


def solids_from_planes(specs: list[PlaneSpec], counter: IdCounter,
                       axes_of: Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]],
                       ) -> list[tuple[VmfSolid, np.ndarray] | None]:
    """:func:`made_solids` with the sides' texture axes from ``axes_of(texinfos, normals)``
    (the kept sides' ``PlaneSpec`` texinfos and normals), for maps without a TEXINFO lump."""
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
    axes = axes_of(texinfos[rows], normals[rows])
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
                id=counter.take(), points=pts3[k], material=materials[r],
                uaxis=axes["uaxis"][k], uscale=float(axes["uscale"][k]),
                vaxis=axes["vaxis"][k], vscale=float(axes["vscale"][k]),
                lightmapscale=int(axes["lightmapscale"][k]),
                vertices=points[offsets[k] : offsets[k + 1]],
            ))
        out.append((VmfSolid(0, sides), rows[mine] - first[b]))
    return out


@dataclass
class DispResult:
    """Displacements attached: the brushes made for them and each displacement face's side id."""

    solids: list[VmfSolid] = field(default_factory=list)
    side_id: dict[int, int] = field(default_factory=dict)  # FACES row -> VMF side id
    attached: int = 0
    brushes_made: int = 0


def _matching_side(disp: DispFace, candidates: list[VmfSide]) -> VmfSide | None:
    for side in candidates:
        if side.disp is not None or side.vertices is None:
            continue
        d = np.linalg.norm(side.vertices[:, None, :] - disp.corners[None, :, :], axis=2)
        if d.min(axis=0).max() <= CORNER_EPSILON and d.min(axis=1).max() <= CORNER_EPSILON:
            return side
    return None


def _disp_prism(disp: DispFace, bsp: MapReader, names: list[str], nodraw: str) -> PlaneSpec:
    """The planes of a brush for a displacement: its face, extruded behind it."""
    normals, dists = prism_planes(disp.corners, disp.normal, DISP_BRUSH_DEPTH)
    front = side_materials(np.array([disp.texinfo]), np.array([int(Contents.SOLID)]), bsp, names)[0][0]
    return (normals, dists, [front] + [nodraw] * (len(normals) - 1), [disp.texinfo] + [-1] * (len(normals) - 1))


def attach_displacements(bsp: MapReader, brushes: BrushSet, owner: np.ndarray, solids: dict[int, VmfSolid],
                         match: FaceMatch, restored_ids: set[int], names: list[str], game: str,
                         counter: IdCounter) -> DispResult:
    """Give every displacement a ``dispinfo`` on the world side it lies on, or on a brush made for it."""
    result = DispResult()
    disps = displacement_faces(bsp, match.faces, match.points, match.offsets)
    if not disps:
        return result
    by_plane: dict[int, list[VmfSide]] = {}
    for b, solid in solids.items():
        if owner[b] != 0:
            continue
        for row, side in zip(brushes.sides_of(b), solid.sides):
            if side.vertices is not None and len(side.vertices) == 4:
                by_plane.setdefault(int(brushes.planenum[row]), []).append(side)
    restored = set(restored_ids)
    nodraw = tool_name("nodraw", game)
    matched = [_matching_side(disp, by_plane.get(disp.planenum, [])) for disp in disps]
    need = [i for i, side in enumerate(matched) if side is None]
    made = made_solids([_disp_prism(disps[i], bsp, names, nodraw) for i in need], bsp, counter)
    for i, made_one in zip(need, made):
        if made_one is not None and made_one[1][0] == 0:
            result.solids.append(made_one[0])
            matched[i] = made_one[0].sides[0]
            result.brushes_made += 1
    for disp, target in zip(disps, matched):
        if target is None:
            continue
        target.disp = disp_block(bsp, disp, disp.normal)
        if match.faceids is not None and match.faceids[disp.face] > 0:
            wanted = int(match.faceids[disp.face])
            if target.id != wanted and wanted not in restored:
                target.id = wanted
                restored.add(wanted)
        result.side_id[disp.face] = target.id
        result.attached += 1
    return result

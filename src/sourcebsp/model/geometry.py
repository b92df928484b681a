"""Triangle meshes of a map's brush faces and displacements.

Everything here reads decoded lumps (``bsp.faces``, ``bsp.surfedges``, ...)
and works on all faces at once with numpy index arithmetic; no Python loop
runs once per face or per vertex.

Conventions of the arrays this module returns:

* positions are in map units (Hammer units, Z up), in the space of their
  brush model: a brush entity's faces are stored relative to its origin, and
  :attr:`BrushModel.matrix` places them in the world;
* triangles wind counter-clockwise seen from the front, the convention of
  glTF, OBJ and most tools (the BSP stores its polygons clockwise);
* texture UVs are ``textureVecs`` projections divided by the texture size
  (texdata ``width`` / ``height``), so 1.0 is one repeat of the texture;
* lightmap coordinates (``luxels``) are in luxels from the corner of the
  face's own lightmap, in ``[0, m_LightmapTextureSizeInLuxels]``: sample
  centres sit on whole numbers.  :class:`sourcebsp.model.lightmaps.LightmapAtlas`
  maps them into its atlas.

Facts applied (bspfile.h, bspflags.h, the SDK's builddisp.cpp):

* a surfedge ``s >= 0`` walks edge ``s`` from ``v[0]`` to ``v[1]``; a negative
  one walks edge ``-s`` backwards, so a polygon's corners are ``v[0]`` of its
  positive and ``v[1]`` of its negative surfedges;
* ``dface_t.planenum`` already names the face's own plane (vbsp keeps planes in
  opposite pairs, and ``side`` is the low bit of that plane number: the face
  lies on the back of the node's plane).  The face normal is therefore
  ``planes[planenum].normal`` as stored, which every corpus face's winding
  confirms; ``side`` says nothing more about it;
* a displacement's base face has four corners; the grid starts at the corner
  nearest ``startPosition``; vertex ``(i, j)`` (``index = i * (2^power + 1) + j``)
  lies at ``lerp(lerp(c0, c1, i/n), lerp(c3, c2, i/n), j/n)`` plus
  ``vec * dist``; each grid quad is split along the diagonal from its first
  corner when its first vertex index is even, along the other diagonal when
  odd; ``DISP_TRIS`` holds one tag word per triangle in that order.

Untrusted input (the resource rule of :mod:`sourcebsp.resources`): every
``firstedge, numedges`` range is checked against ``SURFEDGES`` before a
polygon is expanded, and the total against the memory budget; a mesh whose
corners, normals or texture coordinates are not finite is refused with a
:class:`~sourcebsp.errors.BspFormatError`, never warned about.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Literal, Sequence

import numpy as np

from ..codecs.entities import EntitiesCodec, Entity, iter_entities
from ..errors import BspFormatError
from ..flags import (
    SURF_BUMPLIGHT, SURF_HINT, SURF_LIGHT, SURF_NODRAW, SURF_NOLIGHT, SURF_NOPORTAL, SURF_SKIP, SURF_SKY,
    SURF_SKY2D, SURF_TRANS, SURF_TRIGGER, SURF_WARP,
)
from ..lump_ids import LumpId
from ..codecs.geometry import FACE  # noqa: I001 - kept apart from the imports above
from ..numeric import floats, sorted_unique
from ..resources import expand_ranges

if TYPE_CHECKING:
    from ..protocols import MapReader

__all__ = [
    "SURF_LIGHT", "SURF_SKY2D", "SURF_SKY", "SURF_WARP", "SURF_TRANS", "SURF_NOPORTAL",
    "SURF_TRIGGER", "SURF_NODRAW", "SURF_HINT", "SURF_SKIP", "SURF_NOLIGHT", "SURF_BUMPLIGHT",
    "HIDDEN_FLAGS", "BrushModel", "MapMesh", "angles_matrix", "brush_models", "build_mesh",
    "face_table", "face_polygons", "hidden_faces", "texture_names", "face_textures",
]

#: Faces with any of these texinfo flags are not drawn by the engine.
HIDDEN_FLAGS = SURF_NODRAW | SURF_SKY | SURF_SKY2D | SURF_HINT | SURF_SKIP | SURF_TRIGGER
#: Tool textures that are drawn all the same (a flat black surface).
_DRAWN_TOOL_TEXTURES = frozenset({"tools/toolsblack"})

ModelSelection = Literal["world", "all"] | Sequence[int]

# Corners whose texture coordinates are computed per pass (see _uvs).
_CORNER_RUN = 1 << 11

# What a mesh keeps and computes per polygon corner (positions, normals, UVs,
# triangles and their int64 temporaries): the budget's estimate, in bytes.
_BYTES_PER_CORNER = 256


# ---- lumps ------------------------------------------------------------------------
def face_table(bsp: MapReader, *, hdr: bool = False) -> np.ndarray:
    """The ``dface_t`` array meshes are built from.

    ``FACES`` normally; ``FACES_HDR`` when ``FACES`` is empty (HDR-only maps,
    such as Xbox 360 ones) or when ``hdr`` is asked for and present.  Both
    describe the same polygons; they differ in their lightmap offsets.
    """
    # A face lump of unknown layout raises: never a face-less mesh.
    ldr = bsp.lump_or_none(LumpId.FACES, "build meshes")
    if not hdr and ldr is not None and len(ldr):
        return ldr  # FACES_HDR is not read (or decompressed) for nothing
    high = bsp.lump_or_none(LumpId.FACES_HDR, "build meshes")
    if high is not None and len(high):
        return high
    if ldr is not None and len(ldr):
        return ldr
    return np.zeros(0, FACE)


def texture_names(bsp: MapReader) -> list[str]:
    """The material name of every texdata entry (``""`` when it cannot be found): the map's own
    :meth:`~sourcebsp.protocols.MapReader.texture_names`."""
    return bsp.texture_names()


def reflectivity(texdata: Any, default: float) -> np.ndarray:
    """``dtexdata_t.reflectivity`` of every texdata as RGB in ``[0, 1]``, ``(N, 3)``.

    A value that is not finite (a damaged texdata) gives ``default``.
    """
    if texdata is None:
        return np.zeros((0, 3))
    value = floats(texdata["reflectivity"])
    return np.clip(np.where(np.isfinite(value), value, default), 0.0, 1.0)


def face_textures(bsp: MapReader, faces: np.ndarray | None = None) -> np.ndarray:
    """The texdata index of every face (``-1`` for a face without texinfo)."""
    faces = face_table(bsp) if faces is None else faces
    texinfo = bsp.lump_or_none(LumpId.TEXINFO)
    ti = faces["texinfo"].astype(np.int64)
    if texinfo is None or not len(texinfo):
        return np.full(len(faces), -1, np.int64)
    ok = (ti >= 0) & (ti < len(texinfo))
    out = np.full(len(faces), -1, np.int64)
    out[ok] = texinfo["texdata"][ti[ok]]
    return out


def hidden_faces(bsp: MapReader, faces: np.ndarray | None = None) -> np.ndarray:
    """Bool per face: True for faces the engine does not draw.

    Those are faces whose texinfo has one of :data:`HIDDEN_FLAGS` (nodraw,
    sky, 2D sky, hint, skip, trigger), faces without texinfo or texdata
    (``texdata == -1``) and faces with a tool texture (a name under ``tools/``), except ``tools/toolsblack``,
    which is drawn as a black surface.
    """
    faces = face_table(bsp) if faces is None else faces
    texinfo = bsp.lump_or_none(LumpId.TEXINFO)
    ti = faces["texinfo"].astype(np.int64)
    if texinfo is None:
        return np.ones(len(faces), bool)
    bad = (ti < 0) | (ti >= len(texinfo))
    flags = np.where(bad, 0, texinfo["flags"][np.where(bad, 0, ti)])
    hidden = bad | ((flags & HIDDEN_FLAGS) != 0)
    names = texture_names(bsp)
    tool = np.array([n.lower().replace("\\", "/").startswith("tools/") and
                     n.lower().replace("\\", "/") not in _DRAWN_TOOL_TEXTURES for n in names] + [True], bool)
    td = face_textures(bsp, faces)
    td = np.where((td < 0) | (td >= len(names)), len(names), td)
    return np.asarray(hidden | tool[td])


# ---- polygons ---------------------------------------------------------------------
def face_polygons(bsp: MapReader, faces: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Vertex indices of every face polygon, in stored (clockwise) order.

    Returns ``(indices, offsets)``: face ``k``'s corners are
    ``indices[offsets[k]:offsets[k + 1]]`` (indices into ``bsp.vertexes``).
    """
    faces = face_table(bsp) if faces is None else faces
    counts = faces["numedges"].astype(np.int64)
    offsets = np.zeros(len(faces) + 1, np.int64)
    if not len(faces) or not counts.any():
        return np.zeros(0, np.int64), offsets
    surfedges = bsp.lump_or_raise(LumpId.SURFEDGES, "build meshes")
    # Validate every range before expanding it (an edge count of 2**28 must not allocate GiBs).
    _, se_index = expand_ranges(faces["firstedge"], counts, len(surfedges), bsp=bsp, lump=LumpId.FACES,
                                fields=("firstedge", "numedges"), target="SURFEDGES",
                                bytes_per_item=_BYTES_PER_CORNER, itemsize=faces.dtype.itemsize)
    np.cumsum(counts, out=offsets[1:])
    edges = bsp.lump_or_raise(LumpId.EDGES, "build meshes")
    vertexes = bsp.lump_or_raise(LumpId.VERTEXES, "build meshes")
    se = surfedges[se_index].astype(np.int64)
    edge = np.abs(se)
    _check_range(edge, len(edges), "EDGES", bsp, LumpId.SURFEDGES)
    v = edges["v"]
    indices = np.where(se >= 0, v[edge, 0], v[edge, 1]).astype(np.int64)
    _check_range(indices, len(vertexes), "VERTEXES", bsp, LumpId.EDGES)
    return indices, offsets


#: Coordinates beyond this (2**24 units, 500 times the engine's map size) are damage, not a map.
MAX_COORDINATE = float(1 << 24)


def vertex_points(bsp: MapReader, indices: np.ndarray) -> np.ndarray:
    """``VERTEXES`` points ``indices`` as float64 ``(N, 3)``, checked finite and within :data:`MAX_COORDINATE`."""
    if not len(indices):
        return np.zeros((0, 3))
    vertexes = bsp.lump_or_raise(LumpId.VERTEXES, "build meshes")
    points = floats(vertexes["point"][indices])
    bad = ~(np.abs(points) <= MAX_COORDINATE).all(axis=1)  # also catches NaN
    if bad.any():
        vertex = int(indices[int(np.argmax(bad))])
        raise BspFormatError(f"vertex {vertex} is not a usable point: {vertexes['point'][vertex].tolist()}",
                             lump="VERTEXES", offset=bsp.entry(LumpId.VERTEXES).fileofs
                             + vertex * vertexes.dtype.itemsize)
    return points


def _check_range(index: np.ndarray, size: int, target: str, bsp: MapReader, lump: LumpId) -> None:
    if len(index) and (int(index.min()) < 0 or int(index.max()) >= size):
        bad = int(index.max()) if int(index.max()) >= size else int(index.min())
        raise BspFormatError(f"refers to {target} entry {bad}, but there are {size}",
                             lump=lump.name, offset=bsp.entry(lump).fileofs)


def _fan(counts: np.ndarray, first_vertex: np.ndarray) -> np.ndarray:
    """Fan triangles ``(0, k + 2, k + 1)`` of polygons (counter-clockwise for clockwise input)."""
    ntri = np.maximum(counts - 2, 0)
    total = int(ntri.sum())
    owner = np.repeat(np.arange(len(counts)), ntri)
    start = np.cumsum(ntri) - ntri
    k = np.arange(total) - start[owner]
    base = first_vertex[owner]
    return np.stack([base, base + k + 2, base + k + 1], axis=1)


# ---- brush models -----------------------------------------------------------------
def angles_matrix(angles: Sequence[float] | np.ndarray) -> np.ndarray:
    """The 3x3 rotation of Source ``angles`` (pitch, yaw, roll in degrees).

    mathlib's ``AngleMatrix``: yaw about Z, then pitch about Y, then roll
    about X, i.e. ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``; columns are the forward,
    left and up axes.  Accepts ``(3,)`` or ``(N, 3)``.
    """
    a = np.radians(np.asarray(angles, np.float64))
    sp, sy, sr = np.sin(a[..., 0]), np.sin(a[..., 1]), np.sin(a[..., 2])
    cp, cy, cr = np.cos(a[..., 0]), np.cos(a[..., 1]), np.cos(a[..., 2])
    m = np.empty(a.shape[:-1] + (3, 3))
    m[..., 0, 0] = cp * cy
    m[..., 1, 0] = cp * sy
    m[..., 2, 0] = -sp
    m[..., 0, 1] = sr * sp * cy - cr * sy
    m[..., 1, 1] = sr * sp * sy + cr * cy
    m[..., 2, 1] = sr * cp
    m[..., 0, 2] = cr * sp * cy + sr * sy
    m[..., 1, 2] = cr * sp * sy - sr * cy
    m[..., 2, 2] = cr * cp
    return m


def _vector(text: str | None) -> np.ndarray | None:
    if not text:
        return None
    try:
        values = [float(p) for p in text.split()]
    except ValueError:
        return None
    # "nan" and "inf" parse as floats; a key holding them is as unusable as a missing one.
    return np.array(values, np.float64) if len(values) == 3 and np.isfinite(values).all() else None


@dataclass
class BrushModel:
    """One ``dmodel_t``: the world (index 0) or a brush entity's model ``*N``."""

    index: int
    firstface: int
    numfaces: int
    mins: np.ndarray  # (3,) model space
    maxs: np.ndarray
    classname: str | None = None
    targetname: str | None = None
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angles: np.ndarray = field(default_factory=lambda: np.zeros(3))

    @property
    def name(self) -> str:
        """``"world"`` or ``"*N classname targetname"``."""
        if self.index == 0:
            return "world"
        parts = [f"*{self.index}", self.classname or "", self.targetname or ""]
        return " ".join(p for p in parts if p)

    @property
    def rotation(self) -> np.ndarray:
        return angles_matrix(self.angles)

    @property
    def matrix(self) -> np.ndarray:
        """4x4 model-to-world transform (rotation by ``angles``, then ``origin``)."""
        m = np.eye(4)
        m[:3, :3] = self.rotation
        m[:3, 3] = self.origin
        return m


def brush_models(bsp: MapReader) -> list[BrushModel]:
    """Every ``dmodel_t`` with the entity that uses it (``"model" "*N"``)."""
    models = bsp.lump_or_none(LumpId.MODELS)
    if models is None:
        return []
    out = [
        BrushModel(i, int(m["firstface"]), int(m["numfaces"]), floats(m["mins"]), floats(m["maxs"]))
        for i, m in enumerate(models)
    ]
    for entity in _read_entities(bsp):
        model = entity.get("model")
        if not model or not model.startswith("*") or not model[1:].isdigit():
            if out and entity.get("classname") == "worldspawn":
                out[0].classname = "worldspawn"
            continue
        index = int(model[1:])
        if not 0 < index < len(out) or out[index].classname is not None:
            continue
        target = out[index]
        target.classname = entity.get("classname")
        target.targetname = entity.get("targetname")
        origin = _vector(entity.get("origin"))
        angles = _vector(entity.get("angles"))
        if origin is not None:
            target.origin = origin
        if angles is not None:
            target.angles = angles
    return out


def _read_entities(bsp: MapReader) -> "Iterable[Entity]":
    """The map's entities for a reader that keeps a few keys of each.

    The decoded lump when it is loaded (its edits count); otherwise the lump's
    text is parsed one entity at a time and nothing is cached, since the full
    list costs about ten times the text in Python objects.
    """
    if bsp.is_loaded(LumpId.ENTITIES) or not isinstance(bsp.codec(LumpId.ENTITIES), EntitiesCodec):
        return bsp.lump_or_none(LumpId.ENTITIES) or ()
    if not bsp.has_lump(LumpId.ENTITIES):
        return ()
    return iter_entities(bsp.lump_bytes(LumpId.ENTITIES), lump=bsp.lump_name(LumpId.ENTITIES),
                         file_offset=bsp.entry(LumpId.ENTITIES).fileofs)


# ---- the mesh ---------------------------------------------------------------------
@dataclass
class MapMesh:
    """Triangles of the exported faces of a map, all models in one set of arrays.

    Vertices are not shared between faces (each face has its own UVs).
    Arrays of vertices: ``positions`` (model space), ``normals``, ``uv``,
    ``luxels``, ``alpha`` (displacement blend alpha 0..255, 0 elsewhere),
    ``vertex_face``.  Arrays of triangles: ``triangles`` (vertex indices,
    counter-clockwise from the front), ``triangle_face``,
    ``triangle_disp`` (dispinfo index or -1) and ``triangle_tags``
    (``CDispTri`` tags of displacement triangles, 0 elsewhere).
    ``faces`` lists the exported face indices; ``models`` the brush models
    they belong to; ``face_model`` gives the model of every face of the map.
    """

    positions: np.ndarray
    normals: np.ndarray
    uv: np.ndarray
    luxels: np.ndarray
    alpha: np.ndarray
    vertex_face: np.ndarray
    triangles: np.ndarray
    triangle_face: np.ndarray
    triangle_disp: np.ndarray
    triangle_tags: np.ndarray
    faces: np.ndarray
    face_model: np.ndarray
    face_texture: np.ndarray  # texdata index per face of the map
    textures: list[str]
    models: list[BrushModel]
    face_table: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    @property
    def num_triangles(self) -> int:
        return len(self.triangles)

    @property
    def num_vertices(self) -> int:
        return len(self.positions)

    @property
    def triangle_model(self) -> np.ndarray:
        return np.asarray(self.face_model[self.triangle_face])

    @property
    def vertex_model(self) -> np.ndarray:
        return np.asarray(self.face_model[self.vertex_face])

    @property
    def triangle_texture(self) -> np.ndarray:
        return np.asarray(self.face_texture[self.triangle_face])

    def world_positions(self) -> np.ndarray:
        """Positions placed in the world by each model's origin and angles."""
        out = self.positions.astype(np.float64)
        vm = self.vertex_model
        for model in self.models:
            if model.index == 0 or (not model.origin.any() and not model.angles.any()):
                continue
            sel = vm == model.index
            out[sel] = out[sel] @ model.rotation.T + model.origin
        return out

    def world_normals(self) -> np.ndarray:
        out = self.normals.astype(np.float64)
        vm = self.vertex_model
        for model in self.models:
            if model.index and model.angles.any():
                sel = vm == model.index
                out[sel] = out[sel] @ model.rotation.T
        return out

    def model_indices(self) -> list[int]:
        """The models that have at least one triangle, in index order."""
        return [int(m) for m in sorted_unique(self.triangle_model)]


def _select_models(models: list[BrushModel], selection: ModelSelection) -> list[int]:
    if isinstance(selection, str):
        if selection == "world":
            return [0] if models else []
        if selection == "all":
            return list(range(len(models)))
        raise ValueError(f"models must be 'world', 'all' or a list of indices, not {selection!r}")
    chosen = sorted({int(i) for i in selection})
    for i in chosen:
        if not 0 <= i < len(models):
            raise ValueError(f"there is no model {i} (the map has {len(models)})")
    return chosen


def build_mesh(bsp: MapReader, *, models: ModelSelection = "all", include_tools: bool = False) -> MapMesh:
    """Triangulate the faces of the chosen models, displacements in place of their base faces.

    Parameters
    ----------
    bsp : BspFile
    models : "all", "world" or a sequence of model indices
        ``"all"``: the world and every brush model.
    include_tools : bool
        Keep faces the engine does not draw (nodraw, sky, hint, skip,
        trigger, ``tools/`` textures).
    """
    faces = face_table(bsp)
    table = brush_models(bsp)
    chosen = _select_models(table, models)
    face_model = np.full(len(faces), -1, np.int64)
    for m in table:
        lo, hi = max(m.firstface, 0), min(m.firstface + m.numfaces, len(faces))
        if hi > lo:
            face_model[lo:hi] = m.index
    wanted = np.isin(face_model, chosen)
    if not include_tools:
        wanted &= ~hidden_faces(bsp, faces)
    wanted &= faces["numedges"] >= 3
    selected = np.flatnonzero(wanted)
    disp = faces["dispinfo"][selected].astype(np.int64) != -1
    dispinfo = bsp.lump_or_none(LumpId.DISPINFO)
    if disp.any() and dispinfo is None:
        raise BspFormatError("faces refer to displacements but the map has no DISPINFO lump",
                             lump="FACES", offset=bsp.entry(LumpId.FACES).fileofs)
    plain = selected[~disp]
    # The map's floats are untrusted: arithmetic on them may overflow.  Rather than
    # warn, the results are checked below and a mesh that is not finite is refused.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        parts = [_plain_faces(bsp, faces, plain)]
        if disp.any():
            parts.append(_displacements(bsp, faces, selected[disp]))
    mesh = _concat(parts)
    _check_finite(bsp, mesh, faces)
    texture = face_textures(bsp, faces)
    return MapMesh(
        **mesh, faces=selected, face_model=face_model, face_texture=texture,
        textures=texture_names(bsp), models=table, face_table=np.array(faces),
    )


def _check_finite(bsp: MapReader, mesh: dict[str, np.ndarray], faces: np.ndarray) -> None:
    """Every corner, normal and texture coordinate is a finite float32: otherwise the map is broken."""
    for key, lump, what in (("positions", None, "a corner that is not a finite point"),
                            ("normals", LumpId.PLANES, "a normal that is not finite"),
                            ("uv", LumpId.TEXINFO, "texture coordinates that are not finite float32 numbers"),
                            ("luxels", LumpId.TEXINFO, "lightmap coordinates that are not finite float32 numbers"),
                            ("alpha", LumpId.DISP_VERTS, "a displacement alpha that is not finite")):
        values = mesh[key]
        bad = ~np.isfinite(values).all(axis=tuple(range(1, values.ndim)))
        if not bad.any():
            continue
        row = int(np.argmax(bad))
        face = int(mesh["vertex_face"][row])
        if lump is None:
            lump = LumpId.DISP_VERTS if int(faces["dispinfo"][face]) != -1 else LumpId.VERTEXES
        raise BspFormatError(f"face {face} has {what}: {mesh[key][row].tolist()}", lump=lump.name,
                             offset=bsp.entry(lump).fileofs)


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """One mesh of several parts' arrays; each part's array is let go once joined,
    so the mesh never exists twice."""
    sizes = [len(p["positions"]) for p in parts]
    out: dict[str, np.ndarray] = {}
    for key in [k for k in parts[0] if k != "triangles"]:
        out[key] = np.concatenate([p.pop(key) for p in parts]) if len(parts) > 1 else parts[0][key]
    triangles = np.empty((sum(len(p["triangles"]) for p in parts), 3), np.uint32)
    at = offset = 0
    for part, size in zip(parts, sizes):
        tris = part.pop("triangles")
        triangles[at : at + len(tris)] = tris + offset
        at += len(tris)
        offset += size
    out["triangles"] = triangles
    return out


def _texture_sizes(bsp: MapReader, texdata_index: np.ndarray) -> np.ndarray:
    texdata = bsp.lump_or_none(LumpId.TEXDATA)
    size = np.ones((len(texdata_index), 2), np.float64)
    if texdata is None or not len(texdata):
        return size
    td = texdata_index.astype(np.int64)
    ok = (td >= 0) & (td < len(texdata))
    size[ok, 0] = texdata["width"][td[ok]]
    size[ok, 1] = texdata["height"][td[ok]]
    return np.where(size > 0, size, 1.0)


def _project(points: np.ndarray, vecs: np.ndarray) -> np.ndarray:
    """``dot(p, v.xyz) + v.w`` for the two rows of ``vecs`` ``(N, 2, 4)``: ``(N, 2)``."""
    return np.asarray(np.einsum("nk,njk->nj", points, vecs[:, :, :3].astype(np.float64)) + vecs[:, :, 3])


def _uvs(bsp: MapReader, faces: np.ndarray, face_of_vertex: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Texture UVs and lightmap luxels of ``points``, float32 ``(N, 2)`` each.

    Computed in float64, in runs of corners: a corner's temporaries (texinfo
    vectors gathered and widened, projections) take about 200 bytes.
    """
    texinfo = bsp.lump_or_raise(LumpId.TEXINFO, "build meshes")
    ti = faces["texinfo"][face_of_vertex].astype(np.int64)
    _check_range(ti, len(texinfo), "TEXINFO", bsp, LumpId.FACES)
    uv = np.empty((len(points), 2), np.float32)
    luxels = np.empty((len(points), 2), np.float32)
    for begin in range(0, len(points), _CORNER_RUN):
        run = slice(begin, begin + _CORNER_RUN)
        # One field per vertex at a time: whole texinfo_t records would be 72 bytes a vertex.
        value = _project(points[run], texinfo["texture_vecs"][ti[run]])
        value /= _texture_sizes(bsp, texinfo["texdata"][ti[run]])
        uv[run] = value
        value = _project(points[run], texinfo["lightmap_vecs"][ti[run]])
        value -= faces["lightmap_texture_mins_in_luxels"][face_of_vertex[run]].astype(np.float64)
        luxels[run] = value
    return uv, luxels


def _face_normals(bsp: MapReader, faces: np.ndarray, which: np.ndarray) -> np.ndarray:
    planes = bsp.lump_or_raise(LumpId.PLANES, "build meshes")
    pn = faces["planenum"][which].astype(np.int64)
    _check_range(pn, len(planes), "PLANES", bsp, LumpId.FACES)
    normal = planes["normal"][pn].astype(np.float64)
    # Unit length, whatever the file holds (a damaged plane must not overflow later sums of squares).
    return normal / np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)  # type: ignore[no-any-return]


def _plain_faces(bsp: MapReader, faces: np.ndarray, which: np.ndarray) -> dict[str, np.ndarray]:
    sub = faces[which]
    indices, offsets = face_polygons(bsp, sub)
    counts = np.diff(offsets)
    points = vertex_points(bsp, indices)
    local_face = np.repeat(np.arange(len(sub)), counts)
    face = which[local_face]
    uv, luxels = _uvs(bsp, faces, face, points)
    normals = _face_normals(bsp, faces, which).astype(np.float32)[local_face]  # float32 in the lump
    tris = _fan(counts, offsets[:-1])
    ntri = np.maximum(counts - 2, 0)
    return {
        "positions": points.astype(np.float32),
        "normals": normals,
        "uv": uv,
        "luxels": luxels,
        "alpha": np.zeros(len(points), np.float32),
        "vertex_face": face.astype(np.int64),
        "triangles": tris,
        "triangle_face": np.repeat(which, ntri).astype(np.int64),
        "triangle_disp": np.full(int(ntri.sum()), -1, np.int64),
        "triangle_tags": np.zeros(int(ntri.sum()), np.uint16),
    }


# ---- displacements ----------------------------------------------------------------
def _grid_triangles(power: int) -> np.ndarray:
    """The engine's triangles of one ``(2^power + 1)^2`` grid, clockwise like the BSP, ``(2 * 4^power, 3)``.

    Quad with first vertex ``k`` (row-major): when ``k`` is odd the triangles
    are ``(k, k+w, k+1)`` and ``(k+1, k+w, k+w+1)``, when even
    ``(k, k+w, k+w+1)`` and ``(k, k+w+1, k+1)``.
    """
    w = (1 << power) + 1
    rows, cols = np.meshgrid(np.arange(w - 1), np.arange(w - 1), indexing="ij")
    k = (rows * w + cols).ravel()
    odd = (k % 2 == 1)[:, None]
    first = np.where(odd, np.stack([k, k + w, k + 1], 1), np.stack([k, k + w, k + w + 1], 1))
    second = np.where(odd, np.stack([k + 1, k + w, k + w + 1], 1), np.stack([k, k + w + 1, k + 1], 1))
    return np.stack([first, second], axis=1).reshape(-1, 3)


def _displacements(bsp: MapReader, faces: np.ndarray, which: np.ndarray) -> dict[str, np.ndarray]:
    dispinfo = bsp.lump_or_raise(LumpId.DISPINFO, "build meshes")
    dispverts = bsp.lump_or_none(LumpId.DISP_VERTS)
    disptris = bsp.lump_or_none(LumpId.DISP_TRIS)
    sub = faces[which]
    if np.any(sub["numedges"] != 4):
        bad = int(which[np.flatnonzero(sub["numedges"] != 4)[0]])
        raise BspFormatError(f"displacement face {bad} has {int(faces['numedges'][bad])} edges, not 4",
                             lump="FACES", offset=bsp.entry(LumpId.FACES).fileofs)
    di = sub["dispinfo"].astype(np.int64)
    _check_range(di, len(dispinfo), "DISPINFO", bsp, LumpId.FACES)
    info = dispinfo[di]
    indices, _ = face_polygons(bsp, sub)
    corners = vertex_points(bsp, indices).reshape(-1, 4, 3)
    # Rotate each quad so that the corner nearest startPosition comes first.
    start = info["start_position"].astype(np.float64)
    first = np.argmin(((corners - start[:, None, :]) ** 2).sum(-1), axis=1)
    order = (first[:, None] + np.arange(4)) % 4
    corners = np.take_along_axis(corners, order[:, :, None], axis=1)
    normals_face = _face_normals(bsp, faces, which)
    parts = []
    for power in sorted_unique(info["power"]).tolist():
        sel = np.flatnonzero(info["power"] == power)
        parts.append(_disp_group(bsp, faces, which[sel], info[sel], corners[sel], normals_face[sel],
                                 di[sel], int(power), dispverts, disptris))
    return _concat(parts)


def _disp_group(bsp: MapReader, faces: np.ndarray, which: np.ndarray, info: np.ndarray, corners: np.ndarray,
                face_normals: np.ndarray, disp_index: np.ndarray, power: int,
                dispverts: np.ndarray | None, disptris: np.ndarray | None) -> dict[str, np.ndarray]:
    """Grids of every displacement of one power, all at once."""
    if not 2 <= power <= 4:
        raise BspFormatError(f"displacement {int(disp_index[0])} has power {power}, not 2, 3 or 4",
                             lump="DISPINFO", offset=bsp.entry(LumpId.DISPINFO).fileofs)
    n = len(which)
    w = (1 << power) + 1
    t = np.arange(w) / (w - 1)
    ti, tj = t[:, None, None], t[None, :, None]  # rows (c0 -> c1), columns (c0 -> c3)
    c0, c1, c2, c3 = (corners[:, k, None, None, :] for k in range(4))
    a = c0 + (c1 - c0) * ti
    b = c3 + (c2 - c3) * ti
    flat = (a + (b - a) * tj).reshape(n, w * w, 3)
    # Offsets from CDispVert: vec * dist, and the blend alpha.
    nverts = w * w
    vert_index = info["disp_vert_start"].astype(np.int64)[:, None] + np.arange(nverts)
    if dispverts is None:
        raise BspFormatError("the map has displacements but no DISP_VERTS lump",
                             lump="DISPINFO", offset=bsp.entry(LumpId.DISPINFO).fileofs)
    _check_range(vert_index.ravel(), len(dispverts), "DISP_VERTS", bsp, LumpId.DISPINFO)
    dv = dispverts[vert_index]
    points = flat + dv["vec"].astype(np.float64) * dv["dist"].astype(np.float64)[..., None]
    alpha = floats(dv["alpha"], np.float64)  # a float64 copy: a signalling NaN becomes a quiet one
    # Texture UVs interpolate the base face's corner UVs: project the flat grid.
    face = np.repeat(which, nverts)
    uv, _ = _uvs(bsp, faces, face, flat.reshape(-1, 3))
    # The lightmap spans the grid: the start corner at luxel (0, 0), s along
    # c0 -> c3 and t along c0 -> c1 (builddisp.cpp CalcLuxelCoords).
    size = faces["lightmap_texture_size_in_luxels"][which].astype(np.float64)
    gi, gj = np.meshgrid(t, t, indexing="ij")
    luxels = np.stack([gj.ravel()[None, :] * size[:, 0:1], gi.ravel()[None, :] * size[:, 1:2]], -1)
    # Triangles: the engine's pattern, reversed to counter-clockwise.
    grid = _grid_triangles(power)
    ntri = len(grid)
    # The grid winds like its base face when c0 -> c1 -> c2 is the face's
    # clockwise order; check per displacement with the flat grid and flip if not.
    e1 = flat[:, grid[0, 1]] - flat[:, grid[0, 0]]
    e2 = flat[:, grid[0, 2]] - flat[:, grid[0, 0]]
    clockwise = np.einsum("nk,nk->n", np.cross(e2, e1), face_normals) >= 0
    tri = grid[None, :, :] + (np.arange(n) * nverts)[:, None, None]
    tri = np.where(clockwise[:, None, None], tri[:, :, [0, 2, 1]], tri)
    # Smooth normals: area-weighted triangle normals summed at each vertex.
    pts = points.reshape(-1, 3)
    flat_tri = tri.reshape(-1, 3)
    tri_normal = np.cross(pts[flat_tri[:, 1]] - pts[flat_tri[:, 0]], pts[flat_tri[:, 2]] - pts[flat_tri[:, 0]])
    vnormal = np.zeros_like(pts)
    for k in range(3):
        np.add.at(vnormal, flat_tri[:, k], tri_normal)
    length = np.linalg.norm(vnormal, axis=1, keepdims=True)
    fallback = np.repeat(face_normals, nverts, axis=0)
    vnormal = np.where(length > 1e-9, vnormal / np.where(length > 0, length, 1), fallback)
    # Tags from DISP_TRIS, in the same quad-major order (none where ddispinfo_t has no
    # m_iDispTriStart: the leaked HL2 beta's BSP 17).
    tags = np.zeros((n, ntri), np.uint16)
    if disptris is not None and len(disptris) and "disp_tri_start" in (info.dtype.names or ()):
        tri_index = info["disp_tri_start"].astype(np.int64)[:, None] + np.arange(ntri)
        _check_range(tri_index.ravel(), len(disptris), "DISP_TRIS", bsp, LumpId.DISPINFO)
        tags = disptris[tri_index].astype(np.uint16)
    return {
        "positions": pts.astype(np.float32),
        "normals": vnormal.astype(np.float32),
        "uv": uv,
        "luxels": luxels.reshape(-1, 2).astype(np.float32),
        "alpha": alpha.ravel().astype(np.float32),
        "vertex_face": face.astype(np.int64),
        "triangles": flat_tri,
        "triangle_face": np.repeat(which, ntri).astype(np.int64),
        "triangle_disp": np.repeat(disp_index, ntri).astype(np.int64),
        "triangle_tags": tags.ravel(),
    }


def iter_models(mesh: MapMesh) -> Iterable[tuple[BrushModel, np.ndarray]]:
    """``(model, triangle indices)`` for every model that has triangles."""
    tm = mesh.triangle_model
    order = np.argsort(tm, kind="stable")
    bounds = np.searchsorted(tm[order], np.arange(len(mesh.models) + 1))
    for model in mesh.models:
        tris = order[bounds[model.index] : bounds[model.index + 1]]
        if len(tris):
            yield model, tris

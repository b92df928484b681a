"""The example map itself: its layout, and the tables vbsp, vvis and vrad would write.

See :mod:`sourcebsp.examples` for what the map holds.  A :class:`_MapBuilder`
collects planes, textures, brushes, faces and the BSP trees of the two
models as Python lists; the ``_world``, ``_button`` ... functions fill it and
turn it into lump values of sourcebsp's codecs, which :class:`BspFile`
writes.
"""
from __future__ import annotations

import io
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .._io import atomic_write
from ..flags import CONTENTS_EMPTY, CONTENTS_SOLID, STATIC_PROP_NO_PER_TEXEL_LIGHTING, SURF_NODRAW, SURF_NOLIGHT
from ..codecs.brushes import BRUSH, BRUSHSIDE
from ..codecs.entities import Entities, Entity
from ..codecs.gamelumps import GameLumps
from ..codecs.geometry import EDGE, FACE, PLANE, SURFEDGE, U16, VECTOR
from ..codecs.lighting import Lightmaps
from ..codecs.occlusion import Occlusion
from ..codecs.pakfile import XZIP_COMMENT, Pakfile
from ..codecs.physics import PhysCollide, PhysDisp
from ..codecs.records import LEAF_AMBIENT_INDEX, LEAF_AMBIENT_LIGHTING, MAP_FLAGS, WORLDLIGHT_V0
from ..codecs.staticprops import DETAIL_OBJECT, DETAIL_SPRITE, NAME, DetailProps, StaticProps
from ..codecs.textures import FACE_MACRO_TEXTURE_INFO, STRING_TABLE, TEXDATA, TEXINFO, StringData
from ..codecs.tree import AREA, AREAPORTAL, LEAF, MODEL, NODE
from ..codecs.visibility import Visibility
from ..container import BspFile
from ..header import Header, LumpEntry
from ..lump_ids import NUM_LUMPS, LumpId
from .helpers import (
    Box,
    Vec3,
    axis_vector,
    box_face_polygon,
    direct_light,
    light_intensity,
    lightmap_extents,
    luxel_positions,
    polygon_area,
    texture_axes,
    to_rgbexp,
    vec3,
)

# ---- constants of bspflags.h / bspfile.h used here ----------------------------------
PLANE_X, PLANE_Y, PLANE_Z = 0, 1, 2  # axial plane types; PLANE_ANYX.. (3..5) never occur here
EMIT_POINT = 1  # emittype_t emit_point
SOLID_VPHYSICS = 6
NODE_MARGIN = 8.0  # vbsp's node volumes reach this far past the model's brushes
LUXELS_PER_UNIT = 1.0 / 16.0  # lightmap scale 16: one luxel every 16 units
TEXELS_PER_UNIT = 4.0  # texture scale 0.25, Hammer's default


# ---- the layout of the example map (world coordinates unless stated) ----------------
ROOM = Box((-256.0, -256.0, 0.0), (256.0, 256.0, 256.0))  #: the hollow inside of the room
WALL_THICKNESS = 16.0
WORLD_BOUNDS = ROOM.grow(WALL_THICKNESS)  #: the outside of the walls
PLAYER_START: Vec3 = (-192.0, 0.0, 8.0)  #: ``info_player_start`` origin, looking along +x
LIGHT_ORIGIN: Vec3 = (0.0, 0.0, 128.0)  #: the ``light`` entity, in the middle of the room
LIGHT_COLOR = (255, 255, 255, 400)  #: its ``_light``: r g b brightness
AMBIENT_FILL = (0.03, 0.03, 0.035)  #: linear light added to every sample (stands in for bounces)
# Where a leaf's ambient sample is, in 1/255ths of its bounds: the middle, a quarter of
# the way up (where props stand; the room's middle is the light itself).
AMBIENT_SAMPLE_AT = (128, 128, 64)
BUTTON_ORIGIN: Vec3 = (252.0, 0.0, 64.0)  #: ``func_button`` origin, against the east wall
BUTTON_BOX = Box((-4.0, -16.0, -16.0), (4.0, 16.0, 16.0))  #: its brush, relative to its origin
PROP_MODEL = "models/props_c17/oildrum001.mdl"
PROP_ORIGIN: Vec3 = (96.0, -96.0, 0.0)  #: standing on the floor
PROP_ANGLES: Vec3 = (0.0, 30.0, 0.0)
# The drum's bounds around its origin (about 14 units of radius, 45 high): enough
# to find the leaves it is in, which is all vbsp uses the model's collision hull for.
PROP_BOUNDS = Box((-15.0, -15.0, 0.0), (15.0, 15.0, 46.0))

# Material names as vbsp writes them (upper case), with the texture size and
# reflectivity vbsp reads from the stock VTFs (the same values in the corpus maps).
WALL_MATERIAL = "DEV/DEV_MEASUREGENERIC01B"
BUTTON_MATERIAL = "DEV/DEV_MEASUREGENERIC01"
NODRAW_MATERIAL = "TOOLS/TOOLSNODRAW"
_MATERIALS: dict[str, tuple[Vec3, int, int, int]] = {
    # name: (reflectivity, width, height, texinfo flags)
    WALL_MATERIAL: ((0.11243543, 0.10983822, 0.10983822), 128, 128, 0),
    BUTTON_MATERIAL: ((0.7682011, 0.2159466, 0.00213412), 128, 128, 0),
    NODRAW_MATERIAL: ((0.9134962, 0.66987884, 0.0119792), 64, 64, SURF_NODRAW | SURF_NOLIGHT),
}

# The six planes of a box, in the order a model's tree cuts with them: (axis, side).
_CUTS = ((0, "min"), (0, "max"), (1, "min"), (1, "max"), (2, "min"), (2, "max"))


# ---- the builder --------------------------------------------------------------------
@dataclass
class _Face:
    model: int
    planenum: int
    polygon: np.ndarray  # (4, 3), model space
    texinfo: int
    brushside: int


@dataclass
class _Leaf:
    model: int
    contents: int
    cluster: int
    area: int
    bounds: Box
    faces: list[int] = field(default_factory=list)
    brushes: list[int] = field(default_factory=list)


@dataclass
class _Node:
    planenum: int
    bounds: Box
    firstface: int
    numfaces: int
    children: list[int] = field(default_factory=lambda: [0, 0])


class _MapBuilder:
    """The map's tables as Python lists: planes, textures, brushes, faces, nodes, leaves, models.

    The module functions below fill one and turn it into lump values.
    """

    def __init__(self) -> None:
        self.planes: list[tuple[Vec3, float, int]] = []
        self._plane_index: dict[tuple[Vec3, float], int] = {}
        self.strings = StringData()
        self.texdata: list[tuple[Vec3, int, int, int]] = []  # reflectivity, string table id, width, height
        self.string_table: list[int] = []
        self._texdata_index: dict[str, int] = {}
        self.texinfo: list[tuple[np.ndarray, np.ndarray, int, int]] = []  # texture vecs, lightmap vecs, flags, texdata
        self._texinfo_index: dict[tuple[Any, ...], int] = {}
        self.brushes: list[tuple[int, int, int]] = []  # firstside, numsides, contents
        self.brush_bounds: list[Box] = []
        self.brushsides: list[tuple[int, int]] = []  # planenum, texinfo
        self.faces: list[_Face] = []
        self.nodes: list[_Node] = []
        self.leafs: list[_Leaf] = [
            # Leaf 0: the dummy solid leaf vbsp reserves (a child index of -1 is leaf 0).
            _Leaf(0, CONTENTS_SOLID, -1, 0, Box((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
        ]
        self.models: list[tuple[Box, int, int, int]] = []  # bounds, headnode, firstface, numfaces
        self.model_origins: list[Vec3] = []  # where the model's entity puts it (lighting is in world space)

    # ---- planes and textures --------------------------------------------------------
    def plane(self, normal: Vec3, dist: float) -> int:
        """The index of a plane, creating it with its flipped twin when new.

        As vbsp's ``FindFloatPlane``: planes come in pairs, ``i ^ 1`` being
        ``i`` flipped, the even one facing the positive side of its main axis;
        both carry the same type (``PLANE_X`` .. ``PLANE_Z`` for axial planes,
        the only kind here).
        """
        key = (vec3(v + 0.0 for v in normal), float(dist) + 0.0)  # + 0.0: no negative zeros
        if key not in self._plane_index:
            axis = int(np.argmax(np.abs(key[0])))
            flip = -1.0 if key[0][axis] < 0 else 1.0
            positive = (vec3(flip * v + 0.0 for v in key[0]), flip * key[1] + 0.0)
            negative = (vec3(-v + 0.0 for v in positive[0]), -positive[1] + 0.0)
            for pair in (positive, negative):
                self._plane_index[pair] = len(self.planes)
                self.planes.append((pair[0], pair[1], (PLANE_X, PLANE_Y, PLANE_Z)[axis]))
        return self._plane_index[key]

    def texdata_of(self, material: str) -> int:
        if material not in self._texdata_index:
            reflectivity, width, height, _ = _MATERIALS[material]
            self.string_table.append(self.strings.add(material))
            self.texdata.append((reflectivity, len(self.string_table) - 1, width, height))
            self._texdata_index[material] = len(self.texdata) - 1
        return self._texdata_index[material]

    def texinfo_of(self, material: str, normal: Vec3) -> int:
        """A world-aligned texinfo (scale 0.25, lightmap scale 16) for ``material`` on a face facing ``normal``."""
        u, v = texture_axes(normal)
        flags = _MATERIALS[material][3]
        key = (material, u, v)
        if key not in self._texinfo_index:
            texture_vecs = np.array([[*u, 0.0], [*v, 0.0]]) * TEXELS_PER_UNIT
            lightmap_vecs = np.array([[*u, 0.0], [*v, 0.0]]) * LUXELS_PER_UNIT
            self.texinfo.append((texture_vecs, lightmap_vecs, flags, self.texdata_of(material)))
            self._texinfo_index[key] = len(self.texinfo) - 1
        return self._texinfo_index[key]

    # ---- brushes ----------------------------------------------------------------------
    def box_brush(self, box: Box, material_of_side: dict[tuple[int, str], str]) -> int:
        """A six-sided ``CONTENTS_SOLID`` brush; sides in the order -x, +x, -y, +y, -z, +z.

        Axial boxes need no bevel planes: their six sides are the axial planes.
        """
        first = len(self.brushsides)
        for axis, side in _CUTS:
            sign = -1.0 if side == "min" else 1.0
            normal = axis_vector(axis, sign)
            dist = sign * (box.mins[axis] if side == "min" else box.maxs[axis])
            material = material_of_side.get((axis, side), NODRAW_MATERIAL)
            self.brushsides.append((self.plane(normal, dist), self.texinfo_of(material, normal)))
        self.brushes.append((first, 6, CONTENTS_SOLID))
        self.brush_bounds.append(box)
        return len(self.brushes) - 1

    def side_of(self, brush: int, axis: int, side: str) -> int:
        return self.brushes[brush][0] + _CUTS.index((axis, side))

    # ---- a model: faces and its tree ------------------------------------------------
    def box_model(self, box: Box, *, solid_inside: bool, face_sides: dict[tuple[int, str], int],
                  brushes: list[int], bounds: Box, origin: Vec3 = (0.0, 0.0, 0.0)) -> int:
        """A model whose tree cuts its volume with the six planes of ``box``.

        ``solid_inside`` False: the world, an empty room in solid; True: a
        solid box in empty space (a brush entity).  One face lies on each of
        the six planes, facing the empty side, made from the brush side
        ``face_sides[(axis, side)]``.  Node ``k`` of the model holds face
        ``k``; leaves are numbered depth-first, front child first, as vbsp
        emits them.  ``origin``: where the model's entity places it.
        """
        model = len(self.models)
        self.model_origins.append(origin)
        firstface = len(self.faces)
        for axis, side in _CUTS:
            # Faces look into the empty part: into the room, or out of the solid box.
            sign = (1.0 if side == "min" else -1.0) * (-1.0 if solid_inside else 1.0)
            coordinate = box.mins[axis] if side == "min" else box.maxs[axis]
            planenum = self.plane(axis_vector(axis, sign), sign * coordinate)
            brushside = face_sides[(axis, side)]
            self.faces.append(_Face(model, planenum, box_face_polygon(box, axis, side, sign),
                                    self.brushsides[brushside][1], brushside))
        inside = (CONTENTS_SOLID, -1, 0) if solid_inside else (CONTENTS_EMPTY, 0, 1)
        outside = (CONTENTS_EMPTY, -1, 0) if solid_inside else (CONTENTS_SOLID, -1, 0)
        head = len(self.nodes)
        self._cut(box, bounds.grow(NODE_MARGIN), 0, firstface, inside, outside, brushes)
        self.models.append((bounds, head, firstface, len(_CUTS)))
        return model

    def _leaf(self, volume: Box, kind: tuple[int, int, int], brushes: list[int], faces: list[int]) -> int:
        contents, cluster, area = kind
        touching = [b for b in brushes if self.brush_bounds[b].overlaps(volume)] if contents == CONTENTS_SOLID else []
        self.leafs.append(_Leaf(len(self.model_origins) - 1, contents, cluster, area, volume, faces, touching))
        return -(len(self.leafs) - 1) - 1

    def _cut(self, box: Box, volume: Box, step: int, firstface: int, inside: tuple[int, int, int],
             outside: tuple[int, int, int], brushes: list[int]) -> int:
        """Node ``step`` of a model's chain; returns its child reference."""
        if step == len(_CUTS):
            # What is left is the box itself: the room (listing the faces around it) or the solid.
            faces = [] if inside[0] == CONTENTS_SOLID else list(range(firstface, firstface + len(_CUTS)))
            return self._leaf(volume, inside, brushes, faces)
        axis, side = _CUTS[step]
        coordinate = box.mins[axis] if side == "min" else box.maxs[axis]
        planenum = self.plane(axis_vector(axis), coordinate)  # the positive plane of the pair
        index = len(self.nodes)
        self.nodes.append(_Node(planenum, volume, firstface + step, 1))
        front, back = volume.split(axis, coordinate)
        # The face of this cut borders the outside leaf when the outside is empty.
        outside_faces = [firstface + step] if outside[0] == CONTENTS_EMPTY else []
        if side == "min":  # the box is in front (at or above min), the outside behind
            children = [self._cut(box, front, step + 1, firstface, inside, outside, brushes),
                        self._leaf(back, outside, brushes, outside_faces)]
        else:  # the outside is in front (at or above max)
            outside_leaf = self._leaf(front, outside, brushes, outside_faces)
            children = [outside_leaf, self._cut(box, back, step + 1, firstface, inside, outside, brushes)]
        self.nodes[index].children = children
        return index

    def leaves_in_box(self, head: int, box: Box) -> list[int]:
        """The non-solid leaves a box touches, walking the tree from node ``head``.

        As vbsp's static prop placement: every leaf the box reaches, without
        the solid ones.
        """
        found: list[int] = []
        stack = [head]
        while stack:
            child = stack.pop()
            if child < 0:
                leaf = -child - 1
                if not self.leafs[leaf].contents & CONTENTS_SOLID:
                    found.append(leaf)
                continue
            node = self.nodes[child]
            normal, dist, _ = self.planes[node.planenum]
            corners = np.array(np.meshgrid(*zip(box.mins, box.maxs))).reshape(3, -1).T
            distances = corners @ np.array(normal) - dist
            if distances.min() < 0:
                stack.append(node.children[1])
            if distances.max() > 0:
                stack.append(node.children[0])
        return sorted(found)


# ---- the map ----------------------------------------------------------------------
def _world(builder: _MapBuilder) -> None:
    """Model 0: six wall brushes around :data:`ROOM` and the faces that look into it."""
    lo, hi, t = ROOM.mins, ROOM.maxs, WALL_THICKNESS
    outer = WORLD_BOUNDS
    walls = {
        # The floor and the ceiling cover everything; the x walls run the full y length;
        # the y walls fit between them, so no two brushes overlap.
        (2, "min"): Box(outer.mins, (outer.maxs[0], outer.maxs[1], lo[2])),
        (2, "max"): Box((outer.mins[0], outer.mins[1], hi[2]), outer.maxs),
        (0, "min"): Box((lo[0] - t, outer.mins[1], lo[2]), (lo[0], outer.maxs[1], hi[2])),
        (0, "max"): Box((hi[0], outer.mins[1], lo[2]), (hi[0] + t, outer.maxs[1], hi[2])),
        (1, "min"): Box((lo[0], lo[1] - t, lo[2]), (hi[0], lo[1], hi[2])),
        (1, "max"): Box((lo[0], hi[1], lo[2]), (hi[0], hi[1] + t, hi[2])),
    }
    face_sides: dict[tuple[int, str], int] = {}
    brushes = []
    for (axis, side), wall in walls.items():
        # The wall below the room (the floor, at its "min" side) shows its top ("max") side.
        inner = (axis, "max" if side == "min" else "min")
        brush = builder.box_brush(wall, {inner: WALL_MATERIAL})
        brushes.append(brush)
        face_sides[(axis, side)] = builder.side_of(brush, *inner)
    builder.box_model(ROOM, solid_inside=False, face_sides=face_sides, brushes=brushes, bounds=outer)


def _button(builder: _MapBuilder) -> None:
    """Model 1: the ``func_button`` box, in coordinates relative to its origin."""
    brush = builder.box_brush(BUTTON_BOX, {cut: BUTTON_MATERIAL for cut in _CUTS})
    face_sides = {cut: builder.side_of(brush, *cut) for cut in _CUTS}
    builder.box_model(BUTTON_BOX, solid_inside=True, face_sides=face_sides, brushes=[brush], bounds=BUTTON_BOX,
                      origin=BUTTON_ORIGIN)


def _entities() -> Entities:
    def text(values: Iterable[float]) -> str:
        return " ".join(f"{v:g}" for v in values)

    return Entities([
        Entity([("classname", "worldspawn"), ("world_mins", text(WORLD_BOUNDS.mins)),
                ("world_maxs", text(WORLD_BOUNDS.maxs)), ("skyname", "sky_day01_01"),
                ("maxpropscreenwidth", "-1"), ("detailvbsp", "detail.vbsp"),
                ("detailmaterial", "detail/detailsprites"), ("mapversion", "1"), ("hammerid", "1")]),
        Entity([("classname", "light"), ("origin", text(LIGHT_ORIGIN)), ("_light", text(LIGHT_COLOR)),
                ("_lightHDR", "-1 -1 -1 1"), ("_lightscaleHDR", "1"), ("_constant_attn", "0"),
                ("_linear_attn", "0"), ("_quadratic_attn", "1"), ("_fifty_percent_distance", "0"),
                ("_zero_percent_distance", "0"), ("_hardfalloff", "0"), ("style", "0"),
                ("spawnflags", "0"), ("hammerid", "2")]),
        Entity([("classname", "info_player_start"), ("origin", text(PLAYER_START)), ("angles", "0 0 0"),
                ("spawnflags", "0"), ("hammerid", "3")]),
        Entity([("classname", "func_button"), ("targetname", "example_button"), ("model", "*1"),
                ("origin", text(BUTTON_ORIGIN)), ("movedir", "0 0 0"), ("speed", "5"), ("lip", "6"),
                ("wait", "1"), ("sounds", "0"), ("spawnflags", "1025"), ("rendercolor", "255 255 255"),
                ("renderamt", "255"), ("hammerid", "4")]),
    ], bsp_version=20)


def _light_at(points: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """The light of the map's ``light`` entity at ``points``, plus the fill (linear RGB)."""
    return direct_light(points, normals, LIGHT_ORIGIN, light_intensity(LIGHT_COLOR), AMBIENT_FILL)


def _lighting(builder: _MapBuilder) -> tuple[Lightmaps, np.ndarray, np.ndarray, np.ndarray]:
    """Samples of every face; returns the lump and per face lightofs, mins, sizes.

    Each face's block is preceded by its average colour (one per style), as
    vrad writes it; ``lightofs`` points past it, at the first sample.
    """
    blocks, lightofs, mins, sizes = [], [], [], []
    position = 0
    for face in builder.faces:
        normal, dist, _ = builder.planes[face.planenum]
        lm_vecs = builder.texinfo[face.texinfo][1]
        lo, size = lightmap_extents(face.polygon, lm_vecs)
        points = luxel_positions(lo, size, lm_vecs, np.array(normal), dist) + builder.model_origins[face.model]
        samples = _light_at(points, np.broadcast_to(np.array(normal), points.shape))
        average = samples.mean(axis=0, keepdims=True)
        blocks.append(to_rgbexp(np.concatenate([average, samples])))
        lightofs.append(4 * (position + 1))
        position += 1 + len(samples)
        mins.append(lo)
        sizes.append(size)
    return Lightmaps(np.concatenate(blocks)), np.array(lightofs), np.array(mins), np.array(sizes)


def _faces_table(builder: _MapBuilder, surfedge_starts: list[int], lighting: tuple[Any, ...] | None) -> np.ndarray:
    faces = builder.faces
    table = np.zeros(len(faces), FACE)
    table["planenum"] = [f.planenum for f in faces]
    table["side"] = [f.planenum & 1 for f in faces]  # 1: the face looks against its node's plane
    table["on_node"] = 1
    table["firstedge"] = surfedge_starts
    table["numedges"] = [len(f.polygon) for f in faces]
    table["texinfo"] = [f.texinfo for f in faces]
    table["dispinfo"] = -1
    if lighting is None:  # ORIGINALFACES: the faces before splitting, without lighting
        table["orig_face"] = -1
        return table
    lightofs, mins, sizes = lighting
    table["surface_fog_volume_id"] = -1
    table["styles"] = (0, 255, 255, 255)  # style 0 (always on), no other styles
    table["lightofs"] = lightofs
    table["area"] = [polygon_area(f.polygon) for f in faces]
    table["lightmap_texture_mins_in_luxels"] = mins
    table["lightmap_texture_size_in_luxels"] = sizes
    table["orig_face"] = np.arange(len(faces))  # nothing was split: each face is its own original
    return table


def _geometry(builder: _MapBuilder) -> dict[LumpId, Any]:
    """Vertexes, edges, surfedges, faces, original faces, face ids, vertex normals."""
    vertex_index: dict[tuple[float, ...], int] = {}
    edge_index: dict[frozenset[int], int] = {}
    edges: list[tuple[int, int]] = [(0, 0)]  # edge 0 is unused: surfedge signs need nonzero indices
    surfedges: list[int] = []

    def vertex(point: np.ndarray) -> int:
        return vertex_index.setdefault(tuple(float(v) for v in point), len(vertex_index))

    def add_loop(polygon: np.ndarray) -> int:
        first = len(surfedges)
        ids = [vertex(p) for p in polygon]
        for a, b in zip(ids, ids[1:] + ids[:1]):
            # One edge per pair of corners, whichever way a face walks it (vbsp makes a new edge
            # when a second face walks it the same way, as an original face and its face do).
            key = frozenset((a, b))
            if key not in edge_index:
                edge_index[key] = len(edges)
                edges.append((a, b))
            e = edge_index[key]
            surfedges.append(e if edges[e][0] == a else -e)  # negative: walked from v[1] to v[0]
        return first

    # As vbsp: each original face's edges, then those of the faces made from it.
    orig_starts, face_starts = [], []
    for face in builder.faces:
        orig_starts.append(add_loop(face.polygon))
        face_starts.append(add_loop(face.polygon))
    lightmaps, lightofs, mins, sizes = _lighting(builder)
    faces = _faces_table(builder, face_starts, (lightofs, mins, sizes))
    normals = [builder.planes[f.planenum][0] for f in builder.faces]
    unique_normals = list(dict.fromkeys(normals))
    vertexes = np.zeros(len(vertex_index), VECTOR)
    vertexes["point"] = list(vertex_index)
    edge_table = np.zeros(len(edges), EDGE)
    edge_table["v"] = edges
    return {
        LumpId.VERTEXES: vertexes,
        LumpId.EDGES: edge_table,
        LumpId.SURFEDGES: np.array(surfedges, SURFEDGE),
        LumpId.FACES: faces,
        LumpId.ORIGINALFACES: _faces_table(builder, orig_starts, None),
        LumpId.LIGHTING: lightmaps,
        LumpId.FACEIDS: np.array([f.brushside + 1 for f in builder.faces], U16),  # Hammer side ids
        LumpId.FACE_MACRO_TEXTURE_INFO: np.full(len(builder.faces), -1, FACE_MACRO_TEXTURE_INFO),
        # vrad's vertex normals: flat faces, so every corner has its face's normal.
        LumpId.VERTNORMALS: np.array([(n,) for n in unique_normals], VECTOR),
        LumpId.VERTNORMALINDICES: np.array([unique_normals.index(n) for n, f in zip(normals, builder.faces)
                                            for _ in f.polygon], U16),
    }


def _tree(builder: _MapBuilder) -> dict[LumpId, Any]:
    """Planes, nodes, leafs, leaf faces and brushes, brushes, models, areas."""
    planes = np.zeros(len(builder.planes), PLANE)
    planes["normal"] = [p[0] for p in builder.planes]
    planes["dist"] = [p[1] for p in builder.planes]
    planes["type"] = [p[2] for p in builder.planes]

    nodes = np.zeros(len(builder.nodes), NODE)
    nodes["planenum"] = [n.planenum for n in builder.nodes]
    nodes["children"] = [n.children for n in builder.nodes]
    nodes["mins"] = [n.bounds.mins for n in builder.nodes]
    nodes["maxs"] = [n.bounds.maxs for n in builder.nodes]
    nodes["firstface"] = [n.firstface for n in builder.nodes]
    nodes["numfaces"] = [n.numfaces for n in builder.nodes]
    # nodes["area"] stays 0, as vbsp leaves it.

    leafs = np.zeros(len(builder.leafs), LEAF)
    counts_faces = [len(leaf.faces) for leaf in builder.leafs]
    counts_brushes = [len(leaf.brushes) for leaf in builder.leafs]
    leafs["contents"] = [leaf.contents for leaf in builder.leafs]
    leafs["cluster"] = [leaf.cluster for leaf in builder.leafs]
    leafs["area_flags"] = [leaf.area for leaf in builder.leafs]  # area in bits 0-8, no flags
    leafs["mins"] = [leaf.bounds.mins for leaf in builder.leafs]
    leafs["maxs"] = [leaf.bounds.maxs for leaf in builder.leafs]
    leafs["firstleafface"] = np.cumsum([0] + counts_faces[:-1])
    leafs["numleaffaces"] = counts_faces
    leafs["firstleafbrush"] = np.cumsum([0] + counts_brushes[:-1])
    leafs["numleafbrushes"] = counts_brushes
    leafs["leaf_water_data_id"] = -1

    brushes = np.zeros(len(builder.brushes), BRUSH)
    brushes["firstside"] = [b[0] for b in builder.brushes]
    brushes["numsides"] = [b[1] for b in builder.brushes]
    brushes["contents"] = [b[2] for b in builder.brushes]
    brushsides = np.zeros(len(builder.brushsides), BRUSHSIDE)
    brushsides["planenum"] = [s[0] for s in builder.brushsides]
    brushsides["texinfo"] = [s[1] for s in builder.brushsides]
    # dispinfo stays 0 and bevel/thin 0, as vbsp writes them for plain brush sides.

    models = np.zeros(len(builder.models), MODEL)
    models["mins"] = [m[0].mins for m in builder.models]
    models["maxs"] = [m[0].maxs for m in builder.models]
    models["headnode"] = [m[1] for m in builder.models]
    models["firstface"] = [m[2] for m in builder.models]
    models["numfaces"] = [m[3] for m in builder.models]

    # Area 0 is the dummy (solid) area, the room is area 1; no area portals
    # (vbsp still writes one empty portal, and area 1 starts after it).
    areas = np.array([(0, 0), (0, 1)], AREA)
    return {
        LumpId.PLANES: planes,
        LumpId.NODES: nodes,
        LumpId.LEAFS: leafs,
        LumpId.LEAFFACES: np.array([f for leaf in builder.leafs for f in leaf.faces], U16),
        LumpId.LEAFBRUSHES: np.array([b for leaf in builder.leafs for b in leaf.brushes], U16),
        LumpId.LEAFMINDISTTOWATER: np.full(len(builder.leafs), 65535, U16),  # no water anywhere
        LumpId.BRUSHES: brushes,
        LumpId.BRUSHSIDES: brushsides,
        LumpId.MODELS: models,
        LumpId.AREAS: areas,
        LumpId.AREAPORTALS: np.zeros(1, AREAPORTAL),
        LumpId.VISIBILITY: Visibility.from_matrices(np.ones((1, 1), bool)),  # one cluster sees itself
    }


def _textures(builder: _MapBuilder) -> dict[LumpId, Any]:
    texinfo = np.zeros(len(builder.texinfo), TEXINFO)
    texinfo["texture_vecs"] = [t[0] for t in builder.texinfo]
    texinfo["lightmap_vecs"] = [t[1] for t in builder.texinfo]
    texinfo["flags"] = [t[2] for t in builder.texinfo]
    texinfo["texdata"] = [t[3] for t in builder.texinfo]
    texdata = np.zeros(len(builder.texdata), TEXDATA)
    texdata["reflectivity"] = [t[0] for t in builder.texdata]
    texdata["name_string_table_id"] = [t[1] for t in builder.texdata]
    texdata["width"] = texdata["view_width"] = [t[2] for t in builder.texdata]
    texdata["height"] = texdata["view_height"] = [t[3] for t in builder.texdata]
    return {
        LumpId.TEXINFO: texinfo,
        LumpId.TEXDATA: texdata,
        LumpId.TEXDATA_STRING_TABLE: np.array(builder.string_table, STRING_TABLE),
        LumpId.TEXDATA_STRING_DATA: builder.strings,
    }


def _ambient_and_lights(builder: _MapBuilder) -> dict[LumpId, Any]:
    """One ambient light cube per non-solid leaf, and the world light of the ``light`` entity."""
    index = np.zeros(len(builder.leafs), LEAF_AMBIENT_INDEX)
    cubes: list[np.ndarray] = []
    for number, leaf in enumerate(builder.leafs):
        if leaf.contents & CONTENTS_SOLID:
            continue
        index[number] = (1, len(cubes))
        lo, hi = np.array(leaf.bounds.mins), np.array(leaf.bounds.maxs)
        where = lo + (hi - lo) * np.array(AMBIENT_SAMPLE_AT) / 255 + builder.model_origins[leaf.model]
        # CompressedLightCube: the light arriving from +x, -x, +y, -y, +z, -z.
        directions = np.concatenate([np.eye(3), -np.eye(3)])[[0, 3, 1, 4, 2, 5]]
        # Stored as vrad stores a cube: the engine reads it with ColorRGBExp32ToVector, 255 times the
        # lightmaps' decoding (sourcebsp.queries.ambient_cubes).
        cubes.append(to_rgbexp(_light_at(np.repeat(where[None], 6, axis=0), directions) / 255.0))
    ambient = np.zeros(len(cubes), LEAF_AMBIENT_LIGHTING)
    ambient["cube"] = np.stack(cubes)
    ambient["x"], ambient["y"], ambient["z"] = AMBIENT_SAMPLE_AT

    light = np.zeros(1, WORLDLIGHT_V0)
    light["origin"] = LIGHT_ORIGIN
    light["intensity"] = light_intensity(LIGHT_COLOR)
    light["normal"] = (1.0, 0.0, 0.0)  # vrad writes the forward vector of the (unused) angles
    light["cluster"] = 0
    light["type"] = EMIT_POINT
    light["quadratic_attn"] = 1.0
    return {
        LumpId.LEAF_AMBIENT_INDEX: index,
        LumpId.LEAF_AMBIENT_LIGHTING: ambient,
        LumpId.WORLDLIGHTS: light,
    }


def _game_lumps(builder: _MapBuilder) -> GameLumps:
    """``sprp`` version 10 with the oil drum, and an empty ``dprp`` version 4, as vbsp writes."""
    props = StaticProps.empty(version=10, bsp_version=20)
    leaves = builder.leaves_in_box(builder.models[0][1], PROP_BOUNDS.offset(PROP_ORIGIN))
    props.add(PROP_MODEL, PROP_ORIGIN, PROP_ANGLES, leafs=leaves, solid=SOLID_VPHYSICS,
              flags=STATIC_PROP_NO_PER_TEXEL_LIGHTING)
    detail = DetailProps(np.zeros(0, NAME), np.zeros(0, DETAIL_SPRITE), np.zeros(0, DETAIL_OBJECT))
    game = GameLumps()
    game.add("sprp", 10, props)
    game.add("dprp", 4, detail)
    return game


def _empty_pakfile() -> Pakfile:
    """An empty zip with bspzip's ``XZP1 0`` comment: what vbsp writes when nothing is packed."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.comment = XZIP_COMMENT
    return Pakfile(buffer.getvalue())


# Lump versions of a BSP 20 map from the SDK 2013 tools (all others are 0).
_LUMP_VERSIONS = {
    LumpId.FACES: 1,
    LumpId.LEAFS: 1,
    LumpId.LIGHTING: 1,
    LumpId.OCCLUSION: 2,
    LumpId.LEAF_AMBIENT_LIGHTING: 1,
}
MAP_REVISION = 1  # the worldspawn's "mapversion"


def example_map_bytes() -> bytes:
    """The example map as the bytes of a ``.bsp`` file."""
    builder = _MapBuilder()
    for material in _MATERIALS:  # texdata in a fixed order: walls, button, nodraw
        builder.texdata_of(material)
    _world(builder)
    _button(builder)
    lumps: dict[LumpId, Any] = {}
    lumps.update(_tree(builder))
    lumps.update(_geometry(builder))
    lumps.update(_textures(builder))
    lumps.update(_ambient_and_lights(builder))
    map_flags = np.zeros(1, MAP_FLAGS)  # no baked static prop lighting
    lumps.update({
        LumpId.ENTITIES: _entities(),
        LumpId.GAME_LUMP: _game_lumps(builder),
        LumpId.OCCLUSION: Occlusion(),
        LumpId.PHYSCOLLIDE: PhysCollide([], None),  # only the -1 terminator: no vphysics solids
        LumpId.PHYSDISP: PhysDisp(),
        LumpId.MAP_FLAGS: map_flags,
        LumpId.PAKFILE: _empty_pakfile(),
    })
    entries = [LumpEntry(version=_LUMP_VERSIONS.get(LumpId(i), 0)) for i in range(NUM_LUMPS)]
    bsp = BspFile(Header(ident=b"VBSP", version=20, lumps=entries, map_revision=MAP_REVISION))
    for lump, value in lumps.items():
        bsp.set_lump(lump, value)
    return bsp.to_bytes()


def build_example_map() -> BspFile:
    """The example map, read back from its bytes as if opened from a file.

    Returns
    -------
    BspFile
        A BSP 20 map (``orange_box`` variant): see the module documentation
        for what it holds.
    """
    return BspFile.from_bytes(example_map_bytes())


def write_example_map(path: str | os.PathLike[str]) -> Path:
    """Write the example map to ``path`` (atomically; an existing file is replaced)."""
    return atomic_write(Path(path), example_map_bytes())

"""A small Titanfall or Titanfall 2 map built in code: the example's 512x512x256 room as
one rBSP mesh (12 triangles, lit-flat vertices), a player start, a light and an oil drum as a
static prop (``sprp`` v12 in Titanfall's layout, v13 in Titanfall 2's), and three collision
brushes (CM_BRUSHES): the floor slab (a box with no cutting plane) and two ramps, boxes cut by
one sloped plane which the second ramp shares through a plane offset of 1 (its side points
back at the plane the first stored: row ``first_brush_plane + 1 - 1``), the box sides a ramp
does not reach flagged DISCARD, each side with texture vectors.

The collision grid (2 x 2 cells, then one per model) places the slab and the first ramp in
the world, the first cell's geo set naming both through CM_PRIMITIVES (the ramp with
contents ``SOLID | DETAIL``), and the second ramp in model 1, the ``func_brush`` ``*1``; a
``trigger_multiple`` holds its box as ``*trigger_brush_0_plane_P`` keys, as Respawn's
compiler writes triggers.

Enough for :mod:`sourcebsp.respawn`, ``info``, ``repack``, ``export`` and ``decompile`` (and
bsp_tool) to read; not a map the game loads (no visibility or lighting lumps).
"""
from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Mapping

import numpy as np

from .._io import atomic_write
from ..codecs.respawn import (BRUSH_SIDE_DISCARD, CM_BRUSH_SIDE_PLANE_OFFSETS, CM_BRUSH_SIDE_PROPERTIES,
                              CM_BRUSH_SIDE_TEXTURE_VECTORS, CM_BRUSHES, CM_GEO_SETS, CM_GRID, CM_GRID_CELLS,
                              CM_PRIMITIVES, CM_UNIQUE_CONTENTS, GAME_LUMP, HEADER, HEADER_SIZE, IDENT,
                              MODEL_NAME_LENGTH, NUM_LUMPS, PLANES, PRIMITIVE_BRUSH, PRIMITIVE_CONTENTS_BITS,
                              PRIMITIVE_INDEX_BITS, STATIC_PROP_VERSIONS, record_dtypes)
from ..variants import get_variant

__all__ = ["example_respawn_bytes", "write_example_respawn"]

_SIZE = np.array([512.0, 512.0, 256.0])
_MATERIAL = b"dev/dev_measuregeneric01"
_BRUSH_MATERIAL = b"dev/dev_measurewall01a"  # TEXTURE_DATA 1: the ramps' sloped sides
_PROP_MODEL = b"models/props_c17/oildrum001.mdl"
# Lump versions as Respawn's compiler writes them (a real Titanfall 2 map; bsp_tool keys its layouts on them).
_LUMP_VERSIONS = {0x01: 1, 0x02: 1}
# The trigger: a 64-unit box at (128, -128, 64), each plane "normal distance" facing out.
_TRIGGER_PLANES = ("1 0 0 160", "-1 0 0 -96", "0 1 0 -96", "0 -1 0 160", "0 0 1 96", "0 0 -1 -32")
_ENTITIES = (b'{\n"classname" "worldspawn"\n}\n'
             b'{\n"classname" "info_player_start"\n"origin" "0 0 1"\n}\n'
             b'{\n"classname" "light"\n"origin" "0 0 200"\n"_light" "255 255 255 200"\n}\n'
             b'{\n"classname" "func_brush"\n"model" "*1"\n"targetname" "ramp_north"\n}\n'
             b'{\n"classname" "trigger_multiple"\n"targetname" "corner"\n'
             + b"".join(f'"*trigger_brush_0_plane_{i}" "{plane}"\n'.encode() for i, plane in enumerate(_TRIGGER_PLANES))
             + b'"*trigger_bounds_mins" "96 -160 32"\n"*trigger_bounds_maxs" "160 -96 96"\n}\n\0')
# CM_UNIQUE_CONTENTS: SOLID, and SOLID | DETAIL (the first ramp's).
_CONTENTS = (0x1, 0x8000001)


def _primitive(brush: int, contents: int) -> int:
    """A brush primitive: type, CM_BRUSHES row, CM_UNIQUE_CONTENTS row (see codecs.respawn)."""
    return (PRIMITIVE_BRUSH << (PRIMITIVE_INDEX_BITS + PRIMITIVE_CONTENTS_BITS)) | (brush << PRIMITIVE_CONTENTS_BITS) \
        | contents


def _room() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Corners (8, 3), inward normals (6, 3), per face its 4 corners in order, and the planes' distances."""
    half = _SIZE / 2
    corners = np.array([[x, y, z] for z in (0.0, _SIZE[2]) for y in (-half[1], half[1]) for x in (-half[0], half[0])])
    faces = np.array([[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]])
    normals = np.array([[0, 0, 1], [0, 0, -1], [0, 1, 0], [0, -1, 0], [1, 0, 0], [-1, 0, 0]], float)
    # Counter-clockwise seen from inside (glTF's front faces): flip a face whose winding points out.
    a, b, c = (corners[faces[:, i]] for i in range(3))
    outward = np.einsum("ij,ij->i", np.cross(b - a, c - a), normals) < 0
    faces[outward] = faces[outward][:, ::-1]
    dist = np.einsum("ij,ij->i", normals, corners[faces[:, 0]])
    return corners, normals, faces, dist


def _brushes(types: Mapping[int, np.dtype], first_plane: int) -> dict[int, bytes]:
    """The collision lumps: the floor slab and two ramps rising along +X (see the module's docstring)."""
    brushes = np.zeros(3, types[CM_BRUSHES])
    brushes["origin"] = [[0, 0, -8], [-64, -128, 32], [-64, 128, 32]]
    brushes["extents"] = [[256, 256, 8], [64, 64, 32], [64, 64, 32]]
    brushes["index"] = np.arange(3)
    brushes["num_plane_offsets"] = brushes["num_non_axial_no_discard"] = [0, 1, 1]
    brushes["brush_side_offset"] = [0, 0, 1]  # the cutting sides before each brush
    # The ramps' top: through (-128, y, 0) and (0, y, 64), facing up and back (-X).
    normal = np.array([-1.0, 0.0, 2.0]) / np.sqrt(5.0)
    planes = np.zeros(1, types[PLANES])
    planes["normal"], planes["dist"] = normal, normal @ [0.0, 0.0, 64.0]
    offsets = np.array([0, 1], "<u2")  # the second ramp's side: back one, to the first ramp's plane
    properties = np.zeros(18 + 2, "<u2")
    for first in (6, 13):  # a ramp's -X and +Z box sides are edges of the wedge, not faces
        properties[first + 1] = properties[first + 4] = BRUSH_SIDE_DISCARD
        properties[first + 6] = 1  # the sloped side: TEXTURE_DATA 1
    # Hammer's axes at a scale of 0.25 (axis length 4), per side: +X -X +Y -Y +Z -Z, then the slope.
    s_axes = {0: [0, 4, 0], 1: [0, 4, 0], 2: [4, 0, 0], 3: [4, 0, 0], 4: [4, 0, 0], 5: [4, 0, 0], 6: [4, 0, 0]}
    t_axes = {0: [0, 0, -4], 1: [0, 0, -4], 2: [0, 0, -4], 3: [0, 0, -4], 4: [0, -4, 0], 5: [0, -4, 0],
              6: [0, -4, 0]}
    local = [*range(6), *range(7), *range(7)]
    vectors = np.zeros(len(local), types[CM_BRUSH_SIDE_TEXTURE_VECTORS])
    vectors["s"][:, :3] = [s_axes[i] for i in local]
    vectors["t"][:, :3] = [t_axes[i] for i in local]
    grid = np.zeros(1, types[CM_GRID])
    grid["scale"], grid["offset"], grid["count"] = 256, [-2, -2], [2, 2]
    grid["first_brush_plane"], grid["num_straddle_groups"] = first_plane, 1
    # Cells: the 2 x 2 world grid, model 0's (empty), model 1's.  Geo set 0 (cell 0) names primitives
    # 0-1 (slab, first ramp); geo set 1 (the slab alone, straddling cells 1-3); geo set 2 (the second ramp).
    cells = np.zeros(6, types[CM_GRID_CELLS])
    cells["first_geo_set"] = [0, 1, 1, 1, 2, 2]
    cells["num_geo_sets"] = [1, 1, 1, 1, 0, 1]
    geo_sets = np.zeros(3, types[CM_GEO_SETS])
    geo_sets["straddle_group"] = [0, 1, 0]
    geo_sets["num_primitives"] = [2, 1, 1]
    geo_sets["primitive"] = [_primitive(0, 0), _primitive(0, 0), _primitive(2, 0)]  # geo set 0: run from row 0
    primitives = np.array([_primitive(0, 0), _primitive(1, 1)], types[CM_PRIMITIVES])
    return {PLANES: planes.tobytes(), CM_GRID: grid.tobytes(), CM_BRUSHES: brushes.tobytes(),
            CM_BRUSH_SIDE_PLANE_OFFSETS: offsets.tobytes(), CM_BRUSH_SIDE_PROPERTIES: properties.tobytes(),
            CM_BRUSH_SIDE_TEXTURE_VECTORS: vectors.tobytes(), CM_GRID_CELLS: cells.tobytes(),
            CM_GEO_SETS: geo_sets.tobytes(), CM_PRIMITIVES: primitives.tobytes(),
            CM_UNIQUE_CONTENTS: np.array(_CONTENTS, types[CM_UNIQUE_CONTENTS]).tobytes()}


def _static_props(version: int) -> bytes:
    """An ``sprp`` game lump (Titanfall's v12, Titanfall 2's v13): one model name, one prop
    standing in the room."""
    prop = np.zeros(1, STATIC_PROP_VERSIONS[version]())
    prop["origin"], prop["angles"], prop["scale"] = [128, 64, 0], [0, 90, 0], 1.0
    prop["solid"], prop["lighting_origin"], prop["diffuse_modulation"] = 6, [128, 64, 24], 255
    prop["min_cpu_level"] = prop["max_cpu_level"] = prop["min_gpu_level"] = prop["max_gpu_level"] = -1
    name = _PROP_MODEL.ljust(MODEL_NAME_LENGTH, b"\0")
    if version == 12:  # an empty leaf array, no records after the props
        prop["fade_min_dist"], prop["fade_max_dist"] = 1024, 2048
        return b"".join([struct.pack("<i", 1), name, struct.pack("<i", 0), struct.pack("<3i", 1, 0, 0),
                         prop.tobytes()])
    return b"".join([struct.pack("<i", 1), name, struct.pack("<3i", 1, 0, 0), prop.tobytes(),
                     struct.pack("<i", 0)])


def example_respawn_bytes(variant: str = "titanfall2") -> bytes:
    """The ``.bsp`` bytes of the example room for ``titanfall`` (rBSP 29) or ``titanfall2`` (37)."""
    version = min(get_variant(variant).versions)
    types = record_dtypes(version)
    corners, normals, faces, dist = _room()
    planes = np.zeros(6, types[0x01])
    planes["normal"], planes["dist"] = normals, dist
    texture = np.zeros(2, types[0x02])
    texture["reflectivity"], texture["size"], texture["view"] = 0.5, 512, 512
    texture["name_index"] = [0, 1]
    vertex = np.zeros(24, types[0x48])
    vertex["position_index"] = faces.ravel()
    vertex["normal_index"] = np.repeat(np.arange(6), 4)
    vertex["uv"] = np.tile([[0, 0], [1, 0], [1, 1], [0, 1]], (6, 1))
    vertex["colour"] = 255
    indices = (np.arange(6)[:, None] * 4 + [0, 1, 2, 0, 2, 3]).ravel().astype("<u2")
    mesh = np.zeros(1, types[0x50])
    mesh["num_triangles"], mesh["num_vertices"], mesh["styles"] = 12, 24, [0, -1, -1, -1]
    if version >= 37:
        mesh["cubemap"] = -1
    bounds = np.zeros(1, types[0x51])
    bounds["origin"], bounds["extents"] = [0, 0, _SIZE[2] / 2], _SIZE / 2
    bounds["radius"] = np.linalg.norm(_SIZE / 2)
    sort = np.zeros(1, types[0x52])
    sort["lightmap_header"], sort["cubemap"], sort["last_vertex"] = -1, -1, 23
    model = np.zeros(2, types[0x0E])  # the room, and the func_brush's model (a collision ramp, no mesh)
    model["mins"], model["maxs"] = [corners.min(0), [-128, 64, 0]], [corners.max(0), [0, 192, 64]]
    model["first_mesh"], model["num_meshes"] = [0, 1], [1, 0]
    collision = _brushes(types, len(planes))
    lumps: dict[int, bytes] = {
        **collision,
        0x00: _ENTITIES, 0x01: planes.tobytes() + collision[PLANES], 0x02: texture.tobytes(),
        0x03: corners.astype("<f4").tobytes(), 0x0E: model.tobytes(), 0x18: b"01*\0",
        0x1E: normals.astype("<f4").tobytes(), 0x2B: _MATERIAL + b"\0" + _BRUSH_MATERIAL + b"\0",
        0x2C: np.array([0, len(_MATERIAL) + 1], "<i4").tobytes(),
        0x48: vertex.tobytes(), 0x4F: indices.tobytes(), 0x50: mesh.tobytes(), 0x51: bounds.tobytes(),
        0x52: sort.tobytes(),
    }
    # An oil drum as a static prop: game lump sprp v12 (Titanfall) or v13 (Titanfall 2).
    prop_version = 12 if version < 37 else 13
    lumps[GAME_LUMP] = bytes(20 + len(_static_props(prop_version)))  # the directory, filled in once placed
    offsets, at = {}, HEADER_SIZE
    for index in sorted(lumps):
        offsets[index] = at
        at += len(lumps[index]) + (-len(lumps[index]) % 4)
    if GAME_LUMP in lumps:  # dgamelump_t.fileofs counts from the start of the file
        sprp = _static_props(prop_version)
        lumps[GAME_LUMP] = struct.pack("<i4s2H2i", 1, b"sprp"[::-1], 0, prop_version, offsets[GAME_LUMP] + 20,
                                       len(sprp)) + sprp
    directory = [0] * (4 * NUM_LUMPS)
    body = bytearray()
    for index in sorted(lumps):
        data = lumps[index]
        directory[4 * index:4 * index + 3] = [offsets[index], len(data), _LUMP_VERSIONS.get(index, 0)]
        body += data + b"\0" * (-len(data) % 4)
    header = HEADER.pack(IDENT, version, 1, NUM_LUMPS - 1, *directory)
    return header + bytes(body)


def write_example_respawn(path: str | os.PathLike[str], variant: str = "titanfall2") -> Path:
    """Write :func:`example_respawn_bytes` to ``path`` (atomically); returns the path."""
    atomic_write(path, example_respawn_bytes(variant))
    return Path(path)

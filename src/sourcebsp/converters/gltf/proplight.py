"""The light on each static prop's vertices, for the ``COLOR_0`` of its glTF mesh.

Two sources, as the engine has them:

* a prop vrad lit per vertex (``-staticproplighting``) has an ``sp_<index>.vhv``
  (``sp_hdr_<index>.vhv`` for HDR) in the map's pakfile: one colour per
  strip-group vertex of the model's LOD 0 (:meth:`StudioModel.vertex_colors`),
  decoded to linear light (:func:`vertex_light_linear`).  A file that does not
  fit the model (another compile: checksum; other meshes: counts) is left
  out, as the engine leaves it, and named in :attr:`PropLight.problems`;
* any other prop is lit by the leaf ambient cube at its lighting origin
  (:func:`sourcebsp.queries.ambient_cubes`), evaluated along each vertex's
  normal turned into the world (:func:`sourcebsp.queries.ambient_light`),
  which is what the model shaders do with the cube per vertex.  The engine
  adds the few nearest world lights at draw time; they are not in the cube
  and not here.

The lighting origin is the prop's ``lighting_origin`` when its flags have
``STATIC_PROP_USE_LIGHTING_ORIGIN`` (an ``info_lighting``), else its origin
plus the model's ``illumposition`` turned and scaled with it (the field holds
junk then).  Colours are linear light clipped to [0, 1], as the LDR lightmap
atlas of the export is clipped, stored as glTF's normalized unsigned shorts,
RGBA (:func:`encode_light`): 8 bytes a vertex, 4-byte aligned as a vertex
attribute must be, a third less than float RGB, and steps of 1/65535 keep
the dark end that 8 bits would band.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import queries
from ...content.studiomodel.vhv import read_vhv, vertex_light_linear, vhv_files
from ...errors import BspError
from ...flags import STATIC_PROP_USE_LIGHTING_ORIGIN
from ...lump_ids import LumpId
from ...model.geometry import angles_matrix
from ...numeric import floats

if TYPE_CHECKING:
    from ...content.studiomodel import StudioModel
    from ...protocols import MapReader

__all__ = ["PropLight", "light_props", "encode_light"]


@dataclass
class PropLight:
    """Per prop node: its vertices' light ((num_vertices, 4) uint16, :func:`encode_light`) and where it came from."""

    colors: list[np.ndarray | None]
    sources: list[str | None]  # "vertex" (a .vhv), "ambient" (the leaf's cube) or None (unlit)
    problems: list[str] = field(default_factory=list)  # "sp_3.vhv: why", one per file left out


def light_props(bsp: MapReader, prop_nodes: list[dict[str, Any]], models: "dict[str, StudioModel | str]",
                  hdr: bool | None = None) -> PropLight:
    """The light of every prop node whose model has triangles (others: None).

    ``hdr``: which pass to take, the ``sp_hdr_`` files and HDR ambient lumps or
    the LDR ones; None prefers LDR, as the export's lightmap atlas does.
    """
    out = PropLight([None] * len(prop_nodes), [None] * len(prop_nodes))
    drawn = [(i, m) for i, node in enumerate(prop_nodes)
             if not isinstance(m := models.get(node["extras"]["model"]), str) and m is not None and m.num_triangles]
    if not drawn:
        return out
    pak = bsp.lump_or_none(LumpId.PAKFILE)
    files = vhv_files(pak.names()) if pak is not None else {}
    order = ("hdr", "ldr") if hdr else ("ldr", "hdr")
    records = bsp.static_props.props
    unlit = []
    for i, model in drawn:
        prop = int(prop_nodes[i]["extras"]["static_prop"])
        name = next((files[prop][k] for k in order if k in files.get(prop, {})), None)
        if name is not None and pak is not None:
            try:
                rgba = model.vertex_colors(read_vhv(pak.read(name), name))
            except BspError as exc:
                out.problems.append(f"{name}: {exc}")
            else:
                out.colors[i] = encode_light(vertex_light_linear(rgba))
                out.sources[i] = "vertex"
                continue
        unlit.append((i, prop, model))
    if not unlit:
        return out
    props = np.array([prop for _, prop, _ in unlit])
    rotation = angles_matrix(floats(records["angles"][props]))
    try:
        cubes = queries.ambient_cubes(bsp, _lighting_origins(records, props, rotation,
                                                             [m for _, _, m in unlit]), hdr=hdr)
    except BspError as exc:
        out.problems.append(f"ambient light: {exc}")
        return out
    if cubes is None:
        return out
    for k, (i, _, model) in enumerate(unlit):
        with np.errstate(invalid="ignore", over="ignore"):  # a damaged model's normals: no light, no warning
            normals = model.normals.astype(np.float64) @ rotation[k].T
            normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
        normals[~np.isfinite(normals).all(axis=1)] = 0.0
        light = queries.ambient_light(np.broadcast_to(cubes[k], (len(normals), 6, 3)), normals)
        out.colors[i] = encode_light(light)
        out.sources[i] = "ambient"
    return out


def encode_light(light: np.ndarray) -> np.ndarray:
    """(n, 4) uint16 normalized RGBA (opaque) of (n, 3) linear light, clipped to [0, 1]."""
    rgba = np.full((len(light), 4), 65535, np.uint16)
    rgba[:, :3] = np.rint(np.clip(light, 0.0, 1.0) * np.float32(65535.0))
    return rgba


def _lighting_origins(records: np.ndarray, props: np.ndarray, rotation: np.ndarray,
                      models: "list[StudioModel]") -> np.ndarray:
    """Where each prop is lit from (see the module notes), Source axes."""
    fields = records.dtype.names or ()
    origin = floats(records["origin"][props])
    scale = np.ones(len(props))
    if "uniform_scale" in fields:
        uniform = records["uniform_scale"][props].astype(np.float64)
        scale = np.where(np.isfinite(uniform) & (uniform > 0), uniform, 1.0)
    illum = np.array([m.header.illumposition for m in models], np.float64) * scale[:, None]
    where = origin + np.einsum("nij,nj->ni", rotation, illum)
    if "lighting_origin" in fields and "flags" in fields:
        chosen = (records["flags"][props].astype(np.int64) & int(STATIC_PROP_USE_LIGHTING_ORIGIN)) != 0
        given = floats(records["lighting_origin"][props])
        chosen &= np.isfinite(given).all(axis=1)
        where[chosen] = given[chosen]
    where[~np.isfinite(where).all(axis=1)] = 0.0
    out: np.ndarray = where
    return out

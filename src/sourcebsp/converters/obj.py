"""Wavefront OBJ + MTL export.

One object (``o``) per brush model, placed in the world by its entity's
origin and angles, one ``usemtl`` group per texture; materials are named
after the texture path (spaces replaced by ``_``) with the texture's
reflectivity as ``Kd``.  OBJ has one UV set: ``vt`` holds the texture UVs
(with ``v`` flipped, as OBJ counts ``v`` upwards); lightmaps are left to the
glTF export.  Axes and units follow the glTF export: Y up, Hammer units or
metres.  Static props are listed as comments (OBJ has no empty nodes).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import UnsupportedError
from ..lump_ids import LumpId
from ..model.geometry import build_mesh, iter_models, reflectivity
from ..model.respawn import is_respawn_map
from ..numeric import sorted_unique
from ..numformat import format_line_blocks
from ._common import Progress, Units, opened, report, to_y_up, unit_scale

if TYPE_CHECKING:
    from ..protocols import MapSource

__all__ = ["export_obj", "material_name"]


def material_name(texture: str) -> str:
    """An OBJ/MTL-safe material name: the texture path with whitespace replaced."""
    return "_".join(texture.split()) or "unnamed"


def _text(text: str) -> bytes:
    # Names the map stores in another encoding keep their bytes (decoded with surrogateescape).
    return text.encode("utf-8", "surrogateescape")


def export_obj(bsp_or_path: MapSource, path: str | Path, *, models: Any = "all", include_tools: bool = False,
               units: Units = "hammer", progress: Progress | None = None) -> dict[str, Any]:
    """Write ``path`` (``.obj``) and the ``.mtl`` beside it; returns counts of what was written."""
    path = Path(path)
    mtl_path = path.with_suffix(".mtl")
    scale = unit_scale(units)
    with opened(bsp_or_path) as bsp:
        if is_respawn_map(bsp):
            raise UnsupportedError(f"a Titanfall map exports as .glb only, not {path.suffix.lower()}")
        mesh = build_mesh(bsp, models=models, include_tools=include_tools)
        report(progress, "meshes")
        texdata = bsp.lump_or_none(LumpId.TEXDATA)
        texdata = None if texdata is None else np.array(texdata)  # a copy: the map is closed after this block
        try:
            props = bsp.static_props
            prop_lines = [f"# static prop {i}: {name} origin {' '.join(f'{v:g}' for v in rec['origin'])} "
                          f"angles {' '.join(f'{v:g}' for v in rec['angles'])}\n"
                          for i, (name, rec) in enumerate(zip(props.model_names(), props.props))]
        except AttributeError:  # pragma: no cover - an older container without static props
            prop_lines = []
    positions = to_y_up(mesh.world_positions(), scale)
    normals = to_y_up(mesh.world_normals())
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    uv = mesh.uv.astype(np.float64) * np.array([1.0, -1.0]) + np.array([0.0, 1.0])
    tex = mesh.triangle_texture
    out = [_text(f"# {path.stem}: exported by sourcebsp ({units}, Y up)\nmtllib {mtl_path.name}\n"),
           _text("".join(prop_lines))]
    used: set[int] = set()
    # The structure first, then the numbers of every model in one call per
    # line kind (formatting many short arrays costs more than one long one).
    heads: list[bytes] = []  # "o" line of each model
    group_heads: list[list[bytes]] = []  # "usemtl" line of each group of each model
    vertex_ids, vertex_counts, corners, face_counts = [], [], [], []
    remap = np.full(len(mesh.positions), -1, np.int64)
    written = 0
    for model, tris in iter_models(mesh):
        ids = sorted_unique(mesh.triangles[tris].ravel())
        remap[ids] = np.arange(len(ids)) + written + 1  # OBJ counts from 1
        heads.append(_text(f"o {material_name(model.name)}\n"))
        vertex_ids.append(ids)
        vertex_counts.append(len(ids))
        order = np.argsort(tex[tris], kind="stable")
        groups = np.split(tris[order], np.flatnonzero(np.diff(tex[tris][order])) + 1)
        group_heads.append([])
        for group in groups:
            td = int(tex[group[0]])
            used.add(td)
            name = mesh.textures[td] if 0 <= td < len(mesh.textures) else f"texdata_{td}"
            group_heads[-1].append(_text(f"usemtl {material_name(name)}\n"))
            corners.append(remap[mesh.triangles[group]])
            face_counts.append(len(group))
        written += len(ids)
    every = np.concatenate(vertex_ids) if vertex_ids else np.zeros(0, np.int64)
    v = format_line_blocks("v %.6f %.6f %.6f\n", positions[every], vertex_counts)
    vt = format_line_blocks("vt %.6f %.6f\n", uv[every], vertex_counts)
    vn = format_line_blocks("vn %.5f %.5f %.5f\n", normals[every], vertex_counts)
    faces = np.concatenate(corners) if corners else np.zeros((0, 3), np.int64)
    f = iter(format_line_blocks("f %d/%d/%d %d/%d/%d %d/%d/%d\n", np.repeat(faces, 3, axis=1), face_counts))
    for i, head in enumerate(heads):
        out += [head, v[i], vt[i], vn[i]]
        for group_head in group_heads[i]:
            out += [group_head, next(f)]
    triangles = len(faces)
    report(progress, "obj")
    mtl = [f"# materials of {path.stem} (texture paths as stored in the map)\n"]
    for td in sorted(used):
        name = mesh.textures[td] if 0 <= td < len(mesh.textures) else f"texdata_{td}"
        color = [0.8, 0.8, 0.8]
        if texdata is not None and 0 <= td < len(texdata):
            color = reflectivity(texdata[td : td + 1], 0.8)[0].tolist()
        mtl.append(f"\nnewmtl {material_name(name)}\n# texture {name}\n"
                   f"Kd {color[0]:.4f} {color[1]:.4f} {color[2]:.4f}\nKa 0 0 0\nKs 0 0 0\nillum 1\n")
    path.write_bytes(b"".join(out))
    mtl_path.write_bytes(_text("".join(mtl)))
    report(progress, "write")
    return {"triangles": triangles, "vertices": written, "materials": len(used),
            "objects": len(mesh.model_indices()), "mtl": str(mtl_path)}

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
from typing import Any

import numpy as np

from ..lump_ids import LumpId
from ..model.geometry import build_mesh, iter_models, reflectivity
from ._common import Progress, Units, opened, report, to_y_up, unit_scale

__all__ = ["export_obj", "material_name"]


def material_name(texture: str) -> str:
    """An OBJ/MTL-safe material name: the texture path with whitespace replaced."""
    return "_".join(texture.split()) or "unnamed"


def _lines(fmt: str, values: np.ndarray) -> str:
    """``fmt`` applied to every row of ``values``, one line each, without a Python loop per row."""
    if not len(values):
        return ""
    return (fmt * len(values)) % tuple(values.ravel().tolist())


def export_obj(bsp_or_path: Any, path: str | Path, *, models: Any = "all", include_tools: bool = False,
               units: Units = "hammer", progress: Progress | None = None) -> dict[str, Any]:
    """Write ``path`` (``.obj``) and the ``.mtl`` beside it; returns counts of what was written."""
    path = Path(path)
    mtl_path = path.with_suffix(".mtl")
    scale = unit_scale(units)
    with opened(bsp_or_path) as bsp:
        mesh = build_mesh(bsp, models=models, include_tools=include_tools)
        report(progress, "meshes")
        texdata = bsp.find_lump(LumpId.TEXDATA)
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
    out = [f"# {path.stem}: exported by sourcebsp ({units}, Y up)\n", f"mtllib {mtl_path.name}\n"]
    out += prop_lines
    used: set[int] = set()
    written = 0
    triangles = 0
    for model, tris in iter_models(mesh):
        vertex_ids = np.unique(mesh.triangles[tris].ravel())
        remap = np.full(len(mesh.positions), -1, np.int64)
        remap[vertex_ids] = np.arange(len(vertex_ids)) + written + 1  # OBJ counts from 1
        out.append(f"o {material_name(model.name)}\n")
        out.append(_lines("v %.6f %.6f %.6f\n", positions[vertex_ids]))
        out.append(_lines("vt %.6f %.6f\n", uv[vertex_ids]))
        out.append(_lines("vn %.5f %.5f %.5f\n", normals[vertex_ids]))
        order = np.argsort(tex[tris], kind="stable")
        groups = np.split(tris[order], np.flatnonzero(np.diff(tex[tris][order])) + 1)
        for group in groups:
            td = int(tex[group[0]])
            used.add(td)
            name = mesh.textures[td] if 0 <= td < len(mesh.textures) else f"texdata_{td}"
            out.append(f"usemtl {material_name(name)}\n")
            idx = remap[mesh.triangles[group]]
            out.append(_lines("f %d/%d/%d %d/%d/%d %d/%d/%d\n", np.repeat(idx, 3, axis=1)))
        written += len(vertex_ids)
        triangles += len(tris)
    report(progress, "obj")
    mtl = [f"# materials of {path.stem} (texture paths as stored in the map)\n"]
    for td in sorted(used):
        name = mesh.textures[td] if 0 <= td < len(mesh.textures) else f"texdata_{td}"
        color = [0.8, 0.8, 0.8]
        if texdata is not None and 0 <= td < len(texdata):
            color = reflectivity(texdata[td : td + 1], 0.8)[0].tolist()
        mtl.append(f"\nnewmtl {material_name(name)}\n# texture {name}\n"
                   f"Kd {color[0]:.4f} {color[1]:.4f} {color[2]:.4f}\nKa 0 0 0\nKs 0 0 0\nillum 1\n")
    # Names the map stores in another encoding keep their bytes (decoded with surrogateescape).
    path.write_text("".join(out), encoding="utf-8", errors="surrogateescape")
    mtl_path.write_text("".join(mtl), encoding="utf-8", errors="surrogateescape")
    report(progress, "write")
    return {"triangles": triangles, "vertices": written, "materials": len(used),
            "objects": len(mesh.model_indices()), "mtl": str(mtl_path)}

"""What the exporters should produce, restated independently of sourcebsp.model.

Plain Python over the decoded lumps (one face at a time, no shared code
with the model layer), following bspflags.h and the issue's rules.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sourcebsp.lump_ids import LumpId

# bspflags.h: SURF_SKY2D, SURF_SKY, SURF_TRIGGER, SURF_NODRAW, SURF_HINT, SURF_SKIP
HIDDEN = 0x2 | 0x4 | 0x40 | 0x80 | 0x100 | 0x200


@dataclass
class Expected:
    faces: list[tuple[int, int]]  # (model, face) of exported plain faces
    disps: list[tuple[int, int, int]]  # (model, face, power) of exported displacements
    textures: set[int]  # texdata indices used
    triangles: int

    @property
    def models(self) -> set[int]:
        return {m for m, _ in self.faces} | {m for m, _, _ in self.disps}


def faces_of(bsp):
    if bsp.entry(LumpId.FACES).filelen:
        return bsp.faces
    if bsp.entry(LumpId.FACES_HDR).filelen:
        return bsp.faces_hdr
    return []


def names_of(bsp) -> list[str]:
    if not bsp.entry(LumpId.TEXDATA).filelen:
        return []
    table = bsp.texdata_string_table
    strings = bsp.texdata_string_data
    return [strings.at(int(table[int(t["name_string_table_id"])])) for t in bsp.texdata]


def expected(bsp, *, include_tools: bool = False, world_only: bool = False) -> Expected:
    faces = faces_of(bsp)
    names = names_of(bsp)
    texinfo = bsp.texinfo if bsp.entry(LumpId.TEXINFO).filelen else []
    dispinfo = bsp.dispinfo if bsp.entry(LumpId.DISPINFO).filelen else []
    out = Expected([], [], set(), 0)
    models = bsp.models if bsp.entry(LumpId.MODELS).filelen else []
    for mi, model in enumerate(models):
        if world_only and mi:
            break
        for fi in range(int(model["firstface"]), int(model["firstface"]) + int(model["numfaces"])):
            face = faces[fi]
            n = int(face["numedges"])
            ti = int(face["texinfo"])
            if n < 3:
                continue
            if not include_tools:
                if ti < 0 or int(texinfo[ti]["texdata"]) < 0:
                    continue  # no texture: nothing to draw
                name = names[int(texinfo[ti]["texdata"])].lower().replace("\\", "/")
                if int(texinfo[ti]["flags"]) & HIDDEN:
                    continue
                if name.startswith("tools/") and name != "tools/toolsblack":
                    continue
            out.textures.add(int(texinfo[ti]["texdata"]))
            if int(face["dispinfo"]) != -1:
                power = int(dispinfo[int(face["dispinfo"])]["power"])
                out.disps.append((mi, fi, power))
                out.triangles += 2 * (2 ** power) ** 2
            else:
                out.faces.append((mi, fi))
                out.triangles += n - 2
    return out


def disp_heights(bsp) -> np.ndarray:
    """Largest |vec * dist| of every displacement (its height above the base face)."""
    if not bsp.entry(LumpId.DISPINFO).filelen:
        return np.zeros(0)
    dv = bsp.disp_verts
    out = []
    for info in bsp.dispinfo:
        n = (2 ** int(info["power"]) + 1) ** 2
        rows = dv[int(info["disp_vert_start"]) : int(info["disp_vert_start"]) + n]
        out.append(float((np.linalg.norm(rows["vec"], axis=1) * np.abs(rows["dist"])).max()))
    return np.array(out)

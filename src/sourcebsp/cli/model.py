"""``sourcebsp model MODEL.mdl [--game DIR] [-o OUT.glb|OUT.obj] [--json]``: a studio model's LOD 0 mesh."""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .._io import atomic_write
from . import _common
from .deps import add_mount_arguments, mount_from, mounted

if TYPE_CHECKING:
    from ..content.studiomodel import StudioModel

# The model reader, numpy and the converters are imported where a model is read or written:
# ``model --help`` stays light.


def _load(args: Any) -> "StudioModel":
    from ..content.studiomodel import load_model, load_model_file

    fs = mount_from(args) if mounted(args) else None
    bodygroups = args.bodygroups
    if os.path.isfile(args.model) or fs is None:
        exists = None if fs is None else (lambda m: fs.find(f"materials/{m}.vmt") is not None)
        return load_model_file(args.model, bodygroups=bodygroups, materials_root=exists)
    model = load_model(fs, args.model, bodygroups=bodygroups)
    if model is None:
        raise _common.CommandError(f"{args.model} is found neither as a file nor in the mounted game")
    return model


def _write_obj(model: "StudioModel", path: str, skin: int, scale: float) -> None:
    """OBJ and its .mtl: vertices in Source's Z-up axes as the map's OBJ export writes them."""
    from ..numformat import format_lines

    import numpy as np

    mtl_path = Path(path).with_suffix(".mtl")
    parts = [f"# {model.name}: LOD 0, skin {skin}\nmtllib {mtl_path.name}\n".encode()]
    if model.num_vertices:
        parts.append(format_lines("v %.6f %.6f %.6f\n", model.positions.astype(np.float64) * scale))
        parts.append(format_lines("vt %.6f %.6f\n", np.stack([model.uvs[:, 0], 1.0 - model.uvs[:, 1]], 1)))
        parts.append(format_lines("vn %.6f %.6f %.6f\n", model.normals))
    materials: list[str] = []
    for mesh in model.meshes:
        if not len(mesh.triangles):
            continue
        material = model.material_of(mesh, skin)
        if material not in materials:
            materials.append(material)
        parts.append(f"usemtl {material}\n".encode())
        t = mesh.triangles + 1
        parts.append(format_lines("f %d/%d/%d %d/%d/%d %d/%d/%d\n", np.repeat(t, 3, axis=1)))
    atomic_write(path, *parts)
    atomic_write(mtl_path, "".join(f"newmtl {m}\nKd 0.8 0.8 0.8\n\n" for m in materials).encode())


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("model", "Read a studio model (.mdl with its .vvd and .vtx): print its LOD 0 vertex and "
                                 "triangle counts, materials, skins, body parts and bounding box; write its mesh.")
    ap.add_argument("model", help="the .mdl file, or its name in the mounted game (models/props/barrel01.mdl)")
    add_mount_arguments(ap, game_help="a game or mod folder: where the model's materials (and, for a name, "
                                      "the model) are looked up", tags=False)
    ap.add_argument("-o", "--output", help="write the LOD 0 mesh (default skin and body groups): .glb or .obj")
    ap.add_argument("--skin", type=int, default=0, help="the skin family to write (default 0)")
    ap.add_argument("--bodygroups", type=lambda text: [int(v) for v in text.split(",")], metavar="N,N,...",
                    help="the model chosen in each body part (default: the first of each)")
    ap.add_argument("--units", choices=("hammer", "meters"), default="hammer", help="units of the written mesh")
    ap.add_argument("--json", action="store_true", help="print the facts as one JSON object")
    _common.overwrite_option(ap, "output")
    args = ap.parse_args(argv)
    suffix = Path(args.output).suffix.lower() if args.output else ""
    if args.output and suffix not in (".glb", ".obj"):
        ap.error(f"the output must end in .glb or .obj, not {suffix or 'nothing'!r}")

    def body() -> int:
        if args.output:
            _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.model])
            if suffix == ".obj":
                _common.check_output(Path(args.output).with_suffix(".mtl"), overwrite=args.overwrite,
                                     inputs=[args.model])
        model = _load(args)
        if args.output:
            from ..converters import unit_scale

            if suffix == ".glb":
                from ..converters.gltf import export_model_glb

                export_model_glb(model, args.output, skin=args.skin, units=args.units)
            else:
                _write_obj(model, args.output, args.skin, unit_scale(args.units))
        facts = model.summary()
        if args.json:
            _common.print_json(facts)
            return 0
        box = facts["bbox"]
        lines = [f"{model.name}: MDL version {facts['version']}, LOD 0: {facts['vertices']} vertices, "
                 f"{facts['triangles']} triangles in {facts['meshes']} meshes",
                 "bounding box: " + ("none" if box is None else
                                     " to ".join("(" + ", ".join(f"{v:g}" for v in corner) + ")" for corner in box))]
        lines += [f"material {i}: {m}" for i, m in enumerate(facts["materials"])]
        lines += [f"skin {i}: {', '.join(family)}" for i, family in enumerate(facts["skins"])]
        lines += [f"bodypart {b['name']}: {', '.join(b['models'])} (default {b['models'][b['default']] or 'blank'})"
                  if b["models"] else f"bodypart {b['name']}: no models" for b in facts["bodyparts"]]
        lines += [f"includes {name}" for name in facts["includes"]]
        if args.output:
            lines.append(f"wrote {args.output}")
        print("\n".join(_common.printable(line) for line in lines))
        return 0

    return _common.run(body)

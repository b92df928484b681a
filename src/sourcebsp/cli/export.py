"""``sourcebsp export MAP -o OUT.glb|OUT.obj``: brush geometry as glTF binary or OBJ."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from . import _common
from ._progress import steps
from .deps import add_mount_arguments, mount_from, mounted

# The converters (numpy, the glTF writer) are imported where a map is exported: ``export --help`` stays light.


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("export", "Export a map's brush faces and displacements as glTF binary (.glb) or OBJ.")
    ap.add_argument("map", help="the .bsp file")
    ap.add_argument("-o", "--output", required=True, help="the file to write: .glb or .obj (an .mtl is written beside it)")
    ap.add_argument("--models", choices=("world", "all"), default="all",
                    help="the world only, or the world and every brush entity (default: all)")
    ap.add_argument("--include-tools", action="store_true",
                    help="keep faces the game does not draw (nodraw, sky, hint, skip, trigger, tools/ textures)")
    ap.add_argument("--units", choices=("hammer", "meters"), default="hammer",
                    help="hammer units (inches, the default) or metres")
    ap.add_argument("--hdr", action="store_true", help="embed the HDR lightmaps (.glb only; default: LDR when present)")
    ap.add_argument("--no-props", action="store_true", help="leave out the static prop nodes (.glb only)")
    ap.add_argument("--no-prop-lighting", action="store_true",
                    help="draw the static props unlit: no COLOR_0 from their sp_*.vhv vertex lighting or the leaf "
                         "ambient cube, one mesh per model shared by all its props (.glb only)")
    ap.add_argument("--skybox", action="store_true",
                    help="the 3D skybox as a node of its own, scaled by sky_camera's scale around the playable "
                         "space as a player sees it (.glb only)")
    ap.add_argument("--textures", action="store_true",
                    help="embed the materials' base textures as PNG (.glb only; read from the map's pakfile and the "
                         "mounted game; needs srctools and Pillow)")
    ap.add_argument("--texture-size", type=int, default=None, metavar="N",
                    help="the largest texture side embedded, in texels (default 512; a smaller mipmap is used)")
    add_mount_arguments(ap, game_help="the game or mod folder (holding gameinfo.txt) whose models the static props "
                                      "are drawn with (.glb only; the map's pakfile is searched first)", tags=False)
    _common.overwrite_option(ap, "output (and .mtl)")
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    suffix = Path(args.output).suffix.lower()
    if suffix not in (".glb", ".obj"):
        ap.error(f"the output must end in .glb or .obj, not {suffix or 'nothing'!r}")
    if suffix == ".obj" and (mounted(args) or args.textures or args.skybox):
        ap.error("--game, --gameinfo, --content, --vpk, --textures and --skybox: .glb output only")
    if args.texture_size is not None and args.texture_size < 1:
        ap.error("--texture-size must be at least 1")

    def body() -> int:
        _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map])
        if suffix == ".obj":
            _common.check_output(Path(args.output).with_suffix(".mtl"), overwrite=args.overwrite, inputs=[args.map])
        try:
            if suffix == ".glb":
                from ..converters.gltf import EXPORT_STEPS, GltfOptions, export_glb

                game = mount_from(args) if mounted(args) else None
                options = GltfOptions(models=args.models, include_tools=args.include_tools, units=args.units,
                                      hdr=True if args.hdr else None, props=not args.no_props, game=game,
                                      textures=args.textures, texture_size=args.texture_size, skybox=args.skybox,
                                      prop_lighting=not args.no_prop_lighting)
                with steps("export", EXPORT_STEPS) as progress:
                    stats = export_glb(args.map, args.output, options, progress=progress)
                print(stats.summary(args.output, options))
                for line in stats.notes(options):
                    print(f"sourcebsp: note: {line}", file=sys.stderr)
            else:
                from ..converters.obj import export_obj

                with steps("export", ("meshes", "obj", "write")) as progress:
                    info = export_obj(args.map, args.output, models=args.models,
                                      include_tools=args.include_tools, units=args.units, progress=progress)
                print(f"{args.output}: {info['objects']} objects, {info['triangles']} triangles, "
                      f"{info['materials']} materials ({info['mtl']})")
        except ImportError as exc:
            print(f"sourcebsp: error: {exc}", file=sys.stderr)
            return 1
        return 0

    return _common.run(body, args)

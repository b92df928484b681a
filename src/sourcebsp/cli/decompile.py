"""``sourcebsp decompile MAP -o OUT.vmf``: a Hammer VMF of a compiled map."""
from __future__ import annotations

from typing import Sequence

from . import _common
from ._progress import steps


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("decompile", "Decompile a map into a Hammer VMF: brushes, brush and point entities, "
                                     "static props, displacements, overlays and cubemaps.")
    ap.add_argument("map", help="the .bsp file")
    ap.add_argument("-o", "--output", required=True, help="the .vmf file to write")
    ap.add_argument("--no-props", action="store_true", help="leave out the static props (prop_static)")
    ap.add_argument("--no-overlays", action="store_true", help="leave out the overlays (info_overlay)")
    ap.add_argument("--no-cubemaps", action="store_true", help="leave out the cubemap samples (env_cubemap)")
    ap.add_argument("--detail-as-world", action="store_true",
                    help="keep detail brushes in the world instead of a func_detail entity")
    _common.overwrite_option(ap, "VMF")
    args = ap.parse_args(argv)

    def body() -> int:
        _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map])
        from ..converters.vmf import DECOMPILE_STEPS, decompile

        with steps("decompile", DECOMPILE_STEPS) as progress:
            stats = decompile(args.map, args.output, props=not args.no_props, overlays=not args.no_overlays,
                              cubemaps=not args.no_cubemaps, detail_as_world=args.detail_as_world,
                              progress=progress)
        skipped = f", {len(stats.skipped_brushes)} brushes skipped (not closed)" if stats.skipped_brushes else ""
        print(f"{args.output}: {stats.solids} solids ({stats.world_solids} world, {stats.detail_solids} detail, "
              f"{stats.entity_solids} in entities), {stats.sides} sides, {stats.displacements} displacements, "
              f"{stats.brush_entities} brush entities, {stats.point_entities} point entities, "
              f"{stats.static_props} static props, {stats.overlays} overlays, {stats.cubemaps} cubemaps{skipped}")
        return 0

    return _common.run(body)

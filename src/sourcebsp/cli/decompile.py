"""``sourcebsp decompile MAP -o OUT.vmf``: a Hammer VMF of a compiled map.

``sourcebsp decompile DIR_OR_GLOB... -o OUTDIR`` decompiles many maps (a
folder's ``*.bsp``, a glob pattern, or several files) into ``OUTDIR/<map>.vmf``
with a progress bar and a summary table; a map that fails is reported and
the others go on.  ``--report [FILE.json]`` adds the fidelity report (with
the compile-readiness check) to stdout, or writes it to a JSON file.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence

from .._io import atomic_write
from . import _common
from ._maps import MapList, MapResult, find_maps, map_stem, print_batch_table, run_batch
from ._progress import steps

# The VMF converter (numpy) and the map opener are imported where a map is decompiled: ``decompile --help``
# stays light.


def _write_json(path: str, value: Any) -> None:
    atomic_write(Path(path), (json.dumps(value, indent=2) + "\n").encode("utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("decompile", "Decompile a map into a Hammer VMF: brushes, brush and point entities, "
                                     "static props, displacements, overlays and cubemaps.  With a folder, a glob "
                                     "pattern or several maps, decompile each into OUTDIR/<map>.vmf.")
    ap.add_argument("map", nargs="+", help="the .bsp file; or folders, glob patterns or several files (batch)")
    ap.add_argument("-o", "--output", required=True, help="the .vmf file to write (a folder in batch mode)")
    ap.add_argument("--no-props", action="store_true", help="leave out the static props (prop_static)")
    ap.add_argument("--no-overlays", action="store_true", help="leave out the overlays (info_overlay)")
    ap.add_argument("--no-cubemaps", action="store_true", help="leave out the cubemap samples (env_cubemap)")
    ap.add_argument("--detail-as-world", action="store_true",
                    help="keep detail brushes in the world instead of a func_detail entity")
    ap.add_argument("--no-rotation-fix", action="store_true",
                    help="keep rotated brush entities' solids as stored, with their angles")
    ap.add_argument("--no-ladders", action="store_true", help="keep ladder brushes in the world (no func_ladder)")
    ap.add_argument("--no-visgroups", action="store_true", help="no visgroups for what was rebuilt")
    ap.add_argument("--no-cameras", action="store_true", help="no Hammer cameras at the player starts")
    ap.add_argument("--visclusters", action="store_true",
                    help="rebuild func_viscluster boxes from the clusters that hold several leaves")
    ap.add_argument("--format", choices=("old", "new"), default=None,
                    help="outputs separated by commas (old: Hammer 4.x) or ESC (new); default: as the map has them")
    ap.add_argument("--report", nargs="?", const="-", metavar="FILE.json",
                    help="the fidelity report with the compile-readiness check: JSON on stdout, or in FILE.json")
    _common.overwrite_option(ap, "VMF (or report)")
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    options = dict(props=not args.no_props, overlays=not args.no_overlays, cubemaps=not args.no_cubemaps,
                   detail_as_world=args.detail_as_world, rotation_fix=not args.no_rotation_fix,
                   ladders=not args.no_ladders, visgroups=not args.no_visgroups, cameras=not args.no_cameras,
                   visclusters=args.visclusters, io_format=args.format or "map", check=args.report is not None)

    def single() -> int:
        from .. import opening
        from ..converters.vmf import decompile, decompile_report, decompile_steps

        _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map[0]])
        if args.report not in (None, "-"):
            _common.check_output(args.report, overwrite=args.overwrite, inputs=[args.map[0]])

        with opening.open(args.map[0]) as bsp, steps("decompile", decompile_steps(bsp)) as progress:
            stats = decompile(bsp, args.output, progress=progress, **options)
        skipped = f", {len(stats.skipped_brushes)} brushes skipped (not closed)" if stats.skipped_brushes else ""
        line = (f"{args.output}: {stats.solids} solids ({stats.world_solids} world, {stats.detail_solids} detail, "
                f"{stats.entity_solids} in entities), {stats.sides} sides, {stats.displacements} displacements, "
                f"{stats.brush_entities} brush entities, {stats.point_entities} point entities, "
                f"{stats.static_props} static props, {stats.overlays} overlays, {stats.cubemaps} cubemaps{skipped}")
        if args.report is not None:
            report = decompile_report(stats, Path(args.map[0]).stem)
            if args.report == "-":
                _common.print_json(report)
                return 0
            _write_json(args.report, report)
        print(line)
        return 0

    def many(found: MapList) -> int:
        from ..converters.vmf import decompile, decompile_report

        maps = found.paths
        out_dir = Path(args.output)
        targets = {m: found.output(m, out_dir, ".vmf") for m in maps}
        for target in targets.values():
            _common.check_output(target, overwrite=args.overwrite, inputs=maps)
        if args.report not in (None, "-"):
            _common.check_output(args.report, overwrite=args.overwrite, inputs=maps)
        out_dir.mkdir(parents=True, exist_ok=True)
        def one(path: Path) -> Any:
            return decompile(path, targets[path], **options)

        batch = run_batch("decompile", maps, one)

        def row(result: MapResult[Any]) -> list[Any]:
            stats = result.value
            if stats is None:
                return [result.path.name, "", "", "", "", "", "", "error"]
            written = stats.bsp_brushes - len(stats.skipped_brushes)
            problems = "" if stats.problems is None else str(len(stats.problems))
            return [result.path.name, stats.solids, f"{written}/{stats.bsp_brushes}", stats.sides_off_plane,
                    stats.perpendicular_axes_fixed, stats.ladders, problems, f"ok {result.seconds:.1f} s"]

        failed = len(batch.failed)
        print_batch_table(f"decompiled {len(batch.results) - failed} of {len(maps)} maps into {out_dir}", batch,
                          ["map", "solids", "brushes", "off plane", "axes fixed", "ladders", "problems", "result"],
                          row, right=["solids", "brushes", "off plane", "axes fixed", "ladders", "problems"])
        reports = [decompile_report(r.value, map_stem(r.path)) if r.value is not None
                   else {"map": map_stem(r.path), "error": r.error} for r in batch.results]
        # Interrupted, the report still holds the maps that finished.
        if args.report not in (None, "-"):
            _write_json(args.report, reports)
        elif args.report == "-":
            _common.print_json(reports)
        if batch.interrupted:
            print("sourcebsp: interrupted", file=sys.stderr)
            return _common.INTERRUPTED
        return 1 if failed else 0

    def body() -> int:
        found = find_maps(args.map)
        return many(found) if found.batch else single()

    return _common.run(body, args)

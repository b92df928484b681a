"""``sourcebsp pack MAP --game DIR [--content DIR ...] -o OUT [--dry-run] [--include-stock] [--lzma] [--overwrite]``:
pack a map's custom content into its pakfile."""
from __future__ import annotations

import sys
from typing import Sequence

from .. import BspFile
from . import _common
from .deps import add_mount_arguments, mount_from

# The content package (numpy) is imported where a map is packed: ``pack --help`` stays light.


def _warn_lzma(bsp: BspFile, fs: object) -> None:
    from ..content.branches import map_branch

    branch, reason = map_branch(bsp, fs)
    if branch is None or branch.lzma_pak is None:
        print("sourcebsp: warning: --lzma: the game this map is for is not known to read LZMA pak entries", file=sys.stderr)
    elif not branch.lzma_pak:
        print(f"sourcebsp: warning: --lzma: {branch.title} ({reason}) cannot read LZMA pak entries", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("pack", "Pack every file a map needs that is not stock content (the game's VPKs and "
                                "folders outside the mod) into its pakfile, stored as bspzip stores, with "
                                "lower-case names.")
    ap.add_argument("map", help="the .bsp file (replaced only with -o MAP --overwrite)")
    add_mount_arguments(ap)
    ap.add_argument("-o", "--output", metavar="OUT", help="the map to write (required unless --dry-run)")
    ap.add_argument("--dry-run", action="store_true", help="only list what would be packed and what is missing")
    ap.add_argument("--include-stock", action="store_true", help="pack stock content too")
    ap.add_argument("--lzma", action="store_true",
                    help="store packed files LZMA-compressed, sounds and shader caches excepted (only Source 2013 "
                         "Multiplayer games such as TF2 and CS:S, and Strata, read it; see check's SB401/SB403)")
    ap.add_argument("--overwrite", action="store_true",
                    help="allow OUT to exist already, or to be the input map (replaced atomically)")
    ap.add_argument("--force", action="store_true", help="store LZMA entries even for a BSP version that cannot load them")
    ap.add_argument("--json", action="store_true", help="print what was packed and what is missing as JSON")
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    if not args.dry_run and not args.output:
        ap.error("-o/--output is required unless --dry-run")

    def body() -> int:
        from ..content import map_dependencies
        from ..content.pack import apply_pack, plan_pack

        if args.output and not args.dry_run:
            _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map], may_replace_input=True)
        if args.game is None and args.gameinfo is None and not args.content:
            raise _common.CommandError("pack needs a game (--game or --gameinfo) or --content folders to pack from")
        fs = mount_from(args)
        with BspFile.open(args.map) as bsp:
            if args.lzma:
                _warn_lzma(bsp, fs)
            graph = map_dependencies(bsp, fs, tags=args.tag)
            plan = plan_pack(graph, include_stock=args.include_stock)
            if not args.dry_run:
                if args.lzma:
                    _common.check_lzma(bsp, args.force, "--lzma")
                apply_pack(bsp, graph, plan, lzma=args.lzma)
                _common.save_map(bsp, args.output)
        if args.json:
            report = plan.to_json()
            report["dry_run"] = bool(args.dry_run)
            _common.print_json(report)
            return 0
        verb = "would pack" if args.dry_run else "packed"
        for dep in plan.add:
            assert dep.location is not None
            print(f"{verb} {dep.path}  <- {dep.location.source}/{dep.location.name}")
        for dep in plan.missing:
            print(f"missing {dep.path} ({dep.kind}: {dep.references_text(1)})")
        print(f"sourcebsp: {verb} {len(plan.add)} files; {len(plan.missing)} missing; "
              f"{len(plan.skipped_stock)} stock files left to the game", file=sys.stderr)
        return 0

    return _common.run(body, args)

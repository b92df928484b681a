"""``sourcebsp deps MAP [--game DIR | --gameinfo FILE] [--content DIR ...] [--vpk FILE ...] [--json]``:
every file a map needs, and where it was found."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from .. import open_bsp
from . import _common


def add_mount_arguments(ap: argparse.ArgumentParser, *, game_help: str = "") -> None:
    """The options that mount a game, shared by ``deps``, ``pack`` and ``check``."""
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--game", metavar="DIR", help=game_help or "the game or mod folder (holding gameinfo.txt)")
    where.add_argument("--gameinfo", metavar="FILE", help="a gameinfo.txt to mount the game from")
    ap.add_argument("--content", metavar="DIR", action="append", default=[],
                    help="an extra folder of custom content, searched first (repeatable)")
    ap.add_argument("--vpk", metavar="FILE", action="append", default=[],
                    help="an extra VPK archive (stock content), searched last (repeatable)")
    ap.add_argument("--tag", metavar="NAME", action="append", default=[],
                    help="an engine branch of the entity database (episodic, mapbase, tf2, ...): what entity "
                         "classes load differs by branch (repeatable)")


def mount_from(args: argparse.Namespace) -> Any:
    from ..content import mount

    return mount(args.game, gameinfo=args.gameinfo, content=args.content, vpks=args.vpk)


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("deps", "List every file a map needs (materials, textures, models and their files, "
                                "sounds, particles, scripts, ...), what names it and where it is found.")
    ap.add_argument("map", help="the .bsp file")
    add_mount_arguments(ap)
    ap.add_argument("--missing", action="store_true", help="list only the files found nowhere")
    ap.add_argument("--json", action="store_true",
                    help="print the graph as JSON (map, search_paths, summary, dependencies: path, kind, "
                         "optional, found, referenced_by)")
    _common.variant_option(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        from ..content import map_dependencies

        fs = mount_from(args)
        with open_bsp(args.map) as bsp:
            graph = map_dependencies(bsp, fs, tags=args.tag)
        if args.json:
            report = graph.to_json()
            if args.missing:
                report["dependencies"] = [d for d in report["dependencies"] if d["found"] is None]
            _common.print_json(report)
            return 0
        deps = graph.missing() if args.missing else list(graph)
        rows = [(d.path, d.kind, d.where if d.location is None else d.location.where + (" (stock)" if d.location.stock else ""),
                 d.references_text()) for d in deps]
        summary = graph.summary()
        title = (f"{graph.map_name}: {summary['total']} files: {summary['pakfile']} in the pakfile, "
                 f"{summary['folder']} in folders, {summary['vpk']} in VPKs, {summary['missing']} missing")
        _common.print_table(title, ["path", "kind", "found", "referenced by"], rows, summary=True)
        # Notes are no records: stderr keeps them out of a pipe.
        for line in fs.unresolved:
            print(f"sourcebsp: note: search path not mounted: {line}", file=sys.stderr)
        for problem in graph.problems:
            print(f"sourcebsp: warning: {problem}", file=sys.stderr)
        return 0

    return _common.run(body, args)

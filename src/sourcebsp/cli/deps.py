"""``sourcebsp deps MAP [--game DIR | --gameinfo FILE] [--content DIR ...] [--vpk FILE ...] [--json]``:
every file a map needs, and where it was found."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from .. import BspFile
from . import _common

# The content package (numpy) is imported where a game is mounted: ``deps --help``, and the commands
# that take this module's mount options (export, check, pack, model), stay light.


def add_mount_arguments(ap: argparse.ArgumentParser, *, game_help: str = "", tags: bool = True) -> None:
    """The options that mount a game, shared by ``deps``, ``pack``, ``check``, ``export`` and ``model``
    (the last two without ``--tag``)."""
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--game", metavar="DIR", help=game_help or "the game or mod folder (holding gameinfo.txt)")
    where.add_argument("--gameinfo", metavar="FILE", help="a gameinfo.txt to mount the game from")
    ap.add_argument("--content", metavar="DIR", action="append", default=[],
                    help="an extra folder of custom content, searched first (repeatable)")
    ap.add_argument("--vpk", metavar="FILE", action="append", default=[],
                    help="an extra VPK archive (stock content), searched last (repeatable)")
    if tags:
        ap.add_argument("--tag", metavar="NAME", action="append", default=[],
                        help="an engine branch of the entity database (episodic, mapbase, tf2, ...): what entity "
                             "classes load differs by branch (repeatable)")


def mounted(args: argparse.Namespace) -> bool:
    """Whether any of the mount options was given."""
    return bool(args.game or args.gameinfo or args.content or args.vpk)


def mount_from(args: argparse.Namespace) -> Any:
    from ..content import mount

    return mount(args.game, gameinfo=args.gameinfo, content=args.content, vpks=args.vpk)


def unmounted_note(fs: Any) -> str:
    """One line for the search paths a gameinfo.txt names that could not be mounted (a mod's base
    game not installed here: ``|appid_N|`` paths), or "" when there are none."""
    paths = list(fs.unresolved)
    if not paths:
        return ""
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return (f"sourcebsp: note: {len(paths)} search path{'s' if len(paths) > 1 else ''} not mounted ({shown}): "
            "files only they could hold are unverified, not missing")


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
        from ..content import Dependency, map_dependencies

        fs = mount_from(args)
        with BspFile.open(args.map) as bsp:
            graph = map_dependencies(bsp, fs, tags=args.tag)
        if args.json:
            report = graph.to_json()
            if args.missing:
                report["dependencies"] = [d for d in report["dependencies"] if d["found"] is None]
            _common.print_json(report)
            return _report_damage(args.map, graph.damaged)
        deps = [d for d in graph if d.location is None] if args.missing else list(graph)

        def found(d: Dependency) -> str:
            if d.location is None:
                return "unverified" if graph.is_unverified(d) else d.where
            return d.location.where + (" (stock)" if d.location.stock else "")

        rows = [(d.path, d.kind, found(d), d.references_text()) for d in deps]
        summary = graph.summary()
        unverified = f", {summary['unverified']} unverified" if summary.get("unverified") else ""
        title = (f"{graph.map_name}: {summary['total']} files: {summary['pakfile']} in the pakfile, "
                 f"{summary['folder']} in folders, {summary['vpk']} in VPKs, {summary['missing']} missing"
                 f"{unverified}")
        _common.print_table(title, ["path", "kind", "found", "referenced by"], rows, summary=True)
        # Notes are no records: stderr keeps them out of a pipe.
        note = unmounted_note(fs)
        if note:
            print(note, file=sys.stderr)
        for problem in graph.problems:
            print(f"sourcebsp: warning: {problem}", file=sys.stderr)
        return _report_damage(args.map, graph.damaged)

    return _common.run(body, args)


def _report_damage(path: str, damaged: Sequence[Any]) -> int:
    """One error line per lump that did not decode (what it names is not listed); the exit code."""
    for damage in damaged:
        print(f"sourcebsp: error: {path}: {damage.text()} (the files it names are not listed)", file=sys.stderr)
    return 1 if damaged else 0

"""``sourcebsp check MAP|DIR|GLOB... [--game DIR] [--json] [--select RULES] [--ignore RULES] [--fail-on LEVEL]``:
lint maps for what breaks them when shipped.

Exit code: 0 when no finding reaches ``--fail-on`` (default: error), 1 when
one does (or on bad input), 2 on bad usage.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Sequence

from .. import BspFile
from ..content.branches import BRANCHES
from ..content.lint import RULES, check_map, select_rules
from ..errors import BspError
from . import _common
from ._maps import find_maps, plural, run_batch
from .deps import add_mount_arguments, mount_from, unmounted_note

_LEVEL = {"error": 0, "warning": 1, "info": 2}


def _split(values: Sequence[str]) -> list[str]:
    return [part for value in values for part in value.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("check", "Check maps for shipping problems (missing assets, pakfile names and methods, "
                                 "stock content packed, cubemaps, compression, entity I/O targets, MAX_MAP_* "
                                 "limits, visibility, unreferenced packed files).")
    ap.add_argument("map", nargs="*", help="the .bsp files, folders of them (searched recursively) or glob "
                                           "patterns (not with --list-rules)")
    add_mount_arguments(ap, game_help="the game or mod folder (enables the missing-asset and stock-packed rules)")
    ap.add_argument("--engine", choices=tuple(BRANCHES), metavar="BRANCH",
                    help="the engine branch the maps are for, for the compression rules (default: told from the "
                         "game folder and the map): " + ", ".join(BRANCHES))
    ap.add_argument("--select", action="append", default=[], metavar="RULES",
                    help="only these rules: ids, id prefixes (SB2), names or severities, comma-separated")
    ap.add_argument("--ignore", action="append", default=[], metavar="RULES", help="skip these rules (same forms)")
    ap.add_argument("--fail-on", choices=tuple(_LEVEL), default="error",
                    help="the least severe finding that makes the exit code 1 (default: error)")
    ap.add_argument("--list-rules", action="store_true", help="list the rules and exit")
    ap.add_argument("--json", action="store_true",
                    help="print JSON: {maps: [{map, findings: [{rule, name, severity, message, hint, where}], "
                         "error?}], counts: {rule id: count}}")
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    if not args.map and not args.list_rules:
        ap.error("the following arguments are required: map")

    def body() -> int:
        if args.list_rules:
            _common.print_table("rules", ["id", "name", "severity", "what"],
                                [(r.id, r.name, r.severity, r.summary) for r in RULES])
            return 0
        try:
            rules = select_rules(_split(args.select), _split(args.ignore))
        except ValueError as exc:
            raise BspError(str(exc)) from None
        found = find_maps(args.map)
        fs = mount_from(args)

        def lint(path: Path) -> list[dict[str, Any]]:
            with BspFile.open(path) as bsp:
                return [f.to_json() for f in check_map(bsp, fs, rules=rules, tags=args.tag, engine=args.engine)]

        batch = run_batch("check", found.paths, lint)
        note = unmounted_note(fs)
        if note:
            print(note, file=sys.stderr)  # once for the run, not once per map
        reports: list[dict[str, Any]] = []
        for result in batch.results:
            report: dict[str, Any] = {"map": str(result.path), "findings": result.value or []}
            if result.error is not None:
                report["error"] = result.error  # one unreadable map does not stop the others
            reports.append(report)
        failed = bool(batch.failed) or batch.interrupted or any(
            _LEVEL[f["severity"]] <= _LEVEL[args.fail_on] for r in reports for f in r["findings"])
        counts: dict[str, int] = {r.id: 0 for r in rules}
        for report in reports:
            for finding in report["findings"]:
                counts[finding["rule"]] += 1
        if args.json:
            _common.print_json({"maps": reports, "counts": counts})
            return _common.INTERRUPTED if batch.interrupted else 1 if failed else 0
        for report in reports:
            name = Path(report["map"]).name
            for f in report["findings"]:
                where = f" [{f['where']}]" if f["where"] else ""
                print(f"{name}: {f['rule']} {f['severity']} {f['name']}: {f['message']}{where}\n    hint: {f['hint']}")
        if len(reports) > 1:
            rows = []
            for report in reports:
                sev = {level: sum(1 for f in report["findings"] if f["severity"] == level) for level in _LEVEL}
                rows.append((Path(report["map"]).name, sev["error"], sev["warning"], sev["info"],
                             "unreadable" if "error" in report else ""))
            _common.print_table(f"{len(reports)} maps", ["map", "errors", "warnings", "info", "note"], rows,
                                right=("errors", "warnings", "info"))
        total = sum(len(r["findings"]) for r in reports)
        print(f"sourcebsp: {plural(total, 'finding')} in {plural(len(reports), 'map')}", file=sys.stderr)
        if batch.interrupted:
            print("sourcebsp: interrupted", file=sys.stderr)
            return _common.INTERRUPTED
        return 1 if failed else 0

    return _common.run(body, args)

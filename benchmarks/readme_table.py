#!/usr/bin/env python
"""The benchmark table of docs/benchmarks.md, from the JSON of one ``bench.py --all --json`` run.

One row per operation (in process, and open+decode as a whole process): sourcebsp's
fastest and slowest time over the maps, each other library's time over sourcebsp's
as its worst and best ratio over the maps both read (above 1, sourcebsp is faster),
and the machine's own floor for the same work where there is one::

    python benchmarks/bench.py --all --json > run.json
    python benchmarks/readme_table.py run.json
"""
from __future__ import annotations

import json
import sys
from typing import Any

REFERENCE = "sourcebsp"
PEERS = ("srctools", "bsp_tool", "sourcepp")
#: operation -> the machine's floor under it (a "limit" row of bench.py)
FLOORS = {
    "open+decode": "memcpy of the file",
    "save unchanged": "write+fsync of the file",
    "save after edit": "write+fsync of the file",
    "save unchanged (no fsync)": "write of the file",
    "save after edit (no fsync)": "write of the file",
    "open+decode (whole process)": "python and import numpy (whole process)",
}


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.2f}" if ms < 1 else f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def _span(values: list[float], fmt: Any) -> str:
    low, high = min(values), max(values)
    return fmt(low) if fmt(low) == fmt(high) else f"{fmt(low)}–{fmt(high)}"


def table(run: dict[str, Any]) -> str:
    maps = run["maps"]
    operations: list[tuple[str, str]] = []
    for result in maps:
        for row in result["rows"]:
            if row["library"] == REFERENCE and row["mode"] == "in process":
                operations.append((row["operation"], "in process"))
    operations = list(dict.fromkeys(operations)) + [("open+decode", "process")]
    lines = ["| operation | sourcebsp (ms) | " + " | ".join(f"{p} / sourcebsp" for p in PEERS)
             + " | machine floor (ms) |", "|---" * (3 + len(PEERS)) + "|"]
    for operation, mode in operations:
        name = operation + (" (whole process)" if mode == "process" else "")
        ours, floors, ratios = [], [], {p: [] for p in PEERS}
        offered = {p: False for p in PEERS}
        for result in maps:
            rows = {(r["library"], r["operation"], r["mode"]): r for r in result["rows"]}
            mine = rows.get((REFERENCE, operation, mode))
            if mine is None or mine["seconds"] is None:
                continue
            ours.append(mine["seconds"])
            for peer in PEERS:
                other = rows.get((peer, operation, mode))
                if other is not None and other.get("error") != "not offered":
                    offered[peer] = True
                    if other["ratio"] is not None:
                        ratios[peer].append(other["ratio"])
            floor = rows.get(("machine", FLOORS.get(name, ""), "limit"))
            if floor is not None and floor["seconds"] is not None:
                floors.append(floor["seconds"])
        if not ours:
            continue
        cells = [name, _span(ours, _ms)]
        for peer in PEERS:
            if ratios[peer]:
                cell = _span(ratios[peer], lambda r: f"{r:.2f}x" if r < 10 else f"{r:.0f}x")
                failed = len(ours) - len(ratios[peer])
                cells.append(cell + (f" ({failed} failed)" if failed else ""))
            else:
                cells.append("fails" if offered[peer] else "not offered")
        cells.append(_span(floors, _ms) if floors else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        run = json.load(f)
    versions = ", ".join(f"{name} {version}" for name, version in run["versions"].items() if version)
    print(f"{len(run['maps'])} maps, Python {run['python']}, {versions}\n")
    print(table(run))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

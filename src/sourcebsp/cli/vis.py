"""``sourcebsp vis MAP (--cluster N | --point X Y Z) [--pas] [--json]``: what is visible from where."""
from __future__ import annotations

import sys
from typing import Any, Sequence

import numpy as np

from .. import BspFile
from ..queries import visibility
from . import _common


def _ranges(clusters: Sequence[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` as ``"0-2, 5, 7-8"``."""
    parts: list[str] = []
    start = prev = None
    for value in clusters:
        if start is not None and value == prev + 1:  # type: ignore[operator]
            prev = value
            continue
        if start is not None:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = value
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def query(path: str, *, cluster: int | None = None, point: Sequence[float] | None = None,
          kind: str = "pvs") -> dict[str, Any]:
    """What ``vis`` reports, as plain JSON-ready data.

    Raises IndexError for a cluster outside -1..num_clusters-1.
    """
    with BspFile.open(path) as bsp:
        count = bsp.num_clusters
        has_vis = visibility(bsp).present
        leaf = None
        if point is not None:
            leaf = int(bsp.leaf_at(np.asarray(point, dtype=np.float64)))
            cluster = int(bsp.leafs["cluster"][leaf])
        if cluster is None:
            raise ValueError("give a cluster or a point")
        if not -1 <= cluster < count:
            raise IndexError(f"cluster {cluster} is outside -1..{count - 1} ({count} clusters)")
        row = bsp.pvs(cluster) if kind == "pvs" else bsp.pas(cluster)
        visible = np.flatnonzero(row).tolist()
        return {
            "path": str(path),
            "num_clusters": count,
            "has_visibility_data": has_vis,
            "point": None if point is None else [float(v) for v in point],
            "leaf": leaf,
            "cluster": cluster,
            "solid": cluster == -1,
            "kind": kind,
            "count": len(visible),
            "clusters": visible,
        }


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("vis", "Show the clusters potentially visible (or audible) from a cluster or a point.")
    ap.add_argument("map", help="the .bsp file")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--cluster", type=int, metavar="N", help="a visibility cluster (-1: solid)")
    where.add_argument("--point", type=float, nargs=3, metavar=("X", "Y", "Z"), help="a point in map units")
    ap.add_argument("--pas", action="store_true", help="the potentially audible set instead of the PVS")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    _common.variant_option(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        try:
            report = query(args.map, cluster=args.cluster, point=args.point, kind="pas" if args.pas else "pvs")
        except IndexError as exc:
            print(f"sourcebsp: error: {exc}", file=sys.stderr)
            return 1
        if args.json:
            _common.print_json(report)
            return 0
        what = "hears" if args.pas else "sees"
        if report["point"] is not None:
            x, y, z = report["point"]
            print(f"point ({x:g} {y:g} {z:g}) is in leaf {report['leaf']}, cluster {report['cluster']}")
        if not report["has_visibility_data"]:
            print(f"{report['path']} has no visibility data: every non-solid cluster {what} every other")
        if report["solid"]:
            print(f"cluster -1 is solid: it {what} nothing")
            return 0
        share = 100.0 * report["count"] / report["num_clusters"] if report["num_clusters"] else 0.0
        print(f"cluster {report['cluster']} {what} {report['count']} of {report['num_clusters']} clusters "
              f"({share:.1f}%)")
        if report["clusters"]:
            print(f"  {_ranges(report['clusters'])}")
        return 0

    return _common.run(body, args)

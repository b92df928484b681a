"""``sourcebsp props MAP [--json]``: list the static props of a map."""
from __future__ import annotations

from typing import Any, Sequence

from ..errors import BspError
from ..lump_ids import LumpId
from ..opening import open as open_map
from ..protocols import MapReader
from . import _common

# The vertex lighting reader (numpy) is imported where a map's props are read: ``props --help`` stays light.

# Respawn's sprp layouts: one scale per prop (shown instead of the fade distances), and no
# sp_*.vhv vertex lighting files in the map's pakfile.
_SCALED_FAMILIES = frozenset({"respawn"})


def _vector(values: Sequence[float]) -> str:
    return " ".join(f"{v:g}" for v in values)


def describe(path: str) -> dict[str, Any]:
    """The static props of a map as plain data: layout facts and one record per prop (``scaled``:
    whether each has a scale of its own, shown instead of its fade distances)."""
    with open_map(path) as bsp:
        props = bsp.static_props
        records = props.to_records()
        scaled = props.layout.family in _SCALED_FAMILIES
        if not scaled:
            lighting = _vertex_lighting(bsp)
            for record in records:
                record["vertex_lighting"] = lighting.get(record["index"], {})
        return {
            "layout": props.layout.name,
            "version": props.version,
            "description": props.layout.description,
            "models": props.names,
            "props": records,
            "scaled": scaled,
        }


def _vertex_lighting(bsp: MapReader) -> dict[int, dict[str, Any]]:
    """Per prop index, what its ``sp_*.vhv`` files hold (a file that does not read: its error)."""
    from ..content.studiomodel.vhv import read_vhv, vhv_files

    pak = bsp.lump_or_none(LumpId.PAKFILE, "read the static props' vertex lighting")
    out: dict[int, dict[str, Any]] = {}
    if pak is None:
        return out
    for index, files in vhv_files(pak.names()).items():
        for kind, name in files.items():
            try:
                out.setdefault(index, {})[kind] = read_vhv(pak.read(name), name).summary()
            except BspError as exc:
                out.setdefault(index, {})[kind] = {"file": name, "error": str(exc)}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("props", "List the static props of a BSP map: model, position, angles and settings.")
    ap.add_argument("map", help="the .bsp file")
    ap.add_argument("--json", action="store_true",
                    help="print a JSON list with one object per prop (model, origin, angles, skin, solid, "
                         "fade distances and every other field of the map's prop layout)")
    _common.variant_option(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        report = describe(args.map)
        if args.json:
            _common.print_json(report["props"])
            return 0
        scaled = report["scaled"]
        heading = "scale" if scaled else "fade"
        rows = [
            (p["index"], _common.printable(p["model"]), _vector(p["origin"]), _vector(p["angles"]), p["skin"],
             p["solid"], f"{p['scale']:g}" if scaled else f"{p['fade_min_dist']:g}-{p['fade_max_dist']:g}")
            for p in report["props"]
        ]
        _common.print_table(
            f"{len(rows)} static props, {len(report['models'])} models "
            f"(sprp v{report['version']}, layout {report['layout']}: {report['description']})",
            ["#", "model", "origin", "angles", "skin", "solid", heading], rows, right=("#", "skin", "solid"),
        )
        return 0

    return _common.run(body, args)

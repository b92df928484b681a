"""``sourcebsp info MAP [--json]``: the header, the lump directory, the contents."""
from __future__ import annotations

from typing import Any, Sequence

from .. import open_bsp
from ..codecs.base import RawLump
from ..lump_ids import LumpId
from . import _common


def describe(path: str) -> dict[str, Any]:
    """Everything ``info`` reports, as plain JSON-ready data."""
    with open_bsp(path) as bsp:
        lumps = []
        for lump, entry in bsp.iter_lumps():
            lumps.append({
                "index": int(lump),
                "name": bsp.lump_name(lump),
                "version": entry.version,
                "offset": entry.fileofs,
                "length": entry.filelen,
                "compressed": entry.compressed,
                "uncompressed_length": entry.fourcc if entry.compressed else entry.filelen,
                "count": bsp.count(lump),
            })
        entities = bsp.get_lump(LumpId.ENTITIES) if bsp.entry(LumpId.ENTITIES).filelen else None
        return {
            "path": str(path),
            "ident": bsp.header.ident.decode("ascii"),
            "endianness": "big" if bsp.endian == ">" else "little",
            "version": bsp.version,
            "variant": bsp.variant.name,
            "variant_description": bsp.variant.description,
            "lump_order": bsp.header.lump_order,
            "map_revision": bsp.map_revision,
            "file_size": bsp.file_size,
            "entity_count": _entity_count(entities),
            "game_lumps": [
                {"id": g.id, "version": g.version, "length": len(g.data), "compressed": g.compressed}
                for g in bsp.game_lumps
            ],
            "lumps": lumps,
        }


def _entity_count(entities: Any) -> int | None:
    if entities is None:
        return 0
    if isinstance(entities, RawLump):
        # Until the entity codec parses it: count the top-level opening braces.
        return entities.data.count(b"{")
    return len(entities)


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("info", "Show the header, lump directory and contents of a BSP map.")
    ap.add_argument("map", help="the .bsp file")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)

    def body() -> int:
        report = describe(args.map)
        if args.json:
            _common.print_json(report)
            return 0
        print(f"{report['path']}")
        print(f"  ident {report['ident']} ({report['endianness']}-endian), BSP version {report['version']}, "
              f"map revision {report['map_revision']}")
        print(f"  variant {report['variant']}: {report['variant_description']}")
        print(f"  lump_t order {report['lump_order']}, {report['file_size']:,} bytes, "
              f"{report['entity_count']} entities")
        if report["game_lumps"]:
            ids = ", ".join(f"{g['id']} v{g['version']}" for g in report["game_lumps"])
            print(f"  game lumps: {ids}")
        rows = [
            (l["index"], l["name"], l["version"], l["offset"], l["length"],
             "lzma" if l["compressed"] else "", "raw" if l["count"] is None else l["count"])
            for l in report["lumps"]
        ]
        _common.print_table("Lumps", ["#", "name", "version", "offset", "length", "compressed", "count"],
                            rows, right=("#", "version", "offset", "length", "count"))
        return 0

    return _common.run(body)

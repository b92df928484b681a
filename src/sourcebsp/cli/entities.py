"""``sourcebsp entities MAP [--json] [--class C] [--name N]``: list the entities."""
from __future__ import annotations

import re
from typing import Any, Sequence

from .. import open_bsp
from ..codecs.entities import Entities, Entity
from ..lump_ids import LumpId
from . import _common

# Control characters (ESC separates output fields in newer games) would drive
# the terminal: show them as \xNN.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def printable(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def load_entities(bsp: Any) -> Entities:
    """The map's entities (an empty list when the map has no entity lump)."""
    if not bsp.entry(LumpId.ENTITIES).filelen:
        return Entities(bsp_version=bsp.version)
    return bsp.get_lump(LumpId.ENTITIES)  # type: ignore[no-any-return]


def select(entities: Entities, classname: str | None, targetname: str | None) -> list[tuple[int, Entity]]:
    """(index in the file, entity) for the entities that match, in file order."""
    wanted = {id(e) for e in entities.iter_find(classname, targetname)}
    return [(i, e) for i, e in enumerate(entities) if id(e) in wanted]


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("entities", "List the entities of a map with their keys and values, in file order.")
    ap.add_argument("map", help="the .bsp file")
    ap.add_argument("--json", action="store_true",
                    help='print a JSON list of {"index": i, "keyvalues": [[key, value], ...]}')
    ap.add_argument("--class", dest="classname", metavar="C",
                    help="only entities of this classname (case-insensitive; * is a wildcard)")
    ap.add_argument("--name", dest="targetname", metavar="N",
                    help="only entities with this targetname (case-insensitive; * is a wildcard)")
    args = ap.parse_args(argv)

    def body() -> int:
        with open_bsp(args.map) as bsp:
            entities = load_entities(bsp)
            chosen = select(entities, args.classname, args.targetname)
            if args.json:
                _common.print_json([
                    {"index": i, "keyvalues": [[k, v] for k, v in e.items()]} for i, e in chosen
                ])
                return 0
            for i, entity in chosen:
                name = entity.targetname
                title = f"[{i}] {printable(entity.classname or '(no classname)')}"
                if name:
                    title += f" '{printable(name)}'"
                if entity.model_index is not None:
                    title += f" (model {entity.model_index})"
                print(title)
                width = max((len(k) for k in entity.keys()), default=0)
                for key, value in entity.items():
                    print(f"    {printable(key):<{width}}  {printable(value)}")
            print(f"{len(chosen)} of {len(entities)} entities")
        return 0

    return _common.run(body)

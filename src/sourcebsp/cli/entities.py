"""``sourcebsp entities MAP [--json] [--class C] [--name N]``: list the entities."""
from __future__ import annotations

import re
import sys
from typing import Sequence

from .._io import atomic_write
from ..codecs.entities import Entities, Entity
from ..lump_ids import LumpId
from ..opening import open as open_map
from ..protocols import MapReader
from . import _common
from ._maps import map_stem

# Control characters (ESC separates output fields in newer games) would drive
# the terminal: show them as \xNN.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def printable(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def entity_text(bsp: MapReader) -> bytes:
    """The entity lump as a ``.ent`` file holds it: the text before the closing NUL, bytes as stored."""
    if not bsp.has_lump(LumpId.ENTITIES):
        return b""
    if bsp.is_loaded(LumpId.ENTITIES):
        entities = bsp.lump_or_none(LumpId.ENTITIES, "write the entity text")
        data = b"" if entities is None else entities.to_bytes()
    else:
        data = bytes(bsp.lump_bytes(LumpId.ENTITIES))
    end = data.find(b"\0")
    return data if end < 0 else data[:end]


def read_ent_file(path: str, bsp_version: int) -> Entities:
    """Parse a ``.ent`` file (entity lump text, with or without the closing NUL)."""
    with open(path, "rb") as handle:
        data = handle.read()
    if b"\0" not in data:
        data += b"\0"  # the lump must end with NUL for the engine
    return Entities.from_bytes(data, lump=f"ENTITIES of {path}", bsp_version=bsp_version)


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
    ap.add_argument("--ent", action="store_true",
                    help="print the entity lump as text, exactly as stored (a .ent file for "
                         "'edit-entities MAP --from-ent FILE.ent')")
    ap.add_argument("-o", "--output", metavar="FILE.ent", help="with --ent: write the text to FILE.ent")
    _common.overwrite_option(ap, "FILE.ent")
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    if args.output is not None and not args.ent:
        ap.error("-o FILE.ent goes with --ent")
    if args.ent and (args.json or args.classname or args.targetname):
        ap.error("--ent dumps the whole entity lump: it does not combine with --json, --class or --name")

    def body() -> int:
        with open_map(args.map) as bsp:
            if args.ent:  # the entity lump's text (not a partition file's: those are .ent files already)
                return write_ent_text(args.map, entity_text(bsp), args.output, args.overwrite)
            # The lump's entities, then those of each partition file beside the map (Titanfall's
            # .ent files), numbered on from the lump's.
            stem = map_stem(args.map)
            chosen: list[tuple[int, Entity, str | None]] = []
            total = 0
            for partition, entities in bsp.entity_sets():
                where = None if partition is None else f"{stem}_{partition}.ent"
                chosen += [(total + i, e, where) for i, e in select(entities, args.classname, args.targetname)]
                total += len(entities)
            show(chosen, total, as_json=args.json)
        return 0

    return _common.run(body, args)


def show(chosen: Sequence[tuple[int, Entity, str | None]], total: int, *, as_json: bool) -> None:
    """Print the entities chosen ((index, entity, the file it is kept in when not the map's own
    lump)) as a listing, or as JSON; ``total``: how many the map has."""
    if as_json:
        _common.print_json([
            {"index": i, **({"file": where} if where is not None else {}),
             "keyvalues": [[k, v] for k, v in e.items()]} for i, e, where in chosen
        ])
        return
    for i, entity, where in chosen:
        name = entity.targetname
        title = f"[{i}] {printable(entity.classname or '(no classname)')}"
        if name:
            title += f" '{printable(name)}'"
        if entity.model_index is not None:
            title += f" (model {entity.model_index})"
        if where is not None:
            title += f" in {printable(where)}"
        print(title)
        width = max((len(k) for k in entity.keys()), default=0)
        for key, value in entity.items():
            print(f"    {printable(key):<{width}}  {printable(value)}")
    print(f"{len(chosen)} of {total} entities")


def write_ent_text(map_path: str, text: bytes, output: str | None, overwrite: bool) -> int:
    """``--ent``: the entity text to stdout, or to ``output``."""
    if output is not None:
        _common.check_output(output, overwrite=overwrite, inputs=[map_path])
    if output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(text)
        sys.stdout.buffer.flush()
        return 0
    atomic_write(output, text)
    print(f"wrote {output}: {len(text):,} bytes of entity text")
    return 0

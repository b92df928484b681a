"""``sourcebsp info MAP... [--json] [--strict] [--jobs N]``: the header, the lump directory, the contents.

``info`` is the diagnostic command: a lump that does not decode is listed as
damaged (its error and file offset) and the rest of the map is still reported;
the exit code is 1 when anything was damaged.  ``--strict`` stops at the first
error instead.  Several maps, or a folder of maps, are described by ``--jobs``
worker processes.
"""
from __future__ import annotations

import os
import sys
from functools import partial
from typing import Any, Callable, Sequence, TypeVar

from ..codecs.base import RawLump
from ..codecs.counts import UNKNOWN, count_from_bytes, lookup
from ..errors import BspError
from ..lump_ids import LumpId
from ..opening import open as open_map
from ..parallel import start_parallel
from ..protocols import MapReader
from ..variants import LazyLayouts
from . import _common
from ._maps import find_maps, map_error

T = TypeVar("T")


class _Damage:
    """Collects the errors of the parts of a map that do not decode (or raises at once when strict)."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.found: list[dict[str, Any]] = []

    def probe(self, part: str, index: int | None, read: Callable[[], T], default: T) -> T:
        try:
            return read()
        except BspError as exc:
            if self.strict:
                raise
            self.found.append({"part": part, "index": index, "lump": exc.lump, "offset": exc.offset,
                               "error": str(exc)})
            return default


def describe(path: str, *, strict: bool = True) -> dict[str, Any]:
    """Everything ``info`` reports, as plain JSON-ready data.

    With ``strict`` the first error raises; otherwise the report's ``damaged``
    list holds one record (part, lump, offset, error) per part that did not decode.
    """
    damage = _Damage(strict)
    with open_map(path) as bsp:
        table = bsp.variant.layouts.table if isinstance(bsp.variant.layouts, LazyLayouts) else None
        if table is None:
            try:
                # Decompresses the LZMA lumps on every core; a lump that fails is
                # decoded again below, where its error is recorded against it.
                bsp.decode_all()
            except BspError:
                pass
        else:
            _decompress_all(bsp)
        lumps: list[dict[str, Any]] = []
        for lump, entry in bsp.iter_lumps():
            name = bsp.lump_name(lump)
            known = _count(bsp, table, lump) if table is not None else UNKNOWN
            length = bsp.stored_size(lump)  # of its own file, for a lump kept beside the map
            lumps.append({
                "index": int(lump),
                "name": name,
                "version": entry.version,
                "offset": entry.fileofs,
                "length": length,
                "compressed": entry.compressed,
                "uncompressed_length": entry.fourcc if entry.compressed else length,
                "count": (known if known is not UNKNOWN
                          else damage.probe(name, int(lump), partial(bsp.count, lump), None)),
            })
        broken = {d["index"] for d in damage.found}
        cut = {int(lump) for lump in bsp.truncated()}
        for row in lumps:
            index = row["index"]
            row["damaged"] = index in broken
            if index in cut:  # past the end of a file cut short (the key only then: JSON as before)
                row["truncated"] = True
            if bsp.is_external(index):  # in a file of its own beside the map (the key only then)
                row["external"] = True
        entities = None
        if bsp.has_lump(LumpId.ENTITIES) and LumpId.ENTITIES not in broken:
            entities = damage.probe("ENTITIES", int(LumpId.ENTITIES), lambda: bsp.get_lump(LumpId.ENTITIES), None)
        # The entities kept in files beside the map (Titanfall's .ent partitions), counted with the lump's.
        partitioned = damage.probe("ENTITIES", int(LumpId.ENTITIES),
                                   lambda: sum(map(len, bsp.partition_entities().values())), 0)
        game_lumps: list[dict[str, Any]] = []
        if bsp.has_lump(LumpId.GAME_LUMP) and LumpId.GAME_LUMP not in broken:
            game_lumps = damage.probe("GAME_LUMP", int(LumpId.GAME_LUMP), lambda: _game_lumps(bsp), [])
        encrypted = bsp.encrypted
        partitions = bsp.partition_files()
        return {
            "path": str(path),
            "ident": bsp.ident,
            "endianness": "big" if bsp.endian == ">" else "little",
            "version": bsp.version,
            "variant": bsp.variant.name,
            "variant_description": bsp.variant.description,
            "variant_guessed": bool(bsp.variant_alternatives),
            "variant_alternatives": list(bsp.variant_alternatives),
            **({"encrypted": encrypted} if encrypted is not None else {}),  # None: no encryption in the container
            "lump_order": bsp.lump_order,
            "map_revision": bsp.map_revision,
            "file_size": bsp.file_size,
            "entity_count": _entity_count(entities) + partitioned,
            "game_lumps": game_lumps,
            "lumps": lumps,
            **({"entity_partitions": partitions.named, "entity_files": partitions.found}
               if partitions is not None else {}),
            "damaged": damage.found,
        }


def _decompress_all(bsp: MapReader) -> None:
    """The LZMA lumps decompressed on every core (kept by the map): an error is left for
    the count below, which records it against its lump."""
    compressed = sorted((int(lump) for lump, entry in bsp.iter_lumps() if entry.compressed),
                        key=lambda index: -bsp.entry(index).filelen)
    for _, result in start_parallel(_quiet_bytes(bsp), compressed):
        result()


def _quiet_bytes(bsp: MapReader) -> Callable[[int], None]:
    def read(index: int) -> None:
        try:
            bsp.lump_bytes(index)
        except BspError:
            pass
    return read


def _count(bsp: MapReader, table: str, lump: int) -> Any:
    """The lump's element count without numpy (see codecs/counts.py), or UNKNOWN: then
    the codec decodes the lump, and any error is recorded as before."""
    kind = lookup(table, int(lump), bsp.entry(lump).version)
    if kind is None or kind == "codec":
        return UNKNOWN  # the entities, pakfile and game lump: their own codecs, numpy-free
    try:
        data = bsp.lump_bytes(lump)
    except BspError:
        return UNKNOWN
    return None if kind == "raw" else count_from_bytes(kind, data, bsp.endian)


def _game_lumps(bsp: MapReader) -> list[dict[str, Any]]:
    return [g._asdict() for g in bsp.game_lump_directory()]


def _entity_count(entities: Any) -> int:
    if entities is None:
        return 0
    if isinstance(entities, RawLump):
        # Until the entity codec parses it: count the top-level opening braces.
        return entities.data.count(b"{")
    return len(entities)


def _describe_or_error(job: tuple[str, bool]) -> dict[str, Any]:
    """One map's report, or ``{"path", "error"}`` when it cannot be read at all (runs in a worker)."""
    path, strict = job
    try:
        return describe(path, strict=strict)
    except (BspError, OSError) as exc:
        message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return {"path": path, "error": message}


def _same(report: dict[str, Any]) -> dict[str, Any]:
    return report


def _describe_share(jobs: list[tuple[str, bool]], then: Callable[[dict[str, Any]], Any]) -> list[Any]:
    """One worker's share of the maps, each described then given to ``then`` (runs in a worker)."""
    return [then(_describe_or_error(job)) for job in jobs]


def describe_all(paths: Sequence[str], *, strict: bool, jobs: int,
                 then: Callable[[dict[str, Any]], Any] = _same) -> list[Any]:
    """Reports for many maps, in order, ``jobs`` worker processes at a time.

    ``then`` (a module-level function, so that it reaches a worker) turns each
    report into what is sent back, in the worker: its JSON text, for one.
    """
    work = [(p, strict) for p in paths]
    if jobs <= 1 or len(paths) <= 1:
        return _describe_share(work, then)
    # Seams: info of one map (the start-up budget) starts no workers
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    # fork starts a worker in milliseconds with sourcebsp already imported (spawn and
    # forkserver import it again in every worker at once; numpy too, for a lump only its codec
    # can count); it is safe while this process runs no other thread.
    fork = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    context = multiprocessing.get_context("fork" if fork else None)
    # The maps dealt out in turn, largest first, so that each worker gets a like share of the
    # bytes (sizes differ by 1000x), and each sends its reports back once: a plain map is
    # described in under a millisecond, less than a pool's round trip per task.
    workers = min(jobs, len(paths))
    order = sorted(range(len(work)), key=lambda i: -_size(work[i][0]))
    shares = [order[k::workers] for k in range(workers)]
    results: list[Any] = [None] * len(work)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        done = pool.map(_describe_share, [[work[i] for i in s] for s in shares], [then] * workers)
        for share, share_results in zip(shares, done):
            for index, result in zip(share, share_results):
                results[index] = result
    return results


def _with_json(report: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """What the command still needs of a report (path, error, damage), and the report's JSON."""
    import json  # a seam: info without --json loads no json

    brief: dict[str, Any] = {key: report[key] for key in ("path", "error", "damaged") if key in report}
    return brief, json.dumps(report, indent=2)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _print_report(report: dict[str, Any]) -> None:
    print(f"{report['path']}")
    print(f"  ident {report['ident']} ({report['endianness']}-endian), BSP version {report['version']}, "
          f"map revision {report['map_revision']}")
    print(f"  variant {report['variant']}: {report['variant_description']}")
    if report.get("encrypted"):
        print("    encrypted: the whole file XOR-ed with the 32-byte key it holds at bytes 384-416; "
              "written back with the same key")
    if report["variant_guessed"]:
        print(f"    guessed: the file cannot tell it from {', '.join(report['variant_alternatives'])}; "
              "--variant NAME reads it as another")
    print(f"  lump_t order {report['lump_order']}, {report['file_size']:,} bytes, "
          f"{report['entity_count']} entities")
    if report["game_lumps"]:
        ids = ", ".join(f"{g['id']} v{g['version']}" for g in report["game_lumps"])
        print(f"  game lumps: {ids}")
    rows = [
        (l["index"], l["name"], l["version"], l["offset"], l["length"],
         "lzma" if l["compressed"] else "", "TRUNCATED" if l.get("truncated") else "DAMAGED" if l["damaged"] else "raw" if l["count"] is None else l["count"])
        for l in report["lumps"]
    ]
    _common.print_table("Lumps", ["#", "name", "version", "offset", "length", "compressed", "count"],
                        rows, right=("#", "version", "offset", "length", "count"))
    for damage in report["damaged"]:
        print(f"  damaged: {damage['error']}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("info", "Show the header, lump directory and contents of BSP maps. A lump that does not "
                                "decode is reported as damaged (exit code 1) and the rest is still shown.")
    ap.add_argument("maps", nargs="+", metavar="MAP", help="the .bsp files, or folders of them")
    ap.add_argument("--json", action="store_true", help="print one JSON object (a list of them for several maps)")
    ap.add_argument("--strict", action="store_true", help="stop at the first error instead of reporting damage")
    ap.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                    help="describe several maps in N worker processes (default 1)")
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be 1 or more, not {args.jobs}")

    def body() -> int:
        found = find_maps(args.maps)
        single = not found.batch
        paths = found.names
        if args.json and not single:
            # Each worker writes its maps' JSON: with indentation, json runs in Python, about a
            # fifth of the whole command's time over many maps.
            described = describe_all(paths, strict=args.strict, jobs=args.jobs, then=_with_json)
            reports = [brief for brief, _ in described]
            _common.print_json_texts([text for _, text in described])
        else:
            reports = ([describe(paths[0], strict=args.strict)] if single
                       else describe_all(paths, strict=args.strict, jobs=args.jobs))
            if args.json:
                _common.print_json(reports[0])
            else:
                for report in reports:
                    if "error" not in report:
                        _print_report(report)
        failed = [r for r in reports if "error" in r]
        for report in failed:
            print(f"sourcebsp: error: {map_error(report['path'], report['error'])}", file=sys.stderr)
        damaged = [r for r in reports if r.get("damaged")]
        for report in damaged:
            parts = ", ".join(d["part"] for d in report["damaged"])
            print(f"sourcebsp: error: {report['path']} is damaged (what does not decode: {parts}; "
                  "the report gives each error and file offset)", file=sys.stderr)
        return 1 if failed or damaged else 0

    return _common.run(body, args)

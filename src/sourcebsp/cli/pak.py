"""``sourcebsp pak MAP list | extract DIR [PATTERN...] | add PATH... | addlist FILE | remove PATTERN...``.

What bspzip users rely on: list the pakfile, extract it, add files (one at a
time with ``--as NAME``, whole folders, or from a bspzip list file) and remove
files by name or wildcard.  Changing commands write a new map (``-o OUT``,
never over an existing file without ``--overwrite``) or, with ``--overwrite``
and no ``-o``, the input map itself.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
from pathlib import Path
from typing import Sequence

from ..codecs.pakfile import ZIP_LZMA, ZIP_STORED, Pakfile
from ..errors import BspError
from ..lump_ids import LumpId
from ..opening import open as open_map
from . import _common


def read_list_file(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(archive name, file path) pairs of a bspzip list file.

    The format of ``bspzip -addlist``: alternating lines, the name inside the
    pakfile, then the file to pack.  Line ends (LF or CRLF) are stripped;
    blank lines are skipped.
    """
    text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    lines = [line.rstrip("\r\n") for line in text.splitlines()]
    lines = [line for line in lines if line.strip()]
    if len(lines) % 2:
        raise BspError(f"list file {path}: {len(lines)} non-blank lines; expected pairs of "
                       f"(name in the pakfile, file to add), the last name {lines[-1]!r} has no file")
    return list(zip(lines[0::2], lines[1::2]))


def _default_name(path: Path) -> str:
    """The archive name of a path given without ``--as``: the path as typed, relative."""
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            raise BspError(f"{path} is outside the current folder: give its name in the pakfile "
                           "with --as NAME") from None
    name = os.path.normpath(path).replace(os.sep, "/")
    if name == ".." or name.startswith("../"):
        raise BspError(f"{path} is outside the current folder: give its name in the pakfile with --as NAME")
    return name


def _files_to_add(paths: Sequence[str], as_name: str | None) -> list[tuple[str, Path]]:
    pairs = []
    for text in paths:
        path = Path(text)
        base = as_name if as_name is not None else _default_name(path)
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                rel = file.relative_to(path).as_posix()
                pairs.append((f"{base.rstrip('/')}/{rel}" if base not in ("", ".") else rel, file))
        else:
            pairs.append((base, path))
    return pairs


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def matching(names: Sequence[str], patterns: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the names matched by any pattern, in pakfile order; the patterns that matched nothing).

    Patterns are shell wildcards (``*``, ``?``, ``[...]``; ``*`` also crosses
    ``/``), compared without case and with either slash, as the engine looks names up.
    """
    keys = [name.replace("\\", "/").lower() for name in names]
    chosen: set[int] = set()
    unmatched = []
    for pattern in patterns:
        key = pattern.replace("\\", "/").lower()
        hits = [i for i, name in enumerate(keys) if fnmatch.fnmatchcase(name, key)]
        if not hits:
            unmatched.append(pattern)
        chosen.update(hits)
    return [names[i] for i in sorted(chosen)], unmatched


def extract_targets(names: Sequence[str], folder: str) -> list[Path]:
    """Where ``extract`` writes each file (folder entries, ending in a slash, write nothing)."""
    root = Path(folder)
    return [root.joinpath(*[p for p in name.replace("\\", "/").split("/") if p not in ("", ".")])
            for name in names if not name.endswith(("/", "\\"))]


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", help="where to write the changed map")
    parser.add_argument("--overwrite", action="store_true",
                        help="allow OUT to exist already; without -o, change the input map in place")


def _lzma_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lzma", action="store_true",
                        help="LZMA-compress the added files (CS:GO-branch games and later TF2 only; "
                             "refused for BSP 17-19 unless --force)")
    parser.add_argument("--force", action="store_true", help="with --lzma: even for a game that cannot read it")


ACTIONS = ("list", "extract", "add", "addlist", "remove")


def _build_parser() -> argparse.ArgumentParser:
    ap = _common.parser("pak", "List, extract, add and remove the files packed in a map (as bspzip). "
                               "'pak MAP ACTION' and 'pak ACTION MAP' both work.")
    ap.add_argument("map", help="the .bsp file")
    sub = ap.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = sub.add_parser("list", help="list the files: name, size, stored size, compression "
                                          "(tab-separated lines when piped)")
    listing.add_argument("--json", action="store_true", help="print a JSON list of objects")

    extract = sub.add_parser("extract", help="write the packed files (all, or those matching PATTERNs) under DIR")
    extract.add_argument("dir", help="destination folder (created if missing)")
    extract.add_argument("patterns", nargs="*", metavar="PATTERN",
                         help="only names matching these wildcards (case-insensitive; e.g. 'materials/*.vmt')")
    extract.add_argument("--overwrite", action="store_true", help="allow replacing files that exist under DIR")

    add = sub.add_parser("add", help="add or replace files (folders: every file inside)")
    add.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to pack")
    add.add_argument("--as", dest="as_name", metavar="NAME",
                     help="name in the pakfile (one PATH only; for a folder, the prefix); "
                          "default: PATH as given, relative to the current folder")
    _lzma_options(add)
    _output_options(add)

    addlist = sub.add_parser("addlist", help="add or replace the files of a bspzip list file")
    addlist.add_argument("list_file", metavar="FILE",
                         help="alternating lines: name in the pakfile, then the file to add")
    _lzma_options(addlist)
    _output_options(addlist)

    remove = sub.add_parser("remove", help="remove the files whose names match PATTERNs (wildcards, any case)")
    remove.add_argument("patterns", nargs="+", metavar="PATTERN",
                        help="names or wildcards, e.g. 'materials/maps/*/c*.vtf' for built cubemaps")
    _output_options(remove)
    return ap


def _list(pak: Pakfile, as_json: bool, title: str) -> None:
    entries = pak.entries()
    if as_json:
        _common.print_json([
            {"name": e.name, "size": e.size, "compressed_size": e.compressed_size,
             "compression": e.compression}
            for e in entries
        ])
        return
    rows = [(e.name, e.size, e.compressed_size, e.compression) for e in entries]
    _common.print_table(title, ["name", "size", "stored", "compression"], rows, right=("size", "stored"))
    total = sum(e.size for e in entries)
    _common.summary(f"{_files(len(entries))}, {total:,} bytes")


def main(argv: Sequence[str] | None = None) -> int:
    ap = _build_parser()
    _common.variant_option(ap)
    args = ap.parse_args(_common.map_first(argv, ACTIONS))
    output = getattr(args, "output", None)
    if args.action in ("add", "addlist", "remove"):
        if output is None and not args.overwrite:
            ap.error(f"{args.action}: -o OUT is required (or --overwrite to change {args.map} in place)")
        if args.action == "add" and args.as_name is not None and len(args.paths) > 1:
            ap.error("add: --as NAME names a single PATH")

    def body() -> int:
        if output is not None:
            _common.check_output(output, overwrite=args.overwrite, inputs=[args.map], may_replace_input=True)
        try:
            return _run(args, output)
        except (KeyError, ValueError) as exc:
            if isinstance(exc, BspError):
                raise
            return _common.error(exc.args[0] if exc.args else exc)

    return _common.run(body, args)


def _extract(pak: Pakfile, folder: str, patterns: Sequence[str], overwrite: bool) -> int:
    names = pak.names()
    if patterns:
        names, unmatched = matching(names, patterns)
        if unmatched:
            raise _common.CommandError(f"no file in the pakfile matches {', '.join(unmatched)}")
    if not overwrite:
        existing = [path for path in extract_targets(names, folder) if path.exists() or path.is_symlink()]
        if existing:
            more = f" and {len(existing) - 1} more exist" if len(existing) > 1 else " exists"
            raise _common.CommandError(f"{existing[0]}{more} already: give --overwrite to replace "
                                       "files under " + folder)
    # The library checks names and limits again, stages the files and moves them in only when all were read.
    written = pak.extract_all(folder, names=names if patterns else None, overwrite=overwrite)
    print(f"extracted {_files(len(written))} to {folder}")
    return 0


def _run(args: argparse.Namespace, output: str | None) -> int:
    with open_map(args.map) as bsp:
        if args.action not in ("list", "extract") and not bsp.writes_pakfile:
            raise _common.CommandError(f"pak {args.action} does not write Titanfall (rBSP) maps: list and extract "
                                       "read them")  # rBSP: the one container whose pakfile is read only
        pak = bsp.lump_or_none(LumpId.PAKFILE, "read the pakfile")
        if pak is None:  # a map without a pakfile gets an empty one, saved with the map
            pak = Pakfile()
            bsp.set_lump(LumpId.PAKFILE, pak)
        if args.action == "list":
            _list(pak, args.json, f"Pakfile of {args.map}")
            return 0
        if args.action == "extract":
            return _extract(pak, args.dir, args.patterns, args.overwrite)
        if args.action == "remove":
            names, unmatched = matching(pak.names(), args.patterns)
            if unmatched:
                raise _common.CommandError(f"no file in the pakfile matches {', '.join(unmatched)}; nothing written")
            for name in names:
                if name in pak:
                    pak.remove(name)
            done = f"removed {_files(len(names))}"
        else:
            if args.lzma:
                _common.check_lzma(bsp, args.force, f"pak {args.action} --lzma")
            if args.action == "add":
                pairs = _files_to_add(args.paths, args.as_name)
            else:
                pairs = [(name, Path(path)) for name, path in read_list_file(args.list_file)]
            compression = ZIP_LZMA if args.lzma else ZIP_STORED
            for name, path in pairs:
                pak.add_file(name, path, compression=compression)
            done = f"added {_files(len(pairs))}"
        target = output if output is not None else args.map
        before, after = _common.save_map(bsp, target)
        print(f"{done}; the pakfile holds {_files(len(pak))}; wrote {target} ({_common.sizes(before, after)})")
        return 0

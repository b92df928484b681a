"""``sourcebsp lump MAP extract N -o FILE.lmp`` and ``sourcebsp lump MAP apply FILE.lmp -o OUT``.

Lump patch files (``mapname_l_N.lmp``) carry one lump outside the map; the
engine loads them after the map.  ``extract`` writes one, ``apply`` puts one
into a map as the engine would.
"""
from __future__ import annotations

import argparse
from typing import Sequence

from .. import BspFile
from ..lump_ids import LumpId
from ..lumpfile import apply_lump_file, lump_file_name, read_lump_file, write_lump_file
from . import _common

ACTIONS = ("extract", "apply")


def _lump(text: str) -> int:
    """A lump by number (0-63) or by name (PLANES, entities, ...)."""
    try:
        number = int(text)
    except ValueError:
        try:
            return int(LumpId[text.upper()])
        except KeyError:
            raise argparse.ArgumentTypeError(f"no lump named {text!r}; give a number 0-63 or a name "
                                             "such as ENTITIES or PAKFILE") from None
    if not 0 <= number <= 63:
        raise argparse.ArgumentTypeError(f"lump numbers are 0-63, not {number}")
    return number


def _build_parser() -> argparse.ArgumentParser:
    ap = _common.parser("lump", "Write one lump of a map to a .lmp lump file, or apply a lump file to a map.")
    ap.add_argument("map", help="the .bsp file")
    sub = ap.add_subparsers(dest="action", required=True, metavar="ACTION")
    extract = sub.add_parser("extract", help="write lump N (number or name) to a lump file")
    extract.add_argument("lump", type=_lump, metavar="N", help="the lump: number 0-63 or name (ENTITIES, ...)")
    extract.add_argument("-o", "--output", metavar="FILE.lmp",
                         help="the lump file to write (default: MAP_l_0.lmp beside the map, the name the engine loads)")
    extract.add_argument("--revision", type=int, help="the map revision to record (default: the map's)")
    _common.overwrite_option(extract, "FILE.lmp")
    apply = sub.add_parser("apply", help="replace a lump of the map with the lump of FILE.lmp, writing a new map")
    apply.add_argument("lump_file", metavar="FILE.lmp")
    apply.add_argument("-o", "--output", required=True, help="where to write the patched map")
    apply.add_argument("--any-revision", action="store_true",
                       help="apply a lump file made for an older revision of the map too")
    apply.add_argument("--overwrite", action="store_true",
                       help="allow OUT to exist already, or to be the input map (replaced atomically)")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = _build_parser()
    _common.variant_option(ap)
    args = ap.parse_args(_common.map_first(argv, ACTIONS))

    def body() -> int:
        if args.action == "extract":
            output = args.output if args.output is not None else str(lump_file_name(args.map))
            _common.check_output(output, overwrite=args.overwrite, inputs=[args.map])
            with BspFile.open(args.map) as bsp:
                name = bsp.lump_name(args.lump)
                write_lump_file(bsp, args.lump, output, map_revision=args.revision, overwrite=True)
            print(f"wrote {output}: lump {args.lump} ({name})")
            return 0
        _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map, args.lump_file],
                             may_replace_input=True)
        patch = read_lump_file(args.lump_file)
        with BspFile.open(args.map) as bsp:
            if patch.map_revision < bsp.map_revision and not args.any_revision:
                raise _common.CommandError(
                    f"{args.lump_file} was made for map revision {patch.map_revision}, older than the "
                    f"revision {bsp.map_revision} of {args.map} (give --any-revision to apply it anyway)")
            name = bsp.lump_name(int(patch.lump))
            apply_lump_file(bsp, patch, check_revision=False)
            before, after = _common.save_map(bsp, args.output)
        print(f"applied {args.lump_file} (lump {int(patch.lump)} {name}, version {patch.version}, "
              f"{len(patch.data):,} bytes); wrote {args.output} ({_common.sizes(before, after)})")
        return 0

    return _common.run(body, args)

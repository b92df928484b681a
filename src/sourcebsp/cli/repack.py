"""``sourcebsp repack MAP -o OUT [--reencode] [--compress | --decompress]``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .. import BspFile
from ..container import BspFile

if TYPE_CHECKING:
    from ..writeplan import Compression
from . import _common, _respawn
from ._progress import busy


def _compressed_lumps(bsp: BspFile) -> int:
    return sum(1 for _, entry in bsp.iter_lumps() if entry.compressed)


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser(
        "repack",
        "Write a map again. With no option the output is byte-identical to the input.",
    )
    ap.add_argument("map", help="the .bsp file to read")
    ap.add_argument("-o", "--output", required=True, help="where to write the new map")
    ap.add_argument("--reencode", action="store_true",
                    help="encode every understood lump from its decoded data (output stays identical)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--compress", action="store_true",
                      help="LZMA-compress every lump and game lump, but not the pakfile (as bspzip -repack -compress); "
                           "refused for games that cannot load it (BSP 17-19) unless --force")
    mode.add_argument("--decompress", action="store_true", help="store every lump uncompressed")
    ap.add_argument("--force", action="store_true", help="compress even for a game that cannot load LZMA lumps")
    ap.add_argument("--overwrite", action="store_true",
                    help="allow OUTPUT to exist already, or to be the input map (replaced atomically)")
    _common.variant_option(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map], may_replace_input=True)
        compression: Compression = "lzma" if args.compress else "none" if args.decompress else "keep"
        if _respawn.is_rbsp(args.map):  # Titanfall's rBSP: its own container (sourcebsp.respawn)
            print(_respawn.repack(args.map, args.output, reencode=args.reencode, compression=compression,
                                 overwrite=args.overwrite))
            return 0
        with BspFile.open(args.map) as bsp:
            if args.compress:
                _common.check_lzma(bsp, args.force, "--compress")
            lumps_before = _compressed_lumps(bsp)
            doing = "compressing" if args.compress else "decompressing" if args.decompress else "writing"
            with busy(f"repack: {doing} {args.map}"):
                before, after = _common.save_map(bsp, args.output, reencode=args.reencode, compression=compression)
        with BspFile.open(args.output) as written:
            lumps_after = _compressed_lumps(written)
        how = {"lzma": "LZMA-compressed", "none": "decompressed", "keep": "copied"}[compression]
        print(f"{args.output}: {how}{' and re-encoded' if args.reencode else ''}, {_common.sizes(before, after)}, "
              f"compressed lumps {lumps_before} -> {lumps_after}")
        return 0

    return _common.run(body, args)

"""``sourcebsp repack MAP -o OUT [--reencode] [--compress | --decompress]``."""
from __future__ import annotations

from typing import Sequence

from .. import open_bsp
from ..container import Compression
from . import _common


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
                      help="LZMA-compress every lump and game lump, but not the pakfile (as bspzip -repack -compress)")
    mode.add_argument("--decompress", action="store_true", help="store every lump uncompressed")
    ap.add_argument("--overwrite", action="store_true", help="allow OUTPUT to be the input map")
    args = ap.parse_args(argv)

    def body() -> int:
        compression: Compression = "lzma" if args.compress else "none" if args.decompress else "keep"
        with open_bsp(args.map) as bsp:
            bsp.save(args.output, overwrite=args.overwrite, reencode=args.reencode, compression=compression)
        return 0

    return _common.run(body)

"""``sourcebsp repack MAP -o OUT [--reencode] [--compress | --decompress]``."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..opening import open as open_map
from ..protocols import MapReader
from . import _common
from ._progress import busy

if TYPE_CHECKING:
    from ..writeplan import Compression


def _compressed_lumps(bsp: MapReader) -> int:
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
        with open_map(args.map) as bsp:
            if compression != "keep" and not bsp.lzma_lumps:
                raise _common.CommandError("Titanfall maps are not LZMA-compressed: --compress and --decompress "
                                           "are for Source maps")  # rBSP: the one container without them
            if args.compress:
                _common.check_lzma(bsp, args.force, "--compress")
            lumps_before = _compressed_lumps(bsp)
            # The files written beside the map (Titanfall's .bsp_lump and .ent files): one there
            # already is replaced only with --overwrite.
            companions = list(bsp.companion_files(Path(args.output)))
            doing = "compressing" if args.compress else "decompressing" if args.decompress else "writing"
            with busy(f"repack: {doing} {args.map}"):
                before, after = _common.save_map(bsp, args.output, overwrite=args.overwrite,
                                                 reencode=args.reencode, compression=compression)
        how = {"lzma": "LZMA-compressed", "none": "decompressed", "keep": "copied"}[compression]
        if not bsp.lzma_lumps:  # no compressed lumps to count: the files written beside the map instead
            lump_files = sum(1 for path in companions if path.suffix == ".bsp_lump")
            print(f"{args.output}: {how}{' and re-encoded' if args.reencode else ''}, {before:,} -> {after:,} bytes, "
                  f"{lump_files} external lump files, {len(companions) - lump_files} .ent files")
            return 0
        with open_map(args.output) as written:
            lumps_after = _compressed_lumps(written)
        print(f"{args.output}: {how}{' and re-encoded' if args.reencode else ''}, {_common.sizes(before, after)}, "
              f"compressed lumps {lumps_before} -> {lumps_after}")
        return 0

    return _common.run(body, args)

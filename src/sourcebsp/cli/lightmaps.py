"""``sourcebsp lightmaps MAP -o atlas.png [--hdr]``: every face's lightmap in one PNG."""
from __future__ import annotations

import sys
from typing import Sequence

from .. import BspFile
from . import _common
from ._progress import steps

# The lightmap model (numpy) and the file writer (pathlib) are imported where the atlas is built:
# ``lightmaps --help`` stays light.


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("lightmaps", "Pack the lightmaps of every lit face into one atlas image (PNG).")
    ap.add_argument("map", help="the .bsp file")
    ap.add_argument("-o", "--output", required=True, help="the PNG file to write")
    ap.add_argument("--hdr", action="store_true",
                    help="the HDR lightmaps (LIGHTING_HDR); by default the LDR ones, or the HDR ones "
                         "when the map has no LDR lighting")
    ap.add_argument("--style", type=int, default=0, help="light style slot 0-3 (default 0, the base lighting)")
    ap.add_argument("--bump", type=int, default=0, choices=range(4),
                    help="for bump-mapped faces: 0 the flat lightmap, 1-3 a bump basis direction")
    ap.add_argument("--tonemap", choices=("clip", "reinhard"), default=None,
                    help="clip (default for LDR) or reinhard c/(1+c) (default for HDR)")
    ap.add_argument("--exposure", type=float, default=1.0, help="multiply linear light by this before tone mapping")
    _common.overwrite_option(ap, "PNG")
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    if not 0 <= args.style <= 3:
        ap.error(f"--style must be 0-3 (a face has four light style slots), not {args.style}")
    if not args.exposure >= 0 or args.exposure == float("inf"):
        ap.error(f"--exposure must be a finite number >= 0, not {args.exposure}")

    def body() -> int:
        _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map])
        from .._io import atomic_write
        from ..model.lightmaps import build_atlas, encode_png, lightmap_layout

        # Built as 8-bit sRGB unless an exposure needs the linear light first: a quarter of the memory.
        tonemapped = (args.tonemap or True) if args.exposure == 1.0 else None
        try:
            with steps("lightmaps", ("atlas", "png")) as progress, BspFile.open(args.map) as bsp:
                hdr = args.hdr
                atlas = build_atlas(bsp, hdr=hdr, style=args.style, bump=args.bump, tonemapped=tonemapped)
                if atlas is None and not hdr:
                    hdr = True
                    atlas = build_atlas(bsp, hdr=hdr, style=args.style, bump=args.bump, tonemapped=tonemapped)
                progress("atlas")
                if atlas is None:
                    kind = "HDR lightmaps" if args.hdr else "lightmaps"
                    print(f"sourcebsp: error: {args.map} has no {kind}", file=sys.stderr)
                    return 1
                layout = lightmap_layout(bsp, hdr=hdr)
                image = atlas.pillow_image(method=args.tonemap, exposure=args.exposure)
                atlas = atlas.without_pixels()  # Pillow has its copy: the encoder reuses this memory
                atomic_write(args.output, encode_png(image))
                del image
                progress("png")
        except ImportError as exc:
            print(f"sourcebsp: error: {exc}", file=sys.stderr)
            return 1
        faces = int((atlas.rects[:, 0] >= 0).sum())
        print(f"{args.output}: {atlas.width}x{atlas.height} atlas, {faces} faces "
              f"({int((layout.lit & layout.bumped).sum())} bump-mapped), {'HDR' if hdr else 'LDR'}")
        return 0

    return _common.run(body, args)

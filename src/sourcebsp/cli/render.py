"""``sourcebsp render MAP -o OUT.png [--view top|player] [--size WxH]``: a preview picture."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import _common
from ._progress import steps


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1024x768, not {text!r}") from None
    if not (1 <= w <= 16384 and 1 <= h <= 16384):
        raise argparse.ArgumentTypeError(f"width and height must be 1-16384, not {text!r}")
    return w, h


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("render", "Draw a preview picture of a map (CPU only): top-down or from the player start.")
    ap.add_argument("map", help="the .bsp file")
    ap.add_argument("-o", "--output", required=True, help="the PNG file to write")
    ap.add_argument("--view", choices=("top", "player"), default="top",
                    help="top: orthographic from above; player: perspective from the player start (default: top)")
    ap.add_argument("--size", type=_size, default=None, help="WIDTHxHEIGHT in pixels (default 1024x1024 top, 1280x720 player)")
    ap.add_argument("--fov", type=float, default=90.0, help="horizontal field of view of the player view, degrees")
    ap.add_argument("--include-tools", action="store_true", help="draw tool, nodraw and sky faces too")
    _common.overwrite_option(ap, "PNG")
    args = ap.parse_args(argv)
    size = args.size or ((1024, 1024) if args.view == "top" else (1280, 720))

    def body() -> int:
        _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map])
        from ..converters.render import RENDER_STEPS, render_png

        try:
            with steps("render", RENDER_STEPS) as progress:
                result = render_png(args.map, args.output, view=args.view, size=size, fov=args.fov,
                                    include_tools=args.include_tools, progress=progress)
        except ImportError as exc:
            print(f"sourcebsp: error: {exc}", file=sys.stderr)
            return 1
        shading = "lightmaps" if result.lit else "face normals"
        print(f"{args.output}: {size[0]}x{size[1]} {args.view} view, {result.triangles} triangles, "
              f"{result.covered:.0%} covered, shaded by {shading}")
        return 0

    return _common.run(body)

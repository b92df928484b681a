"""``sourcebsp example [-o OUT]``: write the example map built in code."""
from __future__ import annotations

from typing import Sequence

from . import _common


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser(
        "example",
        "Write a small map built in code (a lit room with a light, a player start, a button and an "
        "oil drum) to try the other commands on. No game files are needed.",
    )
    ap.add_argument("-o", "--output", default="example.bsp", help="where to write it (default: example.bsp)")
    _common.overwrite_option(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        _common.check_output(args.output, overwrite=args.overwrite)
        from ..examples import write_example_map

        path = write_example_map(args.output)
        print(f"wrote {path} ({path.stat().st_size:,} bytes): a 512x512x256 room with a light, "
              "a player start, a func_button and a static prop")
        return 0

    return _common.run(body)

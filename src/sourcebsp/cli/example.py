"""``sourcebsp example [-o OUT]``: write the example map built in code."""
from __future__ import annotations

import os
from typing import Sequence

from ..variants import variant_names
from . import _common

# The example maps (numpy) are built where one is written: ``example --help`` stays light.


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser(
        "example",
        "Write a small map built in code (a lit room with a light, a player start, a button and an "
        "oil drum) to try the other commands on. No game files are needed.",
    )
    ap.add_argument("-o", "--output", default="example.bsp", help="where to write it (default: example.bsp)")
    ap.add_argument("--variant", choices=variant_names(), metavar="NAME",
                    help="write it in this engine branch's file layout (default orange_box); a branch whose "
                         "layouts are not all declared yet is refused")
    _common.overwrite_option(ap)
    args = ap.parse_args(argv)

    def body() -> int:
        from ..examples import example_map_bytes, write_example_map
        from ..examples.branches import example_description, write_example_branch

        # Run twice (the README's first line is), the file is already what it would write.
        if not args.overwrite and args.variant is None and _holds(args.output, example_map_bytes()):
            print(f"{args.output} already holds the example map: left as it is")
            return 0
        _common.check_output(args.output, overwrite=args.overwrite)

        path = write_example_map(args.output) if args.variant is None else write_example_branch(args.output,
                                                                                                args.variant)
        layout = "" if args.variant is None else f" in the {args.variant} layout"
        print(f"wrote {path} ({path.stat().st_size:,} bytes){layout}: {example_description(args.variant)}")
        return 0

    return _common.run(body)


def _holds(path: str, data: bytes) -> bool:
    """Whether the file at ``path`` holds exactly ``data`` (False when there is none)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False

"""What the commands share: argument parsing, error reporting, tables, JSON."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Sequence

from ..errors import BspError


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=f"sourcebsp {prog}", description=description)


def run(body: Callable[[], int]) -> int:
    """Run a command body; bad input becomes one line on stderr and exit code 1."""
    try:
        return body()
    except BspError as exc:
        print(f"sourcebsp: error: {exc}", file=sys.stderr)
    except BrokenPipeError:
        # The reader (e.g. ``| head``) went away: nothing more to say.
        sys.stderr.close()
        return 0
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"sourcebsp: error: {exc.strerror or exc}{where}", file=sys.stderr)
    except KeyboardInterrupt:
        print("sourcebsp: interrupted", file=sys.stderr)
    return 1


def print_json(value: Any) -> None:
    import json

    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                right: Sequence[str] = ()) -> None:
    """A table for people: rich's on a terminal when installed, plain aligned text otherwise.

    Output to a pipe or file is plain text: easier to grep, and it spares
    scripts importing rich (several times the time ``info`` itself takes).
    """
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    try:
        if not sys.stdout.isatty():
            raise ImportError("plain text for pipes and files")
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]

        def line(values: Sequence[str]) -> str:
            return "  ".join(
                v.rjust(w) if col in right else v.ljust(w)
                for v, w, col in zip(values, widths, columns)
            ).rstrip()

        print(title)
        print(line(columns))
        print(line(["-" * w for w in widths]))
        for row in cells:
            print(line(row))
        return
    table = Table(title=title, title_justify="left")
    for col in columns:
        # Fold long cells (pak paths) instead of cutting them when the terminal is narrow.
        table.add_column(col, justify="right" if col in right else "left", overflow="fold")
    for row in cells:
        table.add_row(*row)
    Console(soft_wrap=True).print(table)

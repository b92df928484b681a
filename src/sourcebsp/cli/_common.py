"""What the commands share: argument parsing, error reporting, output rules, tables, JSON."""
from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from typing import Any, Callable, Sequence

from ..errors import BspError
from ..protocols import MapReader
from ..variants import reading_as, variant_names

class CommandError(Exception):
    """A refusal or failure to report to the user as one line (exit code 1)."""


#: The exit code after Ctrl-C (128 + SIGINT), as shells report an interrupted command.
INTERRUPTED = 130


def _help_width() -> int:
    """The width argparse's help is wrapped to: the terminal's, less 2, as argparse measures it.

    Measured here because argparse measures it with ``shutil``, whose import (with
    ``bz2`` and ``lzma``) would cost every command, even one that prints no help.
    """
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


def parser(prog: str, description: str, epilog: str | None = None) -> argparse.ArgumentParser:
    kind = argparse.RawDescriptionHelpFormatter if epilog else argparse.HelpFormatter
    return argparse.ArgumentParser(prog=f"sourcebsp {prog}", description=description, epilog=epilog,
                                   formatter_class=functools.partial(kind, width=_help_width()))


def overwrite_option(ap: argparse.ArgumentParser, what: str = "OUTPUT") -> None:
    ap.add_argument("--overwrite", action="store_true", help=f"allow replacing an existing {what}")


def check_output(output: str | os.PathLike[str], *, overwrite: bool,
                 inputs: Sequence[str | os.PathLike[str]] = (), may_replace_input: bool = False) -> None:
    """Refuse to write ``output`` over an existing file unless the user said ``--overwrite``.

    ``inputs`` are the files the command reads: writing over one of them is
    refused even with ``--overwrite`` unless ``may_replace_input`` (a map
    written back over itself, on request; never a picture over a map).
    Messages use the paths as the user typed them.
    """
    for source in inputs:
        if _same_file(output, source):
            if not may_replace_input:
                raise CommandError(f"{output} is the input map {source}: choose another output file")
            if not overwrite:
                raise CommandError(f"{output} is the input map: give --overwrite to replace it")
            return
    if os.path.isdir(output):
        raise CommandError(f"{output} is a folder: give a file name")
    if os.path.lexists(output) and not overwrite:
        raise CommandError(f"{output} exists: give --overwrite to replace it")
    make_parent(output)


def make_parent(output: str | os.PathLike[str]) -> None:
    """Create the missing folders above ``output``: the one rule for every file a command writes."""
    parent = os.path.dirname(os.fspath(output))
    if parent and not os.path.isdir(parent):
        try:
            os.makedirs(parent, exist_ok=True)
        except FileExistsError:
            raise CommandError(f"{parent} is a file: cannot make the folder for {output}") from None


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except OSError:
        return False


def one_line(text: object) -> str:
    """``text`` on one line (runs of white space as one space)."""
    return " ".join(str(text).split()) or type(text).__name__


_one_line = one_line


def error(message: object) -> int:
    """Print one error line on stderr; the exit code 1."""
    print(f"sourcebsp: error: {_one_line(message)}", file=sys.stderr)
    return 1


def variant_option(ap: argparse.ArgumentParser) -> None:
    """``--variant NAME``: read the maps as this engine branch instead of the detected one."""
    names = variant_names()
    ap.add_argument("--variant", choices=names, metavar="NAME",
                    help="read the map as this engine branch, not the one its header suggests: "
                         + ", ".join(names))


def run(body: Callable[[], int], args: argparse.Namespace | None = None) -> int:
    """Run a command body; bad input becomes one line on stderr and exit code 1.

    An exception that is not a BspError is a bug of sourcebsp: it still ends in
    one line (a service running us unattended must never see a traceback), one
    that says so and asks for a report; ``SOURCEBSP_DEBUG=1`` shows the traceback.
    """
    try:
        with reading_as(getattr(args, "variant", None)):  # --variant: every map the command opens
            return body()
    except (BspError, CommandError) as exc:
        return error(exc)
    except BrokenPipeError:
        # The reader (e.g. ``| head``) went away: nothing more to say.
        _quiet_stdout()
        return 0
    except IsADirectoryError as exc:
        return error(f"{exc.filename} is a folder: give a .bsp file, or use a command that takes folders")
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        return error(f"{exc.strerror or exc}{where}")
    except KeyboardInterrupt:
        print("sourcebsp: interrupted", file=sys.stderr)
        return INTERRUPTED
    except MemoryError:
        return error("out of memory (the map asks for more than this machine can give)")
    except Exception as exc:  # noqa: BLE001 - the last resort, see the docstring
        if os.environ.get("SOURCEBSP_DEBUG"):
            raise
        print(f"sourcebsp: internal error: {type(exc).__name__}: {_one_line(exc)} "
              f"(a bug of sourcebsp: please report it with the map; SOURCEBSP_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1


def _quiet_stdout() -> None:
    """After a broken pipe, send stdout to /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def is_terminal() -> bool:
    """Whether stdout is a terminal (tables for people) or a pipe or file (plain lines)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def print_json(value: Any) -> None:
    import json  # a seam: info without --json (and every command printing text) loads no json

    # One string, one write: json.dump writes piece by piece (slower on info's reports).
    sys.stdout.write(json.dumps(value, indent=2) + "\n")


def print_json_texts(texts: Sequence[str]) -> None:
    """Print the list of the values whose JSON (``indent=2``) is ``texts``, as ``print_json``
    would print the list itself (JSON strings hold no newline: each line moves in a level)."""
    if not texts:
        sys.stdout.write("[]\n")
        return
    sys.stdout.write("[\n  " + ",\n  ".join(text.replace("\n", "\n  ") for text in texts) + "\n]\n")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def printable(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN``: names and values come from
    untrusted files and must neither drive the terminal nor break a one-record line
    (backslashes stay as they are: pak names use them)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _cell(value: Any) -> str:
    return printable("" if value is None else str(value))


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                right: Sequence[str] = (), *, summary: bool = False) -> None:
    """A table for people on a terminal; tab-separated lines (a header, then one per row) otherwise.

    Piped output never wraps or folds a value, so ``| grep`` and ``| cut -f1`` see whole records.
    A ``summary`` title (one that carries results, not just a name) then goes to stderr as a
    ``sourcebsp:`` line, out of the pipe but still in sight.
    """
    if not is_terminal():
        if summary:
            print(f"sourcebsp: {printable(title)}", file=sys.stderr)
        print("\t".join(columns))
        for row in rows:
            print("\t".join(_cell(v) for v in row))
        return
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    try:
        # rich, an optional extra (cli): imported where used
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


def summary(text: str) -> None:
    """A closing line for people (counts, totals), left out when stdout is piped (records only)."""
    if is_terminal():
        print(text)


def lzma_refusal(bsp: MapReader) -> str | None:
    """Why the game of ``bsp`` cannot load LZMA-compressed lumps or pak entries, or None.

    The branch table says which games load them (:attr:`sourcebsp.variants.Variant.loads_lzma`):
    LZMA lumps came with the Left 4 Dead / Orange Box-update engines; Vampire: Bloodlines and
    Source 2004 (HL2, CS:S before the 2010 update) read every lump as stored bytes and crash
    on compressed ones.
    """
    if bsp.variant.loads_lzma is False:
        return (f"BSP version {bsp.version} ({bsp.variant.description}) cannot load LZMA-compressed data: "
                "the game would fail to load the map")
    return None


def check_lzma(bsp: MapReader, force: bool, what: str) -> None:
    """Refuse LZMA output for engines that cannot read it; with ``--force`` warn loudly and go on."""
    reason = lzma_refusal(bsp)
    if reason is None:
        return
    if not force:
        raise CommandError(f"{what}: {reason} (give --force to write it anyway)")
    print(f"sourcebsp: WARNING: {what}: {reason}; writing it anyway (--force)", file=sys.stderr)


def save_map(bsp: MapReader, output: str, *, overwrite: bool = True, **save_options: Any) -> tuple[int, int]:
    """Write ``bsp`` to ``output`` (already checked with :func:`check_output`); (bytes before, bytes after).

    ``overwrite=False`` refuses to replace a file the save writes beside ``output`` (a Titanfall
    map's ``.bsp_lump`` and ``.ent`` files), which :func:`check_output` does not look at.
    """
    before = int(bsp.file_size)
    bsp.save(output, overwrite=overwrite, **save_options)
    return before, os.stat(output).st_size


def sizes(before: int, after: int) -> str:
    change = f"{(after - before) / before:+.1%}" if before else "new"
    return f"{before:,} -> {after:,} bytes ({change})"


def map_first(argv: Sequence[str] | None, actions: Sequence[str]) -> list[str]:
    """Accept ``ACTION MAP ...`` as well as ``MAP ACTION ...`` (both orders are common in tools like ours).

    The two are swapped only when the first word is an action, the second is
    not, and no file is named like the action.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) >= 2 and args[0] in actions and args[1] not in actions and not os.path.exists(args[0]):
        args[0], args[1] = args[1], args[0]
    return args

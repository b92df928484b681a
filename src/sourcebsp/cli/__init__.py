"""``sourcebsp <command>``: one module per command, each with ``main(argv)``.

Exit codes: 0 success, 1 a user or input error (one line on stderr, no
traceback), 2 bad usage (argparse's own).
"""
from __future__ import annotations

import gc
import importlib
import os
import sys
import warnings

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (before --help)
if TYPE_CHECKING:
    from typing import Callable, Sequence, TextIO

COMMANDS = {
    "info": "Show the header, lump directory and contents of a map",
    "repack": "Write a map again: unchanged, re-encoded, compressed or decompressed",
    "entities": "List the entities of a map (keys and values in file order)",
    "edit-entities": "Change, add or delete entities by simple rules, writing a new map",
    "props": "List the static props of a map (model, origin, angles, skin, solid, ...)",
    "pak": "List, extract, add or remove the files packed in a map (as bspzip)",
    "vis": "Show the clusters visible from a cluster or a point (PVS, or PAS with --pas)",
    "export": "Export brush geometry as glTF binary (.glb) or OBJ",
    "lightmaps": "Pack every face's lightmap into one atlas image (PNG)",
    "render": "Draw a preview picture of a map (top-down or from the player start)",
    "decompile": "Decompile a map into a Hammer VMF (brushes, entities, props, displacements)",
    "model": "Read a studio model (.mdl): LOD 0 counts, materials, skins, body parts; write it as .glb or .obj",
    "deps": "List every file a map needs and where it is found (pakfile, folder, VPK, missing)",
    "pack": "Pack a map's custom content (not stock) into its pakfile, as bspzip stores it",
    "check": "Lint maps for shipping problems: missing assets, pak names, cubemaps, limits, ... (CI exit code)",
    "lump": "Write one lump to a .lmp lump file, or apply a lump file to a map",
    "scan": "Scan many maps into Parquet tables (maps, lumps, entities, props, materials, pakfiles, findings)",
    "example": "Write a small example map built in code (a lit room) to try the other commands on",
}


def _usage() -> str:
    lines = ["usage: sourcebsp <command> [options]", "", "commands:"]
    lines += [f"  {name:<14} {text}" for name, text in COMMANDS.items()]
    lines += ["", "Run 'sourcebsp <command> --help' for a command's options."]
    return "\n".join(lines)


def _tolerant_streams() -> None:
    """Text the terminal's encoding cannot show (non-ASCII entity values under LC_ALL=C)
    is written as escapes instead of ending the command with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a closed or detached stream
                pass


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: TextIO | None = None, line: str | None = None) -> None:
    """A Python warning as one ``sourcebsp: warning:`` line, not two lines of source location."""
    text = " ".join(str(message).split())
    print(f"sourcebsp: warning: {text} ({category.__name__} at {os.path.basename(filename)}:{lineno})",
          file=sys.stderr if file is None else file)


# One BLAS thread: sourcebsp's matrix products are small (3x3 rotations, vectors), and the
# idle threads OpenBLAS starts with numpy cost as much CPU as numpy's whole import.
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command in ``argv`` (``sys.argv[1:]`` when None); the exit code.

    Without ``argv`` (the ``sourcebsp`` command, ``python -m sourcebsp``) this
    process runs one command and ends, and is set up for that: one BLAS
    thread unless the user chose otherwise (numpy reads it when first
    imported), and no cyclic garbage collection while the modules load
    (importing numpy sets off dozens of collections that free nothing).
    What is alive once they are loaded, and again when the command ends, is
    frozen out of later collections, the interpreter's final ones included.
    """
    if argv is not None:
        return _run(list(argv))
    if "numpy" not in sys.modules:
        for name in _BLAS_THREADS:
            os.environ.setdefault(name, "1")
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(sys.argv[1:], loaded=lambda: _freeze(collecting))
    finally:
        _freeze(collecting)


def _freeze(collecting: bool) -> None:
    """Move every object alive now out of the collector's sight; collect again if it did before."""
    gc.freeze()
    if collecting:
        gc.enable()


def _run(args: list[str], loaded: Callable[[], None] | None = None) -> int:
    _tolerant_streams()
    warnings.showwarning = _one_line_warning
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    if args[0] == "--version":
        from .. import __version__

        print(f"sourcebsp {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"sourcebsp: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(f".{name.replace('-', '_')}", __name__)  # edit-entities -> edit_entities
    if loaded is not None:  # the command's modules (numpy, the container) are in
        loaded()
    return int(module.main(rest))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

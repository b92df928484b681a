#!/usr/bin/env python
"""Time sourcebsp against srctools, bsp_tool and sourcepp on real maps.

For each map, in one run:

* **open+decode**: open the file and decode every lump the library
  understands (``with sourcebsp.open(p) as b: b.decode_all()``; srctools
  ``BSP(p)`` then every ``ParsedLump`` property; bsp_tool ``load_bsp(p)`` then
  every entry of every lazily read lump; sourcepp ``bsppp.BSP(p)`` then every
  typed ``get_lump_data_for_*`` getter and ``get_lump_data`` for the rest);
* **save unchanged**: save a freshly opened, untouched map to a temporary file;
* **save after decode**: the same after the open+decode step (untimed), so
  every library rebuilds what it parsed;
* **peak memory** of sourcebsp's open+decode, in a fresh interpreter: peak
  RSS (``ru_maxrss``) minus the peak RSS of the same interpreter after only
  importing numpy and sourcebsp, as a multiple of the file size.

Each time is the best (minimum) of ``--repeat`` runs on fresh objects, measured
with ``time.perf_counter``.  A library that is not installed is reported as
such; a library that fails on a map is reported with its error.

Usage::

    python benchmarks/bench.py                      # largest corpus map
    python benchmarks/bench.py --map a.bsp --map b.bsp --repeat 10
    python benchmarks/bench.py --all --json
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import importlib.metadata
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = ("open+decode", "save unchanged", "save after decode", "export obj", "export glb", "decompile vmf")
# Conversions timed from the map file to the output file; a library without one reports "not offered".
CONVERSIONS = ("export obj", "export glb", "decompile vmf")
MEMORY = "peak memory"
MEMORY_TARGET = 2.0  # peak RSS above the interpreter's own, in file sizes
SPEED_TARGETS = {"srctools": 4.0, "sourcepp": 1.0}  # other / sourcebsp at least this


def corpus_dir() -> Path:
    """``SOURCEBSP_CORPUS``, else ``../shared/corpus`` next to the project root."""
    return Path(os.environ.get("SOURCEBSP_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()


def corpus_maps() -> list[Path]:
    """The Source maps at the corpus top level (other-engines/ is not Source)."""
    return sorted(corpus_dir().glob("*.bsp"))


# ---- library adapters ---------------------------------------------------------------
# Each adapter opens and decodes a map, and saves one.  ``decode`` is the timed
# open+decode step and returns a short note; ``load`` (untimed) gives an object
# for ``save``; ``release`` frees it.


@dataclass(frozen=True)
class Adapter:
    name: str
    module: str  # imported to tell whether the library is installed
    distribution: str  # for the version number
    decode: Callable[[Path], str]
    load: Callable[[Path, bool], Any]
    save: Callable[[Any, Path], None]
    release: Callable[[Any], None] = lambda obj: None
    # operation -> convert(map path, output path); see CONVERSIONS
    converts: tuple[tuple[str, Callable[[Path, Path], None]], ...] = ()


def _sourcebsp_decode(path: Path) -> str:
    import sourcebsp

    with sourcebsp.open(path) as bsp:
        decoded = bsp.decode_all()
        raw = [bsp.lump_name(i) for i, value in decoded.items() if isinstance(value, sourcebsp.RawLump)]
    return f"{len(decoded) - len(raw)}/{len(decoded)} lumps decoded" + (f"; raw: {', '.join(raw)}" if raw else "")


def _sourcebsp_load(path: Path, decoded: bool) -> Any:
    import sourcebsp

    bsp = sourcebsp.open(path)
    if decoded:
        bsp.decode_all()
    return bsp


def _srctools_lumps(bsp: Any) -> list[str]:
    """The ``ParsedLump`` views whose lump the file has.

    A view of an absent lump only builds an empty default (and saving the
    default Strata Source ``color_vars`` fails in srctools 2.7).
    """
    from srctools.bsp import BSP, ParsedLump

    names = []
    for name, view in vars(BSP).items():
        if not isinstance(view, ParsedLump):
            continue
        if isinstance(view.lump, bytes):
            present = view.lump in bsp.game_lumps
        else:
            present = bool(bsp.lumps[view.lump].data)
        if present:
            names.append(name)
    return names


def _srctools_decode(path: Path) -> str:
    from srctools.bsp import BSP

    bsp = BSP(str(path))
    names = _srctools_lumps(bsp)
    for name in names:
        try:
            getattr(bsp, name)
        except Exception as error:
            raise RuntimeError(f"parsing {name}: {type(error).__name__}: {error}") from error
    return f"{len(names)} parsed lump views"


def _srctools_load(path: Path, decoded: bool) -> Any:
    from srctools.bsp import BSP

    bsp = BSP(str(path))
    if decoded:
        for name in _srctools_lumps(bsp):
            getattr(bsp, name)
    return bsp


def _bsp_tool_touch(bsp: Any) -> tuple[int, dict[str, Any]]:
    """Read every entry of every lump (bsp_tool reads table entries lazily)."""
    from bsp_tool import lumps

    touched = 0
    for lump in bsp.branch.LUMP:
        value = getattr(bsp, lump.name, None)
        if value is None:
            continue
        touched += 1
        if isinstance(value, lumps.BasicBspLump):
            value[:]
    return touched, dict(bsp.loading_errors)


def _bsp_tool_decode(path: Path) -> str:
    import bsp_tool

    bsp = bsp_tool.load_bsp(str(path))
    try:
        touched, errors = _bsp_tool_touch(bsp)
    finally:
        bsp.file.close()
    note = f"{touched} lumps read"
    if errors:
        note += "; left raw after loading errors: " + ", ".join(sorted(errors))
    return note


def _bsp_tool_load(path: Path, decoded: bool) -> Any:
    import bsp_tool

    bsp = bsp_tool.load_bsp(str(path))
    if decoded:
        _bsp_tool_touch(bsp)
    return bsp


def _bsp_tool_save(bsp: Any, out: Path) -> None:
    from bsp_tool.base import Bsp

    if type(bsp).save_as is Bsp.save_as:  # the base class only raises NotImplementedError
        raise NotImplementedError(f"bsp_tool has no writer for {type(bsp).__name__}")
    bsp.save_as(str(out))


def _sourcepp_read(bsp: Any) -> tuple[int, int]:
    """Every typed getter, then the raw (decompressed) bytes of every other lump."""
    lump_enum = type(bsp).Lump
    typed = set()
    for attr in dir(bsp):
        if attr.startswith("get_lump_data_for_"):
            lump = getattr(lump_enum, attr[len("get_lump_data_for_"):].upper())
            typed.add(lump.value)
            if bsp.has_lump(lump):
                getattr(bsp, attr)()
    raw = 0
    for index in range(64):
        if index in typed:
            continue
        lump = lump_enum(index)
        if bsp.has_lump(lump):
            bsp.get_lump_data(lump)
            raw += 1
    return len(typed), raw


def _sourcepp_open(path: Path) -> Any:
    from sourcepp import bsppp

    bsp = bsppp.BSP(str(path))
    if not bsp:
        raise RuntimeError("sourcepp could not open the map")
    return bsp


def _sourcepp_decode(path: Path) -> str:
    typed, raw = _sourcepp_read(_sourcepp_open(path))
    return f"{typed} typed getters + raw bytes of {raw} other lumps"


def _sourcepp_load(path: Path, decoded: bool) -> Any:
    bsp = _sourcepp_open(path)
    if decoded:
        _sourcepp_read(bsp)
    return bsp


def _sourcepp_save(bsp: Any, out: Path) -> None:
    if not bsp.bake(str(out)):
        raise RuntimeError("bake() returned False")


def _sourcebsp_obj(path: Path, out: Path) -> None:
    from sourcebsp.converters.obj import export_obj

    export_obj(path, out.with_suffix(".obj"))


def _sourcebsp_glb(path: Path, out: Path) -> None:
    from sourcebsp.converters.gltf import glb_bytes

    out.with_suffix(".glb").write_bytes(glb_bytes(path))


def _sourcebsp_vmf(path: Path, out: Path) -> None:
    from sourcebsp.converters.vmf import decompile

    decompile(path, out.with_suffix(".vmf"))


def _bsp_tool_obj(path: Path, out: Path) -> None:
    import bsp_tool
    from bsp_tool.scene import wavefront

    bsp = bsp_tool.load_bsp(str(path))
    try:
        models = [bsp.model(i) for i in range(len(bsp.MODELS))]
        out.with_suffix(".obj").write_text(wavefront.Obj.from_models(models).as_text())
    finally:
        _close_file(bsp)


def _close(obj: Any) -> None:
    obj.close()


def _close_file(obj: Any) -> None:
    obj.file.close()


LIBRARIES: dict[str, Adapter] = {
    "sourcebsp": Adapter("sourcebsp", "sourcebsp", "sourcebsp", _sourcebsp_decode, _sourcebsp_load,
                         lambda bsp, out: bsp.save(out), _close,
                         (("export obj", _sourcebsp_obj), ("export glb", _sourcebsp_glb),
                          ("decompile vmf", _sourcebsp_vmf))),
    "srctools": Adapter("srctools", "srctools.bsp", "srctools", _srctools_decode, _srctools_load,
                        lambda bsp, out: bsp.save(str(out))),
    "bsp_tool": Adapter("bsp_tool", "bsp_tool", "bsp_tool", _bsp_tool_decode, _bsp_tool_load,
                        _bsp_tool_save, _close_file, (("export obj", _bsp_tool_obj),)),
    "sourcepp": Adapter("sourcepp", "sourcepp", "sourcepp", _sourcepp_decode, _sourcepp_load,
                        _sourcepp_save),
}
REFERENCE = "sourcebsp"


def library_version(adapter: Adapter) -> str | None:
    """The installed version, or None when the library cannot be imported."""
    try:
        importlib.import_module(adapter.module)
    except ImportError:
        return None
    try:
        return importlib.metadata.version(adapter.distribution)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _error_text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."


# ---- timing -------------------------------------------------------------------------
def best_of(repeat: int, run: Callable[[Any], Any], setup: Callable[[], Any] = lambda: None,
            teardown: Callable[[Any], None] = lambda state: None,
            budget: float = 0.0) -> tuple[float, int, Any]:
    """Minimum wall time of ``run(setup())`` over up to ``repeat`` fresh runs.

    Returns (best seconds, runs made, last result).  With a ``budget`` > 0, no
    new run starts once the runs so far took longer than ``budget`` seconds
    (so a library taking 20 s a run is not run five times per operation).
    """
    best = float("inf")
    result = None
    runs = 0
    spent = 0.0
    while runs < repeat and not (budget > 0 and runs and spent > budget):
        gc.collect()
        state = setup()
        try:
            start = time.perf_counter()
            result = run(state)
            elapsed = time.perf_counter() - start
        finally:
            teardown(state)
        best = min(best, elapsed)
        spent += elapsed
        runs += 1
    return best, runs, result


def time_library(adapter: Adapter, path: Path, repeat: int, workdir: Path,
                 budget: float = 0.0) -> list[dict[str, Any]]:
    """One row per operation for one library on one map."""
    rows = []
    out = workdir / f"{adapter.name}_{path.name}"
    for operation in OPERATIONS:
        row: dict[str, Any] = {"library": adapter.name, "operation": operation,
                               "seconds": None, "runs": 0, "error": None, "note": None}
        try:
            # srctools and bsp_tool print while saving; keep the table (and --json) clean
            with contextlib.redirect_stdout(io.StringIO()):
                if operation in CONVERSIONS:
                    convert = dict(adapter.converts).get(operation)
                    if convert is None:
                        row["error"] = "not offered"
                    else:
                        row["seconds"], row["runs"], _ = best_of(
                            repeat, lambda _: convert(path, out), budget=budget)
                elif operation == "open+decode":
                    row["seconds"], row["runs"], row["note"] = best_of(
                        repeat, lambda _: adapter.decode(path), budget=budget)
                else:
                    decoded = operation == "save after decode"
                    row["seconds"], row["runs"], _ = best_of(
                        repeat, lambda bsp: adapter.save(bsp, out),
                        setup=lambda: adapter.load(path, decoded), teardown=adapter.release, budget=budget)
        except Exception as error:  # a benchmark reports any library failure, never crashes
            row["error"] = _error_text(error)
        finally:
            for written in (out, *(out.with_suffix(x) for x in (".obj", ".mtl", ".glb", ".vmf"))):
                if written.exists():
                    written.unlink()
        rows.append(row)
    return rows


# ---- peak memory in a fresh interpreter ---------------------------------------------
def _maxrss_bytes() -> int:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # Linux reports KiB


def _memory_child(library: str, path: str) -> int:
    """Entry point of the measuring interpreter: print its peak RSS as JSON."""
    adapter = LIBRARIES[library]
    import numpy  # noqa: F401  (part of the interpreter's own baseline)

    importlib.import_module(adapter.module)
    if path != "-":
        adapter.decode(Path(path))
    print(json.dumps({"maxrss": _maxrss_bytes()}))
    return 0


def _child_peak(library: str, path: str) -> int:
    command = [sys.executable, str(Path(__file__).resolve()), "--memory-child", library, path]
    if os.name == "posix":
        # Linux carries ru_maxrss across exec, and a child forked from this
        # (large) process starts with its RSS.  A shell that forks a fresh
        # child (``; exit`` stops it from exec-ing directly) gives the
        # measured interpreter a clean count.
        command = ["/bin/sh", "-c", '"$@"; exit $?', "sh", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit code {done.returncode}")
    return int(json.loads(done.stdout.strip().splitlines()[-1])["maxrss"])


def measure_memory(library: str, path: Path) -> dict[str, Any]:
    """Peak RSS of open+decode above the interpreter's own, and as file sizes."""
    row: dict[str, Any] = {"library": library, "operation": MEMORY, "seconds": None, "runs": 1,
                           "error": None, "note": None}
    try:
        import resource  # noqa: F401  (POSIX only)
    except ImportError:
        row["error"] = "resource module unavailable on this platform"
        return row
    try:
        baseline = _child_peak(library, "-")
        peak = _child_peak(library, str(path))
    except Exception as error:
        row["error"] = _error_text(error)
        return row
    size = path.stat().st_size
    row.update(bytes=peak - baseline, baseline_bytes=baseline, peak_bytes=peak,
               file_multiple=(peak - baseline) / size if size else None)
    return row


# ---- one map ------------------------------------------------------------------------
def _bsp_version(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(8)
    if len(head) < 8:
        return "?"
    ident = head[:4]
    endian = ">" if ident == b"PSBV" else "<"
    return f"{ident.decode('latin-1')} v{struct.unpack(endian + 'i', head[4:])[0]}"


def bench_map(path: Path, repeat: int, memory_libraries: list[str], budget: float = 0.0) -> dict[str, Any]:
    """Every library's rows for one map, with ratios against sourcebsp."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="sourcebsp-bench-") as workdir:
        for adapter in LIBRARIES.values():
            if library_version(adapter) is None:
                rows.extend({"library": adapter.name, "operation": op, "seconds": None, "runs": 0,
                             "error": "not installed", "note": None} for op in OPERATIONS)
                continue
            rows.extend(time_library(adapter, path, repeat, Path(workdir), budget))
    reference = {r["operation"]: r["seconds"] for r in rows if r["library"] == REFERENCE}
    for row in rows:
        ref = reference.get(row["operation"])
        row["ratio"] = row["seconds"] / ref if row["seconds"] is not None and ref else None
    for library in memory_libraries:
        if library_version(LIBRARIES[library]) is None:
            rows.append({"library": library, "operation": MEMORY, "seconds": None, "runs": 0,
                         "error": "not installed", "note": None})
        else:
            rows.append(measure_memory(library, path))
    for row in rows:
        row["map"] = path.name
    return {"map": str(path), "name": path.name, "size": path.stat().st_size,
            "version": _bsp_version(path), "repeat": repeat, "rows": rows}


def targets(result: dict[str, Any]) -> list[tuple[str, bool | None, str]]:
    """(target, met or None when unmeasurable, figure) for one map."""
    rows = {(r["library"], r["operation"]): r for r in result["rows"]}
    checks: list[tuple[str, bool | None, str]] = []
    for library, factor in SPEED_TARGETS.items():
        row = rows.get((library, "open+decode"))
        label = (f"open+decode >= {factor:g}x faster than {library}" if factor != 1
                 else f"open+decode no slower than {library}")
        if row is None or row["ratio"] is None:
            checks.append((label, None, (row or {}).get("error") or "no figure"))
        else:
            checks.append((label, row["ratio"] >= factor, f"{row['ratio']:.1f}x"))
    memory = rows.get((REFERENCE, MEMORY))
    label = f"peak memory < {MEMORY_TARGET:g}x file size"
    if memory is None or memory.get("file_multiple") is None:
        checks.append((label, None, (memory or {}).get("error") or "no figure"))
    else:
        checks.append((label, memory["file_multiple"] < MEMORY_TARGET, f"{memory['file_multiple']:.2f}x"))
    return checks


# ---- output -------------------------------------------------------------------------
def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _ratio_text(row: dict[str, Any]) -> str:
    if row["library"] == REFERENCE or row["ratio"] is None:
        return ""
    return f"{row['library']} / {REFERENCE} = {row['ratio']:.1f}x"


def _mb(value: float) -> str:
    return f"{value / 1e6:.1f} MB"


def print_map(result: dict[str, Any], versions: dict[str, str | None]) -> None:
    print(f"\n{result['name']}  {result['size']:,} bytes  {result['version']}  "
          f"(best of {result['repeat']})")
    lines = []
    for row in result["rows"]:
        if row["operation"] == MEMORY:
            continue
        seconds = f"{row['seconds']:.4f}" if row["seconds"] is not None else row["error"]
        if row["seconds"] is not None and row["runs"] < result["repeat"]:
            seconds += f" ({row['runs']} run{'s' if row['runs'] > 1 else ''})"
        lines.append([row["library"], row["operation"], seconds, _ratio_text(row)])
    print(_table(["library", "operation", "seconds", "vs sourcebsp"], lines))
    for row in result["rows"]:
        if row["operation"] == MEMORY:
            if row["error"]:
                print(f"peak memory, {row['library']} open+decode: {row['error']}")
            else:
                print(f"peak memory, {row['library']} open+decode: {_mb(row['bytes'])} above the "
                      f"interpreter's own {_mb(row['baseline_bytes'])} = {row['file_multiple']:.2f}x file size")
    notes = [(r["library"], r["note"]) for r in result["rows"]
             if r["operation"] == "open+decode" and r["note"]]
    for library, note in notes:
        print(f"  {library} ({versions.get(library)}): {note}")
    for label, met, figure in targets(result):
        verdict = "n/a" if met is None else ("met" if met else "MISSED")
        print(f"  target {label}: {verdict} ({figure})")


def print_summary(results: list[dict[str, Any]]) -> None:
    libraries = list(LIBRARIES)
    lines = []
    for result in results:
        rows = {(r["library"], r["operation"]): r for r in result["rows"]}
        memory = rows.get((REFERENCE, MEMORY))
        for operation in OPERATIONS:
            cells = [result["name"], f"{result['size'] / 1e6:.2f}", operation]
            for library in libraries:
                row = rows[(library, operation)]
                if row["seconds"] is None:
                    cells.append("not installed" if row["error"] == "not installed" else "error")
                elif library == REFERENCE:
                    cells.append(f"{row['seconds']:.4f}s")
                else:
                    cells.append(f"{row['seconds']:.4f}s {row['ratio']:.1f}x" if row["ratio"] else
                                 f"{row['seconds']:.4f}s")
            mem = ""
            if operation == "open+decode" and memory is not None:
                mem = "error" if memory["error"] else f"{memory['file_multiple']:.2f}x"
            lines.append([*cells, mem])
    print()
    print(_table(["map", "MB", "operation", *libraries, "mem/file"], lines))
    errors = [(result["name"], r["library"], r["operation"], r["error"]) for result in results
              for r in result["rows"] if r["error"] and r["error"] != "not installed"]
    for name, library, operation, error in errors:
        print(f"  {name}: {library} {operation}: {error}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench.py", description="Time sourcebsp against srctools, bsp_tool and sourcepp.")
    parser.add_argument("--map", action="append", type=Path, default=[], metavar="PATH",
                        help="map to time (repeatable; default: the largest corpus map)")
    parser.add_argument("--all", action="store_true", help="every corpus map, summary table")
    parser.add_argument("--repeat", type=int, default=5, metavar="N",
                        help="runs per measurement, the best is kept (default 5)")
    parser.add_argument("--budget", type=float, default=10.0, metavar="SECONDS",
                        help="start no new run of an operation once its runs took this long "
                             "(default 10; 0 = always make --repeat runs)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--memory-all", action="store_true",
                        help="measure peak memory for every installed library, not only sourcebsp")
    parser.add_argument("--memory-child", nargs=2, metavar=("LIB", "PATH"), help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the benchmark; returns every row (one dict per library and operation)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.memory_child:
        _memory_child(*args.memory_child)
        return []
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    maps = list(args.map)
    if args.all:
        maps += corpus_maps()
    if not maps:
        found = corpus_maps()
        if not found:
            parser.error(f"no maps given and no corpus at {corpus_dir()} (set SOURCEBSP_CORPUS)")
        maps = [max(found, key=lambda p: p.stat().st_size)]
    for path in maps:
        if not path.is_file():
            parser.error(f"no such map: {path}")
    memory_libraries = list(LIBRARIES) if args.memory_all else [REFERENCE]
    versions = {name: library_version(adapter) for name, adapter in LIBRARIES.items()}
    results = []
    for path in maps:
        results.append(bench_map(path, args.repeat, memory_libraries, args.budget))
        if not args.json and not args.all:
            print_map(results[-1], versions)
    if args.json:
        print(json.dumps({"python": sys.version.split()[0], "versions": versions, "maps": results}, indent=2))
    elif args.all or len(results) > 1:
        print_summary(results)
    return [row for result in results for row in result["rows"]]


if __name__ == "__main__":
    main()
    sys.exit(0)

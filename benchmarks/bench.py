#!/usr/bin/env python
"""Time sourcebsp against srctools, bsp_tool and sourcepp, best case and worst case.

In one run, for each map and every installed library:

* **in process**: each operation timed with ``time.perf_counter`` after the
  library is imported (best of ``--repeat`` fresh runs);
* **whole process**: each operation as a fresh interpreter that imports the
  library, does the operation once and exits, timed from outside (wall and
  CPU time) with its **peak RSS** from the OS (``wait4``), and that peak above
  the same interpreter's just before the operation, once the library and
  what the operation imports are loaded (for sourcebsp, whose package loads
  its names lazily: the container and numpy, the converter, pygltflib,
  Pillow), as a multiple of the file size; the "import" row is an
  interpreter that only imports the library (sourcebsp: its container);
* **the machine's limits** for the same file: copying its bytes in memory,
  writing them with and without ``fsync``, and for an LZMA map liblzma's own single-core
  rate on its lumps; with the whole processes, the interpreter's start and exit, alone
  and with numpy imported (the floor of a numpy-based reader's process).

Operations (a library without one reports "not offered"):

open+decode
    open, decode every lump the library understands, and read every byte
    (sourcebsp: ``decode_all`` then one pass over each stored lump; srctools:
    every ``ParsedLump`` view; bsp_tool: every entry of every lump; sourcepp:
    every typed getter, ``get_lump_data`` for the rest)
entities, static props, pakfile list, pvs/pas
    open, then only that (PVS/PAS: every cluster's, as matrices or sets)
save unchanged, save after edit
    save a freshly opened map; the same after setting one key of worldspawn
    (open and edit untimed in process).  sourcebsp flushes the new file to
    the disk (``fsync``) before renaming it over the target; the other
    libraries write without flushing.  The rows "... (no fsync)" compare like
    with like: sourcebsp with ``save(fsync=False)`` against the same saves of
    the others.
export obj, export glb, decompile vmf, render (a 1024x1024 overview)
    the conversions, from the map file to the output file
deps+check
    every file the map needs (no game mounted) and every lint rule, from the map file
cli info
    ``sourcebsp info MAP`` (its output to a pipe); as a whole process, the way
    the console script runs it (``main()`` reading ``sys.argv``, with its
    process set-up), so its memory figure includes loading numpy

Default maps: a plain map (the median-sized corpus map without compressed
lumps), an LZMA map (``tf2c_vipr_downfall.bsp``, else the plain map
compressed by ``save(compression="lzma")``) and the largest corpus map.
``--all`` runs every corpus map and prints a time-vs-size fit and the slowest
maps.  ``--baseline SRC`` adds another sourcebsp (a ``src`` folder, e.g. an
older checkout) run the same way, for before/after figures from one run.

Usage::

    python benchmarks/bench.py                       # the three default maps
    python benchmarks/bench.py --map a.bsp --repeat 10
    python benchmarks/bench.py --all --ops open+decode
    python benchmarks/bench.py --baseline /tmp/old/src --json
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
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = ("open+decode", "entities", "static props", "pakfile list", "pvs/pas", "save unchanged",
              "save after edit", "save unchanged (no fsync)", "save after edit (no fsync)", "export obj", "export glb", "decompile vmf", "render", "deps+check", "cli info")
REFERENCE = "sourcebsp"
BASELINE = "sourcebsp@baseline"
MACHINE = "machine"
LZMA_MAP = "tf2c_vipr_downfall.bsp"
SUFFIXES = {"export obj": ".obj", "export glb": ".glb", "decompile vmf": ".vmf", "render": ".png"}


def corpus_dir() -> Path:
    """``SOURCEBSP_CORPUS``, else ``../shared/corpus`` next to the project root."""
    return Path(os.environ.get("SOURCEBSP_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()


def corpus_maps() -> list[Path]:
    """The Source maps at the corpus top level (other-engines/ is not Source)."""
    return sorted(corpus_dir().glob("*.bsp"))


# ---- libraries (benchmarks/bench_adapters.py) -----------------------------------------
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_adapters import LIBRARIES, SOURCEBSP_OPS, Adapter, Op  # noqa: E402,F401  (Op: for callers of this script)

ADAPTERS_SCRIPT = Path(__file__).resolve().parent / "bench_adapters.py"


def library_version(adapter: Adapter) -> str | None:
    """The installed version, or None when the library cannot be imported."""
    try:
        importlib.import_module(adapter.module)
    except ImportError:
        return None
    try:
        return importlib.metadata.version(adapter.distribution)
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(sys.modules.get(adapter.module), "__version__", "?"))


def _error_text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."


def _row(library: str, operation: str, mode: str, **values: Any) -> dict[str, Any]:
    row = {"library": library, "operation": operation, "mode": mode, "seconds": None, "runs": 0,
           "error": None, "note": None}
    row.update(values)
    return row


# ---- in-process timing --------------------------------------------------------------
def best_of(repeat: int, run: Callable[[Any], Any], setup: Callable[[], Any] = lambda: None,
            teardown: Callable[[Any], None] = lambda state: None,
            budget: float = 0.0) -> tuple[float, int, Any]:
    """Minimum wall time of ``run(setup())`` over up to ``repeat`` fresh runs.

    Returns (best seconds, runs made, last result).  With a ``budget`` > 0, no
    new run starts once the runs so far took longer than ``budget`` seconds.
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


def _output(workdir: Path, library: str, operation: str) -> Path:
    return workdir / f"{library}_{operation.replace(' ', '_').replace('/', '_').replace('+', '_')}" \
        f"{SUFFIXES.get(operation, '.bsp')}"


def _clean(workdir: Path) -> None:
    for written in workdir.iterdir():
        if written.is_file():
            written.unlink()


def time_in_process(adapter: Adapter, path: Path, operations: list[str], repeat: int, workdir: Path,
                    budget: float) -> list[dict[str, Any]]:
    """One in-process row per operation for one library on one map."""
    rows = []
    for operation in operations:
        row = _row(adapter.name, operation, "in process")
        op = adapter.ops.get(operation)
        if op is None:
            row["error"] = "not offered"
            rows.append(row)
            continue
        out = _output(workdir, adapter.name, operation)

        def teardown(state: Any) -> None:
            # Every run writes a new file: replacing the last run's output costs more on some
            # filesystems (ext4 frees the old blocks, and flushes on a rename over a file).
            op.teardown(state)
            out.unlink(missing_ok=True)

        try:
            # srctools and bsp_tool print while saving; keep the table (and --json) clean
            with contextlib.redirect_stdout(io.StringIO()):
                row["seconds"], row["runs"], note = best_of(
                    repeat, lambda state: op.run(state, str(out)), setup=lambda: op.setup(str(path)),
                    teardown=teardown, budget=budget)
            row["note"] = note if isinstance(note, str) else None
        except Exception as error:  # a benchmark reports any library failure, never crashes
            row["error"] = _error_text(error)
        finally:
            _clean(workdir)
        rows.append(row)
    return rows


# ---- whole processes ----------------------------------------------------------------
def child_environment(source: str | None, cache: Path) -> dict[str, str]:
    """The environment of measured interpreters: compiled bytecode as an installed package has it."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    if source:
        env["PYTHONPATH"] = os.pathsep.join([source, *filter(None, [env.get("PYTHONPATH")])])
    return env


def run_process(command: list[str], env: dict[str, str], timeout: float = 600.0) -> dict[str, float]:
    """Wall seconds, CPU seconds (``wait4``) and peak RSS in bytes of one measured interpreter.

    The interpreter runs under ``/bin/sh`` (``; exit`` stops it from exec-ing
    directly) and reports its own ``ru_maxrss`` at the end: Linux carries
    ``ru_maxrss`` across ``exec``, so a process started straight from this
    large one, and the shell itself, would report this process's peak.  The
    interpreter, forked by the small shell, starts clean.
    """
    if os.name == "posix":
        command = ["/bin/sh", "-c", '"$@"; exit $?', "sh", *command]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if hasattr(os, "wait4"):
        assert process.stdout is not None and process.stderr is not None
        stdout, stderr = process.stdout.read(), process.stderr.read()  # until the child exits
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        cpu = usage.ru_utime + usage.ru_stime
    else:  # pragma: no cover - no wait4: wall time only
        stdout, stderr = process.communicate(timeout=timeout)
        wall, cpu = time.perf_counter() - start, float("nan")
    if process.returncode != 0:
        lines = stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit code {process.returncode}")
    before, peak = (int(v) * (1 if sys.platform == "darwin" else 1024)  # Linux reports KiB
                    for v in stdout.decode().strip().splitlines()[-1].split())
    return {"wall": wall, "cpu": cpu, "rss": peak, "above": peak - before}


@dataclass
class ProcessJob:
    """One library's whole-process measurements on one map: ``label`` names its rows
    (``sourcebsp@baseline`` for the baseline), ``library`` its adapter."""

    label: str
    library: str
    env: dict[str, str]
    offered: set[str]


def _summary(runs: list[dict[str, float]]) -> dict[str, float]:
    """The minimum wall and CPU time and the largest peak RSS of a measurement's runs."""
    return {"wall": min(r["wall"] for r in runs), "cpu": min(r["cpu"] for r in runs),
            "rss": max(r["rss"] for r in runs), "above": max(r["above"] for r in runs), "runs": len(runs)}


def time_processes(jobs: list[ProcessJob], path: Path, operations: list[str], repeat: int,
                   workdir: Path) -> list[dict[str, Any]]:
    """Whole-process rows: wall and CPU time, peak RSS, and the peak above the operation's imports.

    The libraries take turns run by run (every library's first run of an
    operation, then every second run, ...), so a machine that slows down or
    speeds up during the benchmark (a shared VM does) weighs on all of them
    alike instead of on whichever library came last.
    """
    size = path.stat().st_size
    failed: dict[tuple[str, str], str] = {}
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for job in jobs:
        try:
            run_process(_child(job, "-", path, workdir), job.env)  # compiles the bytecode once, untimed
        except Exception as error:
            failed.update({(job.label, op): _error_text(error) for op in ["import", *operations]})
    for operation in ["import", *operations]:
        measured = [job for job in jobs if (job.label, operation) not in failed]
        for job in measured:
            if operation != "import" and operation not in job.offered:
                failed[(job.label, operation)] = "not offered"
        for _ in range(repeat):
            for job in measured:
                key = (job.label, operation)
                if key in failed:
                    continue
                try:
                    runs.setdefault(key, []).append(run_process(_child(job, operation, path, workdir), job.env))
                except Exception as error:
                    failed[key] = _error_text(error)
                _clean(workdir)  # every run writes a new file, as in process
    rows = []
    for job in jobs:
        for operation in ["import", *operations]:
            row = _row(job.label, operation, "process")
            key = (job.label, operation)
            if key in failed:
                row["error"] = failed[key]
            else:
                figures = _summary(runs[key])
                row.update(seconds=figures["wall"], cpu=figures["cpu"], peak_rss=figures["rss"], runs=figures["runs"])
                if operation != "import":
                    above = max(figures["above"], 0)
                    row.update(above_import=above, file_multiple=above / size if size else None)
            rows.append(row)
    return rows


def _child(job: ProcessJob, operation: str, path: Path, workdir: Path) -> list[str]:
    """The measured interpreter's command line (``-``: import the library only)."""
    if operation in ("-", "import"):
        return [sys.executable, str(ADAPTERS_SCRIPT), job.library, "-", "-", "-"]
    out = _output(workdir, job.library, operation)
    return [sys.executable, str(ADAPTERS_SCRIPT), job.library, operation, str(path), str(out)]


# ---- the machine's limits -----------------------------------------------------------
def _lzma_lumps(path: Path) -> list[tuple[bytes, int]]:
    """(LZMA stream in .lzma form, uncompressed size) of every compressed lump of a map.

    Valve's lump header: ``"LZMA"``, actual size, LZMA size, 5 property bytes,
    then the raw stream; the ``.lzma`` (alone) form is the properties, the
    64-bit size, then the stream.
    """
    data = path.read_bytes()
    if data[:4] not in (b"VBSP", b"PSBV"):
        return []
    end = "<" if data[:4] == b"VBSP" else ">"
    out = []
    for index in range(64):
        offset, length = struct.unpack_from(end + "ii", data, 8 + 16 * index)
        blob = data[offset : offset + length] if length > 0 and offset >= 0 else b""
        if blob[:4] == b"LZMA" and len(blob) >= 17:
            actual, packed = struct.unpack_from("<II", blob, 4)
            out.append((blob[12:17] + struct.pack("<Q", actual) + blob[17 : 17 + packed], actual))
    return out


def machine_limits(path: Path, repeat: int, workdir: Path) -> list[dict[str, Any]]:
    """What the hardware allows for this file: memcpy, write+fsync, liblzma decode."""
    import lzma

    import numpy as np

    data = path.read_bytes()
    source = np.frombuffer(data, np.uint8)
    target = np.empty_like(source)
    rows = []
    seconds, runs, _ = best_of(repeat, lambda _: np.copyto(target, source))
    rows.append(_row(MACHINE, "memcpy of the file", "limit", seconds=seconds, runs=runs))
    out = workdir / "fsync.bin"

    def write() -> None:
        with open(out, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())

    seconds, runs, _ = best_of(repeat, lambda _: write(), teardown=lambda _: out.unlink())
    rows.append(_row(MACHINE, "write+fsync of the file", "limit", seconds=seconds, runs=runs))
    seconds, runs, _ = best_of(repeat, lambda _: out.write_bytes(data), teardown=lambda _: out.unlink())
    rows.append(_row(MACHINE, "write of the file", "limit", seconds=seconds, runs=runs))
    streams = _lzma_lumps(path)
    if streams:
        def decode() -> int:
            return sum(len(lzma.decompress(stream, lzma.FORMAT_ALONE)) for stream, _ in streams)

        seconds, runs, total = best_of(repeat, lambda _: decode())
        rows.append(_row(MACHINE, "liblzma decode of the lumps", "limit", seconds=seconds, runs=runs,
                         note=f"{len(streams)} lumps, {total / 1e6:.1f} MB out, {total / seconds / 1e6:.0f} MB/s"))
    return rows


#: The floors under any whole process of a numpy-based reader: the interpreter's start and
#: exit, and the same with numpy imported, before a byte of the map is read.
PROCESS_FLOORS = {"python start and exit": "", "python and import numpy": "import numpy"}
_FLOOR_SCRIPT = "{imports}\nimport resource\nrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\nprint(rss, rss)"


#: For a map with LZMA lumps: the interpreter that reads the file and decodes those lumps with
#: liblzma on one thread (Python's ``lzma``), the floor of any process that reads every lump
#: (``info`` included, which decompresses them to find damage).
LZMA_FLOOR = "python and liblzma decode of the lumps"
_LZMA_FLOOR_SCRIPT = """import lzma, struct, sys
data = open(sys.argv[1], "rb").read()
order = ">" if data[:4] == b"PSBV" else "<"
for index in range(64):
    offset, length = struct.unpack_from(order + "ii", data, 8 + 16 * index)
    blob = data[offset:offset + length] if length > 0 and offset >= 0 else b""
    if blob[:4] == b"LZMA" and len(blob) >= 17:
        actual, packed = struct.unpack_from("<II", blob, 4)
        lzma.decompress(blob[12:17] + struct.pack("<Q", actual) + blob[17:17 + packed], lzma.FORMAT_ALONE)
""" + _FLOOR_SCRIPT.format(imports="")


def process_floors(repeat: int, env: dict[str, str], path: Path | None = None) -> list[dict[str, Any]]:
    """Whole-process floors, timed like the libraries' processes (best wall of ``repeat``
    runs, taking turns run by run); a process's distance to its floor is its own cost.
    With ``path`` of a map with LZMA lumps, also :data:`LZMA_FLOOR` for it."""
    commands = {name: [sys.executable, "-c", _FLOOR_SCRIPT.format(imports=imports)]
                for name, imports in PROCESS_FLOORS.items()}
    if path is not None and _lzma_lumps(path):
        commands[LZMA_FLOOR] = [sys.executable, "-c", _LZMA_FLOOR_SCRIPT, str(path)]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            runs[name].append(run_process(command, env))
    rows = []
    for name, measured in runs.items():
        figures = _summary(measured)
        rows.append(_row(MACHINE, f"{name} (whole process)", "limit", seconds=figures["wall"], cpu=figures["cpu"],
                         peak_rss=figures["rss"], runs=figures["runs"]))
    return rows


# ---- one map ------------------------------------------------------------------------
def _bsp_version(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(8)
    if len(head) < 8:
        return "?"
    ident = head[:4]
    endian = ">" if ident == b"PSBV" else "<"
    return f"{ident.decode('latin-1')} v{struct.unpack(endian + 'i', head[4:])[0]}"


@dataclass
class Settings:
    operations: list[str]
    repeat: int = 5
    process_repeat: int = 3
    budget: float = 10.0
    processes: bool = True
    limits: bool = True
    baseline: str | None = None
    libraries: list[str] | None = None  # None: every one in LIBRARIES


def _baseline_in_process(path: Path, settings: Settings, env: dict[str, str]) -> list[dict[str, Any]]:
    """The baseline sourcebsp's in-process rows, from a copy of this script run with it on the path."""
    command = [sys.executable, str(Path(__file__).resolve()), "--map", str(path), "--json", "--library", REFERENCE,
               "--repeat", str(settings.repeat), "--budget", str(settings.budget), "--no-process", "--no-limits",
               "--ops", ",".join(settings.operations)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        error = lines[-1] if lines else f"exit code {done.returncode}"
        return [_row(BASELINE, op, "in process", error=error) for op in settings.operations]
    rows = json.loads(done.stdout)["maps"][0]["rows"]
    for row in rows:
        row["library"] = BASELINE
    return rows


def _reference_source() -> str | None:
    """The folder sourcebsp is imported from here (for the measured interpreters)."""
    try:
        import sourcebsp
    except ImportError:
        return None
    return str(Path(sourcebsp.__file__).resolve().parent.parent)


def bench_map(path: Path, settings: Settings, cache: Path) -> dict[str, Any]:
    """Every row for one map, with ratios against sourcebsp."""
    rows: list[dict[str, Any]] = []
    names = settings.libraries or list(LIBRARIES)
    with tempfile.TemporaryDirectory(prefix="sourcebsp-bench-") as tmp:
        workdir = Path(tmp)
        jobs: list[ProcessJob] = []
        for name in names:
            adapter = LIBRARIES[name]
            if library_version(adapter) is None:
                rows.extend(_row(name, op, mode, error="not installed") for op in settings.operations
                            for mode in (("in process", "process") if settings.processes else ("in process",)))
                continue
            rows.extend(time_in_process(adapter, path, settings.operations, settings.repeat, workdir, settings.budget))
            env = child_environment(_reference_source() if name == REFERENCE else None, cache)
            jobs.append(ProcessJob(name, name, env, set(adapter.ops)))
        if settings.baseline:
            env = child_environment(settings.baseline, cache)
            rows.extend(_baseline_in_process(path, settings, env))
            jobs.append(ProcessJob(BASELINE, REFERENCE, env, set(SOURCEBSP_OPS)))
        if settings.processes:
            rows.extend(time_processes(jobs, path, settings.operations, settings.process_repeat, workdir))
        if settings.limits:
            rows.extend(machine_limits(path, settings.repeat, workdir))
            if settings.processes:
                rows.extend(process_floors(settings.process_repeat, child_environment(None, cache), path))
    reference = {(r["operation"], r["mode"]): r["seconds"] for r in rows if r["library"] == REFERENCE}
    for row in rows:
        ref = reference.get((row["operation"], row["mode"]))
        row["ratio"] = row["seconds"] / ref if row["seconds"] is not None and ref else None
        row["map"] = path.name
    result = {"map": str(path), "name": path.name, "size": path.stat().st_size, "version": _bsp_version(path),
              "repeat": settings.repeat, "rows": rows}
    result["goals"] = goals(result, decompressed_size(path))
    return result


def decompressed_size(path: Path) -> int:
    """The file's size with every LZMA lump at its uncompressed size (the size decoded data has)."""
    size = path.stat().st_size
    # Each stored block: the 17-byte lzma_header_t and the stream; _lzma_lumps gives the
    # stream after a 13-byte .lzma header (properties, 64-bit size).
    return size + sum(actual - (len(stream) - 13 + 17) for stream, actual in _lzma_lumps(path))


MIB = 1 << 20


def goals(result: dict[str, Any], unpacked: int) -> list[dict[str, Any]]:
    """Issue 31's goals for one map, each as sourcebsp's figure beside its bound, from the rows
    of this run: a ratio to a peer or to the machine's limit, or a peak memory."""
    rows = {(r["library"], r["operation"], r["mode"]): r for r in result["rows"]}
    size, out = result["size"], []

    def ratio(name: str, mine: Any, theirs: Any, bound: float, key: str = "seconds") -> None:
        if mine and theirs and mine.get(key) and theirs.get(key):
            value = mine[key] / theirs[key]
            out.append({"goal": name, "value": round(value, 3), "bound": bound, "met": value <= bound})

    def memory(name: str, operation: str, base: int, per: float, extra: int) -> None:
        row = rows.get((REFERENCE, operation, "process"))
        if row and row.get("above_import") is not None:
            bound = per * base + extra
            out.append({"goal": name, "value": round(row["above_import"] / MIB, 1), "bound": round(bound / MIB, 1),
                        "met": row["above_import"] <= bound})

    if unpacked != size:  # an LZMA map: decoding beside liblzma alone, one thread, same process
        ratio("open+decode / liblzma decode of its lumps (in process, wall)",
              rows.get((REFERENCE, "open+decode", "in process")),
              rows.get((MACHINE, "liblzma decode of the lumps", "limit")), 1.15)
    for key in ("seconds", "cpu"):
        ratio(f"cli info / sourcepp open+decode (whole process, {'wall' if key == 'seconds' else 'cpu'})",
              rows.get((REFERENCE, "cli info", "process")), rows.get(("sourcepp", "open+decode", "process")), 1.0, key)
    for key in ("seconds", "cpu"):  # an LZMA map: beside the interpreter that only decodes its lumps
        ratio(f"cli info / {LZMA_FLOOR} (whole process, {'wall' if key == 'seconds' else 'cpu'})",
              rows.get((REFERENCE, "cli info", "process")), rows.get((MACHINE, f"{LZMA_FLOOR} (whole process)", "limit")),
              1.0, key)
    for mode in ("in process", "process"):
        ratio(f"save unchanged (no fsync) / srctools ({'whole process' if mode == 'process' else mode})",
              rows.get((REFERENCE, "save unchanged (no fsync)", mode)),
              rows.get(("srctools", "save unchanged (no fsync)", mode)), 1.0)
    memory("export glb peak above imports, MiB (<= 4x the decompressed size)", "export glb", unpacked, 4, 0)
    memory("render peak above imports, MiB (<= 4x the file + 32 MiB)", "render", size, 4, 32 * MIB)
    memory("decompile vmf peak above imports, MiB (<= 6x the file + 32 MiB)", "decompile vmf", size, 6, 32 * MIB)
    return out


# ---- output -------------------------------------------------------------------------
def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}" if seconds < 10 else f"{seconds * 1000:.0f}"


def _cell(row: dict[str, Any] | None, process: bool = False) -> str:
    if row is None:
        return ""
    if row["seconds"] is None:
        return row["error"] if row["error"] in ("not installed", "not offered") else "error"
    text = _ms(row["seconds"])
    if row["library"] != REFERENCE and row.get("ratio"):
        text += f" ({row['ratio']:.2f}x)"
    if process and row.get("peak_rss"):
        text += f" cpu {_ms(row['cpu'])} {row['peak_rss'] / 2**20:.0f}M"
    return text


def _libraries(result: dict[str, Any]) -> list[str]:
    seen = [r["library"] for r in result["rows"] if r["library"] != MACHINE]
    return list(dict.fromkeys(seen))


def print_map(result: dict[str, Any], versions: dict[str, str | None]) -> None:
    rows = {(r["library"], r["operation"], r["mode"]): r for r in result["rows"]}
    libraries = _libraries(result)
    operations = list(dict.fromkeys(r["operation"] for r in result["rows"] if r["mode"] == "in process"))
    print(f"\n{result['name']}  {result['size']:,} bytes  {result['version']}  (best of {result['repeat']})")
    print("in process, milliseconds (other / sourcebsp: > 1 means sourcebsp is faster)")
    print(_table(["operation", *libraries],
                 [[op, *(_cell(rows.get((lib, op, "in process"))) for lib in libraries)] for op in operations]))
    if any(r["mode"] == "process" for r in result["rows"]):
        print("whole process (start, import, work, exit): wall ms (other / sourcebsp), CPU ms, peak RSS")
        process_ops = list(dict.fromkeys(r["operation"] for r in result["rows"] if r["mode"] == "process"))
        print(_table(["operation", *libraries],
                     [[op, *(_cell(rows.get((lib, op, "process")), True) for lib in libraries)]
                      for op in process_ops]))
        memory = [r for r in result["rows"] if r["mode"] == "process" and r.get("file_multiple") is not None
                  and r["library"] in (REFERENCE, BASELINE)]
        if memory:
            print("peak RSS above the same process before the operation (its imports done), in file sizes: "
                  + ", ".join(
                f"{r['operation']} {r['file_multiple']:.2f}x" + (" (baseline)" if r["library"] == BASELINE else "")
                for r in memory))
    for goal in result.get("goals", []):
        print(f"  goal: {goal['goal']}: {goal['value']} (bound {goal['bound']}: {'met' if goal['met'] else 'NOT met'})")
    limits = [r for r in result["rows"] if r["library"] == MACHINE]
    if limits:
        print("the machine: " + "; ".join(
            f"{r['operation']} {_ms(r['seconds'])} ms" + (f" ({r['note']})" if r["note"] else "") for r in limits))
    for row in result["rows"]:
        if row["error"] and row["error"] not in ("not installed", "not offered"):
            print(f"  {row['library']} {row['operation']} ({row['mode']}): {row['error']}")
    for row in result["rows"]:
        if row["operation"] == "open+decode" and row["mode"] == "in process" and row["note"]:
            print(f"  {row['library']} ({versions.get(row['library'].split('@')[0])}): {row['note']}")


def size_fit(results: list[dict[str, Any]], library: str, operation: str = "open+decode") -> dict[str, float] | None:
    """Least-squares ``seconds = fixed + per_mb * MB`` over the maps, with R²."""
    points = [(res["size"] / 1e6, r["seconds"]) for res in results for r in res["rows"]
              if r["library"] == library and r["operation"] == operation and r["mode"] == "in process"
              and r["seconds"] is not None]
    if len(points) < 3:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if not sxx:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    fixed = my - slope * mx
    ss_res = sum((y - fixed - slope * x) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return {"fixed": fixed, "per_mb": slope, "r2": 1 - ss_res / ss_tot if ss_tot else 1.0, "maps": len(points),
            "mb_per_s": sum(xs) / sum(ys) if sum(ys) else float("inf")}


def print_summary(results: list[dict[str, Any]], slowest: int = 5) -> None:
    libraries = list(dict.fromkeys(lib for res in results for lib in _libraries(res)))
    operations = list(dict.fromkeys(r["operation"] for res in results for r in res["rows"]
                                    if r["mode"] == "in process"))
    lines = []
    for res in results:
        rows = {(r["library"], r["operation"]): r for r in res["rows"] if r["mode"] == "in process"}
        for op in operations:
            lines.append([res["name"], f"{res['size'] / 1e6:.2f}", op, *(_cell(rows.get((lib, op))) for lib in libraries)])
    print("\nin process, milliseconds (other / sourcebsp in brackets)")
    print(_table(["map", "MB", "operation", *libraries], lines))
    print("\nopen+decode time against file size (least squares over the maps):")
    for lib in libraries:
        fit = size_fit(results, lib)
        if fit:
            print(f"  {lib}: {fit['fixed'] * 1000:.2f} ms + {fit['per_mb'] * 1000:.2f} ms/MB (R² {fit['r2']:.2f}), "
                  f"{fit['mb_per_s']:.0f} MB/s over all {fit['maps']} maps")
    ranked = []
    for res in results:
        for r in res["rows"]:
            if r["library"] == REFERENCE and r["operation"] == "open+decode" and r["mode"] == "in process" \
                    and r["seconds"] is not None:
                peers = {o["library"]: o["ratio"] for o in res["rows"] if o["operation"] == "open+decode"
                         and o["mode"] == "in process" and o["ratio"] is not None and o["library"] != REFERENCE}
                ranked.append((r["seconds"] / max(res["size"] / 1e6, 1e-9), res, r["seconds"], peers))
    ranked.sort(key=lambda item: -item[0])
    if ranked:
        print("slowest maps for sourcebsp open+decode (ms per MB; other / sourcebsp):")
        for per_mb, res, seconds, peers in ranked[:slowest]:
            ratios = ", ".join(f"{lib} {ratio:.2f}x" for lib, ratio in peers.items())
            print(f"  {res['name']} ({res['size'] / 1e6:.2f} MB, {res['version']}): {seconds * 1000:.1f} ms, "
                  f"{per_mb * 1000:.1f} ms/MB" + (f"; {ratios}" if ratios else ""))


# ---- maps ---------------------------------------------------------------------------
def _has_compressed_lumps(path: Path) -> bool:
    return bool(_lzma_lumps(path))


def default_maps(workdir: Path) -> list[Path]:
    """A plain map, an LZMA map and the largest map of the corpus (see the module notes)."""
    found = corpus_maps()
    if not found:
        return []
    by_size = sorted(found, key=lambda p: p.stat().st_size)
    plain_maps = [p for p in by_size if not _has_compressed_lumps(p)]
    plain = plain_maps[len(plain_maps) // 2] if plain_maps else by_size[len(by_size) // 2]
    lzma_map = next((p for p in found if p.name == LZMA_MAP), None) or next(
        (p for p in by_size if _has_compressed_lumps(p)), None)
    if lzma_map is None:
        import sourcebsp

        lzma_map = workdir / f"{plain.stem}_lzma.bsp"
        with sourcebsp.open(plain) as bsp:
            bsp.save(lzma_map, compression="lzma")
    return list(dict.fromkeys([plain, lzma_map, by_size[-1]]))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench.py", description="Time sourcebsp against srctools, bsp_tool and sourcepp.")
    parser.add_argument("--map", action="append", type=Path, default=[], metavar="PATH",
                        help="map to time (repeatable; default: a plain, an LZMA and the largest corpus map)")
    parser.add_argument("--all", action="store_true", help="every corpus map, summary table, time-vs-size fit")
    parser.add_argument("--ops", default=",".join(OPERATIONS), metavar="A,B",
                        help=f"operations, comma-separated (default all: {', '.join(OPERATIONS)})")
    parser.add_argument("--library", action="append", choices=list(LIBRARIES), metavar="NAME",
                        help="only these libraries (repeatable; default every installed one)")
    parser.add_argument("--repeat", type=int, default=5, metavar="N",
                        help="in-process runs per measurement, the best is kept (default 5)")
    parser.add_argument("--process-repeat", type=int, default=3, metavar="N",
                        help="whole-process runs per measurement (default 3)")
    parser.add_argument("--budget", type=float, default=10.0, metavar="SECONDS",
                        help="start no new in-process run once an operation's runs took this long (default 10)")
    parser.add_argument("--no-process", action="store_true", help="skip the whole-process measurements")
    parser.add_argument("--no-limits", action="store_true", help="skip the machine's limits")
    parser.add_argument("--baseline", metavar="SRC",
                        help="also time the sourcebsp package found in SRC (e.g. an older checkout's src)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the benchmark; returns every row (one dict per library, operation and mode)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.process_repeat < 1:
        parser.error("--repeat and --process-repeat must be at least 1")
    operations = [op.strip() for op in args.ops.split(",") if op.strip()]
    unknown = [op for op in operations if op not in OPERATIONS]
    if unknown:
        parser.error(f"unknown operation(s) {', '.join(unknown)}; choose from {', '.join(OPERATIONS)}")
    if args.baseline and not (Path(args.baseline) / "sourcebsp" / "__init__.py").is_file():
        parser.error(f"--baseline {args.baseline}: no sourcebsp package there")
    settings = Settings(operations, args.repeat, args.process_repeat, args.budget, not args.no_process,
                        not args.no_limits, args.baseline, args.library)
    versions = {name: library_version(adapter) for name, adapter in LIBRARIES.items()}
    results = []
    with tempfile.TemporaryDirectory(prefix="sourcebsp-bench-maps-") as tmp:
        cache = Path(tempfile.gettempdir()) / "sourcebsp-bench-pycache"
        maps = list(args.map)
        if args.all:
            maps += corpus_maps()
        if not maps:
            maps = default_maps(Path(tmp))
            if not maps:
                parser.error(f"no maps given and no corpus at {corpus_dir()} (set SOURCEBSP_CORPUS)")
        for path in maps:
            if not path.is_file():
                parser.error(f"no such map: {path}")
        for path in maps:
            results.append(bench_map(path, settings, cache))
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

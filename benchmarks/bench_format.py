#!/usr/bin/env python
"""Number formatting of the OBJ and VMF writers: the % operator against the vectorized formatter.

The numbers are a real map's, recorded while exporting it: every array the
OBJ export formats, and every brush side and displacement the VMF
decompiler writes.  Each is formatted by the code the writers used before
(OBJ: ``(template * n) % values`` per model and texture group; VMF: % plus
``rstrip`` per number, then an f-string per side) and by today's
(:func:`sourcebsp.numformat.format_line_blocks`, the VMF writer's
``_prepare_sides``); the outputs are compared, and the CPU time of each (best
of ``--repeat``, same run) is printed with the ratio.  The whole OBJ export
is timed the same way, with the writer's formatter swapped for the old one.

Usage::

    PYTHONPATH=src python benchmarks/bench_format.py [MAP ...] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from sourcebsp import numformat
from sourcebsp.converters import obj, vmf
from sourcebsp.converters.vmf import writer as vmf_writer

CORPUS = Path(os.environ.get("SOURCEBSP_CORPUS", Path(__file__).resolve().parents[1] / "../shared/corpus"))
DEFAULT_MAPS = ["css_de_rats.bsp", "l4d2_map_cannals_escape01.bsp", "tf2c_vipr_downfall.bsp", "css_2000.bsp"]


def old_format_lines(template: str, values: np.ndarray) -> bytes:
    """What the OBJ writer did before: the % operator on a repeated template (encoded when written)."""
    if not len(values):
        return b""
    return ((template * len(values)) % tuple(values.ravel().tolist())).encode("ascii")


def old_format_many(values: Any, decimals: int = 6) -> list[str]:
    """What ``format_many`` was before: ``%d`` for whole numbers, ``%.6f`` plus ``rstrip`` for the rest."""
    flat = np.asarray(values, np.float64).ravel()
    count = len(flat)
    if not count:
        return []
    flat = np.where(np.isfinite(flat), flat, 0.0)
    whole = flat == np.trunc(flat)
    whole_count = int(np.count_nonzero(whole))
    if whole_count == count:
        return ("%d\n" * count % tuple(flat.tolist())).split()
    rest = flat if whole_count == 0 else flat[~whole]
    text = (f"%.{decimals}f\n" * len(rest)) % tuple(rest.tolist())
    parts = [t.rstrip("0").rstrip(".") for t in text.split()] if decimals > 0 else text.split()
    for i in np.flatnonzero((rest < 0) & (rest > -(10.0 ** -decimals))).tolist():
        if parts[i] == "-0":
            parts[i] = "0"
    if whole_count == 0:
        return parts
    merged = np.empty(count, object)
    merged[whole] = ("%d\n" * whole_count % tuple(flat[whole].tolist())).split()
    merged[~whole] = parts
    return merged.tolist()


def record(module: Any, name: str, run: Callable[[], Any]) -> list[tuple[Any, ...]]:
    """The arguments of every call of ``module.name`` while ``run()`` runs."""
    real = getattr(module, name)
    calls: list[tuple[Any, ...]] = []

    def spy(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    setattr(module, name, spy)
    try:
        run()
    finally:
        setattr(module, name, real)
    return calls


def best_cpu(run: Callable[[], Any], repeat: int) -> float:
    """Least CPU seconds of ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def old_line_blocks(template: str, values: np.ndarray, counts: Any) -> list[bytes]:
    """The OBJ writer's old calls: one % operation per model and per texture group."""
    if not len(counts):
        return []
    return [old_format_lines(template, block) for block in np.split(values, np.cumsum(counts)[:-1])]


def old_prepare_sides(sides: list[Any]) -> list[tuple[tuple[str, str, str], dict[str, list[str]]]]:
    """What the VMF writer formatted before: each side's plane and axes, each displacement's rows."""
    pts = old_format_many(np.array([s.points for s in sides]).reshape(-1, 9))
    axes = old_format_many(np.array([[*s.uaxis[:3], *s.vaxis[:3]] for s in sides]))
    shifts = old_format_many(np.array([[s.uaxis[3], s.vaxis[3]] for s in sides]), 4)
    scales = old_format_many(np.array([[s.uscale, s.vscale] for s in sides]))
    out = []
    for i, side in enumerate(sides):
        p = pts[9 * i : 9 * i + 9]
        a = axes[6 * i : 6 * i + 6]
        text = (f"({p[0]} {p[1]} {p[2]}) ({p[3]} {p[4]} {p[5]}) ({p[6]} {p[7]} {p[8]})",
                f"[{a[0]} {a[1]} {a[2]} {shifts[2 * i]}] {scales[2 * i]}",
                f"[{a[3]} {a[4]} {a[5]} {shifts[2 * i + 1]}] {scales[2 * i + 1]}")
        rows = {}
        if side.disp is not None:
            for name, decimals in vmf_writer._DISP_ROWS:
                dtype = np.int64 if decimals == 0 else np.float64
                rows[name] = old_format_many(np.asarray(getattr(side.disp, name), dtype), decimals)
        out.append((text, rows))
    return out


def new_prepare_sides(sides: list[Any]) -> list[tuple[tuple[str, str, str], dict[str, list[str]]]]:
    solid = vmf_writer.VmfSolid(id=0, sides=sides)
    vmf_writer._prepare_sides([solid])
    return [(side._text, side._disp_text) for side in sides]


def bench_map(map_path: Path, repeat: int, tmp: Path) -> list[tuple[str, int, float, float]]:
    """Rows ``(what, numbers, old seconds, new seconds)`` for one map."""
    obj_calls = record(obj, "format_line_blocks", lambda: obj.export_obj(map_path, tmp / "a.obj"))
    vmf_calls = record(vmf_writer, "_prepare_sides", lambda: vmf.decompile(map_path, tmp / "a.vmf"))
    for call in obj_calls:
        if numformat.format_line_blocks(*call) != old_line_blocks(*call):
            raise AssertionError(f"{map_path.name}: OBJ text differs for {call[0]!r}")
    sides = [side for (solids,) in vmf_calls for solid in solids for side in solid.sides]
    if new_prepare_sides(sides) != old_prepare_sides(sides):
        raise AssertionError(f"{map_path.name}: VMF text differs")
    obj_count = sum(np.size(call[1]) for call in obj_calls)
    vmf_count = sum(17 + sum(np.size(getattr(side.disp, name)) for name, _ in vmf_writer._DISP_ROWS)
                    if side.disp is not None else 17 for side in sides)
    rows = [
        ("OBJ numbers", obj_count,
         best_cpu(lambda: [old_line_blocks(*call) for call in obj_calls], repeat),
         best_cpu(lambda: [numformat.format_line_blocks(*call) for call in obj_calls], repeat)),
        ("VMF numbers", vmf_count,
         best_cpu(lambda: old_prepare_sides(sides), repeat),
         best_cpu(lambda: new_prepare_sides(sides), repeat)),
    ]

    def export_with(formatter: Callable[..., list[bytes]]) -> None:
        real = getattr(obj, "format_line_blocks")
        setattr(obj, "format_line_blocks", formatter)
        try:
            obj.export_obj(map_path, tmp / "b.obj")
        finally:
            setattr(obj, "format_line_blocks", real)

    rows.append(("OBJ export", obj_count,
                 best_cpu(lambda: export_with(old_line_blocks), repeat),
                 best_cpu(lambda: export_with(numformat.format_line_blocks), repeat)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("maps", nargs="*", help=f"maps (default: {', '.join(DEFAULT_MAPS)} from the corpus)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, the best counts (default 5)")
    args = parser.parse_args(argv)
    maps = [Path(m) if Path(m).exists() else CORPUS / m for m in args.maps]
    maps = maps or [CORPUS / m for m in DEFAULT_MAPS if (CORPUS / m).exists()]
    if not maps:
        parser.error(f"no maps given and none found in {CORPUS} (set SOURCEBSP_CORPUS)")
    print(f"{'map':34} {'what':12} {'numbers':>9} {'old ms':>9} {'new ms':>9} {'ratio':>6}   (CPU time, best of "
          f"{args.repeat})")
    with tempfile.TemporaryDirectory() as tmp:
        for map_path in maps:
            for what, count, old, new in bench_map(map_path, args.repeat, Path(tmp)):
                print(f"{map_path.name:34} {what:12} {count:9d} {old * 1e3:9.1f} {new * 1e3:9.1f} "
                      f"{old / new:6.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Studio models: read time, and a map's glTF export with its props' models against without.

Rows (printed as a table, ``--json`` for one JSON object):

model read
    every model of the games folder that has mesh files (``../shared/games``,
    ``SOURCEBSP_GAMES``), read with :func:`load_model_file` (best of
    ``--repeat``): milliseconds per model and MB/s of ``.mdl`` + ``.vvd`` + ``.vtx``
export glb / export glb --content / export glb --game --content --textures
    whole processes (``python -m sourcebsp export``), best wall time of
    ``--repeat`` and peak RSS (``wait4``), on the largest corpus map with
    static props; its props' models stood in by the real models copied under
    the names its prop dictionary spells (no corpus map names that mod's
    models), the mod mounted for their materials.  The ratio of the wall
    times to the plain export is the one the issue bounds (within 3x); the
    peak RSS is set against the map plus the model files read (within 4x,
    above the interpreter's own floor, which the ``import`` row gives).

Usage::

    python benchmarks/bench_models.py [--map MAP.bsp] [--repeat 3] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from sourcebsp import open as open_bsp  # noqa: E402
from sourcebsp.content import fold  # noqa: E402
from sourcebsp.content.studiomodel import VTX_SUFFIXES, load_model_file  # noqa: E402


def _dirs() -> tuple[Path, Path]:
    corpus = Path(os.environ.get("SOURCEBSP_CORPUS", ROOT.parent / "shared" / "corpus"))
    games = Path(os.environ.get("SOURCEBSP_GAMES", ROOT.parent / "shared" / "games"))
    return corpus, games


def _mesh_files(mdl: Path) -> list[Path]:
    """The .mdl, .vvd and the .vtx the reader picks, beside each other (any case)."""
    by_name = {p.name.lower(): p for p in mdl.parent.iterdir()}
    stem = mdl.name[:-4].lower()
    vtx = next((by_name[stem + s] for s in VTX_SUFFIXES if stem + s in by_name), None)
    vvd = by_name.get(stem + ".vvd")
    return [mdl, vvd, vtx] if vvd is not None and vtx is not None else []


def models_with_meshes(games: Path) -> list[list[Path]]:
    found = []
    for mdl in sorted(games.rglob("*.mdl")):
        files = _mesh_files(mdl)
        if files and load_model_file(mdl).num_triangles:
            found.append(files)
    return found


def model_read_row(models: list[list[Path]], repeat: int) -> dict[str, Any]:
    size = sum(f.stat().st_size for files in models for f in files)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for files in models:
            load_model_file(files[0])
        best = min(best, time.perf_counter() - start)
    return {"operation": "model read", "models": len(models), "bytes": size, "seconds": best,
            "ms_per_model": 1000 * best / max(len(models), 1), "mb_per_s": size / best / 1e6}


def stand_in_content(bsp_path: Path, models: list[list[Path]], folder: Path) -> int:
    """Copy real models under every name of the map's prop dictionary; the bytes of the files copied."""
    with open_bsp(bsp_path) as bsp:
        names = bsp.static_props.names
    folded = sorted({fold(n) for n in names})
    total = 0
    for key in folded:
        files = models[folded.index(key) % len(models)]
        target = folder / key
        target.parent.mkdir(parents=True, exist_ok=True)
        stem = target.name[:-4]
        for source, suffix in zip(files, (".mdl", ".vvd", ".dx90.vtx")):
            shutil.copyfile(source, target.with_name(stem + suffix))
            total += source.stat().st_size
    return total


def run(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(err.decode(errors="replace").strip().splitlines()[-1])
    return time.perf_counter() - start, usage.ru_maxrss * 1024


def export_rows(bsp_path: Path, content: Path, model_bytes: int, repeat: int, work: Path,
                game: Path | None) -> list[dict[str, Any]]:
    base = [sys.executable, "-m", "sourcebsp", "export", str(bsp_path), "--overwrite", "-o"]
    cases = [("import", [sys.executable, "-c", "import sourcebsp.cli.export"]),
             ("export glb", base + [str(work / "plain.glb")]),
             ("export glb --content", base + [str(work / "props.glb"), "--content", str(content)])]
    if game is not None:
        cases.append(("export glb --game --content --textures",
                      base + [str(work / "textured.glb"), "--game", str(game), "--content", str(content), "--textures"]))
    rows = []
    for name, command in cases:
        runs = [run(command) for _ in range(repeat)]
        rows.append({"operation": name, "seconds": min(r[0] for r in runs), "peak_rss": max(r[1] for r in runs),
                     "map_bytes": bsp_path.stat().st_size,
                     "model_bytes": model_bytes if "--content" in name else 0})
    plain, floor = rows[1], rows[0]["peak_rss"]
    for row in rows[2:]:
        row["time_ratio"] = row["seconds"] / plain["seconds"]
        row["rss_above_floor_per_input"] = (row["peak_rss"] - floor) / (row["map_bytes"] + model_bytes)
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--map", type=Path, help="the map (default: the largest corpus map with static props)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    corpus, games = _dirs()
    models = models_with_meshes(games)
    if not models:
        raise SystemExit(f"no models with mesh files under {games}")
    result: dict[str, Any] = {"rows": [model_read_row(models, args.repeat)]}
    bsp_path = args.map
    if bsp_path is None:
        with_props = []
        for path in sorted(corpus.glob("*.bsp")):
            try:
                with open_bsp(path) as bsp:
                    if len(bsp.static_props.props):
                        with_props.append(path)
            except Exception:  # noqa: BLE001 - a map whose props cannot be read is not a candidate
                continue
        bsp_path = max(with_props, key=lambda p: p.stat().st_size)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model_bytes = stand_in_content(bsp_path, models, work / "content")
        result["map"] = bsp_path.name
        mod = next((p.parent for p in sorted(games.glob("*/gameinfo.txt"))), None)
        result["rows"] += export_rows(bsp_path, work / "content", model_bytes, args.repeat, work, mod)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"map: {result['map']}")
        for row in result["rows"]:
            extra = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                              for k, v in row.items() if k != "operation")
            print(f"{row['operation']:<24} {extra}")
    return result


if __name__ == "__main__":
    main()

"""Throughput of ``sourcebsp scan``: MB/s and maps/s with 1 and 2 jobs, over 1x and 10x the corpus.

    python benchmarks/bench_scan.py [--copies 1,10] [--jobs 1,2] [--repeat 2] [--distinct] [--json]

The copies are hard links (symbolic links where the file system has none) in
a temporary folder, ``copyNN/MAP``, so ten copies cost no disk.  A hard-linked
copy has its original's sha256: every copy is opened, hashed and read into
rows by a worker as a new map would be, but the tables hold the rows of each
distinct map once, so the writer does less than for ten different maps.
``--distinct`` writes real copies instead, each with its copy number appended
after the map's last lump (a different sha256, the same lumps): the full cost.

Each run is a fresh interpreter running the library's ``scan`` (the
command's work without argument parsing), reporting its wall time and the
peak RSS of the largest worker (``RUSAGE_CHILDREN``; with one job, the
interpreter itself, which does the work), and the CPU time of all its
processes (what a loaded machine changes least).  The best wall time of
``--repeat`` runs is kept.  Whole-machine load (other processes on the same
cores) weighs on the numbers: run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_CHILD = r"""
import json, resource, sys, time
from sourcebsp.scan import scan
folder, out, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
paths = sorted(str(p) for p in __import__("pathlib").Path(folder).rglob("*.bsp"))
start = time.perf_counter()
report = scan(paths, out, jobs=jobs)
seconds = time.perf_counter() - start
self_usage, child_usage = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
own, children = self_usage.ru_maxrss * 1024, child_usage.ru_maxrss * 1024
cpu = sum(u.ru_utime + u.ru_stime for u in (self_usage, child_usage))
print(json.dumps({"seconds": seconds, "cpu": cpu, "files": report.files, "bytes": report.bytes, "errors": report.errors,
                  "parent_rss": own, "worker_rss": children if jobs > 1 else own}))
"""


def corpus_maps() -> list[Path]:
    corpus = Path(os.environ.get("SOURCEBSP_CORPUS", ROOT.parent / "shared" / "corpus"))
    maps = sorted(corpus.glob("*.bsp"))
    if not maps:
        raise SystemExit(f"no maps in {corpus} (set SOURCEBSP_CORPUS)")
    return maps


def make_copies(maps: list[Path], folder: Path, copies: int, distinct: bool) -> None:
    for k in range(copies):
        target = folder / f"copy{k:02d}"
        target.mkdir(parents=True)
        for path in maps:
            out = target / path.name
            if distinct:
                with open(out, "wb") as handle:
                    handle.write(path.read_bytes())
                    handle.write(f"copy {k}".encode())  # after the last lump: read by nothing
                continue
            try:
                os.link(path, out)
            except OSError:
                out.symlink_to(path)


def run(folder: Path, out: Path, jobs: int) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    # Through /bin/sh: Linux carries ru_maxrss across exec, so a child of this process would report ours.
    done = subprocess.run(["/bin/sh", "-c", 'exec "$0" -c "$1" "$2" "$3" "$4"', sys.executable, _CHILD,
                           str(folder), str(out), str(jobs)], capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", default="1,10", help="comma-separated numbers of copies of the corpus")
    ap.add_argument("--jobs", default="1,2", help="comma-separated numbers of worker processes")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each setting; the best wall time is kept")
    ap.add_argument("--distinct", action="store_true", help="real copies with different sha256 (see above)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    maps = corpus_maps()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as tmp:
        for copies in (int(c) for c in args.copies.split(",")):
            folder = Path(tmp) / f"x{copies}"
            make_copies(maps, folder, copies, args.distinct)
            for jobs in (int(j) for j in args.jobs.split(",")):
                runs = [run(folder, Path(tmp) / "out", jobs) for _ in range(args.repeat)]
                best = min(runs, key=lambda r: r["seconds"])
                best["worker_rss"] = max(r["worker_rss"] for r in runs)
                rows.append({"copies": copies, "jobs": jobs, "maps": best["files"], "mb": best["bytes"] / 1e6,
                             "seconds": best["seconds"], "mb_per_s": best["bytes"] / 1e6 / best["seconds"],
                             "maps_per_s": best["files"] / best["seconds"],
                             "ms_per_map": 1000 * best["seconds"] / best["files"],
                             "cpu_seconds": best["cpu"], "mb_per_cpu_s": best["bytes"] / 1e6 / best["cpu"],
                             "worker_peak_rss_mb": best["worker_rss"] / 1e6, "errors": best["errors"]})
            shutil.rmtree(folder)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print("| copies | jobs | maps | MB | seconds | MB/s | maps/s | ms/map | CPU s (all processes) | MB per CPU s "
          "| worker peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['copies']} | {r['jobs']} | {r['maps']} | {r['mb']:.1f} | {r['seconds']:.2f} | "
              f"{r['mb_per_s']:.1f} | {r['maps_per_s']:.1f} | {r['ms_per_map']:.1f} | {r['cpu_seconds']:.2f} | "
              f"{r['mb_per_cpu_s']:.1f} | {r['worker_peak_rss_mb']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Open and decode the example room in every branch's layout, against the Orange Box's.

Each branch's file (:func:`sourcebsp.examples.branches.example_branch_bytes`) holds the same
records in that branch's structs; its open and full decode (``decode_all``) is timed (CPU,
best of ``--repeat``) and divided by the Orange Box's, per byte of file, so a branch whose
structs are wider is not counted slower for reading more bytes.  The issue's bound is 1.2.

Usage::

    PYTHONPATH=src python benchmarks/bench_branches.py [--repeat 200]
"""
from __future__ import annotations

import argparse
import time

from sourcebsp import BspFile
from sourcebsp.examples.branches import example_branch_bytes, example_branches


def _once(data: bytes, name: str) -> float:
    start = time.process_time()
    bsp = BspFile.from_bytes(data, variant=name)
    bsp.decode_all()
    for lump, _ in bsp.iter_lumps():
        bsp.get_lump(lump)
    return time.process_time() - start


def rows(repeat: int) -> list[tuple[str, int, float, float]]:
    """(branch, bytes, best CPU seconds of opening and decoding every lump, ratio to the Orange
    Box per byte) for every branch.  The branches take turns in each round, so that the
    machine's load drifts alike over all of them."""
    files = {name: example_branch_bytes(name) for name in example_branches()}
    best = dict.fromkeys(files, float("inf"))
    for _ in range(repeat):
        for name, data in files.items():
            best[name] = min(best[name], _once(data, name))
    base = best["orange_box"] / len(files["orange_box"])
    return [(name, len(data), best[name], best[name] / len(data) / base) for name, data in files.items()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    print(f"{'branch':22} {'bytes':>7} {'open+decode':>12} {'per byte vs orange_box':>23}")
    for name, size, seconds, ratio in rows(args.repeat):
        print(f"{name:22} {size:7,} {seconds * 1e3:9.3f} ms {ratio:22.2f}x")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Open and decode the example room in every branch's layout, against the Orange Box's.

Each branch's file (:func:`sourcebsp.examples.branches.example_branch_bytes`) holds the same
records in that branch's structs; its open and full decode (``decode_all``) is timed (CPU,
best of ``--repeat``) and divided by the Orange Box's, per byte of file, so a branch whose
structs are wider is not counted slower for reading more bytes.  The issue's bound is 1.2.
The Titanfall rooms (Respawn's rBSP, :mod:`sourcebsp.respawn`) are opened and every lump
the container decodes is read (records, texture names, entities, static props); with
``--corpus`` the Titanfall 2 corpus map is set against an Orange Box corpus map the same way.

Usage::

    PYTHONPATH=src python benchmarks/bench_branches.py [--repeat 200] [--corpus]
"""
from __future__ import annotations

import argparse
import time

from pathlib import Path

from sourcebsp import BspFile
from sourcebsp.examples.branches import example_branch_bytes, example_branches
from sourcebsp.respawn import RespawnBsp
from sourcebsp.variants import VARIANTS

RESPAWN = [name for name, variant in VARIANTS.items() if variant.container == "respawn"]
CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
# A Titanfall 2 map and an Orange Box map without LZMA lumps, from the corpus.
CORPUS_PAIR = {"titanfall2": "other-engines/titanfall2_mp_crossfire.bsp", "orange_box": "valvebsp_testmap.bsp"}


def _once(data: bytes, name: str) -> float:
    start = time.process_time()
    if VARIANTS[name].container == "respawn":
        respawn = RespawnBsp(data)
        for index in respawn.decoded_lumps():
            respawn.array(index)
        respawn.texture_names()
        respawn.entities
        respawn.static_props
        return time.process_time() - start
    bsp = BspFile.from_bytes(data, variant=name)
    bsp.decode_all()
    for lump, _ in bsp.iter_lumps():
        bsp.get_lump(lump)
    return time.process_time() - start


def _best(files: dict[str, bytes], repeat: int) -> list[tuple[str, int, float, float]]:
    best = dict.fromkeys(files, float("inf"))
    for _ in range(repeat):
        for name, data in files.items():
            best[name] = min(best[name], _once(data, name))
    base = best["orange_box"] / len(files["orange_box"])
    return [(name, len(data), best[name], best[name] / len(data) / base) for name, data in files.items()]


def corpus_rows(repeat: int) -> list[tuple[str, int, float, float]]:
    """The same figures for the Titanfall 2 corpus map against an Orange Box corpus map."""
    return _best({name: (CORPUS / path).read_bytes() for name, path in CORPUS_PAIR.items()}, repeat)


def rows(repeat: int) -> list[tuple[str, int, float, float]]:
    """(branch, bytes, best CPU seconds of opening and decoding every lump, ratio to the Orange
    Box per byte) for every branch.  The branches take turns in each round, so that the
    machine's load drifts alike over all of them."""
    return _best({name: example_branch_bytes(name) for name in [*example_branches(), *RESPAWN]}, repeat)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--corpus", action="store_true", help="also the Titanfall 2 corpus map against an Orange Box one")
    args = ap.parse_args()
    print(f"{'branch':22} {'bytes':>9} {'open+decode':>12} {'per byte vs orange_box':>23}")
    for name, size, seconds, ratio in rows(args.repeat):
        print(f"{name:22} {size:9,} {seconds * 1e3:9.3f} ms {ratio:22.2f}x")
    if args.corpus:
        print("corpus maps:")
        for name, size, seconds, ratio in corpus_rows(max(1, args.repeat // 10)):
            print(f"{name:22} {size:9,} {seconds * 1e3:9.3f} ms {ratio:22.2f}x")


if __name__ == "__main__":
    main()

"""``python -m sourcebsp.fuzz``: a long fuzzing run over every entry point.

Examples::

    python -m sourcebsp.fuzz --minutes 30 --out fuzz-out          # structure-aware, behaviour-guided
    python -m sourcebsp.fuzz --engine atheris --out fuzz-out -- -max_total_time=600
    python -m sourcebsp.fuzz --replay fuzz-out/crashes/*.bsp       # run inputs through every entry point

The default engine mutates the example map with :mod:`sourcebsp.fuzz.mutate`
in restartable workers under a 2 GiB address-space limit and writes
minimised crashes to ``OUT/crashes``.  ``--engine atheris`` hands the same
mutator to libFuzzer (coverage-guided through atheris's instrumentation of
the package); libFuzzer options follow ``--``.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import random
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import sourcebsp

from .campaign import _key, _run_entry, run_campaign
from .entry_points import ENTRY_POINTS
from .mutate import apply, random_mutations, seeds
from .runner import DEFAULT_MEMORY_LIMIT, limit_memory, run_entries, strict_warnings


def _atheris(out: Path, extra: list[str], ignore: list[str]) -> int:  # pragma: no cover - long runs only
    import atheris  # a seam: the optional "fuzz" extra, for this engine alone

    # The package is imported already (and its modules lazily): load every module, then
    # instrument everything loaded, so coverage reaches the code the entry points use.
    for module in pkgutil.walk_packages(sourcebsp.__path__, "sourcebsp."):
        if not module.name.startswith(("sourcebsp.cli", "sourcebsp.fuzz")):
            importlib.import_module(module.name)
    atheris.instrument_all()

    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for name, data in seeds().items():
        (corpus / f"seed_{name}.bsp").write_bytes(data)
    scratch = Path(tempfile.mkdtemp(prefix="sourcebsp-atheris-"))
    path = scratch / "input.bsp"

    def test_one_input(data: bytes) -> None:
        path.write_bytes(data)
        for name in ENTRY_POINTS:
            outcome = _run_entry(name, path, scratch, 10.0)
            if isinstance(outcome, BaseException) and not any(i in _key(outcome) for i in ignore):
                raise outcome

    def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        if len(data) < 1036 or rng.random() < 0.02:
            data = rng.choice(list(seeds().values()))
        if rng.random() < 0.1:
            data = atheris.Mutate(data, max_size)
        return apply(data, random_mutations(rng, data))[:max(max_size, 1036)]

    limit_memory(DEFAULT_MEMORY_LIMIT)
    strict_warnings()
    atheris.Setup([sys.argv[0], f"-artifact_prefix={out}/", "-max_len=1000000", "-rss_limit_mb=0",
                   *extra, str(corpus)], test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sourcebsp.fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0, help="how long to fuzz (default 10)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"), help="folder for crashes and statistics")
    ap.add_argument("--seed", type=int, default=0, help="random seed of the first worker")
    ap.add_argument("--engine", choices=("mutate", "atheris"), default="mutate")
    ap.add_argument("--replay", nargs="+", type=Path, metavar="MAP", help="run these maps through every entry point")
    ap.add_argument("--ignore", action="append", default=[], metavar="TEXT",
                    help="atheris: do not stop on crashes whose key (type_module_line) contains TEXT")
    ap.add_argument("extra", nargs="*", help="options for libFuzzer (after --)")
    args = ap.parse_args(argv)
    if args.replay:
        bad = 0
        for path in args.replay:
            for outcome in run_entries(path):
                if not outcome.kept_promise:
                    bad += 1
                    print(f"{path}: {outcome.describe()}")
        print(f"{len(args.replay)} maps, {bad} broken promises")
        return 1 if bad else 0
    if args.engine == "atheris":
        return _atheris(args.out, args.extra, args.ignore)
    stats = run_campaign(args.out, args.minutes * 60, rng_seed=args.seed, log=sys.stderr)
    print(f"{stats.inputs} inputs, {stats.runs} entry-point runs ({stats.errors} BspErrors) in "
          f"{stats.seconds:.0f} s; {stats.crashes} crashing inputs, {len(stats.unique)} distinct crashes")
    for key, path in sorted(stats.unique.items()):
        print(f"  {key}: {path}")
    return 1 if stats.unique else 0


if __name__ == "__main__":
    sys.exit(main())

"""A fuzzing campaign: mutate the seeds, run every entry point, keep what breaks the promise.

The loop runs in a worker process under the memory limit of the promise
(:data:`~sourcebsp.fuzz.runner.DEFAULT_MEMORY_LIMIT`); each entry point has a
deadline (an interval timer), numpy's ``RuntimeWarning`` is an error.  An
input whose outcome shows something new (an entry point failing with an error
message not seen before) joins the pool that later inputs are mutated from,
so the search follows the checks it gets past.

A crash -- anything but success or a :class:`~sourcebsp.errors.BspError` --
is keyed by exception type and the innermost library line, minimised (see
:func:`~sourcebsp.fuzz.mutate.minimise`) and written to ``OUT/crashes/`` as
a ``.bsp`` with a ``.txt`` that says how it was made and what it raised.
When the worker dies outright (out of memory below Python, or stuck in C),
the parent writes the input it was running there too.
"""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import BspError
from .entry_points import ENTRY_POINTS
from .mutate import Case, Mutation, minimise, random_mutations, seeds
from .runner import DEFAULT_MEMORY_LIMIT, limit_memory, strict_warnings

__all__ = ["Stats", "run_campaign", "run_worker"]

#: Seconds one entry point may take on one fuzz input before it counts as a hang.
ENTRY_DEADLINE = 10.0


class _Deadline(BaseException):
    """Raised by the interval timer inside an entry point that overran."""


@dataclass
class Stats:
    inputs: int = 0
    runs: int = 0
    errors: int = 0  # BspError outcomes: the promise kept
    crashes: int = 0  # inputs that broke it (all, before deduplication)
    unique: dict[str, str] = field(default_factory=dict)  # key -> file of its minimised input
    pool: int = 0
    seconds: float = 0.0


def _key(exc: BaseException) -> str:
    where = "?"
    for frame in traceback.extract_tb(exc.__traceback__):
        parts = Path(frame.filename).parts
        if "sourcebsp" in parts and "fuzz" not in parts:
            where = "/".join(parts[parts.index("sourcebsp") + 1 :]).replace(".py", "") + f"_{frame.lineno}"
    return f"{type(exc).__name__}_{where}".replace("/", "_")


def _run_entry(name: str, path: Path, scratch: Path, deadline: float) -> BaseException | str | None:
    """None on success, the reason text of a BspError, or the exception that broke the promise."""
    folder = scratch / name
    folder.mkdir(parents=True, exist_ok=True)

    def overrun(signum: int, frame: Any) -> None:
        raise _Deadline(f"{name} took more than {deadline:g} s")

    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, deadline)
    try:
        ENTRY_POINTS[name](path, folder)
        return None
    except BspError as exc:
        return getattr(exc, "reason", str(exc))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - what the fuzzer hunts
        return exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _feature(entry: str, reason: str) -> str:
    """An outcome's shape: the entry point and its message with numbers taken out."""
    return entry + ":" + re.sub(r"-?\d+(\.\d+)?", "#", reason)[:80]


def _save(out: Path, key: str, case: Case, data: bytes, exc: BaseException | str, entry: str) -> Path:
    crashes = out / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    target = crashes / f"{key}.bsp"
    target.write_bytes(data)
    text = "".join(traceback.format_exception(exc)) if isinstance(exc, BaseException) else str(exc)
    note = {"entry": entry, "seed": case.seed, "mutations": [asdict(m) | {"text": m.text.hex()} for m in case.mutations],
            "described": [str(m) for m in case.mutations], "error": text[-4000:]}
    target.with_suffix(".json").write_text(json.dumps(note, indent=1))
    return target


def run_worker(out: Path, seconds: float, rng_seed: int, entries: Iterable[str] | None = None,
               deadline: float = ENTRY_DEADLINE, max_inputs: int | None = None,
               seed_names: Iterable[str] | None = None) -> Stats:
    """The fuzzing loop, in this process (call it in a process with the memory limit set);
    ``entries`` and ``seed_names`` narrow it to those entry points and seeds."""
    names = list(ENTRY_POINTS if entries is None else entries)
    rng = random.Random(rng_seed)
    seed_data = seeds() if seed_names is None else {name: seeds()[name] for name in seed_names}
    pool: list[Case] = [Case(name) for name in seed_data]
    seen: set[str] = set()
    stats = Stats()
    known: dict[str, str] = {}
    status = out / f"worker-{rng_seed}.json"
    current = out / f"current-{rng_seed}.json"
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sourcebsp-fuzz-") as tmp:
        scratch = Path(tmp)
        path = scratch / "input.bsp"
        while time.monotonic() - started < seconds and (max_inputs is None or stats.inputs < max_inputs):
            # Half the inputs start again from a seed: long mutation chains mostly fail early.
            parent = rng.choice(pool) if rng.random() < 0.5 else Case(rng.choice(list(seed_data)))
            case = Case(parent.seed, parent.mutations + random_mutations(rng, seed_data[parent.seed]))
            if len(case.mutations) > 12:
                case = Case(case.seed, case.mutations[-12:])
            data = case.data()
            path.write_bytes(data)
            current.write_text(json.dumps({"seed": case.seed, "mutations": [asdict(m) | {"text": m.text.hex()}
                                                                          for m in case.mutations]}))
            stats.inputs += 1
            new = False
            for name in names:
                outcome = _run_entry(name, path, scratch, deadline)
                stats.runs += 1
                if outcome is None:
                    feature = _feature(name, "ok")
                elif isinstance(outcome, str):
                    stats.errors += 1
                    feature = _feature(name, outcome)
                else:
                    stats.crashes += 1
                    key = _key(outcome)
                    feature = "crash:" + key
                    if key not in known:
                        def fails(candidate: bytes, name: str = name, key: str = key) -> bool:
                            path.write_bytes(candidate)
                            result = _run_entry(name, path, scratch, deadline)
                            return isinstance(result, BaseException) and _key(result) == key

                        small = Case(case.seed, minimise(seed_data[case.seed], case.mutations, fails))
                        known[key] = str(_save(out, key, small, small.data(), outcome, name))
                        path.write_bytes(data)
                if feature not in seen:
                    seen.add(feature)
                    new = True
            if new:
                pool.append(case)
            stats.unique, stats.pool = known, len(pool)
            stats.seconds = time.monotonic() - started
            if stats.inputs % 10 == 0:
                status.write_text(json.dumps(asdict(stats)))
    status.write_text(json.dumps(asdict(stats)))
    current.unlink(missing_ok=True)
    return stats


def _worker_main(argv: list[str]) -> int:
    out, seconds, rng_seed, limit, deadline = Path(argv[0]), float(argv[1]), int(argv[2]), int(argv[3]), float(argv[4])
    limit_memory(limit)
    strict_warnings()
    run_worker(out, seconds, rng_seed, deadline=deadline)
    return 0


def run_campaign(out: str | os.PathLike[str], seconds: float, *, rng_seed: int = 0,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT, deadline: float = ENTRY_DEADLINE,
                 log: Any = None) -> Stats:
    """Fuzz for ``seconds`` in worker processes (restarted when one dies); the summed stats.

    Crashes are written under ``out/crashes``.  A worker that dies or hangs
    past every deadline is counted as a crash of the input it was running.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    total = Stats()
    started = time.monotonic()
    src = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    seed = rng_seed
    while (left := seconds - (time.monotonic() - started)) > 1:
        command = [sys.executable, "-m", "sourcebsp.fuzz.campaign", str(out), str(left), str(seed),
                   str(memory_limit), str(deadline)]
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _, err = child.communicate(timeout=left + deadline * len(ENTRY_POINTS) + 30)
        except subprocess.TimeoutExpired:
            child.kill()
            _, err = child.communicate()
        status = out / f"worker-{seed}.json"
        stats = Stats(**json.loads(status.read_text())) if status.exists() else Stats()
        current = out / f"current-{seed}.json"
        if child.returncode != 0 and current.exists():
            # The worker died on this input: keep it as a crash.
            note = json.loads(current.read_text())
            case = Case(note["seed"], [Mutation(**(m | {"text": bytes.fromhex(m["text"])})) for m in note["mutations"]])
            key = f"killed_{abs(child.returncode)}_{len(total.unique) + len(stats.unique)}"
            stats.unique[key] = str(_save(out, key, case, case.data(), (err or "")[-2000:], "?"))
            stats.crashes += 1
            current.unlink()
        total.inputs += stats.inputs
        total.runs += stats.runs
        total.errors += stats.errors
        total.crashes += stats.crashes
        total.unique.update(stats.unique)
        total.pool = max(total.pool, stats.pool)
        if log is not None:
            print(f"worker {seed} ended ({child.returncode}): {stats.inputs} inputs, {stats.crashes} crashes",
                  file=log, flush=True)
        seed += 1000
    total.seconds = time.monotonic() - started
    (out / "summary.json").write_text(json.dumps(asdict(total), indent=1))
    return total


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))

"""Run entry points on one map in a child process with a memory limit and a deadline.

The child sets ``RLIMIT_AS`` (address space) before it runs anything,
turns numpy's ``RuntimeWarning`` into errors (a warning printed to a user's
terminal is a leak too), and reports one JSON line per entry point::

    {"entry": "geometry", "outcome": "ok" | "error" | "crash", "type": ..., "message": ...,
     "seconds": ..., "traceback": ...}

``"error"`` is a :class:`~sourcebsp.errors.BspError` (the promised outcome for
a bad map); ``"crash"`` is anything else.  The parent adds ``"killed"`` (the
child died, e.g. out of memory outside Python's reach) and ``"timeout"``.

Run a map by hand with ``python -m sourcebsp.fuzz.runner MAP [ENTRY ...]``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import BspError
from .entry_points import ENTRY_POINTS

if sys.platform != "win32":
    import resource

__all__ = ["Outcome", "run_entries", "DEFAULT_MEMORY_LIMIT", "DEFAULT_TIMEOUT", "main"]

#: The address-space limit the promise is tested under.
DEFAULT_MEMORY_LIMIT = 2 << 30
#: Seconds allowed for one entry point on one map (a few seconds; slow CI machines get slack).
DEFAULT_TIMEOUT = 20.0


@dataclass
class Outcome:
    """What one entry point did with one map."""

    entry: str
    outcome: str  # "ok", "error", "crash", "killed" or "timeout"
    type: str = ""
    message: str = ""
    seconds: float = 0.0
    traceback: str = ""
    where: str = ""  # innermost sourcebsp frame of a crash, "module.py:line"

    @property
    def kept_promise(self) -> bool:
        return self.outcome in ("ok", "error")

    def describe(self) -> str:
        text = f"{self.entry}: {self.outcome}"
        if self.type:
            text += f" {self.type}"
            text += f" at {self.where}" if self.where else ""
            text += f": {self.message}"
        return text + f" ({self.seconds:.1f} s)"


def limit_memory(limit: int) -> None:
    """Cap this process's address space (no-op on Windows, which has no ``resource``)."""
    if sys.platform == "win32":  # pragma: no cover
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def strict_warnings() -> None:
    """Numeric warnings become exceptions: a bad map must not print to stderr."""
    # numpy's defaults (warn on overflow, invalid and division, ignore underflow),
    # with the warnings raised: what a user would see printed.
    warnings.simplefilter("error", RuntimeWarning)


def run_in_process(path: Path, entries: Iterable[str], scratch: Path) -> Iterable[Outcome]:
    """Run each entry point here (no isolation), yielding outcomes as they come."""
    for name in entries:
        started = time.perf_counter()
        folder = scratch / name
        folder.mkdir(parents=True, exist_ok=True)
        try:
            ENTRY_POINTS[name](path, folder)
        except BspError as exc:
            yield Outcome(name, "error", type(exc).__name__, str(exc)[:300], time.perf_counter() - started)
        except BaseException as exc:  # noqa: BLE001 - anything else is what we hunt
            if isinstance(exc, KeyboardInterrupt):
                raise
            yield Outcome(name, "crash", type(exc).__name__, str(exc)[:300], time.perf_counter() - started,
                          traceback.format_exc(limit=-12), _innermost(exc))
        else:
            yield Outcome(name, "ok", seconds=time.perf_counter() - started)


def _innermost(exc: BaseException) -> str:
    """``package/module.py:line`` of the deepest sourcebsp frame of a traceback (not the fuzz harness)."""
    place = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        parts = Path(frame.filename).parts
        if "sourcebsp" in parts and "fuzz" not in parts:
            place = "/".join(parts[parts.index("sourcebsp") + 1:]) + f":{frame.lineno}"
    return place


def _child(argv: Sequence[str]) -> int:
    limit, path, *entries = argv
    limit_memory(int(limit))
    strict_warnings()
    with tempfile.TemporaryDirectory(prefix="sourcebsp-fuzz-") as scratch:
        for outcome in run_in_process(Path(path), entries, Path(scratch)):
            print(json.dumps(outcome.__dict__), flush=True)
    return 0


def run_entries(path: str | os.PathLike[str], entries: Sequence[str] | None = None, *,
                memory_limit: int = DEFAULT_MEMORY_LIMIT, timeout: float = DEFAULT_TIMEOUT) -> list[Outcome]:
    """Run entry points on the map at ``path`` in a child process; one outcome per entry.

    Entry points run one after another in the same child; ``timeout`` is
    per entry point.  When the child dies or overruns, the entry point it was
    running is reported ``"killed"`` / ``"timeout"`` and the rest run in a
    new child.
    """
    pending = list(ENTRY_POINTS if entries is None else entries)
    results: list[Outcome] = []
    src = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    while pending:
        command = [sys.executable, "-m", "sourcebsp.fuzz.runner", "--child", str(memory_limit), str(path), *pending]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        started = time.perf_counter()
        done = 0
        try:
            # Generous for the whole batch; each entry's own time is checked below.
            out, err = child.communicate(timeout=timeout * len(pending) + 10)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
            killed_by = "timeout"
        else:
            killed_by = "killed"
        for line in out.splitlines():
            if line.startswith("{"):
                outcome = Outcome(**json.loads(line))
                if outcome.seconds > timeout and outcome.kept_promise:
                    outcome = Outcome(outcome.entry, "timeout", outcome.type, outcome.message, outcome.seconds)
                results.append(outcome)
                done += 1
        if done < len(pending):
            spent = time.perf_counter() - started - sum(r.seconds for r in results[-done:] if done)
            results.append(Outcome(pending[done], killed_by, "", (err or "").strip()[-300:], spent))
            done += 1
        pending = pending[done:]
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sourcebsp.fuzz.runner MAP [ENTRY ...]``: run and print outcomes."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--child"]:
        return _child(args[1:])
    if not args:
        print("usage: python -m sourcebsp.fuzz.runner MAP [ENTRY ...]", file=sys.stderr)
        return 2
    path, *entries = args
    failed = 0
    for outcome in run_entries(path, entries or None):
        print(outcome.describe())
        if not outcome.kept_promise:
            failed += 1
            if outcome.traceback:
                print(outcome.traceback)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

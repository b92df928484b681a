"""Where the per-map function runs: here, in local worker processes, or on a Dask cluster.

Each executor yields the results in the order of the paths, with a bounded
number of maps in flight (a few per worker): the results held at any time do
not grow with the collection, and the output is the same whichever runs it.
"""
from __future__ import annotations

import collections
import multiprocessing
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, Collection, Iterator, Sequence

from .rows import MapResult, map_result

__all__ = ["run_here", "run_local", "run_dask", "IN_FLIGHT_PER_WORKER"]

#: Maps started ahead of the one to write next, per worker: keeps every worker busy while a large map
#: holds the head of the queue, and bounds what waits in memory.
IN_FLIGHT_PER_WORKER = 4

_known: Collection[str] = frozenset()  # a local worker's known map ids, set once when it starts


def _set_known(known: Collection[str]) -> None:
    global _known
    _known = known


def _local_task(path: str, game: str | None, variant: str | None) -> MapResult:
    return map_result(path, game, _known, variant)


def _ordered(submit: Callable[[str], Any], paths: Sequence[str], window: int,
             result: Callable[[Any], MapResult]) -> Iterator[MapResult]:
    pending: collections.deque[Any] = collections.deque()
    next_path = iter(paths)
    for path in next_path:
        pending.append(submit(path))
        if len(pending) >= window:
            break
    while pending:
        done = result(pending.popleft())
        for path in next_path:
            pending.append(submit(path))
            break
        yield done


def run_here(paths: Sequence[str], game: str | None, known: Collection[str],
             variant: str | None = None) -> Iterator[MapResult]:
    """In this process, one map after another."""
    for path in paths:
        yield map_result(path, game, known, variant)


def run_local(paths: Sequence[str], game: str | None, known: Collection[str], jobs: int,
              variant: str | None = None) -> Iterator[MapResult]:
    """In ``jobs`` worker processes (forked where the platform can: they start with sourcebsp loaded)."""
    fork = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    context = multiprocessing.get_context("fork" if fork else None)
    if fork and paths:
        # The first map is read here: it loads what every map needs (the codecs, the check rules,
        # srctools' entity database: most of a worker's start), which each forked worker then starts with.
        yield map_result(paths[0], game, known, variant)
        paths = paths[1:]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_set_known,
                             initargs=(known,)) as pool:
        def submit(path: str) -> "Future[MapResult]":
            return pool.submit(_local_task, path, game, variant)

        def result(future: "Future[MapResult]") -> MapResult:
            return future.result()

        yield from _ordered(submit, paths, jobs * IN_FLIGHT_PER_WORKER, result)


def run_dask(paths: Sequence[str], game: str | None, known: Collection[str], client: Any,
             variant: str | None = None) -> Iterator[MapResult]:
    """On the cluster of a ``dask.distributed.Client``: its workers read the files by path (a shared
    file system); the known ids go to each worker once."""
    threads = sum(client.nthreads().values()) or 1
    shared: Any = frozenset()
    if known:
        # In a list: scatter sends each element of a bare set as data of its own.
        [shared] = client.scatter([frozenset(known)], broadcast=True)

    def submit(path: str) -> Any:
        return client.submit(map_result, path, game, shared, variant, pure=False)

    def result(future: Any) -> MapResult:
        done: MapResult = future.result()
        future.release()
        return done

    yield from _ordered(submit, paths, threads * IN_FLIGHT_PER_WORKER, result)

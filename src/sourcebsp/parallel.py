"""Work that releases the GIL (liblzma), spread over every core on a shared thread pool."""
from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Callable, Generic, Sequence, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["run_parallel", "start_parallel"]

T = TypeVar("T")
R = TypeVar("R")
_pool: "ThreadPoolExecutor | None" = None
_pool_pid = 0


def start_parallel(func: Callable[[T], R], items: Sequence[T], *,
                   min_items: int = 2) -> list[tuple[T, Callable[[], R]]]:
    """Start ``func(item)`` for every item on a thread pool; ``[(item, result getter)]``.

    For work that releases the GIL (liblzma): the caller can do other work
    meanwhile.  With fewer than ``min_items`` items, or one core, the work is
    done here and now.  The pool is made on first use and shared.
    """
    if len(items) < min_items or _cores() < 2:
        return [(item, _Done(func(item))) for item in items]
    global _pool, _pool_pid
    if _pool is None or _pool_pid != os.getpid():
        # A forked child (a process pool of batch jobs) has the parent's pool without its threads.
        from concurrent.futures import ThreadPoolExecutor  # a seam: one lump or one core starts no thread

        _pool, _pool_pid = ThreadPoolExecutor(max_workers=_cores(), thread_name_prefix="sourcebsp"), os.getpid()
    return [(item, _pool.submit(func, item).result) for item in items]


@functools.lru_cache(maxsize=None)
def _cores() -> int:
    """``os.cpu_count()``, read once: it reads a file in /sys on every call."""
    return os.cpu_count() or 1


def run_parallel(func: Callable[[T], R], items: Sequence[T], *, min_items: int = 2) -> list[tuple[T, R]]:
    """``[(item, func(item))]``, on every core when there are ``min_items`` or more."""
    started = start_parallel(func, items, min_items=min_items)
    results = []
    error: BaseException | None = None
    for item, result in started:
        try:
            results.append((item, result()))
        except BaseException as exc:  # wait for every item before raising
            error = error or exc
    if error is not None:
        raise error
    return results


class _Done(Generic[R]):
    """The result getter of work already done."""

    def __init__(self, value: R) -> None:
        self.value = value

    def __call__(self) -> R:
        return self.value

"""``scan``: many maps into Parquet tables, on this machine or a Dask cluster.

One row per item, every table keyed by ``map_id`` (the sha256 of the file):
``maps``, ``lumps``, ``entities``, ``props``, ``materials``, ``pakfiles`` and
``findings`` (see :data:`~sourcebsp.scan.rows.COLUMNS` and docs/scan.md).  A
file that is not a readable map is a ``maps`` row with ``error`` set, never
the end of the scan.  Needs the ``scan`` extra (pyarrow); a cluster needs the
``dask`` extra.  Nothing else in sourcebsp imports this package.

Examples
--------
>>> from sourcebsp.scan import scan
>>> report = scan(["maps/a.bsp", "maps/b.bsp.bz2"], "tables", jobs=2)     # doctest: +SKIP
>>> from dask.distributed import Client                                  # doctest: +SKIP
>>> report = scan(paths, "tables", client=Client("tcp://scheduler:8786"))  # doctest: +SKIP
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple

from . import executors
from .rows import COLUMNS, TABLES, MapResult, error_message

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["scan", "ScanReport", "COLUMNS", "TABLES"]


class ScanReport(NamedTuple):
    """What a scan did: files listed, maps read, maps reused from ``since``, error rows, bytes, time."""

    files: int
    read: int
    reused: int
    errors: int
    bytes: int
    seconds: float
    rows: dict[str, int]


def scan(paths: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *, jobs: int = 1,
         client: Any = None, since: str | os.PathLike[str] | None = None, game: str | os.PathLike[str] | None = None,
         overwrite: bool = False, progress: Callable[[MapResult], None] | None = None,
         variant: str | None = None) -> ScanReport:
    """Read every map file of ``paths`` and write the tables into the folder ``out_dir``.

    Parameters
    ----------
    paths
        Map files (``.bsp``, ``.bsp.bz2``); each is one ``maps`` row, in this order.
    out_dir
        The folder to create.  It is written beside itself and renamed into
        place when complete; an existing one is replaced only with ``overwrite``.
    jobs
        Local worker processes (1: this process).
    client
        A ``dask.distributed.Client``: run on its cluster instead; the workers
        open the files by their absolute paths (a file system they share).
    since
        A previous output folder: maps whose sha256 it holds are not read
        again; their rows are copied from it (with the path and size found now).
    game
        A game folder for the ``check`` rules that look for assets (as ``check --game``).
    progress
        Called with each map's result, in order, as it is written.
    variant
        The engine branch to read every map as (:func:`sourcebsp.variant_names`);
        None: each map's detected one.

    Returns
    -------
    ScanReport
    """
    # pyarrow, the scan extra, where it is used: a dask worker imports this package for its rows alone
    from .tables import Previous, TableWriter, staged_folder

    start = time.perf_counter()
    given = [os.fspath(p) for p in paths]
    work = [os.path.abspath(p) for p in given]  # a worker's current folder is not ours
    previous = Previous(os.fspath(since)) if since is not None else None
    known = previous.known if previous is not None else frozenset()
    game_dir = None if game is None else os.path.abspath(game)
    results: Iterator[MapResult]
    if client is not None:
        results = executors.run_dask(work, game_dir, known, client, variant)
    elif jobs > 1 and len(work) > 1:
        results = executors.run_local(work, game_dir, known, min(jobs, len(work)), variant)
    else:
        results = executors.run_here(work, game_dir, known, variant)
    read = errors = size = 0
    written: set[str] = set()  # maps whose rows are in (a map found twice is one map: its rows once)
    reused: set[str] = set()
    with staged_folder(out_dir, overwrite=overwrite) as folder:
        writer = TableWriter(folder)
        try:
            for path, result in zip(given, results):
                size += result.size or 0
                if result.reused and previous is not None and result.map_id is not None:  # a known id
                    maps = previous.map_row(result.map_id, path, result.size)
                    reused.add(result.map_id)
                else:
                    read += 1
                    result.tables["maps"]["path"] = [path]
                    batches = _batches(result, path)
                    maps = batches.pop("maps").to_pydict()
                    if result.map_id is None or result.map_id not in written:
                        for name, batch in batches.items():
                            writer.add_batch(name, batch)
                        if result.map_id is not None:
                            written.add(result.map_id)
                errors += maps["error"][0] is not None
                writer.add("maps", maps)
                if progress is not None:
                    progress(result)
            if previous is not None:
                for name in TABLES:
                    if name != "maps":
                        for batch in previous.batches(name, reused):
                            writer.add_batch(name, batch)
            writer.close()
        except BaseException:
            writer.abort()
            raise
    return ScanReport(len(given), read, len(given) - read, errors, size, time.perf_counter() - start,
                      dict(writer.rows))


def _batches(result: MapResult, path: str) -> dict[str, Any]:
    """A map's rows as Arrow record batches; a value no column can hold (a bug) makes the map
    an error row, not the end of the scan."""
    from .tables import to_batches  # pyarrow, the scan extra, as in scan()

    try:
        return to_batches(result.tables)
    except Exception as exc:  # noqa: BLE001 - see the docstring
        maps: dict[str, list[Any]] = {name: [None] for name, _ in COLUMNS["maps"]}
        maps.update(map_id=[result.map_id], path=[path], size=[result.size], error=[error_message(exc, path)])
        return to_batches({"maps": maps})

"""``sourcebsp scan PATH... -o OUT_DIR [--jobs N] [--dask ADDRESS|local] [--since PREVIOUS] [--game DIR]``:
a collection of maps into Parquet tables.

The tables (``maps``, ``lumps``, ``entities``, ``props``, ``materials``,
``pakfiles``, ``findings``; docs/scan.md) are read by
pandas, polars, DuckDB or Spark.  A file that is not a readable map is a
``maps`` row with its error; the exit code is 0 whenever the tables were
written.  Only this command imports pyarrow and dask.
"""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .._extras import needs_extra
from . import _common
from ._progress import counter
from ._maps import find_maps

if TYPE_CHECKING:
    from ..scan import ScanReport
    from ..scan.rows import MapResult

def list_maps(names: Sequence[str]) -> list[str]:
    """The map files named, through the one listing of every command (files as given,
    folders walked to any depth for ``.bsp`` and ``.bsp.bz2``, patterns expanded)."""
    return find_maps(names).names


def _client(address: str, jobs: int) -> Any:
    with needs_extra("--dask", "dask"):
        import dask.distributed
    # Through Any: dask's constructors carry no type hints.
    Client: Any = dask.distributed.Client
    LocalCluster: Any = dask.distributed.LocalCluster
    if address == "local":
        # One thread per worker process: reading a map is mostly Python, which holds the GIL.
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, dashboard_address=None)
        return Client(cluster)
    return Client(address)


def _summary(report: "ScanReport", out_dir: str) -> str:
    rate = report.bytes / report.seconds / 1e6 if report.seconds else 0.0
    rows = ", ".join(f"{count:,} {name}" for name, count in report.rows.items() if name != "maps")
    reused = f", {report.reused} reused" if report.reused else ""
    return (f"sourcebsp: scanned {report.files} files ({report.bytes / 1e6:,.1f} MB) in {report.seconds:.2f} s "
            f"({rate:,.0f} MB/s): {report.read} read{reused}, {report.errors} with errors; "
            f"wrote {out_dir} ({rows})")


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("scan", "Scan many maps (folders are walked for .bsp and .bsp.bz2 files) into Apache Parquet "
                                "tables, one row per item, keyed by map_id (the file's sha256): maps, lumps, entities, "
                                "props, materials, pakfiles, findings. A file that is not a readable map is a maps row "
                                "with its error.")
    ap.add_argument("paths", nargs="+", metavar="PATH", help="map files (.bsp, .bsp.bz2) or folders of them")
    ap.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the folder of tables to write")
    ap.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                    help="local worker processes (default 1); with --dask local, the cluster's workers")
    ap.add_argument("--dask", metavar="ADDRESS",
                    help="run on a Dask cluster: 'local' (a LocalCluster here) or a scheduler address "
                         "(tcp://HOST:PORT), whose workers read the maps by path (a shared file system)")
    ap.add_argument("--since", metavar="PREVIOUS_OUT_DIR",
                    help="an earlier output: maps with a sha256 it holds are not read again, their rows are copied")
    ap.add_argument("--game", metavar="DIR", help="the game or mod folder for the check rules (as check --game)")
    _common.overwrite_option(ap, "OUT_DIR")
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be 1 or more, not {args.jobs}")

    def body() -> int:
        with needs_extra("scan", "scan"):
            from ..scan import scan
        out = args.output
        if os.path.lexists(out):
            if not os.path.isdir(out) or os.path.islink(out):
                raise _common.CommandError(f"{out} exists and is not a folder: choose another OUT_DIR")
            if not args.overwrite:
                raise _common.CommandError(f"{out} exists: give --overwrite to replace it")
        if args.since is not None and not os.path.isdir(args.since):
            raise _common.CommandError(f"--since {args.since}: no such folder")
        if args.game is not None and not os.path.isdir(args.game):
            raise _common.CommandError(f"--game {args.game}: no such folder")
        paths = list_maps(args.paths)
        if not paths:
            raise _common.CommandError(f"no .bsp or .bsp.bz2 files in {', '.join(args.paths)}")
        client = _client(args.dask, args.jobs) if args.dask is not None else None
        bugs: list[str] = []  # maps that met a bug of sourcebsp (their rows say so): worth a report

        def done(result: "MapResult", advance: Callable[[int], None]) -> None:
            advance(1)
            if (result.error or "").startswith("internal error"):
                bugs.append(result.path)

        try:
            with counter("scan", len(paths)) as advance:
                report = scan(paths, out, jobs=args.jobs, client=client, since=args.since, game=args.game,
                              overwrite=args.overwrite, progress=lambda result: done(result, advance),
                              variant=args.variant)
        except FileNotFoundError as exc:  # a --since folder without its tables
            raise _common.CommandError(f"{exc.strerror}: {exc.filename}") from None
        except ValueError as exc:  # a --since table of another schema
            raise _common.CommandError(str(exc)) from None
        finally:
            if client is not None:
                cluster = getattr(client, "cluster", None)
                client.close()
                if cluster is not None and args.dask == "local":
                    cluster.close()
        for path in bugs:
            print(f"sourcebsp: warning: {path}: an internal error of sourcebsp (its maps row has the message; "
                  "please report it with the map)", file=sys.stderr)
        print(_summary(report, out), file=sys.stderr)
        return 0

    return _common.run(body, args)

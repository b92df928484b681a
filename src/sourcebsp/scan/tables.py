"""The Parquet tables of a scan: schemas, a buffered writer, a previous output read back.

The tables are written into a temporary folder beside the output folder and
renamed into place only when every table is complete: a scan that fails or is
interrupted leaves no half-written table, and the previous output (if one is
replaced) stays whole until then.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Collection, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .rows import COLUMNS, TABLES, Columns

__all__ = ["SCHEMAS", "TableWriter", "to_batches", "Previous", "staged_folder", "table_path"]

SCHEMAS: dict[str, pa.Schema] = {
    name: pa.schema([(column, pa.type_for_alias(kind)) for column, kind in columns])
    for name, columns in COLUMNS.items()
}
# Rows held per table before they go out as one row group: bounds the writer's memory, not the scan's size.
_ROWS_PER_GROUP = 1 << 16


def table_path(folder: str | os.PathLike[str], name: str) -> str:
    return os.path.join(folder, f"{name}.parquet")


def _text(value: Any) -> Any:
    """A string Parquet can hold (UTF-8): bytes that are not UTF-8 (kept as surrogates by the codecs) as ``\\xNN``."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return value


def _batch(name: str, columns: Columns) -> pa.RecordBatch:
    schema = SCHEMAS[name]
    arrays = []
    for field in schema:
        values = columns[field.name]
        try:
            arrays.append(pa.array(values, field.type))
        except (UnicodeEncodeError, pa.ArrowInvalid):
            arrays.append(pa.array([_text(v) for v in values], field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def to_batches(tables: dict[str, Columns]) -> dict[str, pa.RecordBatch]:
    """Each table's rows (of one map) as a record batch of its schema."""
    return {name: _batch(name, columns) for name, columns in tables.items()}


class TableWriter:
    """Writes every table into ``folder``, a row group at a time."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.rows = dict.fromkeys(TABLES, 0)
        self._pending: dict[str, list[pa.RecordBatch]] = {name: [] for name in TABLES}
        self._pending_rows = dict.fromkeys(TABLES, 0)
        self._writers = {name: pq.ParquetWriter(table_path(folder, name), SCHEMAS[name], compression="zstd")
                         for name in TABLES}

    def add(self, name: str, columns: Columns) -> None:
        """Rows of one map for table ``name``."""
        self.add_batch(name, _batch(name, columns))

    def add_batch(self, name: str, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        self._pending[name].append(batch)
        self._pending_rows[name] += batch.num_rows
        self.rows[name] += batch.num_rows
        if self._pending_rows[name] >= _ROWS_PER_GROUP:
            self._flush(name)

    def _flush(self, name: str) -> None:
        if self._pending[name]:
            self._writers[name].write_table(pa.Table.from_batches(self._pending[name], SCHEMAS[name]))
        self._pending[name] = []
        self._pending_rows[name] = 0

    def close(self) -> None:
        for name in TABLES:
            self._flush(name)
            self._writers[name].close()

    def abort(self) -> None:
        for writer in self._writers.values():
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - the folder is removed anyway
                pass


class Previous:
    """The tables of an earlier scan (``--since``): which maps it holds, and their rows."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        for name in TABLES:
            path = table_path(folder, name)
            if not os.path.isfile(path):
                raise FileNotFoundError(2, f"no {name}.parquet in the previous scan", path)
        maps = pq.read_table(table_path(folder, "maps"))
        if maps.schema != SCHEMAS["maps"]:
            raise ValueError(f"{table_path(folder, 'maps')} is not a maps table of this sourcebsp scan")
        # One row per distinct map: its facts, for the maps row of a file that is not read again.
        rows = maps.to_pylist()
        self.maps: dict[str, dict[str, Any]] = {r["map_id"]: r for r in rows if r["map_id"] is not None}

    @property
    def known(self) -> frozenset[str]:
        return frozenset(self.maps)

    def map_row(self, map_id: str, path: str, size: int | None) -> Columns:
        row = dict(self.maps[map_id], path=path, size=size)
        return {name: [row[name]] for name, _ in COLUMNS["maps"]}

    def batches(self, name: str, map_ids: Collection[str]) -> Iterator[pa.RecordBatch]:
        """The rows of table ``name`` whose map is in ``map_ids``, a batch at a time."""
        if not map_ids:
            return
        wanted = pa.array(sorted(map_ids), pa.string())
        source = pq.ParquetFile(table_path(self.folder, name))
        if source.schema_arrow != SCHEMAS[name]:
            raise ValueError(f"{table_path(self.folder, name)} is not a {name} table of this sourcebsp scan")
        for batch in source.iter_batches(batch_size=_ROWS_PER_GROUP):
            chosen = batch.filter(pc.is_in(batch.column("map_id"), value_set=wanted))
            if chosen.num_rows:
                yield chosen


class staged_folder:
    """A temporary folder beside ``target``, renamed to ``target`` when the ``with`` block succeeds.

    An existing ``target`` is replaced only with ``overwrite`` (and only then);
    on failure the temporary folder is removed and ``target`` is as it was.
    """

    def __init__(self, target: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        self.target = os.path.abspath(os.fspath(target))
        self.overwrite = overwrite
        self.path = ""

    def __enter__(self) -> str:
        if os.path.lexists(self.target) and not self.overwrite:
            raise FileExistsError(17, "the output folder exists (give overwrite=True / --overwrite to replace it)",
                                  self.target)
        parent = os.path.dirname(self.target)
        os.makedirs(parent, exist_ok=True)
        self.path = tempfile.mkdtemp(prefix=f".{os.path.basename(self.target)}.", suffix=".partial", dir=parent)
        return self.path

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        if kind is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            return
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(self.path, 0o777 & ~mask)  # mkdtemp's folder is private; the output is an ordinary one
        old = ""
        if os.path.lexists(self.target):
            old = self.path + ".old"  # beside the staging folder, whose name mkdtemp made unique
            os.rename(self.target, old)
        try:
            os.rename(self.path, self.target)
        except BaseException:
            if old:
                os.rename(old, self.target)
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        if old:
            if os.path.isdir(old) and not os.path.islink(old):
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.unlink(old)

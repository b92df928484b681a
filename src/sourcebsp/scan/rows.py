"""One map's rows of every ``scan`` table, as plain columns (runs in a worker; no pyarrow here).

Each table is keyed by ``map_id``, the sha256 of the file's bytes (of the
``.bsp.bz2`` file itself for a packed map).  The values are those the CLI's
JSON gives for the map: the lump directory of ``info``, the entities of
``entities``, the props of ``props``, the pakfile of ``pak list`` and the
findings of ``check``, read through the same library calls, for a map of any
container.  A Titanfall map (rBSP, :mod:`sourcebsp.respawn`) gives its entities
those of the ENTITIES lump and the ``.ent`` files beside it, ``brush_count``
its collision brushes (CM_BRUSHES), no ``face_count`` and no findings: it has
meshes, not faces, and ``check``'s rules read faces.
"""
from __future__ import annotations

import hashlib
import json
import mmap
import os
import threading
from typing import TYPE_CHECKING, Any, Collection

import numpy as np

from ..content import mount
from ..content.lint import check_map
from ..errors import BspError, LumpNotInBranchError
from ..lump_ids import LumpId
from ..opening import open as open_map
from ..protocols import LumpKey

if TYPE_CHECKING:
    from ..codecs.entities import Entity
    from ..content.gamefs import GameFS
    from ..protocols import MapReader

__all__ = ["COLUMNS", "TABLES", "MapResult", "map_result", "file_id", "error_message"]

# Every table's columns and their types, declared once (the Parquet schemas are made from it).
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "maps": (("map_id", "string"), ("path", "string"), ("size", "int64"), ("version", "int32"),
             ("variant", "string"), ("revision", "int32"), ("entity_count", "int64"),
             ("static_prop_count", "int64"), ("face_count", "int64"), ("brush_count", "int64"),
             ("pak_file_count", "int64"), ("error", "string")),
    "lumps": (("map_id", "string"), ("index", "int32"), ("name", "string"), ("version", "int32"),
              ("offset", "int64"), ("length", "int64"), ("compressed", "bool"), ("uncompressed_length", "int64")),
    "entities": (("map_id", "string"), ("index", "int64"), ("classname", "string"), ("targetname", "string"),
                 ("origin_x", "float64"), ("origin_y", "float64"), ("origin_z", "float64"), ("keyvalues", "string")),
    "props": (("map_id", "string"), ("index", "int64"), ("model", "string"), ("origin_x", "float64"),
              ("origin_y", "float64"), ("origin_z", "float64"), ("pitch", "float64"), ("yaw", "float64"),
              ("roll", "float64"), ("skin", "int64"), ("solid", "int64")),
    "materials": (("map_id", "string"), ("material", "string")),
    "pakfiles": (("map_id", "string"), ("name", "string"), ("size", "int64"), ("compressed_size", "int64")),
    "findings": (("map_id", "string"), ("rule", "string"), ("severity", "string"), ("message", "string")),
}
TABLES = tuple(COLUMNS)

# A table's rows: column name -> values (a list, or a numpy array for numbers).
Columns = dict[str, Any]


class MapResult:
    """What a worker sends back for one file.

    ``reused``: the file's ``map_id`` was among the known ones, so it was not
    read: its rows are copied from the previous output.  ``tables`` then holds
    no rows, and ``maps`` only what the file itself gives (path, size).
    """

    __slots__ = ("map_id", "path", "size", "reused", "tables")

    def __init__(self, map_id: str | None, path: str, size: int | None, reused: bool,
                 tables: dict[str, Columns]) -> None:
        self.map_id = map_id
        self.path = path
        self.size = size
        self.reused = reused
        self.tables = tables

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.map_id, self.path, self.size, self.reused, self.tables)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.map_id, self.path, self.size, self.reused, self.tables = state

    @property
    def error(self) -> str | None:
        maps = self.tables.get("maps")
        return None if not maps else maps["error"][0]


def error_message(exc: BaseException, path: str) -> str:
    """The one line the CLI prints for ``exc`` (without its ``sourcebsp: error:`` prefix)."""
    if isinstance(exc, OSError) and not isinstance(exc, BspError):
        text = f"{exc.strerror}: {path}" if exc.strerror else str(exc)
    elif isinstance(exc, (BspError, MemoryError)):
        text = str(exc) if not isinstance(exc, MemoryError) else \
            "out of memory (the map asks for more than this machine can give)"
    else:  # a bug of sourcebsp, as the CLI words it; the scan goes on
        text = f"internal error: {type(exc).__name__}: {exc} (a bug of sourcebsp: please report it with the map)"
    return " ".join(text.split()) or type(exc).__name__


def file_id(path: str) -> tuple[str, int]:
    """(sha256 of the file's bytes in hex, its size); hashed from a memory map, no copy."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if not size:
            return hashlib.sha256(b"").hexdigest(), 0
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return hashlib.sha256(mapped).hexdigest(), size


_mounted = threading.local()


def _game(game: str | None) -> "GameFS":
    """The mounted game of ``--game``, once per worker thread: a map's check attaches its
    pakfile to the game, so two maps read at once (a Dask worker's threads) need one each."""
    games: dict[str | None, GameFS] | None = getattr(_mounted, "games", None)
    if games is None:
        games = _mounted.games = {}
    fs = games.get(game)
    if fs is None:
        fs = games[game] = mount(game)
    return fs


def map_result(path: str, game: str | None = None, known: Collection[str] = (), variant: str | None = None) -> MapResult:
    """Every table's rows for the file at ``path``; never raises for a bad file.

    A file that cannot be read as a map gives one ``maps`` row with ``error``
    set (and the header facts when the header was read), and no other rows.
    A file whose sha256 is in ``known`` is not read (see :class:`MapResult`).  ``variant``
    names the engine branch to read it as (None: the detected one), as ``--variant`` does.
    """
    try:
        map_id, size = file_id(path)
    except OSError as exc:
        return MapResult(None, path, None, False, {"maps": _map_row(None, path, None, error=error_message(exc, path))})
    if map_id in known:
        return MapResult(map_id, path, size, True, {})
    header: dict[str, Any] = {}
    try:
        with open_map(path, variant) as bsp:
            header = {"version": bsp.version, "variant": bsp.variant.name, "revision": bsp.map_revision}
            tables = _tables(bsp, game)
    except Exception as exc:  # noqa: BLE001 - any failure is this map's error row, never the scan's end
        return MapResult(map_id, path, size, False,
                         {"maps": _map_row(map_id, path, size, error=error_message(exc, path), **header)})
    counts = {"entity_count": len(tables["entities"]["index"]), "static_prop_count": len(tables["props"]["index"]),
              "pak_file_count": len(tables["pakfiles"]["name"])}
    tables["maps"] = _map_row(map_id, path, size, **header, **counts, **tables.pop("_counts"))
    for name, columns in tables.items():
        if name != "maps":
            rows = len(next(iter(columns.values())))
            columns["map_id"] = [map_id] * rows
    return MapResult(map_id, path, size, False, tables)


def _map_row(map_id: str | None, path: str, size: int | None, **values: Any) -> Columns:
    return {name: [values.get(name, {"map_id": map_id, "path": path, "size": size}.get(name))]
            for name, _ in COLUMNS["maps"]}


def _count(bsp: MapReader, *keys: LumpKey) -> int | None:
    """The records of the first of the lumps ``keys`` the map's branch has, as ``info`` counts
    them (0 when absent, None when it stays raw or the branch has none of them)."""
    for key in keys:
        try:
            return bsp.count(key) if bsp.has_lump(key) else 0
        except LumpNotInBranchError:
            continue
    return None


def _has_faces(bsp: MapReader) -> bool:
    try:
        bsp.has_lump(LumpId.FACES)
    except LumpNotInBranchError:  # Titanfall's meshes
        return False
    return True


def _tables(bsp: MapReader, game: str | None) -> dict[str, Columns]:
    tables = {
        "lumps": _lumps(bsp),
        "entities": _entity_rows([e for _, entities in bsp.entity_sets() for e in entities]),
        "props": _props(bsp),
        "materials": {"material": bsp.texture_names()},
        "pakfiles": _pakfiles(bsp),
    }
    findings = []
    if _has_faces(bsp):  # check's rules read faces: a branch without them has no findings
        fs = _game(game)
        try:
            findings = check_map(bsp, fs)
        finally:
            fs.attach_pakfile(None)  # the game outlives the map: it keeps no part of it
    tables["findings"] = {"rule": [f.rule for f in findings], "severity": [f.severity for f in findings],
                          "message": [f.message for f in findings]}
    # Brushes: Source's BRUSHES, or the collision brushes of a branch without them (Titanfall's).
    tables["_counts"] = {"face_count": _count(bsp, LumpId.FACES),
                         "brush_count": _count(bsp, LumpId.BRUSHES, "CM_BRUSHES")}
    return tables


def _lumps(bsp: MapReader) -> Columns:
    # As ``info`` lists them: the non-empty directory entries; a compressed lump's fourCC is its
    # real size, a lump in a file of its own beside the map has that file's length.
    listed = list(bsp.iter_lumps())
    entries = [entry for _, entry in listed]
    lengths = [bsp.stored_size(lump) for lump, _ in listed]
    return {
        "index": [int(lump) for lump, _ in listed],
        "name": [bsp.lump_name(lump) for lump, _ in listed],
        "version": [e.version for e in entries],
        "offset": [e.fileofs for e in entries],
        "length": lengths,
        "compressed": [e.compressed for e in entries],
        "uncompressed_length": [e.fourcc if e.compressed else length for e, length in zip(entries, lengths)],
    }


def _entity_rows(listed: "list[Entity]") -> Columns:
    pairs = [e.items() for e in listed]
    # classname, targetname and origin as Entity gives them (the last value of the key, its case
    # ignored), from one pass over the pairs: each Entity look-up is a pass of its own (three were
    # half of this table's time).
    last = [{k.casefold(): v for k, v in kv} for kv in pairs]
    origins = [_three_numbers(keys.get("origin")) for keys in last]
    return {
        "index": list(range(len(listed))),
        "classname": [keys.get("classname") for keys in last],
        "targetname": [keys.get("targetname") for keys in last],
        "origin_x": [o[0] if o else None for o in origins],
        "origin_y": [o[1] if o else None for o in origins],
        "origin_z": [o[2] if o else None for o in origins],
        # As ``entities --json`` gives them: [[key, value], ...] in file order, repeated keys kept.
        "keyvalues": [json.dumps(kv) for kv in pairs],  # (key, value) tuples are JSON arrays
    }


def _three_numbers(text: str | None) -> tuple[float, float, float] | None:
    """An ``origin`` value as Entity.origin reads it: three numbers, else None."""
    if text is None:
        return None
    parts = text.split()
    if len(parts) != 3:
        return None
    try:
        return (float(parts[0]), float(parts[1]), float(parts[2]))
    except ValueError:
        return None


def _props(bsp: MapReader) -> Columns:
    props = bsp.static_props
    records, models = props.props, props.model_names()
    origin = np.asarray(records["origin"], np.float64).reshape(-1, 3)
    angles = np.asarray(records["angles"], np.float64).reshape(-1, 3)
    return {
        "index": np.arange(len(records), dtype=np.int64),
        "model": models,
        "origin_x": origin[:, 0], "origin_y": origin[:, 1], "origin_z": origin[:, 2],
        "pitch": angles[:, 0], "yaw": angles[:, 1], "roll": angles[:, 2],
        "skin": np.asarray(records["skin"], np.int64),
        "solid": np.asarray(records["solid"], np.int64),
    }


def _pakfiles(bsp: MapReader) -> Columns:
    pak = bsp.lump_or_none(LumpId.PAKFILE, "read the pakfile")
    entries = [] if pak is None else pak.entries()
    return {"name": [e.name for e in entries], "size": [e.size for e in entries],
            "compressed_size": [e.compressed_size for e in entries]}

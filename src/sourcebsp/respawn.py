"""Respawn's rBSP maps: Titanfall (rBSP 29) and Titanfall 2 (rBSP 37).

A container beside :mod:`sourcebsp.container`, not a variant of it: the header
has 128 lumps (``ident``, ``version``, ``mapRevision``, ``127``, then 128
``lump_t`` {fileofs, filelen, version, fourCC}), a lump may live in a file of
its own beside the map (``<map>.bsp.<index as 4 hex digits>.bsp_lump``), and
entities are split between the ENTITIES lump and ``<map>_<partition>.ent``
files named by ENTITY_PARTITIONS.  The header, lump ids and record layouts are
:mod:`sourcebsp.codecs.respawn`'s; the branches are the ``titanfall`` and
``titanfall2`` entries of the branch table (:mod:`sourcebsp.variants`, whose
``container`` is ``"respawn"``).

A :class:`RespawnBsp` is a :class:`~sourcebsp.protocols.MapReader` like a
Source map: lumps by number (0-127), by name (``"meshes"``) or by the Source
lump of the same meaning (``LumpId.VERTEXES`` is rBSP's VERTICES), the typed
attributes (``bsp.planes``, ``bsp.entities``, ``bsp.pakfile``,
``bsp.static_props``), ``to_bytes``, ``save`` and ``close``.  A Source lump the
branch does not have (``bsp.faces``) raises
:class:`~sourcebsp.errors.LumpNotInBranchError`.

What is decoded (numpy record arrays, views of the file's bytes): planes,
texture data and their names, vertices, vertex normals, the five vertex
formats, mesh indices, meshes, mesh bounds, material sorts, models and the
collision lumps; the entities and the pakfile as for Source maps.  Every
other lump is kept as bytes (a :class:`~sourcebsp.RawLump`);
:meth:`RespawnBsp.to_bytes` writes the map back byte for byte, and
re-encoding the decoded lumps gives the same bytes.
"""
from __future__ import annotations

import os
import re
import struct
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from .codecs.base import Codec, LumpContext, RawLump
from .codecs.gamelump_directory import id_to_str, packed_directory, read_directory
from .codecs.respawn import (ENTITIES, GAME_LUMP, HEADER, HEADER_SIZE, IDENT, NUM_LUMPS, PAKFILE,
                             STATIC_PROP_VERSIONS, decode_static_props, lump_names, record_dtypes)
from .compression import bzip2_decompress, is_bzip2
from .errors import BspFormatError, ClosedMapError, LumpNotInBranchError, LumpSizeError, TruncatedError, UnsupportedError
from .detection import detect_respawn
from .header import Endian, LumpEntry
from .lump_ids import LumpId
from .lumpaccess import TypedLumps
from .mapqueries import MapQueries
from .protocols import GameLumpEntry, LumpKey, PartitionFiles
from .variants import VARIANTS, Variant, chosen_variant

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from .codecs.entities import Entities
    from .codecs.staticprops import DetailProps, StaticProps
    from .compression import Limits
    from .protocols import Compression

__all__ = [
    "IDENT",
    "VERSIONS",
    "NUM_LUMPS",
    "HEADER_SIZE",
    "RespawnLump",
    "RespawnBsp",
    "SOURCE_LUMPS",
    "is_respawn",
    "lump_names",
    "record_dtypes",
]

# What a file of each version is: the branch table's entries (sourcebsp.variants, container "respawn").
VERSIONS: Mapping[int, str] = MappingProxyType({version: variant.name for variant in VARIANTS.values()
                                                if variant.container == "respawn" for version in variant.versions})
DESCRIPTIONS: Mapping[str, str] = MappingProxyType({VARIANTS[name].name: VARIANTS[name].description
                                                    for name in VERSIONS.values()})


_LUMP_T = struct.Struct("<4i")  # fileofs, filelen, version, fourCC
_PARTITION_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")

#: One ``lump_t`` of the rBSP directory: the fields of a Source one.
RespawnLump = LumpEntry

#: The Source lumps rBSP keeps, by the name of their rBSP twin: ``bsp.vertexes`` and
#: ``bsp[LumpId.VERTEXES]`` of a Titanfall map are its VERTICES.  Respawn kept Source's
#: numbers for all but the world lights (bsp_tool's respawn LUMP enums).
SOURCE_LUMPS: Mapping[LumpId, str] = MappingProxyType({
    LumpId.ENTITIES: "ENTITIES", LumpId.PLANES: "PLANES", LumpId.TEXDATA: "TEXTURE_DATA",
    LumpId.VERTEXES: "VERTICES", LumpId.MODELS: "MODELS", LumpId.WORLDLIGHTS: "WORLD_LIGHTS",
    LumpId.PHYSCOLLIDE: "PHYSICS_COLLIDE", LumpId.VERTNORMALS: "VERTEX_NORMALS", LumpId.GAME_LUMP: "GAME_LUMP",
    LumpId.LEAFWATERDATA: "LEAF_WATER_DATA", LumpId.PAKFILE: "PAKFILE", LumpId.CUBEMAPS: "CUBEMAPS",
    LumpId.TEXDATA_STRING_DATA: "TEXTURE_DATA_STRING_DATA",
    LumpId.TEXDATA_STRING_TABLE: "TEXTURE_DATA_STRING_TABLE",
})


def is_respawn(head: bytes | memoryview) -> bool:
    """True when ``head`` (a file's first 8 bytes or more) starts a Titanfall or Titanfall 2 map."""
    return detect_respawn(head) is not None


def _lump_file(path: Path, index: int) -> Path:
    return path.with_name(f"{path.name}.{index:04x}.bsp_lump")


class RespawnBsp(MapQueries, TypedLumps):
    """An rBSP map read into memory, with its external lump and ``.ent`` files.

    Parameters
    ----------
    data : bytes
        The ``.bsp`` file's bytes.
    path : Path or None
        Where it was read from: external ``.bsp_lump`` and ``.ent`` files are
        looked for beside it.

    Raises
    ------
    UnsupportedError
        Not an rBSP 29 or 37 file.
    TruncatedError, BspFormatError
        The header or a lump does not fit the file (the message names the lump and offset).
    """

    #: rBSP has no ``lzma_header_t``: its lumps are stored as they are.
    lzma_lumps = False
    #: The pakfile is read (listed, extracted), not written back changed.
    writes_pakfile = False

    def __init__(self, data: bytes, path: Path | None = None) -> None:
        self.path = path
        self._data = data
        if len(data) < 8 or data[:4] != IDENT:
            raise UnsupportedError("not a Respawn rBSP map (expected the ident rBSP)", offset=0)
        self.version: int = struct.unpack_from("<i", data, 4)[0]
        if self.version not in VERSIONS:
            raise UnsupportedError(f"rBSP version {self.version} is not supported "
                                   f"(supported: {', '.join(map(str, VERSIONS))})", offset=4)
        if len(data) < HEADER_SIZE:
            raise TruncatedError(f"file is {len(data)} bytes, shorter than the {HEADER_SIZE}-byte rBSP header",
                                 offset=len(data), needed=HEADER_SIZE, available=len(data))
        self.map_revision, last = struct.unpack_from("<2i", data, 8)
        if last != NUM_LUMPS - 1:
            raise BspFormatError(f"header says {last + 1} lumps, rBSP has {NUM_LUMPS}", offset=12)
        self.names = lump_names(self.version)
        self.lumps: list[LumpEntry] = list(map(LumpEntry._make, _LUMP_T.iter_unpack(data[16:HEADER_SIZE])))
        self.external: dict[int, bytes] = {}
        if path is not None:
            for index in range(NUM_LUMPS):
                lump_path = _lump_file(path, index)
                if lump_path.is_file():
                    self.external[index] = lump_path.read_bytes()
        self._replaced: dict[int, bytes] = {}  # lumps given new bytes (set_lump)
        self._decoded: dict[int, Any] = {}  # values read so far (get_lump)
        self._static_props: StaticProps | None = None
        self._static_props_read = (b"", b"")  # their records' and names' bytes as read, to tell an edit
        self._closed = False
        for index, entry in enumerate(self.lumps):
            if entry.filelen or entry.fileofs < 0:  # most of the 128 are unused: (0, 0, 0, 0) or (ofs, 0, ...)
                self._check_entry(index, entry)
        named = self._partitions()
        # A name becomes a file name beside the map: one with a path or odd characters is never
        # looked up, and reading the partitions' entities raises (see partition_entities).
        self.partitions = [part for part in named if _PARTITION_NAME.fullmatch(part)]
        self._bad_partitions = [part for part in named if part not in self.partitions]
        self.ent_files: dict[str, bytes] = {}
        if path is not None:
            for partition in self.partitions:
                ent = path.with_name(f"{path.stem}_{partition}.ent")
                if ent.is_file():
                    self.ent_files[partition] = ent.read_bytes()

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, variant: "str | Variant | None" = None,
             limits: "Limits | None" = None) -> "RespawnBsp":
        """Read the map at ``path`` and the lump and entity files beside it.

        ``variant`` (or, when None, a :class:`~sourcebsp.variants.reading_as` block's) is the
        branch the caller expects: another one than the file's raises :class:`UnsupportedError`.
        A ``MAP.bsp.bz2`` is unpacked in memory within ``limits.bzip2_size`` (as a Source
        map's), and the lump and ``.ent`` files looked for are ``MAP``'s.
        """
        from pathlib import Path  # not at import: ``info`` of a Source map does not load pathlib

        where = Path(path)
        data = where.read_bytes()
        base = where
        if is_bzip2(data[:4]):  # MAP.bsp.bz2: unpacked in memory; its lump and .ent files are MAP's
            data = bzip2_decompress(data, limits=limits, name=str(where))
            base = where.with_suffix("") if where.suffix.lower() == ".bz2" else where
        bsp = cls(data, base)
        bsp.path = where
        chosen = chosen_variant(variant)
        if chosen is not None and chosen.name != bsp.variant.name:
            raise UnsupportedError(f"variant {chosen.name!r} asked for, but this is a Respawn rBSP map "
                                   f"({bsp.variant.name})", offset=0)
        return bsp

    def __enter__(self) -> "RespawnBsp":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Forget the map's bytes: reading or saving lumps afterwards raises
        :class:`~sourcebsp.ClosedMapError` (the map is read into memory, so nothing is held open)."""
        self._closed = True
        self._data = b""
        self.external = {}
        self._replaced = {}
        self._decoded = {}
        self._static_props = None

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            where = f" {self.path}" if self.path else ""
            raise ClosedMapError(f"the map{where} was closed; open it again to read or save its lumps")

    def __repr__(self) -> str:
        where = f" {self.path.name!r}" if self.path else ""
        return f"<RespawnBsp{where} rBSP v{self.version} {self.variant.name}{' closed' if self._closed else ''}>"

    # -- the directory -------------------------------------------------------------------------

    @property
    def variant(self) -> Variant:
        """The branch table's entry: ``titanfall`` or ``titanfall2``."""
        return VARIANTS[VERSIONS[self.version]]

    @property
    def file_size(self) -> int:
        return len(self._data)

    @property
    def ident(self) -> str:
        return IDENT.decode("ascii")

    @property
    def lump_order(self) -> str:
        """``"std"``: rBSP's ``lump_t`` has Source's field order."""
        return "std"

    @property
    def encrypted(self) -> None:
        """None: rBSP files are never encrypted."""
        return None

    @property
    def endian(self) -> Endian:
        """Always ``"<"``: rBSP maps are little-endian."""
        return "<"

    def _check_entry(self, index: int, entry: LumpEntry) -> None:
        fileofs, filelen = entry.fileofs, entry.filelen
        name = self.names[index]
        if fileofs < 0 or filelen < 0:
            raise BspFormatError(f"directory entry has negative offset {fileofs} or length {filelen}",
                                 lump=name, offset=16 + 16 * index)
        if filelen == 0 or index in self.external:
            return
        if fileofs < HEADER_SIZE:
            raise BspFormatError(f"lump starts at {fileofs}, inside the {HEADER_SIZE}-byte header",
                                 lump=name, offset=fileofs)
        if fileofs + filelen > len(self._data):
            raise TruncatedError(f"lump of {filelen} bytes at {fileofs} runs past the end of the "
                                 f"{len(self._data)}-byte file", lump=name, offset=fileofs,
                                 needed=fileofs + filelen, available=len(self._data))

    def lump_index(self, lump: LumpKey) -> int:
        """The index of a lump given by number (0-127), by name (its own, ``"VERTICES"``, or its
        Source twin's, ``"vertexes"``) or by :class:`~sourcebsp.LumpId` (the Source lump of the
        same meaning, :data:`SOURCE_LUMPS`).

        Raises
        ------
        LumpNotInBranchError
            A Source lump this branch does not have (``LumpId.FACES``).
        KeyError
            A number or name that is no lump at all.
        """
        if isinstance(lump, str):
            name = lump.upper()
            if name in self.names:
                return self.names.index(name)
            if name not in LumpId.__members__:
                raise KeyError(f"no lump named {lump!r} in rBSP {self.version}")
            lump = LumpId[name]
        if isinstance(lump, LumpId):
            twin = SOURCE_LUMPS.get(lump)
            if twin is None or twin not in self.names:
                raise LumpNotInBranchError(f"{self.variant.description} maps have no {lump.name} lump",
                                           lump=lump.name)
            return self.names.index(twin)
        if not 0 <= lump < NUM_LUMPS:
            raise KeyError(f"lump index {lump} is not 0-{NUM_LUMPS - 1}")
        return int(lump)

    def raw(self, lump: LumpKey) -> bytes:
        """A lump's bytes, from the map or from its ``.bsp_lump`` file (or as set since)."""
        self._check_open()
        index = self.lump_index(lump)
        if index in self._replaced:
            return self._replaced[index]
        if index in self.external:
            return self.external[index]
        fileofs, filelen = self.lumps[index][:2]
        return self._data[fileofs:fileofs + filelen]

    def iter_lumps(self) -> Iterator[tuple[int, LumpEntry]]:
        """(index, directory entry) for every lump that has bytes (in the map or its own file)."""
        for index, entry in enumerate(self.lumps):
            if self.has_lump(index):
                yield index, entry

    # -- the MapReader protocol: lumps by key ------------------------------------------------------

    def lump_name(self, key: LumpKey) -> str:
        return self.names[self.lump_index(key)]

    def entry(self, key: LumpKey) -> LumpEntry:
        """The directory entry (``lump_t``) of a lump."""
        return self.lumps[self.lump_index(key)]

    def _index(self, key: LumpKey) -> int:
        return self.lump_index(key)

    def _holds(self, index: int) -> bool:
        return self.has_lump(index)

    def _lump_offset(self, index: int) -> int:
        return self._file_offset(index)  # 0 for a lump read from its own .bsp_lump file

    def has_lump(self, key: LumpKey) -> bool:
        """Whether the map holds the lump (bytes in the map or its own file, or set since)."""
        return len(self.raw(key)) > 0

    def is_external(self, key: LumpKey) -> bool:
        """Whether the lump is read from its own ``.bsp_lump`` file beside the map."""
        return self.lump_index(key) in self.external

    def stored_size(self, key: LumpKey) -> int:
        """The lump's length: of its bytes in the map, or of its own ``.bsp_lump`` file."""
        return len(self.raw(key))

    def is_loaded(self, key: LumpKey) -> bool:
        """Whether the lump has been decoded (or set) already."""
        index = self.lump_index(key)
        return index in self._decoded or index in self._replaced

    def codec(self, key: LumpKey) -> Codec | None:
        """None: rBSP lumps are decoded by the container itself, not by Source's codecs."""
        self.lump_index(key)
        return None

    def raw_lump(self, key: LumpKey) -> memoryview:
        """The lump's bytes as stored (rBSP does not compress lumps)."""
        return memoryview(self.raw(key))

    def lump_bytes(self, key: LumpKey) -> memoryview:
        """The lump's bytes (the same as :meth:`raw_lump`: rBSP does not compress lumps)."""
        return memoryview(self.raw(key))

    def _decode(self, index: int) -> Any:
        # The entity and pakfile codecs load with the first map that reads them, as the Source
        # container's codec table loads its codecs (opening a map reads neither).
        if index == ENTITIES:
            from .codecs.entities import parse_entities

            return parse_entities(self.raw(index), file_offset=self._file_offset(index))
        if index == PAKFILE:
            from .codecs.pakfile import Pakfile

            return Pakfile(self.raw(index), lump="PAKFILE", offset=self._file_offset(index))
        if index in record_dtypes(self.version):
            return self.array(index)
        return RawLump(self.raw(index), f"sourcebsp decodes no layout of rBSP lump {self.names[index]}")

    def set_lump(self, key: LumpKey, value: Any) -> None:
        """Give a lump a new value: bytes, records (a numpy array), entities or a pakfile;
        written by the next :meth:`to_bytes` or :meth:`save`."""
        self._check_open()
        index = self.lump_index(key)
        if isinstance(value, (bytes, bytearray, memoryview)):
            data = bytes(value)
        elif isinstance(value, RawLump):
            data = value.data
        elif hasattr(value, "to_bytes"):  # Entities, Pakfile
            data = value.to_bytes()
        elif hasattr(value, "tobytes"):  # a numpy array of the lump's records
            data = value.tobytes()
        else:
            raise TypeError(f"cannot write a {type(value).__name__} as rBSP lump {self.names[index]}")
        self._replaced[index] = data
        self._decoded[index] = value

    # -- decoded lumps ---------------------------------------------------------------------------

    def decoded_lumps(self) -> tuple[int, ...]:
        """The indices of the lumps :meth:`array` decodes."""
        return tuple(record_dtypes(self.version))

    def _file_offset(self, index: int) -> int:
        return 0 if index in self.external else self.lumps[index].fileofs

    def array(self, lump: LumpKey) -> "np.ndarray":
        """A decoded lump as a read-only numpy array (records, or vectors for VERTICES and normals).

        Raises
        ------
        KeyError
            The lump is not one sourcebsp decodes.
        LumpSizeError
            Its length is not a whole number of records.
        """
        import numpy as np  # with the first table of records: opening a map and its entities need none

        index = self.lump_index(lump)
        dtype = record_dtypes(self.version).get(index)
        if dtype is None:
            raise KeyError(f"lump {self.names[index]} is kept as bytes, not decoded")
        data = self.raw(index)
        if len(data) % dtype.itemsize:
            raise LumpSizeError(f"{len(data)} bytes is not a whole number of {dtype.itemsize}-byte records",
                                lump=self.names[index], offset=self._file_offset(index))
        return np.frombuffer(data, dtype)

    def count(self, lump: LumpKey) -> int | None:
        """The number of records of a decoded lump (None for a lump kept as bytes)."""
        index = self.lump_index(lump)
        if index not in record_dtypes(self.version):
            return None
        return len(self.array(index))

    def texture_names(self) -> list[str]:
        """The material name of each TEXTURE_DATA record (via the string table and string data)."""
        import numpy as np  # with the first table of records: opening a map and its entities need none

        strings = self.raw(0x2B)
        table = self.array(0x2C)
        names = []
        index = self.array(0x02)["name_index"]
        bad = (index < 0) | (index >= len(table))
        if bad.any():
            raise BspFormatError(f"texture data {int(np.argmax(bad))} names string {int(index[bad][0])} of "
                                 f"{len(table)}", lump="TEXTURE_DATA", offset=self._file_offset(0x02))
        for start in table[index].tolist():
            if not 0 <= start < len(strings):
                raise BspFormatError(f"string offset {start} outside the {len(strings)}-byte string data",
                                     lump="TEXTURE_DATA_STRING_TABLE", offset=self._file_offset(0x2C))
            end = strings.find(b"\0", start)
            names.append(strings[start:end if end >= 0 else len(strings)].decode("utf-8", "replace"))
        return names

    # -- entities ------------------------------------------------------------------------------

    def _partitions(self) -> list[str]:
        """The ``.ent`` partitions ENTITY_PARTITIONS names ("01*", the map's own lump, left out)."""
        text = self.raw(0x18).split(b"\0", 1)[0].decode("ascii", "replace")
        return [part for part in text.split() if not part.startswith("01")]

    def partition_entities(self) -> "dict[str, Entities]":
        """The entities of each ``.ent`` file found beside the map, by partition name.

        A file starts with a version line (``ENTITIES01``) before the entities.
        """
        from .codecs.entities import parse_entities  # as in _decode

        if self._bad_partitions:
            raise BspFormatError(f"entity partition {self._bad_partitions[0][:40]!r} is not a name of letters, "
                                 f"digits and underscores", lump="ENTITY_PARTITIONS", offset=self._file_offset(0x18))
        found = {}
        for partition, data in self.ent_files.items():
            start = len(self.ent_file_head(partition))
            found[partition] = parse_entities(data[start:], file_offset=start)
        return found

    @property
    def decompressed_size(self) -> int:
        """0: rBSP lumps are not compressed."""
        return 0

    def entity_sets(self) -> "list[tuple[str | None, Entities]]":
        """Every entity of the map by where it is kept: (None, the ENTITIES lump's), then
        (partition, its ``.ent`` file's) for each file found, in ENTITY_PARTITIONS' order."""
        found = self.partition_entities()
        order = [part for part in self.partitions if part in found] + sorted(set(found) - set(self.partitions))
        return [(None, self.entities), *((part, found[part]) for part in order)]

    def partition_files(self) -> PartitionFiles:
        """The partitions ENTITY_PARTITIONS names (those whose name may be a file name) and, sorted,
        those whose ``.ent`` file was found beside the map."""
        return PartitionFiles(list(self.partitions), sorted(self.ent_files))

    def ent_file_head(self, partition: str) -> bytes:
        """The version line a partition's ``.ent`` file starts with (``ENTITIES01\\n``)."""
        data = self.ent_files[partition]
        start = data.find(b"{")
        return data[:start] if start >= 0 else data.partition(b"\n")[0] + b"\n"

    def set_partition_entities(self, partition: str, entities: "Entities") -> None:
        """Replace the entities of the ``.ent`` file of ``partition``, keeping its version line."""
        if partition not in self.ent_files:
            raise KeyError(f"no {partition}.ent file beside the map (found: {', '.join(self.ent_files) or 'none'})")
        self.ent_files[partition] = self.ent_file_head(partition) + entities.to_bytes()

    # -- writing ---------------------------------------------------------------------------------

    def reencode(self) -> None:
        """Replace every decoded lump by its records encoded again (the same bytes, when they decode)."""
        for index in self.decoded_lumps():
            if len(self.raw(index)):
                self.set_lump(index, self.array(index))

    def _changed(self) -> dict[int, bytes]:
        """The lumps whose bytes differ from the file's: set ones, and entities or a pakfile
        edited in place since they were read."""
        if self._static_props is not None and self._static_props_edited():
            raise UnsupportedError("writing edited static props is not supported for rBSP maps (their "
                                   "game lump is kept as read)", lump="GAME_LUMP",
                                   offset=self._file_offset(GAME_LUMP))
        pending = dict(self._replaced)
        for index, value in self._decoded.items():
            if index not in pending and (getattr(value, "changed", False) or getattr(value, "modified", False)):
                pending[index] = value.to_bytes()
        return {index: data for index, data in pending.items()
                if index not in self.external and data != self.raw_original(index)}

    def to_bytes(self) -> bytes:
        """The ``.bsp`` file: the original bytes where nothing changed, a changed lump in its place.

        A changed lump keeps its place in the file; what follows moves by its change in
        size (rounded up to 4 bytes, zero-filled, so later lumps keep their alignment), and
        every directory offset past it moves with it, the game lump directory's too (its
        ``dgamelump_t.fileofs`` count from the start of the file).
        """
        self._check_open()
        changed = self._changed()
        if not changed:
            return self._data
        spans = sorted((entry.fileofs, entry.fileofs + entry.filelen, index)
                       for index, entry in enumerate(self.lumps) if entry.filelen and index not in self.external)
        shifts: list[tuple[int, int]] = []  # (original offset, bytes added before what follows it)
        cursor = HEADER_SIZE
        for start, end, index in spans:
            if index not in changed:
                continue
            if start < cursor or any(s < end and start < e and i != index for s, e, i in spans):
                raise UnsupportedError("a changed lump shares bytes with another lump", lump=self.names[index],
                                       offset=start)
            size = len(changed[index])
            shifts.append((start, size + (-(size - (end - start))) % 4 - (end - start)))
            cursor = end

        def moved(offset: int) -> int:
            return offset + sum(delta for start, delta in shifts if start < offset)

        game = self.lumps[GAME_LUMP]
        if game.filelen and GAME_LUMP not in changed and GAME_LUMP not in self.external \
                and moved(game.fileofs) != game.fileofs:
            changed[GAME_LUMP] = self._game_lump_moved(moved(game.fileofs))  # the same size
        pieces: list[bytes] = []
        cursor = HEADER_SIZE
        for start, end, index in spans:
            if index not in changed:
                continue
            data = changed[index]
            pieces += [self._data[cursor:start], data, b"\0" * ((-(len(data) - (end - start))) % 4)]
            cursor = end
        pieces.append(self._data[cursor:])
        # A lump the map did not have goes at the end, 4-byte aligned.
        size = moved(len(self._data)) if len(self._data) > HEADER_SIZE else HEADER_SIZE
        added: dict[int, int] = {}
        for index in sorted(changed):
            if not self.lumps[index].filelen and changed[index]:
                pieces.append(b"\0" * (-size % 4))
                size += -size % 4
                added[index] = size
                pieces.append(changed[index])
                size += len(changed[index])
        directory: list[int] = []
        for index, entry in enumerate(self.lumps):
            length = len(changed[index]) if index in changed else entry.filelen
            directory += [added.get(index, moved(entry.fileofs)), length, entry.version, entry.fourcc]
        header = HEADER.pack(IDENT, self.version, self.map_revision, NUM_LUMPS - 1, *directory)
        return b"".join([header, *pieces])

    def _game_lump_rows(self) -> "tuple[list[tuple[int, ...]], int, bool]":
        """The game lump directory's rows, its size, and whether its offsets count from the lump."""
        ctx = LumpContext(GAME_LUMP, "GAME_LUMP", self.lumps[GAME_LUMP].version, self.version, "<",
                          self._file_offset(GAME_LUMP))
        rows, size, _, relative, _ = read_directory(memoryview(self.raw(GAME_LUMP)), ctx)
        return rows, size, relative

    def _game_lump_moved(self, new_offset: int) -> bytes:
        """The game lump's bytes as they must be at ``new_offset``: each sub-lump's file offset moved."""
        data = self.raw(GAME_LUMP)
        rows, size, relative = self._game_lump_rows()
        if relative:
            return data
        delta = new_offset - self.lumps[GAME_LUMP].fileofs
        rows = [(lump_id, flags, version, fileofs + delta if filelen else fileofs, filelen, *rest)
                for lump_id, flags, version, fileofs, filelen, *rest in rows]
        for row in rows:
            if not -(1 << 31) <= row[3] < 1 << 31:
                raise BspFormatError(f"a game lump sub-lump's offset {row[3] - delta} cannot move by {delta} bytes",
                                     lump="GAME_LUMP", offset=self._file_offset(GAME_LUMP))
        return packed_directory(rows, "<") + data[size:]

    def game_lump_directory(self) -> list[GameLumpEntry]:
        """Every sub-lump of the game lump (never compressed), in directory order; empty when the
        map has no game lump."""
        if not self.raw(GAME_LUMP):
            return []
        rows, _, _ = self._game_lump_rows()
        return [GameLumpEntry(id_to_str(lump_id), version, filelen, False)
                for lump_id, _, version, _, filelen, *_ in rows]

    def game_sub_lump(self, name: str) -> tuple[int, bytes, int] | None:
        """The version, bytes and file offset of the game lump sub-lump ``name`` (``"sprp"``), or
        None when the map has none; its offset and length are checked against the file."""
        if not self.raw(GAME_LUMP):
            return None
        rows, _, relative = self._game_lump_rows()
        base = self._file_offset(GAME_LUMP) if relative else 0
        for lump_id, _, version, fileofs, filelen, *_ in rows:
            if lump_id == 0 or id_to_str(lump_id) != name:
                continue
            start = base + fileofs
            if fileofs < 0 or filelen < 0 or start + filelen > len(self._data):
                raise TruncatedError(f"game lump {name} of {filelen} bytes at {start} runs past the "
                                     f"{len(self._data)}-byte file", lump="GAME_LUMP", offset=start,
                                     needed=start + filelen, available=len(self._data))
            return version, self._data[start:start + filelen], start
        return None

    @property
    def static_props(self) -> "StaticProps":
        """The static props (game lump ``sprp``: Titanfall's version 12, Titanfall 2's 13) as a
        :class:`~sourcebsp.codecs.staticprops.StaticProps` like a Source map's (model names,
        records with ``origin``, ``angles``, ``prop_type``, ``skin``, ``solid``, ..., each
        prop's ``scale`` in :meth:`~sourcebsp.codecs.staticprops.StaticProps.scale_vectors`);
        empty when the map has none.  Read-only: saving after an edit raises.

        Raises
        ------
        UnsupportedError
            Another ``sprp`` version.
        """
        if self._static_props is None:
            props = self._read_static_props()
            self._static_props_read = (props.props.tobytes(), props.dictionary.tobytes())
            self._static_props = props
        return self._static_props

    @property
    def detail_props(self) -> "DetailProps | None":
        """None: rBSP maps have no detail props game lump."""
        return None

    def _read_static_props(self) -> "StaticProps":
        # numpy and the static prop records load with the first props read: opening a map needs neither.
        import numpy as np

        from .codecs.staticprops import NAME, STATIC_PROP_SCALE, StaticPropLayout, StaticProps

        found = self.game_sub_lump("sprp")
        version = 13 if self.version >= 37 else 12
        if found is not None:
            version, data, start = found
            decoded = decode_static_props(data, version=version, file_offset=start)
            names, props, leaves = decoded.names, decoded.props, decoded.leaves
        else:
            start, names, leaves = None, [], None
            props = np.zeros(0, STATIC_PROP_VERSIONS[version]())
        # Named by the branch, the version beside it (``props`` titles it "sprp v13, layout titanfall2").
        layout = StaticPropLayout(self.variant.name, version, props.dtype,
                                  f"{self.variant.description}: StaticPropv{version}", family="respawn")
        scales = np.zeros(len(props), STATIC_PROP_SCALE)  # each prop's one scale, on all three axes
        scales["prop"] = np.arange(len(props))
        scales["scale"] = props["scale"][:, None]
        return StaticProps(np.array([name.encode("utf-8") for name in names], NAME),
                           leaves if leaves is not None else np.zeros(0, "<u2"), props, layout,
                           lump="GAME_LUMP sprp", props_offset=start, scales=scales)

    def _static_props_edited(self) -> bool:
        props = self._static_props
        if props is None:
            return False
        return (props.props.tobytes(), props.dictionary.tobytes()) != self._static_props_read

    def raw_original(self, index: int) -> bytes:
        """A lump's bytes as read (before :meth:`replace_lump`)."""
        if index in self.external:
            return self.external[index]
        fileofs, filelen = self.lumps[index][:2]
        return self._data[fileofs:fileofs + filelen]

    def companion_files(self, path: Path) -> dict[Path, bytes]:
        """The ``.bsp_lump`` and ``.ent`` files of a map saved at ``path``."""
        files = {_lump_file(path, index): self._replaced.get(index, data) for index, data in self.external.items()}
        files.update({path.with_name(f"{path.stem}_{part}.ent"): data for part, data in self.ent_files.items()})
        return files

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False, reencode: bool = False,
             compression: "Compression" = "keep", fsync: bool = True) -> Path:
        """Write the map (and its lump and ``.ent`` files) to ``path``, each file atomically.

        Returns the path written.  Refuses to replace an existing file unless ``overwrite``.
        ``reencode`` encodes the decoded lumps again first (:meth:`reencode`); ``compression``
        must be ``"keep"`` (rBSP lumps are never compressed); ``fsync=False`` leaves the files to
        the operating system's cache (for scratch files).
        """
        from pathlib import Path  # not at import: ``info`` of a Source map does not load pathlib

        from ._io import atomic_write  # only a save writes (the start-up tests keep _io off reading)

        if compression != "keep":
            raise UnsupportedError("rBSP lumps are not compressed: a Titanfall map is written with its lumps "
                                   "as they are")
        if reencode:
            self.reencode()
        target = Path(path)
        files = {target: self.to_bytes(), **self.companion_files(target)}
        if not overwrite:
            existing = [str(p) for p in files if p.exists()]
            if existing:
                raise FileExistsError(f"{existing[0]} exists (pass overwrite=True to replace it)")
        for file, data in files.items():
            atomic_write(file, data, fsync=fsync)
        return target


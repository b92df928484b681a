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

What is decoded (numpy record arrays, views of the file's bytes): planes,
texture data and their names, vertices, vertex normals, the five vertex
formats, mesh indices, meshes, mesh bounds, material sorts and models.  Every
other lump is kept as bytes; :meth:`RespawnBsp.to_bytes` writes the map back
byte for byte, and re-encoding the decoded lumps gives the same bytes.
"""
from __future__ import annotations

import os
import re
import struct
from types import MappingProxyType
from typing import TYPE_CHECKING, Iterator, Literal, Mapping, NamedTuple, overload

from .codecs.respawn import (GAME_LUMP, HEADER, HEADER_SIZE, IDENT, MASK_VERTEX, NUM_LUMPS, PAKFILE,
                             VERTEX_LUMP_OF_FLAGS, lump_names, record_dtypes)
from .compression import bzip2_decompress, is_bzip2
from .errors import BspFormatError, LumpSizeError, TruncatedError, UnsupportedError
from .detection import detect_respawn
from .variants import VARIANTS, Variant, chosen_variant

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from .codecs.entities import Entities
    from .codecs.pakfile import Pakfile
    from .codecs.respawn import RespawnStaticProps
    from .compression import Limits
    from .container import BspFile

__all__ = [
    "IDENT",
    "VERSIONS",
    "NUM_LUMPS",
    "HEADER_SIZE",
    "RespawnLump",
    "RespawnBsp",
    "is_respawn",
    "lump_names",
    "map_head",
    "open_map",
    "record_dtypes",
]

# What a file of each version is: the branch table's entries (sourcebsp.variants, container "respawn").
VERSIONS: Mapping[int, str] = MappingProxyType({version: variant.name for variant in VARIANTS.values()
                                                if variant.container == "respawn" for version in variant.versions})
DESCRIPTIONS: Mapping[str, str] = MappingProxyType({VARIANTS[name].name: VARIANTS[name].description
                                                    for name in VERSIONS.values()})


_LUMP_T = struct.Struct("<4i")  # fileofs, filelen, version, fourCC
_PARTITION_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")


class RespawnLump(NamedTuple):
    """One ``lump_t`` of the rBSP directory."""

    fileofs: int = 0
    filelen: int = 0
    version: int = 0
    fourcc: int = 0


def is_respawn(head: bytes | memoryview) -> bool:
    """True when ``head`` (a file's first 8 bytes or more) starts a Titanfall or Titanfall 2 map."""
    return detect_respawn(head) is not None


def _lump_file(path: Path, index: int) -> Path:
    return path.with_name(f"{path.name}.{index:04x}.bsp_lump")


class RespawnBsp:
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
        self.lumps: list[RespawnLump] = list(map(RespawnLump._make, _LUMP_T.iter_unpack(data[16:HEADER_SIZE])))
        self.external: dict[int, bytes] = {}
        if path is not None:
            for index in range(NUM_LUMPS):
                lump_path = _lump_file(path, index)
                if lump_path.is_file():
                    self.external[index] = lump_path.read_bytes()
        self._replaced: dict[int, bytes] = {}
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
        return None

    # -- the directory -------------------------------------------------------------------------

    @property
    def variant(self) -> Variant:
        """The branch table's entry: ``titanfall`` or ``titanfall2``."""
        return VARIANTS[VERSIONS[self.version]]

    @property
    def file_size(self) -> int:
        return len(self._data)

    def _check_entry(self, index: int, entry: RespawnLump) -> None:
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

    def lump_index(self, lump: int | str) -> int:
        """The index of a lump given by index or name."""
        if isinstance(lump, str):
            try:
                return self.names.index(lump.upper())
            except ValueError:
                raise KeyError(f"no lump named {lump!r} in rBSP {self.version}") from None
        if not 0 <= lump < NUM_LUMPS:
            raise KeyError(f"lump index {lump} is not 0-{NUM_LUMPS - 1}")
        return lump

    def raw(self, lump: int | str) -> bytes:
        """A lump's bytes, from the map or from its ``.bsp_lump`` file."""
        index = self.lump_index(lump)
        if index in self._replaced:
            return self._replaced[index]
        if index in self.external:
            return self.external[index]
        fileofs, filelen = self.lumps[index][:2]
        return self._data[fileofs:fileofs + filelen]

    def iter_lumps(self) -> Iterator[tuple[int, str, RespawnLump, int]]:
        """(index, name, directory entry, length of its bytes) for every lump that has bytes."""
        for index, entry in enumerate(self.lumps):
            length = len(self.raw(index))
            if length:
                yield index, self.names[index], entry, length

    # -- decoded lumps ---------------------------------------------------------------------------

    def decoded_lumps(self) -> tuple[int, ...]:
        """The indices of the lumps :meth:`array` decodes."""
        return tuple(record_dtypes(self.version))

    def _file_offset(self, index: int) -> int:
        return 0 if index in self.external else self.lumps[index].fileofs

    def array(self, lump: int | str) -> "np.ndarray":
        """A decoded lump as a read-only numpy array (records, or vectors for VERTICES and normals).

        Raises
        ------
        KeyError
            The lump is not one sourcebsp decodes.
        LumpSizeError
            Its length is not a whole number of records.
        """
        import numpy as np

        index = self.lump_index(lump)
        dtype = record_dtypes(self.version).get(index)
        if dtype is None:
            raise KeyError(f"lump {self.names[index]} is kept as bytes, not decoded")
        data = self.raw(index)
        if len(data) % dtype.itemsize:
            raise LumpSizeError(f"{len(data)} bytes is not a whole number of {dtype.itemsize}-byte records",
                                lump=self.names[index], offset=self._file_offset(index))
        return np.frombuffer(data, dtype)

    def count(self, lump: int | str) -> int | None:
        """The number of records of a decoded lump (None for a lump kept as bytes)."""
        index = self.lump_index(lump)
        if index not in record_dtypes(self.version):
            return None
        return len(self.array(index))

    def texture_names(self) -> list[str]:
        """The material name of each TEXTURE_DATA record (via the string table and string data)."""
        import numpy as np

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

    def entities(self) -> "Entities":
        """The ENTITIES lump's entities."""
        from .codecs.entities import parse_entities

        return parse_entities(self.raw(0x00), file_offset=self._file_offset(0x00))

    def partition_entities(self) -> "dict[str, Entities]":
        """The entities of each ``.ent`` file found beside the map, by partition name.

        A file starts with a version line (``ENTITIES01``) before the entities.
        """
        from .codecs.entities import parse_entities

        if self._bad_partitions:
            raise BspFormatError(f"entity partition {self._bad_partitions[0][:40]!r} is not a name of letters, "
                                 f"digits and underscores", lump="ENTITY_PARTITIONS", offset=self._file_offset(0x18))
        found = {}
        for partition, data in self.ent_files.items():
            start = len(self.ent_file_head(partition))
            found[partition] = parse_entities(data[start:], file_offset=start)
        return found

    def entity_sets(self) -> "list[tuple[str | None, Entities]]":
        """Every entity of the map by where it is kept: (None, the ENTITIES lump's), then
        (partition, its ``.ent`` file's) for each file found, in ENTITY_PARTITIONS' order."""
        found = self.partition_entities()
        order = [part for part in self.partitions if part in found] + sorted(set(found) - set(self.partitions))
        return [(None, self.entities()), *((part, found[part]) for part in order)]

    def ent_file_head(self, partition: str) -> bytes:
        """The version line a partition's ``.ent`` file starts with (``ENTITIES01\\n``)."""
        data = self.ent_files[partition]
        start = data.find(b"{")
        return data[:start] if start >= 0 else data.partition(b"\n")[0] + b"\n"

    def set_entities(self, entities: "Entities") -> None:
        """Replace the ENTITIES lump's entities (written by the next :meth:`save`)."""
        self.replace_lump(0x00, entities.to_bytes())

    def set_partition_entities(self, partition: str, entities: "Entities") -> None:
        """Replace the entities of the ``.ent`` file of ``partition``, keeping its version line."""
        if partition not in self.ent_files:
            raise KeyError(f"no {partition}.ent file beside the map (found: {', '.join(self.ent_files) or 'none'})")
        self.ent_files[partition] = self.ent_file_head(partition) + entities.to_bytes()

    # -- writing ---------------------------------------------------------------------------------

    def replace_lump(self, lump: int | str, data: bytes) -> None:
        """Give a lump new bytes, written by the next :meth:`to_bytes` or :meth:`save`."""
        self._replaced[self.lump_index(lump)] = bytes(data)

    def reencode(self) -> None:
        """Replace every decoded lump by its records encoded again (the same bytes, when they decode)."""
        for index in self.decoded_lumps():
            if len(self.raw(index)):
                self.replace_lump(index, self.array(index).tobytes())

    def to_bytes(self) -> bytes:
        """The ``.bsp`` file: the original bytes where nothing changed, a changed lump in its place.

        A changed lump keeps its place in the file; what follows moves by its change in
        size (rounded up to 4 bytes, zero-filled, so later lumps keep their alignment), and
        every directory offset past it moves with it, the game lump directory's too (its
        ``dgamelump_t.fileofs`` count from the start of the file).
        """
        changed = {index: data for index, data in self._replaced.items()
                   if index not in self.external and data != self.raw_original(index)}
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
        from .codecs.base import LumpContext
        from .codecs.gamelump_directory import read_directory

        ctx = LumpContext(GAME_LUMP, "GAME_LUMP", self.lumps[GAME_LUMP].version, self.version, "<",
                          self._file_offset(GAME_LUMP))
        rows, size, _, relative, _ = read_directory(memoryview(self.raw(GAME_LUMP)), ctx)
        return rows, size, relative

    def _game_lump_moved(self, new_offset: int) -> bytes:
        """The game lump's bytes as they must be at ``new_offset``: each sub-lump's file offset moved."""
        from .codecs.gamelump_directory import packed_directory

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

    def game_lump_directory(self) -> list[tuple[str, int, int]]:
        """(id, version, length) of every sub-lump of the game lump, in directory order (``info``
        lists them as for a Source map); empty when the map has no game lump."""
        from .codecs.gamelump_directory import id_to_str

        if not self.raw(GAME_LUMP):
            return []
        rows, _, _ = self._game_lump_rows()
        return [(id_to_str(lump_id), version, filelen) for lump_id, _, version, _, filelen, *_ in rows]

    def game_lump(self, name: str) -> tuple[int, bytes, int] | None:
        """The version, bytes and file offset of the game lump sub-lump ``name`` (``"sprp"``), or
        None when the map has none; its offset and length are checked against the file."""
        from .codecs.gamelump_directory import id_to_str

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

    def pakfile(self) -> "Pakfile":
        """The PAKFILE lump as a read-only :class:`~sourcebsp.codecs.pakfile.Pakfile` (a zip
        archive, as in Source maps; empty when the map has none)."""
        from .codecs.pakfile import Pakfile

        return Pakfile(self.raw(PAKFILE), lump="PAKFILE", offset=self._file_offset(PAKFILE))

    def static_props(self) -> "RespawnStaticProps | None":
        """The static props (game lump ``sprp``: Titanfall's version 12, Titanfall 2's 13), or None
        when the map has none.

        Raises
        ------
        UnsupportedError
            Another ``sprp`` version.
        """
        from .codecs.respawn import decode_static_props

        found = self.game_lump("sprp")
        if found is None:
            return None
        version, data, start = found
        return decode_static_props(data, version=version, file_offset=start)

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

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> int:
        """Write the map (and its lump and ``.ent`` files) to ``path``, each file atomically.

        Returns the size of the ``.bsp``.  Refuses to replace an existing file unless ``overwrite``.
        """
        from ._io import atomic_write

        from pathlib import Path

        target = Path(path)
        files = {target: self.to_bytes(), **self.companion_files(target)}
        if not overwrite:
            existing = [str(p) for p in files if p.exists()]
            if existing:
                raise FileExistsError(f"{existing[0]} exists (pass overwrite=True to replace it)")
        for file, data in files.items():
            atomic_write(file, data)
        return len(files[target])


#: The names of the branch table's rBSP entries: ``sourcebsp.open(path, variant=NAME)`` gives
#: a :class:`RespawnBsp` for them (tests check this list against the table).
RespawnName = Literal["titanfall", "titanfall2"]


@overload
def open_named(path: str | os.PathLike[str], *, variant: RespawnName,  # type: ignore[overload-overlap]
               limits: "Limits | None" = None) -> "RespawnBsp": ...
@overload
def open_named(path: str | os.PathLike[str], *, variant: "str | Variant | None" = None,
               limits: "Limits | None" = None) -> "BspFile": ...
def open_named(path: str | os.PathLike[str], *, variant: "str | Variant | None" = None,
               limits: "Limits | None" = None) -> "BspFile | RespawnBsp":
    """``sourcebsp.open``: the map at ``path`` as a Source map (:class:`~sourcebsp.BspFile`),
    or, when ``variant`` names an rBSP branch (``"titanfall"``, ``"titanfall2"``), as a
    :class:`RespawnBsp`.

    Only the name given here picks the rBSP container, so the type a caller gets follows from
    the call (a type checker sees ``RespawnBsp`` for those two names, ``BspFile`` otherwise); an
    rBSP file opened without its name raises :class:`~sourcebsp.errors.NotSourceMapError`
    naming both ways in. :func:`open_map` opens either kind by the file's first bytes.
    """
    named = VARIANTS.get(variant) if isinstance(variant, str) else None
    if named is not None and named.container == "respawn":
        return RespawnBsp.open(path, variant=named, limits=limits)
    from .container import open_bsp

    return open_bsp(path, variant=variant, limits=limits)


#: How much of a ``.bsp.bz2`` :func:`map_head` reads at most to unpack a map's first bytes
#: (a bzip2 block is at most 900 kB of input, a little more when it does not compress).
HEAD_INPUT_LIMIT = 2 << 20


def map_head(path: str | os.PathLike[str], size: int = 8) -> bytes:
    """The first ``size`` bytes of the map at ``path``: of the map a ``.bsp.bz2`` holds, unpacked
    only that far (``b""`` when its bzip2 data is damaged there)."""
    with open(path, "rb") as handle:
        head = handle.read(size)
        if not is_bzip2(head):
            return head
        import bz2  # only for a packed map: ``info`` of a plain one loads no more than it needs

        decompressor = bz2.BZ2Decompressor()
        out, chunk, read = b"", head + handle.read(1 << 16), 0
        while chunk and read + len(chunk) <= HEAD_INPUT_LIMIT:
            read += len(chunk)
            try:
                out += decompressor.decompress(chunk, max_length=size - len(out))
            except (OSError, EOFError, ValueError):
                return b""
            if len(out) >= size or decompressor.eof:
                break
            chunk = handle.read(1 << 16)
        return out[:size]


def open_map(path: str | os.PathLike[str], *, variant: "str | Variant | None" = None,
             limits: "Limits | None" = None) -> "BspFile | RespawnBsp":
    """Open a map of any branch of the table: a Titanfall or Titanfall 2 rBSP as
    :class:`RespawnBsp`, any other as a Source map (:func:`sourcebsp.open`, with
    ``variant`` and ``limits``).

    ``variant`` (or a :class:`~sourcebsp.variants.reading_as` block) names the branch;
    naming an rBSP branch for a Source map, or a Source branch for an rBSP map, raises
    :class:`~sourcebsp.errors.UnsupportedError`.
    """
    if detect_respawn(map_head(path)) is not None:
        return RespawnBsp.open(path, variant=variant, limits=limits)
    from .container import open_bsp

    return open_bsp(path, variant=variant, limits=limits)

"""The one face of a map, whatever its container: the :class:`MapReader` protocol.

Every container (:class:`~sourcebsp.BspFile` for Source maps,
:class:`~sourcebsp.RespawnBsp` for Titanfall's rBSP) implements these members;
:mod:`sourcebsp.writeplan`, :mod:`sourcebsp.queries`, :mod:`sourcebsp.model`,
the converters, ``content/`` and ``scan`` take a :class:`MapReader` instead of a
container, so no import runs from them back up to the containers, and a type
checker still sees each lump's type.  A member the map's branch cannot have (the
faces of a Titanfall map) raises :class:`~sourcebsp.errors.LumpNotInBranchError`
in every container.  Both containers are checked against it by mypy in the tests.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Generic, Iterator, Literal, NamedTuple, Protocol, TypeVar, Union, overload

from .codecs.base import Codec, RawLump
from .errors import UnsupportedError
from .header import Endian, LumpEntry
from .lump_ids import LumpId

if TYPE_CHECKING:
    from pathlib import Path

    import numpy.typing as npt

    from .codecs.staticprops import DetailProps, StaticProps
    from .variants import Variant

    Array = npt.NDArray[Any]
    # The types of the lumps' values, and the lumps whose values are record tables (numpy arrays).
    # >>> generated: imports (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    from .codecs.entities import Entities
    from .codecs.gamelumps import GameLumps
    from .codecs.lighting import Lightmaps
    from .codecs.occlusion import Occlusion
    from .codecs.pakfile import Pakfile
    from .codecs.physics import PhysCollide, PhysDisp
    from .codecs.textures import StringData
    from .codecs.visibility import Visibility
    ArrayLump = Literal[
        LumpId.PLANES, LumpId.TEXDATA, LumpId.VERTEXES, LumpId.NODES, LumpId.TEXINFO, LumpId.FACES, LumpId.LEAFS,
        LumpId.FACEIDS, LumpId.EDGES, LumpId.SURFEDGES, LumpId.MODELS, LumpId.WORLDLIGHTS, LumpId.LEAFFACES,
        LumpId.LEAFBRUSHES, LumpId.BRUSHES, LumpId.BRUSHSIDES, LumpId.AREAS, LumpId.AREAPORTALS,
        LumpId.PROPCOLLISION, LumpId.PROPHULLS, LumpId.PROPHULLVERTS, LumpId.PROPTRIS, LumpId.DISPINFO,
        LumpId.ORIGINALFACES, LumpId.VERTNORMALS, LumpId.VERTNORMALINDICES, LumpId.DISP_LIGHTMAP_ALPHAS,
        LumpId.DISP_VERTS, LumpId.DISP_LIGHTMAP_SAMPLE_POSITIONS, LumpId.LEAFWATERDATA, LumpId.PRIMITIVES,
        LumpId.PRIMVERTS, LumpId.PRIMINDICES, LumpId.CLIPPORTALVERTS, LumpId.CUBEMAPS, LumpId.TEXDATA_STRING_TABLE,
        LumpId.OVERLAYS, LumpId.LEAFMINDISTTOWATER, LumpId.FACE_MACRO_TEXTURE_INFO, LumpId.DISP_TRIS,
        LumpId.WATEROVERLAYS, LumpId.LEAF_AMBIENT_INDEX_HDR, LumpId.LEAF_AMBIENT_INDEX, LumpId.WORLDLIGHTS_HDR,
        LumpId.LEAF_AMBIENT_LIGHTING_HDR, LumpId.LEAF_AMBIENT_LIGHTING, LumpId.FACES_HDR, LumpId.MAP_FLAGS,
        LumpId.OVERLAY_FADES, LumpId.OVERLAY_SYSTEM_LEVELS,
    ]
    # <<< generated

__all__ = ["Compression", "GameLumpEntry", "LumpAttr", "LumpKey", "MapQueries", "MapReader", "MapSource",
           "PartitionFiles"]

# A lump named by its id, its number or its name ("planes").  A plain number is the lump's
# index in the map's own directory (128 lumps in rBSP); a LumpId names a Source lump, which a
# container of another layout finds under its own index (rBSP keeps Source's for most).
LumpKey = LumpId | int | str

#: How a save stores the lumps: as they were, all LZMA-compressed, or all uncompressed.
Compression = Literal["keep", "lzma", "none"]

T = TypeVar("T")
_Map = TypeVar("_Map", bound="MapReader")


class LumpAttr(Generic[T]):
    """A typed attribute of a container for one lump: ``bsp.planes``.

    Reading gives the decoded lump (what ``get_lump`` gives), as the type
    declared here; a lump kept as bytes (no layout known) raises
    :class:`~sourcebsp.UnsupportedError` (``get_lump`` gives it as a
    :class:`~sourcebsp.RawLump`), a lump the branch does not have
    :class:`~sourcebsp.errors.LumpNotInBranchError`.  Assigning is ``set_lump``.
    """

    def __init__(self, lump: LumpId, *, raw_ok: bool = False) -> None:
        self.lump = lump
        self.raw_ok = raw_ok
        self.__doc__ = f"The decoded {lump.name} lump (lump {int(lump)})."

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> "LumpAttr[T]": ...

    @overload
    def __get__(self, obj: "MapReader", owner: type | None = None) -> T: ...

    def __get__(self, obj: "MapReader | None", owner: type | None = None) -> "T | LumpAttr[T]":
        if obj is None:
            return self
        value = obj.get_lump(self.lump)
        if isinstance(value, RawLump) and not self.raw_ok:
            raise UnsupportedError(
                f"{value.reason}; bsp.get_lump(LumpId.{self.lump.name}) gives its bytes as a RawLump",
                lump=obj.lump_name(self.lump), offset=obj.entry(self.lump).fileofs,
            )
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: "MapReader", value: T) -> None:
        obj.set_lump(self.lump, value)


class GameLumpEntry(NamedTuple):
    """One sub-lump of the game lump directory, as ``info`` lists it."""

    id: str
    version: int
    length: int  # of its data, uncompressed
    compressed: bool


class PartitionFiles(NamedTuple):
    """The entity partitions a map names (each kept in a ``<map>_<partition>.ent`` file beside
    it) and those whose file was found."""

    named: list[str]
    found: list[str]


class MapQueries:
    """The queries every container answers the same way, through :mod:`sourcebsp.queries`
    (a map whose branch has no BSP tree or visibility raises
    :class:`~sourcebsp.errors.LumpNotInBranchError` from the lump it lacks), and the members
    whose answer for a Source map is the default here (a container that differs overrides them).
    """

    #: Other branches the file could be read as (the detection could not tell them apart).
    variant_alternatives: tuple[str, ...] = ()
    #: Whether lumps may be stored LZMA-compressed (Source's ``lzma_header_t``).
    lzma_lumps = True
    #: Whether the pakfile can be written back changed.
    writes_pakfile = True

    # ``queries`` needs numpy: imported on the first query, so opening a map does not load it.
    def leaf_at(self: "MapReader", points: Any, *, model: int = 0) -> Any:
        """The leaf index of a point ``(3,)`` (an int) or of points ``(N, 3)`` (an array)."""
        from . import queries

        return queries.leaf_at(self, points, model=model)

    def cluster_at(self: "MapReader", points: Any) -> Any:
        """The visibility cluster of a point or points (-1 in solid)."""
        from . import queries

        return queries.cluster_at(self, points)

    @property
    def num_clusters(self: "MapReader") -> int:
        """Visibility clusters (without visibility data: the highest leaf cluster + 1)."""
        from . import queries

        return queries.num_clusters(self)

    def pvs(self: "MapReader", cluster: int) -> Any:
        """Bool array: the clusters ``cluster`` can see (all False for solid, -1)."""
        from . import queries

        return queries.pvs(self, cluster)

    def pas(self: "MapReader", cluster: int) -> Any:
        """Bool array: the clusters ``cluster`` can hear (all False for solid, -1)."""
        from . import queries

        return queries.pas(self, cluster)

    def is_visible(self: "MapReader", a: Any, b: Any) -> Any:
        """Whether ``b`` is in the PVS of ``a``; each a cluster (int) or point(s)."""
        from . import queries

        return queries.is_visible(self, a, b)

    def entity_sets(self: "MapReader") -> "list[tuple[str | None, Entities]]":
        """Every entity of the map by where it is kept: ``(None, the entity lump's)``, then (for
        Titanfall maps) ``(partition, its .ent file's)`` for each file found beside the map."""
        return [(None, self.entities)]

    def partition_entities(self) -> "dict[str, Entities]":
        """The entities of each entity partition file beside the map, by partition: none (a Source
        map keeps every entity in its lump)."""
        return {}

    def set_partition_entities(self, partition: str, entities: "Entities") -> None:
        """Replace the entities of a partition file (see :meth:`partition_entities`)."""
        raise KeyError(f"no {partition}.ent file beside the map (found: none)")

    def partition_files(self) -> PartitionFiles | None:
        """The entity partition files the map names and those found, or None: the map's
        container keeps every entity in its lump."""
        return None

    def is_external(self, key: LumpKey) -> bool:
        """Whether the lump is read from a file of its own beside the map (never, in a Source map)."""
        return False

    def stored_size(self: "MapReader", key: LumpKey) -> int:
        """The lump's length as stored (compressed, when it is): the directory's."""
        return self.entry(key).filelen

    def companion_files(self, path: "Path") -> "dict[Path, bytes]":
        """The files a save to ``path`` writes beside the map (none, for a Source map)."""
        return {}

    def truncated(self) -> list[LumpId]:
        """The lumps that run past the end of a file cut short (none: the container reads no such file)."""
        return []

    def decode_all(self: "MapReader") -> dict[int, Any]:
        """Decode every lump the map has; returns {lump index: value}."""
        return {int(index): self.get_lump(index) for index, _ in self.iter_lumps()}

    def game_lump_directory(self: "MapReader") -> list[GameLumpEntry]:
        """The sub-lumps of the game lump, in directory order (empty when the map has none, or
        it stays raw)."""
        if not self.has_lump(LumpId.GAME_LUMP):
            return []
        lumps = self.get_lump(LumpId.GAME_LUMP)
        if isinstance(lumps, RawLump):
            return []
        return [GameLumpEntry(g.id, g.version, len(g.data), g.compressed) for g in lumps]

    def texture_names(self: "MapReader") -> list[str]:
        """The material name of every texture data record (``""`` where it cannot be found)."""
        texdata = self.lump_or_none(LumpId.TEXDATA)
        table = self.lump_or_none(LumpId.TEXDATA_STRING_TABLE)
        strings = self.lump_or_none(LumpId.TEXDATA_STRING_DATA)
        if texdata is None:
            return []
        names = []
        for sid in texdata["name_string_table_id"].tolist():
            try:
                names.append(strings.at(int(table[sid])) if table is not None and strings is not None else "")
            except (IndexError, KeyError):
                names.append("")
        return names


class MapReader(Protocol):
    """A map of any container: its branch, its lumps by id, number or name, its entities,
    pakfile and props, and writing it back.

    Reading a lump, by what happens when the map has none or keeps it raw (no
    layout known for its version: a :class:`~sourcebsp.RawLump`):

    ====================================  ===============================  =================================
    call                                  lump missing (length 0)          lump kept raw
    ====================================  ===============================  =================================
    ``get_lump(key)`` / ``bsp.<name>``    decoded from 0 bytes (most       a ``RawLump`` (``bsp.<name>``:
                                      give an empty value)             ``UnsupportedError``)
    ``lump_or_none(key)``                 None                             None
    ``lump_or_none(key, purpose)``        None                             ``UnsupportedError`` naming
                                                                           ``purpose``
    ``lump_or_raise(key, purpose)``       ``BspFormatError`` naming        ``UnsupportedError`` naming
                                          ``purpose``                      ``purpose``
    ====================================  ===============================  =================================

    ``has_lump`` answers whether it is there.  Each accessor's return type
    follows from the key (:data:`sourcebsp.lump_types.LUMP_TYPES`).
    """

    @property
    def variant(self) -> "Variant": ...  # the engine branch the map is read as

    @property
    def path(self) -> Path | None: ...

    @property
    def version(self) -> int: ...

    @property
    def endian(self) -> Endian: ...

    @property
    def map_revision(self) -> int: ...

    def lump_name(self, key: LumpKey) -> str: ...

    def entry(self, key: LumpKey) -> LumpEntry: ...

    def has_lump(self, key: LumpKey) -> bool: ...

    def is_loaded(self, key: LumpKey) -> bool: ...

    def codec(self, key: LumpKey) -> Codec | None: ...

    def raw_lump(self, key: LumpKey) -> memoryview: ...

    def lump_bytes(self, key: LumpKey) -> memoryview: ...

    def set_lump(self, key: LumpKey, value: Any) -> None: ...

    @property
    def file_size(self) -> int: ...

    def count(self, key: LumpKey) -> int | None: ...

    def iter_lumps(self) -> Iterator[tuple[int, LumpEntry]]: ...

    def __getitem__(self, key: LumpKey) -> Any: ...

    def to_bytes(self) -> bytes: ...

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False, reencode: bool = False,
             compression: "Compression" = "keep", fsync: bool = True) -> "Path": ...

    def close(self) -> None: ...

    def __enter__(self: _Map) -> _Map: ...

    def __exit__(self, *exc: object) -> None: ...

    @property
    def decompressed_size(self) -> int: ...

    def entity_sets(self) -> "list[tuple[str | None, Entities]]": ...

    # The container's own facts (MapQueries gives a Source map's where the container does not).
    @property
    def ident(self) -> str: ...  # the file's first four bytes as text

    @property
    def lump_order(self) -> str: ...  # the lump_t field order

    @property
    def encrypted(self) -> bool | None: ...  # None: the container has no encryption

    @property
    def variant_alternatives(self) -> tuple[str, ...]: ...

    @property
    def lzma_lumps(self) -> bool: ...

    @property
    def writes_pakfile(self) -> bool: ...

    def partition_entities(self) -> "dict[str, Entities]": ...

    def set_partition_entities(self, partition: str, entities: "Entities") -> None: ...

    def partition_files(self) -> PartitionFiles | None: ...

    def is_external(self, key: LumpKey) -> bool: ...

    def stored_size(self, key: LumpKey) -> int: ...

    def companion_files(self, path: "Path") -> "dict[Path, bytes]": ...

    def truncated(self) -> list[LumpId]: ...

    def decode_all(self) -> dict[int, Any]: ...

    def game_lump_directory(self) -> list[GameLumpEntry]: ...

    def texture_names(self) -> list[str]: ...

    # The BSP tree and visibility (MapQueries): a branch without them raises LumpNotInBranchError.
    def leaf_at(self, points: Any, *, model: int = 0) -> Any: ...

    def cluster_at(self, points: Any) -> Any: ...

    @property
    def num_clusters(self) -> int: ...

    def pvs(self, cluster: int) -> Any: ...

    def pas(self, cluster: int) -> Any: ...

    def is_visible(self, a: Any, b: Any) -> Any: ...

    # The typed lump attributes (BspFile declares the same).
    # >>> generated: attributes (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    @property
    def entities(self) -> "Entities": ...
    @entities.setter
    def entities(self, value: "Entities") -> None: ...
    @property
    def planes(self) -> "Array": ...
    @planes.setter
    def planes(self, value: "Array") -> None: ...
    @property
    def texdata(self) -> "Array": ...
    @texdata.setter
    def texdata(self, value: "Array") -> None: ...
    @property
    def vertexes(self) -> "Array": ...
    @vertexes.setter
    def vertexes(self, value: "Array") -> None: ...
    @property
    def visibility(self) -> "Visibility": ...
    @visibility.setter
    def visibility(self, value: "Visibility") -> None: ...
    @property
    def nodes(self) -> "Array": ...
    @nodes.setter
    def nodes(self, value: "Array") -> None: ...
    @property
    def texinfo(self) -> "Array": ...
    @texinfo.setter
    def texinfo(self, value: "Array") -> None: ...
    @property
    def faces(self) -> "Array": ...
    @faces.setter
    def faces(self, value: "Array") -> None: ...
    @property
    def lighting(self) -> "Lightmaps": ...
    @lighting.setter
    def lighting(self, value: "Lightmaps") -> None: ...
    @property
    def occlusion(self) -> "Occlusion": ...
    @occlusion.setter
    def occlusion(self, value: "Occlusion") -> None: ...
    @property
    def leafs(self) -> "Array": ...
    @leafs.setter
    def leafs(self, value: "Array") -> None: ...
    @property
    def faceids(self) -> "Array": ...
    @faceids.setter
    def faceids(self, value: "Array") -> None: ...
    @property
    def edges(self) -> "Array": ...
    @edges.setter
    def edges(self, value: "Array") -> None: ...
    @property
    def surfedges(self) -> "Array": ...
    @surfedges.setter
    def surfedges(self, value: "Array") -> None: ...
    @property
    def models(self) -> "Array": ...
    @models.setter
    def models(self, value: "Array") -> None: ...
    @property
    def worldlights(self) -> "Array": ...
    @worldlights.setter
    def worldlights(self, value: "Array") -> None: ...
    @property
    def leaffaces(self) -> "Array": ...
    @leaffaces.setter
    def leaffaces(self, value: "Array") -> None: ...
    @property
    def leafbrushes(self) -> "Array": ...
    @leafbrushes.setter
    def leafbrushes(self, value: "Array") -> None: ...
    @property
    def brushes(self) -> "Array": ...
    @brushes.setter
    def brushes(self, value: "Array") -> None: ...
    @property
    def brushsides(self) -> "Array": ...
    @brushsides.setter
    def brushsides(self, value: "Array") -> None: ...
    @property
    def areas(self) -> "Array": ...
    @areas.setter
    def areas(self, value: "Array") -> None: ...
    @property
    def areaportals(self) -> "Array": ...
    @areaportals.setter
    def areaportals(self, value: "Array") -> None: ...
    @property
    def propcollision(self) -> "Array": ...
    @propcollision.setter
    def propcollision(self, value: "Array") -> None: ...
    @property
    def prophulls(self) -> "Array": ...
    @prophulls.setter
    def prophulls(self, value: "Array") -> None: ...
    @property
    def prophullverts(self) -> "Array": ...
    @prophullverts.setter
    def prophullverts(self, value: "Array") -> None: ...
    @property
    def proptris(self) -> "Array": ...
    @proptris.setter
    def proptris(self, value: "Array") -> None: ...
    @property
    def dispinfo(self) -> "Array": ...
    @dispinfo.setter
    def dispinfo(self, value: "Array") -> None: ...
    @property
    def originalfaces(self) -> "Array": ...
    @originalfaces.setter
    def originalfaces(self, value: "Array") -> None: ...
    @property
    def physdisp(self) -> "PhysDisp": ...
    @physdisp.setter
    def physdisp(self, value: "PhysDisp") -> None: ...
    @property
    def physcollide(self) -> "PhysCollide": ...
    @physcollide.setter
    def physcollide(self, value: "PhysCollide") -> None: ...
    @property
    def vertnormals(self) -> "Array": ...
    @vertnormals.setter
    def vertnormals(self, value: "Array") -> None: ...
    @property
    def vertnormalindices(self) -> "Array": ...
    @vertnormalindices.setter
    def vertnormalindices(self, value: "Array") -> None: ...
    @property
    def disp_lightmap_alphas(self) -> "Array": ...
    @disp_lightmap_alphas.setter
    def disp_lightmap_alphas(self, value: "Array") -> None: ...
    @property
    def disp_verts(self) -> "Array": ...
    @disp_verts.setter
    def disp_verts(self, value: "Array") -> None: ...
    @property
    def disp_lightmap_sample_positions(self) -> "Array": ...
    @disp_lightmap_sample_positions.setter
    def disp_lightmap_sample_positions(self, value: "Array") -> None: ...
    @property
    def game_lump(self) -> "GameLumps": ...
    @game_lump.setter
    def game_lump(self, value: "GameLumps") -> None: ...
    @property
    def leafwaterdata(self) -> "Array": ...
    @leafwaterdata.setter
    def leafwaterdata(self, value: "Array") -> None: ...
    @property
    def primitives(self) -> "Array": ...
    @primitives.setter
    def primitives(self, value: "Array") -> None: ...
    @property
    def primverts(self) -> "Array": ...
    @primverts.setter
    def primverts(self, value: "Array") -> None: ...
    @property
    def primindices(self) -> "Array": ...
    @primindices.setter
    def primindices(self, value: "Array") -> None: ...
    @property
    def pakfile(self) -> "Pakfile": ...
    @pakfile.setter
    def pakfile(self, value: "Pakfile") -> None: ...
    @property
    def clipportalverts(self) -> "Array": ...
    @clipportalverts.setter
    def clipportalverts(self, value: "Array") -> None: ...
    @property
    def cubemaps(self) -> "Array": ...
    @cubemaps.setter
    def cubemaps(self, value: "Array") -> None: ...
    @property
    def texdata_string_data(self) -> "StringData": ...
    @texdata_string_data.setter
    def texdata_string_data(self, value: "StringData") -> None: ...
    @property
    def texdata_string_table(self) -> "Array": ...
    @texdata_string_table.setter
    def texdata_string_table(self, value: "Array") -> None: ...
    @property
    def overlays(self) -> "Array": ...
    @overlays.setter
    def overlays(self, value: "Array") -> None: ...
    @property
    def leafmindisttowater(self) -> "Array": ...
    @leafmindisttowater.setter
    def leafmindisttowater(self, value: "Array") -> None: ...
    @property
    def face_macro_texture_info(self) -> "Array": ...
    @face_macro_texture_info.setter
    def face_macro_texture_info(self, value: "Array") -> None: ...
    @property
    def disp_tris(self) -> "Array": ...
    @disp_tris.setter
    def disp_tris(self, value: "Array") -> None: ...
    @property
    def prop_blob(self) -> "PhysCollide": ...
    @prop_blob.setter
    def prop_blob(self, value: "PhysCollide") -> None: ...
    @property
    def wateroverlays(self) -> "Array": ...
    @wateroverlays.setter
    def wateroverlays(self, value: "Array") -> None: ...
    @property
    def leaf_ambient_index_hdr(self) -> "Array": ...
    @leaf_ambient_index_hdr.setter
    def leaf_ambient_index_hdr(self, value: "Array") -> None: ...
    @property
    def leaf_ambient_index(self) -> "Array": ...
    @leaf_ambient_index.setter
    def leaf_ambient_index(self, value: "Array") -> None: ...
    @property
    def lighting_hdr(self) -> "Lightmaps": ...
    @lighting_hdr.setter
    def lighting_hdr(self, value: "Lightmaps") -> None: ...
    @property
    def worldlights_hdr(self) -> "Array": ...
    @worldlights_hdr.setter
    def worldlights_hdr(self, value: "Array") -> None: ...
    @property
    def leaf_ambient_lighting_hdr(self) -> "Array": ...
    @leaf_ambient_lighting_hdr.setter
    def leaf_ambient_lighting_hdr(self, value: "Array") -> None: ...
    @property
    def leaf_ambient_lighting(self) -> "Array": ...
    @leaf_ambient_lighting.setter
    def leaf_ambient_lighting(self, value: "Array") -> None: ...
    @property
    def xzippakfile(self) -> "Any": ...
    @xzippakfile.setter
    def xzippakfile(self, value: "Any") -> None: ...
    @property
    def faces_hdr(self) -> "Array": ...
    @faces_hdr.setter
    def faces_hdr(self, value: "Array") -> None: ...
    @property
    def map_flags(self) -> "Array": ...
    @map_flags.setter
    def map_flags(self, value: "Array") -> None: ...
    @property
    def overlay_fades(self) -> "Array": ...
    @overlay_fades.setter
    def overlay_fades(self, value: "Array") -> None: ...
    @property
    def overlay_system_levels(self) -> "Array": ...
    @overlay_system_levels.setter
    def overlay_system_levels(self, value: "Array") -> None: ...
    @property
    def physlevel(self) -> "Any": ...
    @physlevel.setter
    def physlevel(self, value: "Any") -> None: ...
    @property
    def disp_multiblend(self) -> "Any": ...
    @disp_multiblend.setter
    def disp_multiblend(self, value: "Any") -> None: ...
    # <<< generated

    @property
    def static_props(self) -> "StaticProps": ...

    @property
    def detail_props(self) -> "DetailProps | None": ...

    # >>> generated: get_lump (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    @overload
    def get_lump(self, key: Literal[LumpId.ENTITIES]) -> "Entities | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.VISIBILITY]) -> "Visibility | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR]) -> "Lightmaps | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.OCCLUSION]) -> "Occlusion | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.PHYSDISP]) -> "PhysDisp | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.PHYSCOLLIDE, LumpId.PROP_BLOB]) -> "PhysCollide | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.GAME_LUMP]) -> "GameLumps | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.PAKFILE]) -> "Pakfile | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.TEXDATA_STRING_DATA]) -> "StringData | RawLump": ...
    @overload
    def get_lump(self, key: "ArrayLump") -> "Array | RawLump": ...
    @overload
    def get_lump(self, key: LumpKey) -> Any: ...
    # <<< generated

    # >>> generated: lump_or_none (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    @overload
    def lump_or_none(self, key: Literal[LumpId.ENTITIES], purpose: str | None = None) -> "Entities | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.VISIBILITY], purpose: str | None = None) -> "Visibility | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR],
                     purpose: str | None = None) -> "Lightmaps | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.OCCLUSION], purpose: str | None = None) -> "Occlusion | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.PHYSDISP], purpose: str | None = None) -> "PhysDisp | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.PHYSCOLLIDE, LumpId.PROP_BLOB],
                     purpose: str | None = None) -> "PhysCollide | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.GAME_LUMP], purpose: str | None = None) -> "GameLumps | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.PAKFILE], purpose: str | None = None) -> "Pakfile | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.TEXDATA_STRING_DATA],
                     purpose: str | None = None) -> "StringData | None": ...
    @overload
    def lump_or_none(self, key: "ArrayLump", purpose: str | None = None) -> "Array | None": ...
    @overload
    def lump_or_none(self, key: LumpKey, purpose: str | None = None) -> Any: ...
    # <<< generated

    # >>> generated: lump_or_raise (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    @overload
    def lump_or_raise(self, key: Literal[LumpId.ENTITIES], purpose: str) -> "Entities": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.VISIBILITY], purpose: str) -> "Visibility": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR], purpose: str) -> "Lightmaps": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.OCCLUSION], purpose: str) -> "Occlusion": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.PHYSDISP], purpose: str) -> "PhysDisp": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.PHYSCOLLIDE, LumpId.PROP_BLOB], purpose: str) -> "PhysCollide": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.GAME_LUMP], purpose: str) -> "GameLumps": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.PAKFILE], purpose: str) -> "Pakfile": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.TEXDATA_STRING_DATA], purpose: str) -> "StringData": ...
    @overload
    def lump_or_raise(self, key: "ArrayLump", purpose: str) -> "Array": ...
    @overload
    def lump_or_raise(self, key: LumpKey, purpose: str) -> Any: ...
    # <<< generated


#: A map, or the path of one (the converters open it and close it afterwards).
MapSource = Union[MapReader, str, "os.PathLike[str]"]

"""The queries every container answers the same way: ``bsp.leaf_at``, ``bsp.pvs``, ...; and the
members of :class:`~sourcebsp.protocols.MapReader` whose Source answer is the default.

Both containers (:class:`~sourcebsp.BspFile`, :class:`~sourcebsp.RespawnBsp`) take
these methods from :class:`MapQueries`; each is answered by :mod:`sourcebsp.queries`
from the map's lumps, so a branch without a BSP tree or visibility raises
:class:`~sourcebsp.errors.LumpNotInBranchError` from the lump it lacks.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .codecs.base import RawLump
from .lump_ids import LumpId
from .protocols import GameLumpEntry, LumpKey, MapReader, PartitionFiles

if TYPE_CHECKING:
    from pathlib import Path

    from .codecs.entities import Entities

__all__ = ["MapQueries"]


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
    def leaf_at(self: MapReader, points: Any, *, model: int = 0) -> Any:
        """The leaf index of a point ``(3,)`` (an int) or of points ``(N, 3)`` (an array)."""
        from . import queries

        return queries.leaf_at(self, points, model=model)

    def cluster_at(self: MapReader, points: Any) -> Any:
        """The visibility cluster of a point or points (-1 in solid)."""
        from . import queries

        return queries.cluster_at(self, points)

    @property
    def num_clusters(self: MapReader) -> int:
        """Visibility clusters (without visibility data: the highest leaf cluster + 1)."""
        from . import queries

        return queries.num_clusters(self)

    def pvs(self: MapReader, cluster: int) -> Any:
        """Bool array: the clusters ``cluster`` can see (all False for solid, -1)."""
        from . import queries

        return queries.pvs(self, cluster)

    def pas(self: MapReader, cluster: int) -> Any:
        """Bool array: the clusters ``cluster`` can hear (all False for solid, -1)."""
        from . import queries

        return queries.pas(self, cluster)

    def is_visible(self: MapReader, a: Any, b: Any) -> Any:
        """Whether ``b`` is in the PVS of ``a``; each a cluster (int) or point(s)."""
        from . import queries

        return queries.is_visible(self, a, b)

    def entity_sets(self: MapReader) -> "list[tuple[str | None, Entities]]":
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

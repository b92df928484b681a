"""The queries every container answers the same way: ``bsp.leaf_at``, ``bsp.pvs``, ...

Both containers (:class:`~sourcebsp.BspFile`, :class:`~sourcebsp.RespawnBsp`) take
these methods from :class:`MapQueries`; each is answered by :mod:`sourcebsp.queries`
from the map's lumps, so a branch without a BSP tree or visibility raises
:class:`~sourcebsp.errors.LumpNotInBranchError` from the lump it lacks.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .protocols import MapReader

if TYPE_CHECKING:
    from .codecs.entities import Entities

__all__ = ["MapQueries"]


class MapQueries:
    """The queries every container answers the same way, through :mod:`sourcebsp.queries`
    (a map whose branch has no BSP tree or visibility raises
    :class:`~sourcebsp.errors.LumpNotInBranchError` from the lump it lacks)."""

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

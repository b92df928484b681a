"""What the views know of a map beyond its triangles (:class:`Sight`): a Source map's come from
its entities, tree and PVS (``render._source_sight``), a Titanfall map's from its entities alone
(:mod:`~sourcebsp.converters.render.respawn`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:
    from . import overview as ov
    from .camera import Camera

__all__ = ["Sight"]


@dataclass
class Sight:
    """What the views know of a map beyond its triangles, each asked for only when a view needs it.

    ``starts()`` the player-start cameras; ``markers()`` spawns and objectives;
    ``camera_at(name)`` a named entity's camera; ``culler()`` the eye position's
    potentially visible triangles (None: no visibility data); ``inside`` whether
    points are in open space (None: not known); ``triangle_clusters(corners,
    normal)`` the cluster in front of each triangle (-1: unknown);
    ``playable(anchors)`` the clusters players reach (None: all).
    """

    starts: Callable[[], list[Camera]]
    markers: Callable[[], list[ov.Marker]]
    camera_at: Callable[[str], Camera]
    culler: Callable[[], Callable[[np.ndarray], np.ndarray | None] | None]
    inside: Callable[[np.ndarray], np.ndarray] | None
    triangle_clusters: Callable[[np.ndarray, np.ndarray], np.ndarray]
    playable: Callable[[np.ndarray], np.ndarray | None]

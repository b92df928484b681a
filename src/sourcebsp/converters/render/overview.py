"""Radar overviews: where players can be, which heights to show, markers and the overview text file.

Where players can be
    The anchors are the player starts and objectives (bomb targets, control
    points, hostages).  Their visibility clusters, and every cluster reached
    from them by repeatedly following the PVS, are the playable space; this
    leaves out the 3D skybox and sealed-off rooms, which are in clusters no
    player start can see or reach through sight.  A map without visibility
    data counts every cluster; a map without anchors counts every cluster
    except the 3D skybox's (the ``sky_camera``'s closure).

Which heights
    Floors are upward-facing triangles (normal ``z >= 0.7``, the steepest
    slope a player can stand on) just above which is a playable cluster.
    They are drawn from above into a coarse grid, peeling up to four floors
    per cell (each a player's height below the one above).  Neighbouring
    cells join when their floors differ by at most a jump (64 units), so
    stairs, ramps and slopes connect while roofs, which no floor leads up to,
    stay apart; the floors joined to the anchors are the reachable ones.  At
    every pixel the overview shows what lies below the highest reachable
    floor there plus a player's head room: roofs, ceilings and lamps are cut
    away, and walls (no floor) stay dark.  Levels are bands of reachable
    floor heights with no floor between them for 128 units; a level holding
    under 1% of the floor (a spawn box under the map) is left out.

The overview text file
    CS:S, CS:GO and TF2 read ``resource/overviews/<map>.txt``: ``pos_x`` /
    ``pos_y`` are the world coordinates of the image's top-left corner and
    ``scale`` the world units per pixel of a 1024-pixel-wide overview
    texture; CS:GO's ``verticalsections`` give altitude ranges.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

from ... import queries
from ...errors import BspError
from ...lump_ids import LumpId
from ...model.geometry import brush_models
from ...protocols import MapReader
from ...numeric import sorted_unique
from ...resources import expand_ranges
from .camera import entity_floats
from .raster import Band, Frame, pixel_values, project_orthographic
from .shade import Modulate

if TYPE_CHECKING:
    from ...codecs.entities import Entity

__all__ = ["Marker", "OverviewFrame", "FloorMap", "playable_clusters", "reachable_floors", "pvs_culler",
           "markers", "markers_of", "overview_text", "draw_markers", "radar_shading"]

FLOOR_NORMAL_Z = 0.7
JUMP = 64.0  # gap in floor heights a player can still cross (jump, step, crouch-jump)
HEAD_ROOM = 96.0  # shown above the highest floor: a standing player and a little more
SPECK = 0.01  # a level with less than this share of the reachable floor is left out
LEVEL_GAP = 128.0  # floors further apart in height than this (with none between) are separate levels

#: Anchor classnames: where players start or must go.
SPAWN_CLASSES = {
    "info_player_start": "start", "info_player_deathmatch": "start", "info_player_coop": "start",
    "info_player_terrorist": "red", "info_player_counterterrorist": "blue",
    "info_player_rebel": "red", "info_player_combine": "blue",
    "info_player_axis": "red", "info_player_allies": "blue",
    "info_player_teamspawn": "team", "info_survivor_position": "start",
    # Titanfall's (rBSP): pilots' and titans' spawns, by team (TeamNum 2 IMC, 3 Militia).
    "info_spawnpoint_human_start": "team", "info_spawnpoint_titan_start": "team",
    "info_spawnpoint_human": "team", "info_spawnpoint_titan": "team",
}
OBJECTIVE_CLASSES = {
    "func_bomb_target": "bomb", "info_bomb_target": "bomb", "hostage_entity": "hostage",
    "info_hostage_spawn": "hostage", "func_hostage_rescue": "rescue",
    "team_control_point": "point", "item_teamflag": "flag", "func_capturezone": "rescue",
}
MARKER_COLOURS = {
    "start": (80, 220, 90), "red": (230, 70, 50), "blue": (70, 140, 240), "bomb": (250, 200, 40),
    "hostage": (240, 240, 240), "rescue": (120, 230, 230), "point": (250, 200, 40), "flag": (250, 130, 220),
}


@dataclass
class Marker:
    """A point of interest: ``kind`` (a key of :data:`MARKER_COLOURS`), a world position, and
    for brush entities (bomb sites, rescue zones) their world bounds."""

    kind: str
    origin: np.ndarray
    bounds: tuple[np.ndarray, np.ndarray] | None = None


@dataclass
class OverviewFrame:
    """How world XY maps to the picture: ``pos_x``/``pos_y`` the top-left corner, ``units_per_pixel``."""

    pos_x: float
    pos_y: float
    units_per_pixel: float
    width: int
    height: int
    z_min: float
    z_max: float

    def to_pixels(self, xy: np.ndarray) -> np.ndarray:
        xy = np.asarray(xy, np.float64)
        return np.stack([(xy[..., 0] - self.pos_x) / self.units_per_pixel,
                         (self.pos_y - xy[..., 1]) / self.units_per_pixel], -1)

    @property
    def scale(self) -> float:
        """The overview file's ``scale``: world units per pixel of a 1024-pixel-wide texture."""
        return self.units_per_pixel * self.width / 1024.0


def markers(bsp: MapReader) -> list[Marker]:
    """Spawns and objectives of the map, with team colours where the map says (``TeamNum``)."""
    if not bsp.has_lump("ENTITIES"):
        return []
    models: list[Any] = []

    def model_box(index: int) -> tuple[np.ndarray, np.ndarray] | None:
        if not models:
            models.append(brush_models(bsp))
        if 0 < index < len(models[0]):
            m = models[0][index]
            return m.mins + m.origin, m.maxs + m.origin
        return None

    return markers_of(bsp.entities, model_box)


def markers_of(entities: "Iterable[Entity]",
               model_box: Callable[[int], tuple[np.ndarray, np.ndarray] | None]) -> list[Marker]:
    """:func:`markers` of an entity list, ``model_box(N)`` the world box of ``"model" "*N"`` (or None)."""
    out = []
    for entity in entities:
        classname = (entity.get("classname") or "").lower()
        kind = SPAWN_CLASSES.get(classname) or OBJECTIVE_CLASSES.get(classname)
        if kind is None:
            continue
        if kind == "team":
            kind = {"2": "red", "3": "blue"}.get((entity.get("TeamNum") or entity.get("teamnum") or "").strip(),
                                                 "start")
        model = entity.get("model") or ""
        if model.startswith("*") and model[1:].isdigit():
            box = model_box(int(model[1:]))
            if box is not None:
                lo, hi = box
                out.append(Marker(kind, (lo + hi) / 2, (lo, hi)))
            continue
        origin = entity_floats(entity.get("origin"))
        if origin is not None:
            out.append(Marker(kind, origin))
    return out


def _closure(matrix: np.ndarray, start: np.ndarray) -> np.ndarray:
    reach = start.copy()
    while True:
        grown: np.ndarray = reach | matrix[reach].any(0)
        if grown.sum() == reach.sum():
            return grown
        reach = grown


def playable_clusters(bsp: MapReader, anchors: np.ndarray) -> np.ndarray | None:
    """Bool per cluster: reachable from the ``anchors`` ``(N, 3)`` through the PVS (see the notes).

    None when every cluster counts (no tree, no visibility, no anchor in open space).
    """
    try:
        vis = queries.visibility(bsp)
        if not vis.present or not bsp.has_lump(LumpId.NODES):
            return None
        matrix = vis.pvs_matrix()
        count = len(matrix)
        start = np.zeros(count, bool)
        if len(anchors):
            # A few units up: a spawn's origin may sit on (or in) its floor.
            cl = np.asarray(queries.cluster_at(bsp, np.asarray(anchors, np.float64) + [0, 0, 16]), np.int64)
            cl = cl[(cl >= 0) & (cl < count)]
            start[cl] = True
        if not start.any():
            sky = _sky_camera(bsp)
            everything = np.ones(count, bool)
            if sky is None:
                return None
            c = int(queries.cluster_at(bsp, sky))
            if 0 <= c < count:
                skybox = np.zeros(count, bool)
                skybox[c] = True
                everything &= ~_closure(matrix, skybox)
            return everything if everything.any() else None
        return _closure(matrix, start)
    except (BspError, IndexError, ValueError):
        return None  # a map whose tree or visibility cannot be read: show everything


def _sky_camera(bsp: MapReader) -> np.ndarray | None:
    if not bsp.has_lump("ENTITIES"):
        return None
    sky = bsp.entities.first(classname="sky_camera")
    return None if sky is None else entity_floats(sky.get("origin"))


def triangle_clusters(bsp: MapReader, corners: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """The cluster just in front of every triangle (-1: solid or unknown)."""
    if not len(corners) or not bsp.has_lump(LumpId.NODES):
        return np.full(len(corners), -1, np.int64)
    probe = corners.mean(1) + normal * 2.0
    return np.asarray(queries.cluster_at(bsp, probe), np.int64)


def pvs_culler(bsp: MapReader, face: np.ndarray) -> Callable[[np.ndarray], np.ndarray | None] | None:
    """A function giving, for an eye position, which triangles its PVS may show.

    ``face`` is the map face of every triangle (``-1`` for props).  A face
    is seen from a cluster when a leaf listing it (``LEAFFACES``) is in that
    cluster's PVS; faces no leaf lists (displacements, brush entities) and
    props are always drawn.  None when the map has no visibility data.
    """
    try:
        vis = queries.visibility(bsp)
        leafs = bsp.lump_or_none(LumpId.LEAFS)
        leaffaces = bsp.lump_or_none(LumpId.LEAFFACES)
        if not vis.present or leafs is None or leaffaces is None or not len(leaffaces):
            return None
        count = int(np.max(face)) + 1 if len(face) else 0
        # Every leaf's faces, its range checked and sized against the budget first (a damaged count
        # of billions is a BspError: no culling, rather than an allocation of gigabytes).
        owner, index = expand_ranges(leafs["firstleafface"], leafs["numleaffaces"], len(leaffaces), bsp=bsp,
                                     lump=LumpId.LEAFS, fields=("firstleafface", "numleaffaces"),
                                     target="LEAFFACES", bytes_per_item=48, itemsize=leafs.dtype.itemsize)
        pair_face = np.asarray(leaffaces, np.int64)[index]
        pair_cluster = leafs["cluster"].astype(np.int64)[owner]
        good = (pair_cluster >= 0) & (pair_cluster < vis.num_clusters) & (pair_face >= 0) & (pair_face < count)
        pair_face, pair_cluster = pair_face[good], pair_cluster[good]
        listed = np.zeros(count + 1, bool)
        listed[pair_face] = True
    except (BspError, IndexError, ValueError):
        return None
    always = (face < 0) | ~listed[np.where(face >= 0, face, count)]

    def visible(eye: np.ndarray) -> np.ndarray | None:
        cluster = int(queries.cluster_at(bsp, np.asarray(eye, np.float64)))
        if not 0 <= cluster < vis.num_clusters:
            return None  # in solid or outside: no PVS to go by
        row = vis.pvs(cluster)
        seen = np.zeros(count + 1, bool)
        seen[pair_face[row[pair_cluster]]] = True
        return always | seen[np.where(face >= 0, face, count)]

    return visible


@dataclass
class FloorMap:
    """The floors players can reach, on a grid seen from above.

    ``top[row, col]`` is the height of the highest reachable floor in each
    cell (NaN: none); cell ``(0, 0)`` has its top-left corner at
    ``origin`` (world XY) and cells are ``cell`` units wide.
    """

    origin: tuple[float, float]
    cell: float
    top: np.ndarray
    #: Every reachable floor, ``(layers, rows, cols)`` (NaN: none), highest layer first.
    floors: np.ndarray | None = None

    def levels(self, gap: float = LEVEL_GAP) -> list[tuple[float, float]]:
        """Height bands of the reachable floors, split where no floor lies for ``gap`` units."""
        if self.floors is None:
            return []
        z = np.sort(self.floors[~np.isnan(self.floors)])
        if not len(z):
            return []
        cut = np.flatnonzero(np.diff(z) > gap)
        starts = np.concatenate([[0], cut + 1])
        ends = np.concatenate([cut, [len(z) - 1]])
        return [(float(z[a]), float(z[b])) for a, b in zip(starts, ends)]

    def band(self, low: float, high: float) -> "FloorMap":
        """Only the reachable floors between ``low`` and ``high``: a map of one level."""
        if self.floors is None:
            return self
        inside = (self.floors >= low) & (self.floors <= high)
        top = np.where(inside, self.floors, -np.inf).max(0)
        return FloorMap(self.origin, self.cell, np.where(np.isfinite(top), top, np.nan),
                        np.where(inside, self.floors, np.nan))

    @property
    def reachable(self) -> np.ndarray:
        unreached: np.ndarray = np.isnan(self.top)
        return ~unreached

    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """World XY ``(low, high)`` of the reachable cells."""
        rows, cols = np.nonzero(self.reachable)
        if not len(rows):
            return None
        x0, y1 = self.origin[0] + cols.min() * self.cell, self.origin[1] - rows.min() * self.cell
        x1, y0 = self.origin[0] + (cols.max() + 1) * self.cell, self.origin[1] - (rows.max() + 1) * self.cell
        return np.array([x0, y0]), np.array([x1, y1])

    def limit_at(self, x: np.ndarray, y: np.ndarray, head_room: float) -> np.ndarray:
        """The highest height shown at world points: the cell's (or a neighbour's) top floor plus head room."""
        table = self._limits(head_room)
        return table[self._rows(y), self._cols(x)]  # type: ignore[no-any-return]

    def limit_grid(self, x: np.ndarray, y: np.ndarray, head_room: float) -> Callable[[np.ndarray, np.ndarray],
                                                                                    np.ndarray]:
        """:meth:`limit_at` on a grid of points, as a function of column (``x`` index) and row (``y`` index)."""
        table, cols, rows = self._limits(head_room), self._cols(x), self._rows(y)
        return lambda px, py: table[rows[py], cols[px]]

    def _limits(self, head_room: float) -> np.ndarray:
        """Per cell the highest height shown, with an extra row and column of ``-inf`` for outside the grid."""
        h, w = self.top.shape
        pad = np.pad(np.where(self.reachable, self.top, -np.inf), 1, constant_values=-np.inf)
        # One cell of slack around reachable floors, so their edges are not cut by the grid.
        grown = np.max([pad[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)], axis=0)
        table = np.full((h + 1, w + 1), -np.inf)
        table[:h, :w] = grown + head_room
        return table

    def _cols(self, x: np.ndarray) -> np.ndarray:
        col = np.floor((np.asarray(x, np.float64) - self.origin[0]) / self.cell).astype(np.int64)
        col[(col < 0) | (col >= self.top.shape[1])] = self.top.shape[1]
        return col

    def _rows(self, y: np.ndarray) -> np.ndarray:
        row = np.floor((self.origin[1] - np.asarray(y, np.float64)) / self.cell).astype(np.int64)
        row[(row < 0) | (row >= self.top.shape[0])] = self.top.shape[0]
        return row


def _index_type(count: int) -> type[np.signedinteger]:
    """The smaller integer type that numbers ``count`` things (grid nodes: half the memory)."""
    return np.int32 if count < 2**31 else np.int64


def _components(count: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Connected-component labels of ``count`` nodes joined by edges ``(u, v)`` (the smallest node of each)."""
    labels = np.arange(count, dtype=_index_type(count))
    while True:
        lu, lv = labels[u], labels[v]
        differ = lu != lv
        if not differ.any():
            return labels
        lo, hi = np.minimum(lu, lv)[differ], np.maximum(lu, lv)[differ]
        order = np.argsort(-lo, kind="stable")  # the smallest label is written last and wins
        labels[hi[order]] = lo[order]
        while True:  # pointer jumping: every node points at its root again
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped


def reachable_floors(floors: np.ndarray, anchors: np.ndarray, *, layers: int = 4,
                     max_cells: int = 384) -> FloorMap | None:
    """Flood the floors ``(F, 3, 3)`` from the ``anchors`` (see the module notes).

    The floors are drawn from above into a grid, peeling up to ``layers``
    floors per cell (each at least a player's height below the one above);
    neighbouring cells join when their floors differ by at most a jump.
    Without anchors the largest joined area counts.
    """
    if not len(floors):
        return None
    lo, hi = floors[..., :2].min((0, 1)), floors[..., :2].max((0, 1))
    cell = max(float((hi - lo).max()) / max_cells, 8.0)
    w = int(np.ceil((hi[0] - lo[0]) / cell)) + 2
    h = int(np.ceil((hi[1] - lo[1]) / cell)) + 2
    origin = (float(lo[0] - cell), float(hi[1] + cell))
    ids = np.arange(len(floors))
    attrs = np.zeros(floors.shape[:2] + (0,))
    flat_z = np.full((layers, h * w), np.nan)
    below = None
    for k in range(layers):
        frame = project_orthographic(floors, attrs, ids, w, h, origin, cell, below)
        if not frame.hit.any():
            break
        depth = frame.depth
        flat_z[k, frame.hit] = -depth[frame.hit]
        # The next floor: a player's height lower.
        below = pixel_values(np.where(frame.hit, -depth - 72.0, -np.inf), w)
    del frame, below
    z = flat_z.reshape(layers, h, w)
    node = np.arange(layers * h * w, dtype=_index_type(layers * h * w)).reshape(layers, h, w)
    us, vs = [], []
    for a, b, na, nb in ((z[:, :, :-1], z[:, :, 1:], node[:, :, :-1], node[:, :, 1:]),
                         (z[:, :-1, :], z[:, 1:, :], node[:, :-1, :], node[:, 1:, :])):
        for k1, k2 in np.ndindex(layers, layers):  # a layer pair at a time: grid-sized temporaries
            with np.errstate(invalid="ignore"):
                join = np.abs(a[k1] - b[k2]) <= JUMP
            us.append(na[k1][join])
            vs.append(nb[k2][join])
    u, v = np.concatenate(us), np.concatenate(vs)
    del us, vs
    labels = _components(layers * h * w, u, v)
    del u, v
    present = ~np.isnan(z.ravel())
    seeds: list[int] = []
    for ax, ay, az in np.asarray(anchors, np.float64).reshape(-1, 3):
        col, row = int((ax - origin[0]) // cell), int((origin[1] - ay) // cell)
        best = None
        for dr in (0, -1, 1, -2, 2):
            for dc in (0, -1, 1, -2, 2):
                r, c = row + dr, col + dc
                if not (0 <= r < h and 0 <= c < w):
                    continue
                zs = z[:, r, c]
                ok = np.flatnonzero(~np.isnan(zs) & (zs <= az + 24) & (zs >= az - 160))
                if len(ok):
                    k = int(ok[np.argmax(zs[ok])])
                    best = int(node[k, r, c])
                    break
            if best is not None:
                break
        if best is not None:
            seeds.append(best)
    if seeds:
        chosen = sorted_unique(labels[seeds])
    else:
        size = np.bincount(labels[present], minlength=len(labels))
        chosen = np.array([int(np.argmax(size))])
    reach = (np.isin(labels, chosen) & present).reshape(layers, h, w)
    found = np.where(reach, z, np.nan)
    # A level of a few cells (a spawn box under the map, an objective's hidden room) is not
    # part of the overview: it would only stretch the heights shown.
    whole = FloorMap(origin, cell, np.full((h, w), np.nan), found)
    total = int(reach.sum())
    for low, high in whole.levels():
        inside = (found >= low) & (found <= high)
        if int(inside.sum()) < SPECK * total:
            found = np.where(inside, np.nan, found)
    top = np.where(np.isnan(found), -np.inf, found).max(0)
    return FloorMap(origin, cell, np.where(np.isfinite(top), top, np.nan), found)


def radar_shading(frame: Frame, z_low: float, z_high: float, step: float) -> Modulate:
    """The overview's shading of a band of pixels: lighter higher up, darker at height steps
    (more than ``step``) and at the edge of the drawn area (a radar's wall lines)."""
    width = frame.width

    def modulate(band: Band, colour: np.ndarray) -> np.ndarray:
        # Heights of the band and of the rows just above and below it (NaN: nothing drawn).
        first, rows = band.first_row, band.rows
        top, bottom = max(first - 1, 0), min(first + rows + 1, frame.height)
        pad = np.full((rows + 2, width + 2), np.nan)
        pix = np.flatnonzero(frame.owner[top * width:bottom * width] >= 0)
        row, col = np.divmod(pix, width)
        pad[row + (top - first + 1), col + 1] = -frame.depth_at(pix + top * width)
        z = pad[1:-1, 1:-1]
        edge = np.zeros((rows, width), bool)
        for dy, dx in ((0, 1), (1, 0), (2, 1), (1, 2)):
            n = pad[dy:dy + rows, dx:dx + width]
            with np.errstate(invalid="ignore"):
                edge |= np.isnan(n) | (np.abs(n - z) > step)
        row, col = np.divmod(band.pix - first * width, width)
        t = np.clip((z[row, col] - z_low) / max(z_high - z_low, 1.0), 0, 1).astype(np.float32)
        colour = colour * (np.float32(0.55) + np.float32(0.65) * t)[:, None]
        factor = np.where(edge[row, col], np.float32(0.45), np.float32(1.0))
        return colour * factor[:, None]

    return modulate


def draw_markers(image: np.ndarray, frame: OverviewFrame, found: list[Marker]) -> None:
    """Discs for spawns and points, outlined boxes for zones, in place on ``image`` ``(H, W, 3)``."""
    h, w = image.shape[:2]
    radius = max(2.0, min(w, h) / 160)
    for marker in found:
        colour = np.array(MARKER_COLOURS.get(marker.kind, (255, 255, 255)), np.float64)
        if marker.bounds is not None:
            (x0, y1), (x1, y0) = frame.to_pixels(marker.bounds[0][:2]), frame.to_pixels(marker.bounds[1][:2])
            x0, x1 = max(int(np.floor(x0)), 0), min(int(np.ceil(x1)), w - 1)
            y0, y1 = max(int(np.floor(y0)), 0), min(int(np.ceil(y1)), h - 1)
            if x1 < x0 or y1 < y0:
                continue
            t = max(1, int(radius / 2))
            box = image[y0:y1 + 1, x0:x1 + 1]
            box[:] = (box * 0.7 + colour * 0.3).astype(np.uint8)
            box[:t], box[-t:], box[:, :t], box[:, -t:] = colour, colour, colour, colour
            continue
        cx, cy = frame.to_pixels(marker.origin[:2])
        r = radius * (1.6 if marker.kind in ("point", "flag", "hostage") else 1.0)
        x0, x1 = max(int(cx - r - 2), 0), min(int(cx + r + 2), w - 1)
        y0, y1 = max(int(cy - r - 2), 0), min(int(cy + r + 2), h - 1)
        if x1 < x0 or y1 < y0:
            continue
        yy, xx = np.mgrid[y0:y1 + 1, x0:x1 + 1]
        d2 = (xx - cx + 0.5) ** 2 + (yy - cy + 0.5) ** 2
        window = image[y0:y1 + 1, x0:x1 + 1]
        window[d2 <= (r + 1) ** 2] = (20, 20, 20)
        window[d2 <= r * r] = colour.astype(np.uint8)


def overview_text(name: str, frame: OverviewFrame, *, material: str | None = None,
                  sections: list[tuple[str, float, float]] | None = None) -> str:
    """The overview file games read (KeyValues), for an overview picture of ``frame``.

    ``sections`` are CS:GO's vertical sections ``(name, low, high)``, each
    with its own picture (``<material>_<name>``); without them one
    ``default`` section spans the heights shown.
    """
    material = material or f"overviews/{name}"
    sections = sections or [("default", frame.z_min, frame.z_max)]
    blocks = "".join(
        f"\t\t\"{section}\"\n\t\t{{\n"
        f"\t\t\t\"AltitudeMin\"\t\"{low:.0f}\"\n"
        f"\t\t\t\"AltitudeMax\"\t\"{high:.0f}\"\n\t\t}}\n"
        for section, low, high in sections)
    return (
        f"// {name} overview, written by sourcebsp\n"
        f"\"{name}\"\n{{\n"
        f"\t\"material\"\t\"{material}\"\n"
        f"\t\"pos_x\"\t\t\"{frame.pos_x:.1f}\"\n"
        f"\t\"pos_y\"\t\t\"{frame.pos_y:.1f}\"\n"
        f"\t\"scale\"\t\t\"{frame.scale:.4f}\"\n"
        f"\t\"rotate\"\t\"0\"\n"
        f"\t\"zoom\"\t\t\"1\"\n"
        f"\t\"verticalsections\"\n\t{{\n{blocks}\t}}\n}}\n"
    )

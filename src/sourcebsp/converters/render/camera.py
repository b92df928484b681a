"""Cameras of the perspective view: player starts, named entities, and choosing a view worth seeing.

A player start gives the first camera: its origin raised to eye height,
looking along its angles (pitch and yaw; a viewer does not roll).  When
that picture is poor (a wall at arm's length, open sky, a bare corner),
other starts and other directions are tried, and, when the map has few
starts, points above its largest floors; every candidate is drawn small and
scored, and the best one wins.

The score of a picture multiplies five measures, each in ``[0, 1]``:
the fraction of pixels covered; the depth range (``log2`` of the 90th to
the 10th percentile of depth, three octaves or more counting fully); the
number of distinct faces seen (60 or more counting fully, on a log scale);
the distance to what is seen (a median depth under 256 units counts
less); and the share of pixels nearer than arm's length (48 units) counts
against it: the camera is staring at a wall.  A first start scoring under
0.5 is replaced only by a view scoring 1.5 times better.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np

from ...errors import BspError
from ...model.geometry import angles_matrix, brush_models
from ...protocols import MapReader
from ...numeric import sorted_unique
from .raster import Frame, project_perspective
from .scene import Scene

if TYPE_CHECKING:
    from ...codecs.entities import Entity

__all__ = ["Camera", "CameraError", "PLAYER_STARTS", "EYE_HEIGHT", "player_starts", "starts_of", "entity_camera",
           "camera_of",
           "draw_perspective", "score_frame", "choose_camera"]

#: Classnames of player starts, in the order the first one is looked for.
PLAYER_STARTS = (
    "info_player_start", "info_player_teamspawn", "info_player_terrorist",
    "info_player_counterterrorist", "info_player_deathmatch", "info_player_combine",
    "info_player_rebel", "info_survivor_position", "info_player_coop", "info_player_axis",
    "info_player_allies",
    # Titanfall's (rBSP): where pilots and titans start a match, then where they respawn.
    "info_spawnpoint_human_start", "info_spawnpoint_titan_start", "info_spawnpoint_human", "info_spawnpoint_titan",
)
EYE_HEIGHT = 64.0  # units above the player's origin
GOOD_SCORE = 0.5  # a first view scoring at least this is kept
KEEP_FIRST = 1.5  # otherwise another view must score this many times better to replace it
ARM_LENGTH = 48.0  # what is nearer than this fills the view without showing anything
_PROBE_SIZE = (64, 36)


class CameraError(BspError):
    """The camera asked for cannot be placed (no such entity, bad numbers)."""


@dataclass
class Camera:
    """A perspective camera: eye position, Source angles (pitch, yaw, roll), where it came from."""

    eye: np.ndarray
    angles: np.ndarray
    source: str

    @property
    def rotation(self) -> np.ndarray:
        """Columns forward, left, up."""
        return angles_matrix(self.angles)


def entity_floats(text: str | None, count: int = 3) -> np.ndarray | None:
    """The ``count`` finite numbers of an entity value such as ``origin``, or None."""
    try:
        values = [float(v) for v in (text or "").split()]
    except ValueError:
        return None
    return np.array(values) if len(values) == count and np.all(np.isfinite(values)) else None


def _entity_angles(entity: Entity) -> np.ndarray:
    angles = entity_floats(entity.get("angles"))
    if angles is None:
        yaw = entity_floats(entity.get("angle"), 1)
        angles = np.array([0.0, float(yaw[0]) if yaw is not None else 0.0, 0.0])
    return angles


def player_starts(bsp: MapReader) -> list[Camera]:
    """A camera at eye height for every player start, in :data:`PLAYER_STARTS` order, then file order."""
    return starts_of(bsp.entities) if bsp.has_lump("ENTITIES") else []


def starts_of(entities: "Iterable[Entity]") -> list[Camera]:
    """:func:`player_starts` of an entity list (any map format's)."""
    found: dict[str, list[Camera]] = {name: [] for name in PLAYER_STARTS}
    for entity in entities:
        classname = (entity.get("classname") or "").lower()
        if classname not in found:
            continue
        origin = entity_floats(entity.get("origin"))
        if origin is None:
            continue
        angles = _entity_angles(entity)
        found[classname].append(Camera(origin + [0.0, 0.0, EYE_HEIGHT], np.array([angles[0], angles[1], 0.0]),
                                       f"{classname} #{len(found[classname])}"))
    return [camera for name in PLAYER_STARTS for camera in found[name]]


def entity_camera(bsp: MapReader, targetname: str) -> Camera:
    """A camera at the entity named ``targetname``, looking along its angles.

    A brush entity without an origin is seen from its model's centre.
    """
    def model_centre(index: int) -> np.ndarray | None:
        models = brush_models(bsp)
        if 0 < index < len(models):
            m = models[index]
            return np.asarray((m.mins + m.maxs) / 2 + m.origin)
        return None

    return camera_of(bsp.entities if bsp.has_lump("ENTITIES") else [], targetname, model_centre)


def camera_of(entities: "Iterable[Entity]", targetname: str,
              model_centre: Callable[[int], np.ndarray | None]) -> Camera:
    """:func:`entity_camera` of an entity list, ``model_centre(N)`` the centre of ``"model" "*N"``."""
    for entity in entities:
        if (entity.get("targetname") or "") != targetname:
            continue
        origin = entity_floats(entity.get("origin"))
        model = entity.get("model") or ""
        if (origin is None or not origin.any()) and model.startswith("*") and model[1:].isdigit():
            centre = model_centre(int(model[1:]))
            origin = centre if centre is not None else origin
        if origin is None:
            raise CameraError(f"entity {targetname!r} has no origin to place a camera at")
        return Camera(origin, _entity_angles(entity), f"entity {targetname}")
    raise CameraError(f"no entity is named {targetname!r}")


def draw_perspective(scene: Scene, camera: Camera, width: int, height: int, fov: float,
                     visible: np.ndarray | None = None) -> Frame:
    """Draw the scene's triangles that face the camera (of those ``visible``, a bool per triangle)."""
    eye = np.asarray(camera.eye, np.float64)
    keep = np.einsum("ij,ij->i", scene.normal, eye - scene.corners[:, 0]) > 0
    if visible is not None:
        keep &= visible
    cam = (scene.corners[keep] - eye) @ camera.rotation
    # Vertical field of view from the horizontal one keeps the picture's aspect.
    return project_perspective(cam, scene.attrs[keep], np.flatnonzero(keep), width, height, fov)


def score_frame(frame: Frame, scene: Scene) -> float:
    """How informative a picture is (see the module notes), in ``[0, 1]``."""
    hit = frame.owner >= 0
    covered = float(hit.mean()) if len(hit) else 0.0
    if covered == 0:
        return 0.0
    depth = frame.depth[hit]
    d10, d50, d90 = np.percentile(depth, [10, 50, 90])
    spread = min(float(np.log2(max(d90, 1.0) / max(d10, 1.0))) / 3.0, 1.0)
    source = frame.ids[frame.owner[hit]]
    faces = scene.face[source]
    distinct = len(sorted_unique(np.where(faces >= 0, faces, -1 - source // 12)))
    variety = min(float(np.log1p(distinct) / np.log1p(60)), 1.0)
    distance = min(float(d50) / 256.0, 1.0)
    near = float(np.mean(depth < ARM_LENGTH))  # a wall or a crate in the face
    return covered * (0.25 + 0.75 * spread) * (0.25 + 0.75 * variety) * (0.3 + 0.7 * distance) * (1.0 - near)


def _outside(scene: Scene) -> Camera:
    """Outside the map's bounds, looking down at its centre."""
    points = scene.corners.reshape(-1, 3)
    lo, hi = points.min(0), points.max(0)
    centre = (lo + hi) / 2
    radius = max(float(np.linalg.norm(hi - lo)) / 2, 1.0)
    angles = np.array([35.0, 45.0, 0.0])
    eye = centre - angles_matrix(angles)[:, 0] * radius * 1.5
    return Camera(eye, angles, "outside the map")


def _floor_cameras(scene: Scene, count: int, inside: Callable[[np.ndarray], np.ndarray] | None) -> list[Camera]:
    """Eye-height cameras above the largest floor triangles (in open space when ``inside`` says so)."""
    floor = np.flatnonzero((scene.normal[:, 2] >= 0.7) & (scene.face >= 0))
    if not len(floor):
        return []
    c = scene.corners[floor]
    area = np.linalg.norm(np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0]), axis=1) / 2
    order = floor[np.argsort(-area, kind="stable")][: count * 4]
    eyes = scene.corners[order].mean(1) + [0.0, 0.0, EYE_HEIGHT]
    if inside is not None and len(eyes):
        eyes = eyes[inside(eyes)]
    # Keep positions at least 128 units apart.
    chosen: list[np.ndarray] = []
    for eye in eyes:
        if all(np.linalg.norm(eye - other) >= 128 for other in chosen):
            chosen.append(eye)
        if len(chosen) == count:
            break
    return [Camera(eye, np.zeros(3), "above a floor") for eye in chosen]


def _spread(cameras: list[Camera], count: int) -> list[Camera]:
    if len(cameras) <= count:
        return cameras
    return [cameras[int(i)] for i in np.linspace(0, len(cameras) - 1, count).round()]


def choose_camera(scene: Scene, starts: list[Camera], fov: float, aspect: float,
                  inside: Callable[[np.ndarray], np.ndarray] | None = None,
                  visible: Callable[[np.ndarray], np.ndarray | None] | None = None) -> tuple[Camera, float, int]:
    """The best camera: the first start when its view is good, else the best of many tries.

    ``inside(points)`` says which points are in open space; ``visible(eye)``
    which triangles can be seen from a point (its PVS), to draw less.
    Looking level is preferred: a view looking down must score a quarter
    better to win.  Returns the camera, its score and how many views were tried.
    """
    width = _PROBE_SIZE[0]
    height = max(int(round(width / aspect)), 8)
    tried = 0

    def score(camera: Camera, mask: np.ndarray | None = None) -> float:
        nonlocal tried
        tried += 1
        return score_frame(draw_perspective(scene, camera, width, height, fov, mask), scene)

    if starts:
        first = score(starts[0])
        if first >= GOOD_SCORE:
            return starts[0], first, tried
        best = (first * KEEP_FIRST, starts[0])
    else:
        outside = _outside(scene)
        best = (score(outside), outside)
    bases = list(_spread(starts, 8))
    if len(starts) < 4:
        bases += _floor_cameras(scene, 8, inside)
    for base in bases:
        mask = visible(base.eye) if visible is not None else None
        for turn in range(0, 360, 45):
            for pitch in (0.0, 20.0):
                camera = Camera(base.eye, np.array([pitch, base.angles[1] + turn, 0.0]),
                                base.source if turn == 0 and pitch == base.angles[0] else
                                f"{base.source}, turned {turn} degrees, pitch {pitch:g}")
                value = score(camera, mask) * (1.0 if pitch == 0 else 1 / 1.25)
                if value > best[0]:
                    best = (value, camera)
    if starts and best[1] is starts[0]:
        return starts[0], first, tried
    return best[1], best[0], tried

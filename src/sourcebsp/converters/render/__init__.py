"""Preview pictures of a map, drawn on the CPU with numpy (no GPU, no display).

Views:

* ``"overview"``: a radar like the ones CS:S, CS:GO and TF2 ship: straight
  down, orthographic, north (+Y) up; sky, tool and nodraw faces removed,
  only the playable space (clusters reachable from the player starts) and
  its height range shown, so roofs and ceilings are cut away
  (:mod:`~sourcebsp.converters.render.overview`); floors are coloured by
  texture colour and lightmap with a height tint (higher is lighter), and
  height steps and walls are outlined.  Optional markers for spawns and
  objectives; :func:`overview_text` gives the overview file games read.
* ``"top"``: the whole map seen straight down (faces seen from behind are
  culled, so ceilings do not hide the rooms below, but roofs do).
* ``"player"``: perspective from a player start at eye height along its
  angles, or from another start or direction when that picture is poor
  (:mod:`~sourcebsp.converters.render.camera`); or from a camera given as
  numbers or as a named entity.

Colour is the texture's average colour (TEXDATA ``reflectivity``) times the
lightmap; with textures found in the pakfile or a game folder
(:mod:`~sourcebsp.converters.render.textures`) real texels are sampled
through the face UVs.  Static props are drawn as the bounding boxes of their
models when the model files are found.

Any map, or its path, is drawn: a Titanfall rBSP map (a :class:`~sourcebsp.respawn.RespawnBsp`)
from its meshes, in the same views (:mod:`~sourcebsp.converters.render.respawn`).
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np

from ... import queries
from ..._extras import needs_extra
from ..._io import atomic_write
from ...model.geometry import build_mesh
from ...model.lightmaps import build_atlas
from ...model.respawn import is_respawn_map
from ...protocols import MapReader, MapSource
from . import overview as ov
from . import textures as rt
from .._common import Progress, opened, report
from .camera import EYE_HEIGHT, PLAYER_STARTS, Camera, CameraError, choose_camera, draw_perspective, \
    entity_camera, player_starts
from .raster import clip_near, project_orthographic
from .respawn import respawn_scene_and_sight
from .scene import NothingToDraw, Scene, build_scene
from .sight import Sight
from .shade import contrast, shade

__all__ = ["RenderResult", "NothingToDraw", "CameraError", "render", "save_image", "render_file", "render_png",
           "overview_text", "level_sections", "PLAYER_STARTS", "EYE_HEIGHT", "RENDER_STEPS", "VIEWS", "IMAGE_FORMATS"]

View = Literal["overview", "top", "player"]
VIEWS = ("overview", "top", "player")
RENDER_STEPS = ("meshes", "colours", "camera", "raster", "shade")
#: File extensions and the Pillow format written for them.
IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP"}
BACKGROUND = {"overview": np.array([0, 0, 0], np.uint8), "top": np.array([34, 38, 46], np.uint8),
              "player": np.array([150, 170, 196], np.uint8)}
#: The largest picture drawn (its buffers take about 25 bytes a pixel).
MAX_PIXELS = 64_000_000
#: Below this fraction of covered pixels a picture is reported as nearly empty.
NEARLY_EMPTY = 0.15


@dataclass
class RenderResult:
    """A rendered picture (``image``: ``(H, W, 3)`` uint8) and facts about it.

    ``covered`` is the fraction of pixels showing the map, ``contrast`` the
    standard deviation of their luminance (0..1); ``warnings`` says what
    went wrong in a way the picture alone would not show (a nearly empty
    picture, a camera chosen without a player start).
    """

    image: np.ndarray
    view: str
    covered: float
    triangles: int  # triangles drawn after culling and clipping
    lit: bool  # shaded by lightmaps (else by face normals)
    camera: tuple[float, float, float] | None = None  # eye of a perspective view
    angles: tuple[float, float, float] | None = None
    camera_source: str | None = None
    score: float | None = None  # of the perspective view chosen
    views_tried: int = 0
    textured: bool = False
    props: int = 0  # static props drawn
    props_missing: int = 0  # static props whose model was not found
    overview: ov.OverviewFrame | None = None
    levels: list[tuple[float, float]] = field(default_factory=list)  # floor height bands of an overview
    contrast: float = 0.0
    warnings: list[str] = field(default_factory=list)


def _source_sight(bsp: MapReader, scene: Scene) -> Sight:
    """A Source map's: its entities, its tree and its PVS."""
    inside = None
    if bsp.has_lump("NODES"):
        def inside(points: np.ndarray) -> np.ndarray:
            return np.asarray(queries.cluster_at(bsp, points)) >= 0

    return Sight(lambda: player_starts(bsp), lambda: ov.markers(bsp), lambda name: entity_camera(bsp, name),
                 lambda: ov.pvs_culler(bsp, scene.face), inside,
                 lambda corners, normal: ov.triangle_clusters(bsp, corners, normal),
                 lambda anchors: ov.playable_clusters(bsp, anchors))


def _scene(bsp: MapReader, include_tools: bool, hdr: bool | None, game: str | Path | None, textures: bool,
           props: bool, markers: bool = False) -> Scene:
    mesh = build_mesh(bsp, models="all", include_tools=include_tools)
    if not mesh.num_triangles:
        raise NothingToDraw("the map has no drawn faces to render (only tool faces or entities)")
    atlas = (build_atlas(bsp, hdr=False) or build_atlas(bsp, hdr=True)) if hdr is None else build_atlas(bsp, hdr=hdr)
    images, geometry, missing = None, None, 0
    notes: list[str] = []
    if textures or props:
        files = rt.game_files(bsp, game, notes)
        if textures and files is not None:
            images = rt.texture_images(files, mesh.textures, notes)
        if props:
            geometry, missing = rt.prop_geometry(bsp, files, markers=markers)
    scene = build_scene(bsp, mesh, atlas, texture_images=images, props=geometry)
    scene.props_missing = missing
    scene.notes = list(notes)
    return scene


def render(bsp_or_path: MapSource, *, view: View = "overview", size: tuple[int, int] = (1024, 1024),
           include_tools: bool = False, hdr: bool | None = None, fov: float = 90.0,
           camera: Sequence[float] | None = None, at: str | None = None,
           height_range: tuple[float, float] | None = None, markers: bool = False,
           level: tuple[float, float] | None = None, game: str | Path | None = None,
           textures: bool = True, props: bool = True, progress: Progress | None = None) -> RenderResult:
    """Draw the map; ``size`` is ``(width, height)`` in pixels.

    Parameters
    ----------
    view : "overview", "top" or "player"
    camera : X, Y, Z, PITCH, YAW[, ROLL]
        A fixed perspective camera (implies the player view).
    at : str
        The targetname of an entity to look from (implies the player view).
    height_range : (low, high)
        Overview: the world heights shown instead of the ones worked out.
    markers : bool
        Overview and top views: draw spawns and objectives.
    level : (low, high)
        Overview: show only the reachable floors between these heights (one
        of ``RenderResult.levels``), framed as the whole overview is.
    game : path
        A game folder (with ``gameinfo.txt``) or any folder holding
        ``materials/`` and ``models/``, searched after the pakfile.
    textures, props : bool
        Sample real textures / draw static props when their files are found: as
        their models' meshes, as their bounds when only the ``.mdl`` is found,
        and in the overview as small markers when no model file is found.

    Raises :class:`NothingToDraw` when the map has no drawn faces and
    :class:`CameraError` when ``at`` names no entity.
    """
    width, height = (int(v) for v in size)
    if width < 1 or height < 1:
        raise ValueError(f"size must be positive, not {size!r}")
    if width * height > MAX_PIXELS:
        raise ValueError(f"{width}x{height} is more than {MAX_PIXELS // 1_000_000} million pixels")
    if camera is not None or at is not None:
        view = "player"
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, not {view!r}")
    if not 1.0 <= fov <= 170.0:
        raise ValueError(f"the field of view must be 1-170 degrees, not {fov}")
    with opened(bsp_or_path) as bsp:
        if is_respawn_map(bsp):  # Titanfall's rBSP: its meshes, no lightmaps, textures or props
            scene, sight = respawn_scene_and_sight(bsp)
        else:
            scene = _scene(bsp, include_tools, hdr, game, textures, props and view != "top", view == "overview")
            sight = _source_sight(bsp, scene)
        report(progress, "meshes")
        report(progress, "colours")
        result = _view(sight, scene, view, width, height, fov, camera, at, height_range, markers, level, progress)
    result.props, result.props_missing = scene.props_drawn, scene.props_missing
    result.warnings[:0] = scene.notes
    if result.covered < NEARLY_EMPTY:
        result.warnings.append(f"the picture is nearly empty: {result.covered:.0%} of it shows the map")
    return result


def _view(sight: Sight, scene: Scene, view: str, width: int, height: int, fov: float,
          camera: Sequence[float] | None, at: str | None, height_range: tuple[float, float] | None,
          markers: bool, level: tuple[float, float] | None, progress: Progress | None) -> RenderResult:
    if view == "player":
        return _player(sight, scene, width, height, fov, camera, at, progress)
    return _from_above(sight, scene, view, width, height, height_range, markers, progress, level)


def _player(sight: Sight, scene: Scene, width: int, height: int, fov: float, camera: Sequence[float] | None,
            at: str | None, progress: Progress | None) -> RenderResult:
    warnings = []
    score, tried = None, 0
    culler = sight.culler()
    if camera is not None:
        values = [float(v) for v in camera]
        if len(values) not in (5, 6) or not np.all(np.isfinite(values)):
            raise CameraError(f"a camera is X Y Z PITCH YAW [ROLL], not {camera!r}")
        chosen = Camera(np.array(values[:3]), np.array((values[3:] + [0.0])[:3]), "--camera")
    elif at is not None:
        chosen = sight.camera_at(at)
    else:
        starts = sight.starts()
        chosen, score, tried = choose_camera(scene, starts, fov, width / height, sight.inside, culler)
        if not starts:
            warnings.append(f"the map has no player start: camera chosen among {tried} views ({chosen.source})")
    report(progress, "camera")
    frame = draw_perspective(scene, chosen, width, height, fov, culler(chosen.eye) if culler else None)
    report(progress, "raster")
    image, shaded = shade(frame, scene, BACKGROUND["player"], depth_cue=True)
    report(progress, "shade")
    return RenderResult(image, "player", frame.covered, len(frame.ids), shaded.lit,
                        tuple(float(v) for v in chosen.eye),  # type: ignore[arg-type]
                        tuple(float(v) for v in chosen.angles),  # type: ignore[arg-type]
                        chosen.source, score, tried, shaded.textured, contrast=contrast(image, frame),
                        warnings=warnings)


def _from_above(sight: Sight, scene: Scene, view: str, width: int, height: int,
                height_range: tuple[float, float] | None, markers: bool, progress: Progress | None,
                level: tuple[float, float] | None = None) -> RenderResult:
    warnings: list[str] = []
    keep = scene.normal[:, 2] > 1e-4  # faces seen from above
    found = sight.markers() if view == "overview" or markers else []
    z_range, floors = None, None
    if view == "overview":
        anchors = np.array([m.origin for m in found], np.float64).reshape(-1, 3)
        clusters = sight.triangle_clusters(scene.corners, scene.normal)
        playable = sight.playable(anchors)
        if playable is not None:
            keep &= (clusters >= 0) & (clusters < len(playable)) & playable[np.clip(clusters, 0, len(playable) - 1)]
        if not anchors.size:
            warnings.append("the map has no player start or objective: the largest floor area is shown")
        if height_range is not None:
            z_range = (float(min(height_range)), float(max(height_range)))
        else:
            floors = ov.reachable_floors(scene.corners[keep & (scene.normal[:, 2] >= ov.FLOOR_NORMAL_Z)], anchors)
            if floors is not None and floors.reachable.any():
                z_range = (float(np.nanmin(floors.top)), float(np.nanmax(floors.top)) + ov.HEAD_ROOM)
            else:
                floors = None
    if not keep.any():
        raise NothingToDraw("the map has no faces seen from above")
    corners, attrs, ids = scene.corners[keep], scene.attrs[keep], np.flatnonzero(keep)
    if z_range is not None and floors is None:
        # Cut at the top and bottom of the range: depth columns (top - z) then (z - low).
        low, high = z_range
        for sign, cut_at in ((-1.0, high), (1.0, low)):
            depth = sign * (corners[..., 2] - cut_at)
            cam = np.concatenate([depth[..., None], corners], -1)
            cam, attrs, ids = clip_near(cam, attrs, ids, 0.0)
            corners = cam[..., 1:]
        if not len(corners):
            raise NothingToDraw(f"nothing to draw between heights {low:g} and {high:g}")
    report(progress, "camera")
    box = floors.bounds() if floors is not None else None
    lo, hi = box if box is not None else (corners[..., :2].min((0, 1)), corners[..., :2].max((0, 1)))
    extent = np.maximum(hi - lo, 1.0)
    units = float(max(extent[0] / width, extent[1] / height)) / 0.96
    centre = (lo + hi) / 2
    origin = (float(centre[0] - width / 2 * units), float(centre[1] + height / 2 * units))
    below = None
    levels = floors.levels() if floors is not None else []
    if floors is not None and level is not None:
        floors = floors.band(min(level), max(level))
        if not floors.reachable.any():
            raise NothingToDraw(f"no reachable floor between heights {min(level):g} and {max(level):g}")
        z_range = (float(np.nanmin(floors.top)), float(np.nanmax(floors.top)) + ov.HEAD_ROOM)
    if floors is not None:
        # Per pixel, only what lies below the highest floor reachable there (plus head room).
        cx = origin[0] + (np.arange(width) + 0.5) * units
        cy = origin[1] - (np.arange(height) + 0.5) * units
        below = floors.limit_grid(cx, cy, ov.HEAD_ROOM)
    frame = project_orthographic(corners, attrs, ids, width, height, origin, units, below)
    report(progress, "raster")
    zlo, zhi = z_range if z_range is not None else (float(corners[..., 2].min()), float(corners[..., 2].max()))
    where = ov.OverviewFrame(origin[0], origin[1], units, width, height, zlo, zhi)
    radar = ov.radar_shading(frame, zlo, zhi, step=24.0) if view == "overview" else None
    image, shaded = shade(frame, scene, BACKGROUND[view], modulate=radar)
    if markers:
        ov.draw_markers(image, where, found)
    report(progress, "shade")
    return RenderResult(image, view, frame.covered, len(frame.ids), shaded.lit, textured=shaded.textured,
                        overview=where, levels=levels, contrast=contrast(image, frame), warnings=warnings)


def overview_text(result: RenderResult, name: str, sections: list[tuple[str, float, float]] | None = None) -> str:
    """The overview file (``resource/overviews/<name>.txt``) for an overview or top view.

    ``sections``: ``(name, low, high)`` vertical sections (see :func:`level_sections`).
    """
    if result.overview is None:
        raise ValueError("only overview and top views have an overview file")
    return ov.overview_text(name, result.overview, sections=sections)


def level_sections(result: RenderResult) -> list[tuple[str, float, float, tuple[float, float] | None]]:
    """CS:GO vertical sections of an overview with several levels: ``(name, low, high, level)``.

    The top level is ``default`` (the overview picture itself, ``level``
    None); each lower level is ``levelN`` counting down, to be rendered with
    ``render(..., level=level)``.  Players count on a level from 64 units
    below its lowest floor up to the next level's.
    """
    bands = sorted(result.levels)
    if len(bands) < 2:
        return []
    bounds = [bands[0][0] - 64] + [b[0] - 64 for b in bands[1:]] + [bands[-1][1] + ov.HEAD_ROOM]
    out: list[tuple[str, float, float, tuple[float, float] | None]] = []
    for i, band in enumerate(bands):
        top = i == len(bands) - 1
        name = "default" if top else f"level{len(bands) - 1 - i}"
        out.append((name, bounds[i], bounds[i + 1], None if top else band))
    return out[::-1]


def image_format(path: str | Path) -> str:
    """The Pillow format for a file name's extension (ValueError for others)."""
    suffix = Path(path).suffix.lower()
    try:
        return IMAGE_FORMATS[suffix]
    except KeyError:
        raise ValueError(f"cannot tell the picture format from {Path(path).name!r}: use "
                         f"{', '.join(IMAGE_FORMATS)}") from None


def save_image(result: RenderResult, path: str | Path) -> Path:
    """Write the picture atomically, in the format of the file's extension (.png, .jpg, .webp)."""
    fmt = image_format(path)
    with needs_extra("writing pictures", "export"):
        from PIL import Image
    buffer = io.BytesIO()
    options = {"quality": 90} if fmt in ("JPEG", "WEBP") else {}
    Image.fromarray(result.image, "RGB").save(buffer, fmt, **options)
    return atomic_write(Path(path), buffer.getvalue())


def render_file(bsp_or_path: MapSource, path: str | Path, **options: Any) -> RenderResult:
    """Render (options as :func:`render`) and write the picture (format by extension)."""
    image_format(path)  # refuse a bad name before the work
    result = render(bsp_or_path, **options)
    save_image(result, path)
    return result


#: The name earlier versions used.
render_png = render_file

"""Preview pictures of a map, drawn on the CPU with numpy (no GPU, no display).

A small z-buffer rasterizer: every triangle is cut into pixel rows and each
row's covered span is expanded to pixels with ``np.repeat`` / ``cumsum``
index arithmetic (in chunks of a few million pixels); ``np.minimum.at`` on
the depth buffer keeps the nearest triangle of each pixel.  Shading is
deferred: once every triangle is drawn, each covered pixel interpolates its
triangle's lightmap UV (perspective-correct) and samples the lightmap atlas;
the colour is the texture's reflectivity (its average colour) times that
light, with an automatic exposure.  Without lightmaps the light comes from
the face normal and a fixed sun direction.

Views:

* ``"top"``: orthographic, looking straight down, north (+Y) up.  Faces
  seen from behind are culled, so ceilings do not hide the rooms below.
* ``"player"``: perspective from the first player start
  (``info_player_start``, ``info_player_teamspawn``, ``info_player_terrorist``,
  ...) at eye height, looking along its angles; maps without one are seen
  from outside their bounds, looking down at their centre.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import BspError
from ..model.geometry import MapMesh, angles_matrix, build_mesh
from ..model.geometry import reflectivity as texdata_reflectivity
from ..model.lightmaps import LightmapAtlas, build_atlas, tonemap
from ._common import Progress, opened, report, require

__all__ = ["RenderResult", "render", "render_png", "player_start", "PLAYER_STARTS", "RENDER_STEPS"]

View = Literal["top", "player"]
RENDER_STEPS = ("meshes", "lightmaps", "raster", "shade")

#: Classnames searched for the player view, in this order.
PLAYER_STARTS = (
    "info_player_start", "info_player_teamspawn", "info_player_terrorist",
    "info_player_counterterrorist", "info_player_deathmatch", "info_player_combine",
    "info_player_rebel", "info_survivor_position", "info_player_coop", "info_player_axis",
    "info_player_allies",
)
EYE_HEIGHT = 64.0  # units above the player's origin
_BACKGROUND = {"top": np.array([34, 38, 46], np.uint8), "player": np.array([150, 170, 196], np.uint8)}
_SUN = np.array([0.35, 0.25, 0.9]) / np.linalg.norm([0.35, 0.25, 0.9])
_CHUNK_PIXELS = 4_000_000


class NothingToDraw(BspError):
    """The map has no drawn faces (only entities, or only tool faces)."""


@dataclass
class RenderResult:
    """A rendered picture (``image``: ``(H, W, 3)`` uint8) and facts about it."""

    image: np.ndarray
    view: str
    covered: float  # fraction of pixels showing a face
    triangles: int  # triangles drawn after culling and clipping
    lit: bool  # shaded by lightmaps (else by face normals)
    camera: tuple[float, float, float] | None = None  # eye position of a perspective view


def player_start(bsp: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(origin, angles)`` of the first player start entity, or None."""
    if not bsp.entry("ENTITIES").filelen:
        return None
    entities = bsp.entities
    for classname in PLAYER_STARTS:
        for entity in entities:
            if (entity.get("classname") or "").lower() != classname:
                continue
            origin = _floats(entity.get("origin"))
            if origin is None:
                continue
            angles = _floats(entity.get("angles"))
            if angles is None:
                yaw = _floats(entity.get("angle"), 1)
                angles = np.array([0.0, yaw[0] if yaw is not None else 0.0, 0.0])
            return origin, angles
    return None


def _floats(text: str | None, count: int = 3) -> np.ndarray | None:
    try:
        values = [float(v) for v in (text or "").split()]
    except ValueError:
        return None
    return np.array(values) if len(values) == count else None


def render(bsp_or_path: Any, *, view: View = "top", size: tuple[int, int] = (1024, 1024),
           include_tools: bool = False, hdr: bool | None = None, fov: float = 90.0,
           progress: Progress | None = None) -> RenderResult:
    """Draw the map; ``size`` is ``(width, height)`` in pixels.

    Raises :class:`NothingToDraw` when the map has no drawn faces.
    """
    width, height = (int(v) for v in size)
    if width < 1 or height < 1:
        raise ValueError(f"size must be positive, not {size!r}")
    if view not in ("top", "player"):
        raise ValueError(f"view must be 'top' or 'player', not {view!r}")
    with opened(bsp_or_path) as bsp:
        mesh = build_mesh(bsp, models="all", include_tools=include_tools)
        report(progress, "meshes")
        if not mesh.num_triangles:
            raise NothingToDraw("the map has no drawn faces to render")
        atlas = (build_atlas(bsp, hdr=False) or build_atlas(bsp, hdr=True)) if hdr is None else build_atlas(bsp, hdr=hdr)
        report(progress, "lightmaps")
        start = player_start(bsp) if view == "player" else None
        albedo = _albedo(bsp, mesh)
    points = mesh.world_positions()
    tri = mesh.triangles.astype(np.int64)
    corners = points[tri]  # (T, 3, 3)
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    lm_uv = atlas.uv(mesh.vertex_face, mesh.luxels)[tri] if atlas is not None else np.zeros(tri.shape + (2,))
    tri_id = np.arange(len(tri))
    eye = None
    if view == "top":
        keep = normal[:, 2] > 1e-4  # faces seen from above
        if not keep.any():
            raise NothingToDraw("the map has no faces seen from above")
        screen, depth = _orthographic_top(corners[keep], width, height)
        ids, uv = tri_id[keep], lm_uv[keep]
        inv_depth = None
    else:
        eye, rotation = _camera(start, points)
        keep = np.einsum("ij,ij->i", normal, eye - corners[:, 0]) > 0  # faces turned towards the eye
        cam = (corners[keep] - eye) @ rotation  # columns: forward, left, up
        cam_tri, uv, ids = _clip_near(cam, lm_uv[keep], tri_id[keep], near=1.0)
        focal = (width / 2) / np.tan(np.radians(fov) / 2)
        z = cam_tri[..., 0]
        screen = np.stack([width / 2 - cam_tri[..., 1] / z * focal, height / 2 - cam_tri[..., 2] / z * focal], -1)
        depth = z
        inv_depth = 1.0 / z
    pixel_tri, bary = _rasterize(screen, depth, inv_depth, width, height)
    report(progress, "raster")
    image, lit = _shade(pixel_tri, bary, ids, uv, normal, albedo, atlas, width, height, _BACKGROUND[view])
    report(progress, "shade")
    covered = float((pixel_tri >= 0).mean())
    return RenderResult(image, view, covered, len(ids), lit,
                        None if eye is None else tuple(float(v) for v in eye))  # type: ignore[arg-type]


def render_png(bsp_or_path: Any, path: str | Path, **options: Any) -> RenderResult:
    """Render (options as :func:`render`) and write a PNG file."""
    Image = require("PIL.Image", "writing PNG pictures")
    result = render(bsp_or_path, **options)
    Image.fromarray(result.image, "RGB").save(Path(path), "PNG")
    return result


# ---- cameras ----------------------------------------------------------------------
def _orthographic_top(corners: np.ndarray, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Screen positions and depths of the triangles seen from above, framed to fit."""
    lo, hi = corners[..., :2].min((0, 1)), corners[..., :2].max((0, 1))
    extent = np.maximum(hi - lo, 1.0)
    scale = 0.96 * min(width / extent[0], height / extent[1])
    centre = (lo + hi) / 2
    x = width / 2 + (corners[..., 0] - centre[0]) * scale
    y = height / 2 - (corners[..., 1] - centre[1]) * scale
    return np.stack([x, y], -1), -corners[..., 2]  # higher is nearer


def _camera(start: tuple[np.ndarray, np.ndarray] | None, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eye position and rotation (columns forward, left, up) of the perspective view."""
    if start is not None:
        origin, angles = start
        angles = np.array([angles[0], angles[1], 0.0])  # no roll for a viewer
        return origin + np.array([0.0, 0.0, EYE_HEIGHT]), angles_matrix(angles)
    lo, hi = points.min(0), points.max(0)
    centre = (lo + hi) / 2
    radius = max(float(np.linalg.norm(hi - lo)) / 2, 1.0)
    pitch, yaw = 35.0, 45.0
    rotation = angles_matrix([pitch, yaw, 0.0])
    eye = centre - rotation[:, 0] * radius * 1.5
    return eye, rotation


def _clip_near(cam: np.ndarray, uv: np.ndarray, ids: np.ndarray, near: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clip camera-space triangles ``(T, 3, 3)`` (depth in ``[..., 0]``) against ``depth = near``.

    A triangle with one vertex in front becomes a smaller triangle, one with
    two becomes two triangles; cyclic vertex order (winding) is kept.
    """
    inside = cam[..., 0] > near
    count = inside.sum(1)
    out_c, out_u, out_i = [cam[count == 3]], [uv[count == 3]], [ids[count == 3]]

    def rolled(sel: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        order = (first[:, None] + np.arange(3)) % 3
        return (np.take_along_axis(cam[sel], order[:, :, None], 1),
                np.take_along_axis(uv[sel], order[:, :, None], 1))

    def cut(p: np.ndarray, q: np.ndarray, pu: np.ndarray, qu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = ((near - p[:, 0]) / (q[:, 0] - p[:, 0]))[:, None]
        return p + (q - p) * t, pu + (qu - pu) * t

    one = count == 1
    if one.any():
        c, u = rolled(one, np.argmax(inside[one], 1))
        b, bu = cut(c[:, 0], c[:, 1], u[:, 0], u[:, 1])
        d, du = cut(c[:, 0], c[:, 2], u[:, 0], u[:, 2])
        out_c.append(np.stack([c[:, 0], b, d], 1))
        out_u.append(np.stack([u[:, 0], bu, du], 1))
        out_i.append(ids[one])
    two = count == 2
    if two.any():
        c, u = rolled(two, np.argmin(inside[two], 1))
        ab, abu = cut(c[:, 0], c[:, 1], u[:, 0], u[:, 1])
        ac, acu = cut(c[:, 0], c[:, 2], u[:, 0], u[:, 2])
        out_c += [np.stack([ab, c[:, 1], c[:, 2]], 1), np.stack([ab, c[:, 2], ac], 1)]
        out_u += [np.stack([abu, u[:, 1], u[:, 2]], 1), np.stack([abu, u[:, 2], acu], 1)]
        out_i += [ids[two], ids[two]]
    return np.concatenate(out_c), np.concatenate(out_u), np.concatenate(out_i)


# ---- rasterizer -------------------------------------------------------------------
def _rasterize(screen: np.ndarray, depth: np.ndarray, inv_depth: np.ndarray | None,
               width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """The nearest triangle of every pixel (``-1``: none) and its barycentrics.

    ``screen`` ``(T, 3, 2)`` in pixels, ``depth`` ``(T, 3)`` (smaller is
    nearer).  With ``inv_depth`` (perspective) depth is interpolated as
    ``1 / z`` and the barycentrics are made perspective-correct.

    Each triangle is cut into pixel rows; on a row, the three edge functions
    are linear in ``x``, so the covered span is found directly and only
    covered pixels are generated.  Barycentrics and depth are linear along
    the row too.  The nearest candidate of each pixel is found with
    ``np.minimum.at`` on the depth buffer.
    """
    npix = width * height
    zbuf = np.full(npix, np.inf)
    owner = np.full(npix, -1, np.int64)
    bary = np.zeros((npix, 2), np.float32)
    x, y = screen[..., 0].astype(np.float64), screen[..., 1].astype(np.float64)
    area = (x[:, 1] - x[:, 0]) * (y[:, 2] - y[:, 0]) - (x[:, 2] - x[:, 0]) * (y[:, 1] - y[:, 0])
    ok = np.isfinite(area) & (np.abs(area) > 1e-12)
    y0 = np.clip(np.ceil(y.min(1) - 0.5), 0, height).astype(np.int64)
    y1 = np.clip(np.floor(y.max(1) - 0.5), -1, height - 1).astype(np.int64)
    rows = np.where(ok, np.maximum(y1 - y0 + 1, 0), 0)
    # Barycentric w_k = (alpha_k * x + beta_k * y + gamma_k) / area, for vertex k
    # opposite edge (k+1, k+2): the edge function of that edge.
    a_, b_ = np.roll(np.arange(3), -1), np.roll(np.arange(3), -2)
    alpha = (y[:, a_] - y[:, b_]) / np.where(ok, area, 1)[:, None]
    beta = (x[:, b_] - x[:, a_]) / np.where(ok, area, 1)[:, None]
    gamma = (x[:, a_] * y[:, b_] - x[:, b_] * y[:, a_]) / np.where(ok, area, 1)[:, None]
    zvals = depth if inv_depth is None else inv_depth
    # Depth (or 1/z) is linear in screen space: key = kx * x + ky * y + kc.
    kx, ky, kc = ((c * zvals).sum(1) for c in (alpha, beta, gamma))
    live = np.flatnonzero(rows > 0)
    cum = np.cumsum(rows[live] * np.maximum(np.ceil(x.max(1) - x.min(1))[live], 1))
    bounds = [0]
    while bounds[-1] < len(live):
        base = cum[bounds[-1] - 1] if bounds[-1] else 0
        nxt = int(np.searchsorted(cum, base + _CHUNK_PIXELS, side="right"))
        bounds.append(max(nxt, bounds[-1] + 1))
    for first, last in zip(bounds[:-1], bounds[1:]):
        t = live[first:last]
        n = rows[t]
        tri = np.repeat(t, n)
        py = y0[tri] + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
        cy = py + 0.5
        # Span of the row: every w_k(x) = alpha_k x + (beta_k cy + gamma_k) >= 0.
        al = alpha[tri]
        off = beta[tri] * cy[:, None] + gamma[tri]
        with np.errstate(divide="ignore", invalid="ignore"):
            cut = -off / al
        lo = np.where(al > 0, cut, -np.inf).max(1)
        hi = np.where(al < 0, cut, np.inf).min(1)
        flat_out = (np.abs(al) <= 1e-15) & (off < -1e-9)
        hi = np.where(flat_out.any(1), -np.inf, hi)
        xs = np.clip(np.ceil(lo - 0.5 - 1e-7), 0, width)
        xe = np.clip(np.floor(hi - 0.5 + 1e-7), -1, width - 1)
        span = np.maximum(xe - xs + 1, 0).astype(np.int64)
        keep = span > 0
        tri, py, xs, span = tri[keep], py[keep], xs[keep].astype(np.int64), span[keep]
        if not len(tri):
            continue
        who = np.repeat(np.arange(len(tri)), span)
        px = xs[who] + (np.arange(int(span.sum())) - np.repeat(np.cumsum(span) - span, span))
        tt = tri[who]
        cx, cyy = px + 0.5, py[who] + 0.5
        w0 = alpha[tt, 0] * cx + beta[tt, 0] * cyy + gamma[tt, 0]
        w1 = alpha[tt, 1] * cx + beta[tt, 1] * cyy + gamma[tt, 1]
        value = kx[tt] * cx + ky[tt] * cyy + kc[tt]
        if inv_depth is None:
            key = value
        else:
            key = -value  # larger 1/z is nearer
            iz = inv_depth[tt]
            w0, w1 = w0 * iz[:, 0] / value, w1 * iz[:, 1] / value
        pix = py[who] * width + px
        np.minimum.at(zbuf, pix, key)
        win = key <= zbuf[pix]
        pix = pix[win]
        owner[pix] = tt[win]
        bary[pix, 0] = w0[win]
        bary[pix, 1] = w1[win]
    return owner, bary


# ---- shading ----------------------------------------------------------------------
def _albedo(bsp: Any, mesh: MapMesh) -> np.ndarray:
    """Linear colour per triangle: the texture's reflectivity, lifted so dark textures still show."""
    reflectivity = np.full((max(len(mesh.textures), 1), 3), 0.5)
    if bsp.entry("TEXDATA").filelen:
        texdata = bsp.texdata
        reflectivity[: len(texdata)] = texdata_reflectivity(texdata, 0.5)
    td = mesh.triangle_texture
    colour = reflectivity[np.where((td >= 0) & (td < len(reflectivity)), td, 0)]
    return 0.15 + 0.85 * colour  # type: ignore[no-any-return]


def _shade(pixel_tri: np.ndarray, bary: np.ndarray, ids: np.ndarray, uv: np.ndarray, normal: np.ndarray,
           albedo: np.ndarray, atlas: LightmapAtlas | None, width: int, height: int,
           background: np.ndarray) -> tuple[np.ndarray, bool]:
    """The picture, and whether it is shaded by lightmaps (else by normals)."""
    image = np.empty((width * height, 3), np.uint8)
    image[:] = background
    hit = np.flatnonzero(pixel_tri >= 0)
    if not len(hit):
        return image.reshape(height, width, 3), False
    k = pixel_tri[hit]  # index into the drawn (clipped) triangles
    source = ids[k]  # the mesh triangle it came from
    w = bary[hit].astype(np.float64)
    weights = np.stack([w[:, 0], w[:, 1], 1 - w[:, 0] - w[:, 1]], 1)
    n = normal[source]
    sun = 0.45 + 0.55 * np.clip(n @ _SUN, 0, 1)
    light = None
    if atlas is not None:
        lm = np.einsum("pk,pkc->pc", weights, uv[k])
        light = atlas.sample(lm)
        level = light.mean(1)
        # A map compiled without lights has lightmaps of one flat value (or
        # black): shading by normals then shows more.
        if float(level.max()) <= 0 or float(np.std(level)) <= 0.01 * float(np.mean(level)):
            light = None
        else:
            light = light * (0.85 + 0.15 * sun[:, None])
    lit = light is not None
    if light is None:
        light = np.repeat(sun[:, None], 3, 1)
    colour = albedo[source] * light
    # Automatic exposure: the bright end of the picture (98th percentile of
    # luminance) is brought to about 0.9 before clipping.
    luminance = colour @ np.array([0.2126, 0.7152, 0.0722])
    top = float(np.percentile(luminance, 98)) if len(luminance) else 1.0
    exposure = 0.9 / top if top > 0 else 1.0
    image[hit] = tonemap(colour, method="clip", exposure=exposure)
    return image.reshape(height, width, 3), lit

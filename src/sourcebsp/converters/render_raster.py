"""The renderer's rasterizer: triangles to a per-pixel triangle id, barycentrics and depth.

A small z-buffer rasterizer in numpy: every triangle is cut into pixel rows
and each row's covered span is expanded to pixels with ``np.repeat`` /
``cumsum`` index arithmetic (in chunks of a few million pixels);
``np.minimum.at`` on the depth buffer keeps the nearest triangle of each
pixel.  Nothing here knows about maps: it takes screen-space triangles.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Frame", "rasterize", "clip_near", "project_orthographic", "project_perspective"]

_CHUNK_PIXELS = 4_000_000


@dataclass
class Frame:
    """What the rasterizer found at every pixel (flat arrays of ``width * height``).

    ``owner``: index into the drawn triangles (``-1``: background);
    ``bary``: the first two (perspective-correct) barycentrics;
    ``depth``: distance along the view direction (``inf`` on background).
    ``ids`` maps a drawn triangle to the scene triangle it came from and
    ``attrs`` holds the drawn triangles' per-corner attributes ``(T, 3, A)``.
    """

    width: int
    height: int
    owner: np.ndarray
    bary: np.ndarray
    depth: np.ndarray
    ids: np.ndarray
    attrs: np.ndarray

    @property
    def hit(self) -> np.ndarray:
        return self.owner >= 0

    @property
    def covered(self) -> float:
        return float(self.hit.mean()) if len(self.owner) else 0.0

    def source(self) -> np.ndarray:
        """Scene triangle of every pixel (``-1``: background)."""
        return np.where(self.owner >= 0, self.ids[np.maximum(self.owner, 0)], -1)

    def interpolate(self, hit: np.ndarray, first: int, count: int) -> np.ndarray:
        """Attributes ``first:first+count`` interpolated at the pixels ``hit`` (flat indices)."""
        k = self.owner[hit]
        w = self.bary[hit]
        corner = np.ascontiguousarray(self.attrs[:, :, first:first + count], np.float32)
        a0, a1, a2 = (np.take(corner[:, j], k, axis=0) for j in range(3))
        w0, w1 = w[:, 0:1], w[:, 1:2]
        return a2 + (a0 - a2) * w0 + (a1 - a2) * w1  # type: ignore[no-any-return]


def clip_near(cam: np.ndarray, attrs: np.ndarray, ids: np.ndarray,
              near: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clip triangles ``(T, 3, 3)`` (depth in ``[..., 0]``) against ``depth = near``.

    A triangle with one vertex in front becomes a smaller triangle, one with
    two becomes two triangles; cyclic vertex order (winding) is kept, and
    the per-corner ``attrs`` ``(T, 3, A)`` are cut with the positions.
    """
    inside = cam[..., 0] > near
    count = inside.sum(1)
    out_c, out_a, out_i = [cam[count == 3]], [attrs[count == 3]], [ids[count == 3]]

    def rolled(sel: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        order = (first[:, None] + np.arange(3)) % 3
        return (np.take_along_axis(cam[sel], order[:, :, None], 1),
                np.take_along_axis(attrs[sel], order[:, :, None], 1))

    def cut(p: np.ndarray, q: np.ndarray, pa: np.ndarray, qa: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = ((near - p[:, 0]) / (q[:, 0] - p[:, 0]))[:, None]
        return p + (q - p) * t, pa + (qa - pa) * t

    one = count == 1
    if one.any():
        c, a = rolled(one, np.argmax(inside[one], 1))
        b, ba = cut(c[:, 0], c[:, 1], a[:, 0], a[:, 1])
        d, da = cut(c[:, 0], c[:, 2], a[:, 0], a[:, 2])
        out_c.append(np.stack([c[:, 0], b, d], 1))
        out_a.append(np.stack([a[:, 0], ba, da], 1))
        out_i.append(ids[one])
    two = count == 2
    if two.any():
        c, a = rolled(two, np.argmin(inside[two], 1))
        ab, aba = cut(c[:, 0], c[:, 1], a[:, 0], a[:, 1])
        ac, aca = cut(c[:, 0], c[:, 2], a[:, 0], a[:, 2])
        out_c += [np.stack([ab, c[:, 1], c[:, 2]], 1), np.stack([ab, c[:, 2], ac], 1)]
        out_a += [np.stack([aba, a[:, 1], a[:, 2]], 1), np.stack([aba, a[:, 2], aca], 1)]
        out_i += [ids[two], ids[two]]
    return np.concatenate(out_c), np.concatenate(out_a), np.concatenate(out_i)


def project_orthographic(corners: np.ndarray, attrs: np.ndarray, ids: np.ndarray, width: int, height: int,
                         origin: tuple[float, float], units_per_pixel: float,
                         below: np.ndarray | None = None) -> Frame:
    """Draw world triangles ``(T, 3, 3)`` seen straight down; ``origin`` is the world XY of the top-left corner.

    ``below`` (flat, per pixel) keeps only what lies at or below that height.
    """
    x = (corners[..., 0] - origin[0]) / units_per_pixel
    y = (origin[1] - corners[..., 1]) / units_per_pixel
    accept = None if below is None else -below
    owner, bary, key = rasterize(np.stack([x, y], -1), -corners[..., 2], None, width, height, accept)
    return Frame(width, height, owner, bary, key, ids, attrs)  # depth: -z, higher is nearer


def project_perspective(cam: np.ndarray, attrs: np.ndarray, ids: np.ndarray, width: int, height: int,
                        fov: float, near: float = 1.0) -> Frame:
    """Draw camera-space triangles (columns forward, left, up) with a horizontal field of view ``fov`` degrees."""
    cam, attrs, ids = clip_near(cam, attrs, ids, near)
    focal = (width / 2) / np.tan(np.radians(fov) / 2)
    z = cam[..., 0]
    screen = np.stack([width / 2 - cam[..., 1] / z * focal, height / 2 - cam[..., 2] / z * focal], -1)
    owner, bary, key = rasterize(screen, z, 1.0 / z, width, height)
    with np.errstate(divide="ignore"):
        depth = np.where(owner >= 0, -1.0 / key, np.inf)
    return Frame(width, height, owner, bary, depth, ids, attrs)


def rasterize(screen: np.ndarray, depth: np.ndarray, inv_depth: np.ndarray | None,
              width: int, height: int, accept: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nearest triangle of every pixel (``-1``: none), its barycentrics and depth key.

    ``screen`` ``(T, 3, 2)`` in pixels, ``depth`` ``(T, 3)`` (smaller is
    nearer).  With ``inv_depth`` (perspective) depth is interpolated as
    ``1 / z`` and the barycentrics are made perspective-correct; the key
    returned is then ``-1 / z``, otherwise the interpolated depth.
    ``accept`` (flat, per pixel) drops candidates whose key is below it
    (depth peeling, per-pixel cut planes).

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
    with np.errstate(invalid="ignore"):
        y0 = np.clip(np.ceil(np.nan_to_num(y.min(1)) - 0.5), 0, height).astype(np.int64)
        y1 = np.clip(np.floor(np.nan_to_num(y.max(1)) - 0.5), -1, height - 1).astype(np.int64)
    rows = np.where(ok, np.maximum(y1 - y0 + 1, 0), 0)
    # Barycentric w_k = (alpha_k * x + beta_k * y + gamma_k) / area, for vertex k
    # opposite edge (k+1, k+2): the edge function of that edge.
    a_, b_ = np.roll(np.arange(3), -1), np.roll(np.arange(3), -2)
    safe = np.where(ok, area, 1)[:, None]
    alpha = (y[:, a_] - y[:, b_]) / safe
    beta = (x[:, b_] - x[:, a_]) / safe
    gamma = (x[:, a_] * y[:, b_] - x[:, b_] * y[:, a_]) / safe
    zvals = depth if inv_depth is None else inv_depth
    # Depth (or 1/z) is linear in screen space: key = kx * x + ky * y + kc.
    kx, ky, kc = ((c * zvals).sum(1) for c in (alpha, beta, gamma))
    live = np.flatnonzero(rows > 0)
    span_guess = np.clip(np.ceil(x.max(1) - x.min(1))[live], 1, width + 1)
    cum = np.cumsum(rows[live] * span_guess)
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
        if accept is not None:
            ok = key >= accept[pix]
            pix, key, tt, w0, w1 = pix[ok], key[ok], tt[ok], w0[ok], w1[ok]
        np.minimum.at(zbuf, pix, key)
        win = key <= zbuf[pix]
        pix = pix[win]
        owner[pix] = tt[win]
        bary[pix, 0] = w0[win]
        bary[pix, 1] = w1[win]
    return owner, bary, zbuf

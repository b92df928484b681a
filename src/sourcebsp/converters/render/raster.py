"""The renderer's rasterizer: triangles to the nearest triangle of every pixel.

A small z-buffer rasterizer in numpy: every triangle is cut into pixel rows
and each row's covered span is expanded to pixels with ``np.repeat`` /
``cumsum`` index arithmetic, a bounded number of candidate pixels at a time;
``np.minimum.at`` on the depth buffer keeps the nearest triangle of each
pixel.  Nothing here knows about maps: it takes screen-space triangles.

Only the owner of every pixel is kept (4 bytes a pixel).  Depth and
barycentrics are linear functions of the pixel's position on each
triangle's plane (:class:`Planes`), so they are evaluated again for just
the pixels asked about, with the same arithmetic that chose the owner:
the values are those the rasterizer compared, bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

__all__ = ["Frame", "Planes", "Band", "Accept", "pixel_values", "rasterize", "clip_near", "project_orthographic",
           "project_perspective"]

#: Candidate pixels generated at once (each costs about 80 bytes of temporaries).
_CHUNK_PIXELS = 1 << 16
#: Pixels shaded at once by :meth:`Frame.bands` (each costs a few hundred bytes of temporaries).
BAND_PIXELS = 1 << 15

#: ``accept(px, py)``: the least depth key kept at pixel columns ``px``, rows ``py``.
Accept = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Planes:
    """Screen-space linear functions of the drawn triangles, evaluated at pixel centres.

    For triangle ``t`` at ``(x, y)``: barycentric ``k`` (of vertex 0 and 1)
    is ``alpha[t, k] x + beta[t, k] y + gamma[t, k]``; the depth value is
    ``kx[t] x + ky[t] y + kc[t]``, the interpolated depth (orthographic) or
    ``1 / z`` (perspective: ``inv_depth`` holds the corners' ``1 / z``).
    """

    alpha: np.ndarray  # (T, 3)
    beta: np.ndarray
    gamma: np.ndarray
    kx: np.ndarray  # (T,)
    ky: np.ndarray
    kc: np.ndarray
    inv_depth: np.ndarray | None = None  # (T, 3) perspective only

    def value(self, tri: np.ndarray, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
        """Depth, or ``1 / z`` in perspective, of triangles ``tri`` at pixel centres ``(cx, cy)``."""
        return self.kx[tri] * cx + self.ky[tri] * cy + self.kc[tri]  # type: ignore[no-any-return]

    def key(self, tri: np.ndarray, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
        """The depth key (smaller is nearer): the depth, or ``-1 / z`` in perspective."""
        value = self.value(tri, cx, cy)
        return value if self.inv_depth is None else np.negative(value, out=value)

    def bary(self, tri: np.ndarray, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
        """The first two (perspective-correct) barycentrics ``(N, 2)`` float32."""
        out = np.empty((len(tri), 2), np.float32)
        value = None if self.inv_depth is None else self.value(tri, cx, cy)
        for k in range(2):
            w = self.alpha[tri, k] * cx + self.beta[tri, k] * cy + self.gamma[tri, k]
            if value is not None:
                w = w * self.inv_depth[tri, k] / value  # type: ignore[index]
            out[:, k] = w
        return out


@dataclass
class Band:
    """Rows ``first_row`` to ``first_row + rows`` of a frame: its covered pixels (flat
    indices, ascending) and their place (``part``) among all covered pixels in order."""

    first_row: int
    rows: int
    pix: np.ndarray
    part: slice


@dataclass
class Frame:
    """What the rasterizer found: the nearest triangle of every pixel, and how to evaluate it.

    ``owner`` (flat, ``width * height``): index into the drawn triangles
    (``-1``: background); ``planes`` their screen-space functions.  ``ids``
    maps a drawn triangle to the scene triangle it came from and ``attrs``
    holds the drawn triangles' per-corner attributes ``(T, 3, A)``.
    Depth is the distance along the view direction (``-z`` seen from above).
    """

    width: int
    height: int
    owner: np.ndarray
    planes: Planes
    ids: np.ndarray
    attrs: np.ndarray
    _corners: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, init=False, repr=False)

    @property
    def hit(self) -> np.ndarray:
        return self.owner >= 0

    @property
    def covered(self) -> float:
        return float(np.count_nonzero(self.owner >= 0) / len(self.owner)) if len(self.owner) else 0.0

    def _at(self, pix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        py, px = np.divmod(pix, self.width)
        return self.owner[pix], px + 0.5, py + 0.5

    def depth_at(self, pix: np.ndarray) -> np.ndarray:
        """Depth at covered pixels ``pix`` (flat indices)."""
        key = self.planes.key(*self._at(pix))
        if self.planes.inv_depth is None:
            return key
        with np.errstate(divide="ignore"):
            return np.divide(-1.0, key, out=key)  # type: ignore[no-any-return]

    @property
    def depth(self) -> np.ndarray:
        """Depth of every pixel (``inf`` on background): 8 bytes a pixel, for small frames."""
        out = np.full(len(self.owner), np.inf)
        hit = np.flatnonzero(self.owner >= 0)
        out[hit] = self.depth_at(hit)
        return out

    def bary_at(self, pix: np.ndarray) -> np.ndarray:
        """The first two (perspective-correct) barycentrics ``(N, 2)`` float32 at covered pixels."""
        return self.planes.bary(*self._at(pix))

    def source(self) -> np.ndarray:
        """Scene triangle of every pixel (``-1``: background)."""
        return np.where(self.owner >= 0, self.ids[np.maximum(self.owner, 0)], -1)

    def interpolate(self, pix: np.ndarray, first: int, count: int) -> np.ndarray:
        """Attributes ``first:first+count`` interpolated at covered pixels ``pix`` (flat indices)."""
        k = self.owner[pix]
        w = self.bary_at(pix)
        corner = self._corners.get((first, count))
        if corner is None:  # kept: a frame is shaded a band at a time
            corner = np.ascontiguousarray(self.attrs[:, :, first:first + count], np.float32)
            self._corners[first, count] = corner
        a0, a1, a2 = (np.take(corner[:, j], k, axis=0) for j in range(3))
        w0, w1 = w[:, 0:1], w[:, 1:2]
        a0 -= a2
        a0 *= w0
        a1 -= a2
        a1 *= w1
        a2 += a0
        a2 += a1
        return a2  # type: ignore[no-any-return]

    def bands(self, pixels: int | None = None) -> Iterator[Band]:
        """The frame in bands of whole rows of about ``pixels`` (:data:`BAND_PIXELS`) pixels, top to bottom."""
        rows = max(1, (pixels or BAND_PIXELS) // max(self.width, 1))
        done = 0
        for first in range(0, self.height, rows):
            begin, end = first * self.width, min(first + rows, self.height) * self.width
            pix = np.flatnonzero(self.owner[begin:end] >= 0)
            pix += begin
            yield Band(first, min(rows, self.height - first), pix, slice(done, done + len(pix)))
            done += len(pix)


def pixel_values(values: np.ndarray, width: int) -> Accept:
    """The function of pixel columns and rows giving ``values`` (flat, per pixel) there."""
    return lambda px, py: values[py * width + px]


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
                         below: Accept | None = None) -> Frame:
    """Draw world triangles ``(T, 3, 3)`` seen straight down; ``origin`` is the world XY of the top-left corner.

    ``below(px, py)`` gives the highest height kept at pixel columns ``px``,
    rows ``py``: what lies above it is not drawn.
    """
    x = (corners[..., 0] - origin[0]) / units_per_pixel
    y = (origin[1] - corners[..., 1]) / units_per_pixel
    accept = None if below is None else lambda px, py: np.negative(below(px, py))
    owner, planes = rasterize(np.stack([x, y], -1), -corners[..., 2], None, width, height, accept)
    return Frame(width, height, owner, planes, ids, attrs)  # depth: -z, higher is nearer


def project_perspective(cam: np.ndarray, attrs: np.ndarray, ids: np.ndarray, width: int, height: int,
                        fov: float, near: float = 1.0) -> Frame:
    """Draw camera-space triangles (columns forward, left, up) with a horizontal field of view ``fov`` degrees."""
    cam, attrs, ids = clip_near(cam, attrs, ids, near)
    focal = (width / 2) / np.tan(np.radians(fov) / 2)
    z = cam[..., 0]
    screen = np.stack([width / 2 - cam[..., 1] / z * focal, height / 2 - cam[..., 2] / z * focal], -1)
    owner, planes = rasterize(screen, z, 1.0 / z, width, height)
    return Frame(width, height, owner, planes, ids, attrs)


def _row_pieces(live: np.ndarray, rows: np.ndarray, first_row: np.ndarray,
                span: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Triangles' rows cut into pieces of at most about ``_CHUNK_PIXELS`` pixels each.

    Returns every piece's triangle, first row, number of rows, and the
    pixels it may cover (rows times the triangle's width, an upper bound).
    """
    per_piece = np.maximum(_CHUNK_PIXELS // span, 1)
    count = -(-rows[live] // per_piece)
    which = np.repeat(np.arange(len(live)), count)
    index = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count)
    tri, per_piece = live[which], per_piece[which]
    first = first_row[tri] + index * per_piece
    size = np.minimum(per_piece, first_row[tri] + rows[tri] - first)
    return tri, first, size, size * span[which]


def rasterize(screen: np.ndarray, depth: np.ndarray, inv_depth: np.ndarray | None,
              width: int, height: int, accept: Accept | None = None) -> tuple[np.ndarray, Planes]:
    """The nearest triangle of every pixel (int32, ``-1``: none) and the triangles' :class:`Planes`.

    ``screen`` ``(T, 3, 2)`` in pixels, ``depth`` ``(T, 3)`` (smaller is
    nearer).  With ``inv_depth`` (perspective) depth is interpolated as
    ``1 / z`` and the barycentrics are made perspective-correct; the key
    compared is then ``-1 / z``, otherwise the interpolated depth.
    ``accept(px, py)`` drops candidates whose key is below it (depth
    peeling, per-pixel cut planes).

    Each triangle is cut into pixel rows; on a row, the three edge functions
    are linear in ``x``, so the covered span is found directly and only
    covered pixels are generated.  The nearest candidate of each pixel is
    found with ``np.minimum.at`` on the depth buffer; of candidates at the
    same depth the last one drawn wins.
    """
    npix = width * height
    zbuf = np.full(npix, np.inf)
    owner = np.full(npix, -1, np.int32)
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
    planes = Planes(alpha, beta, gamma, kx, ky, kc, inv_depth)
    live = np.flatnonzero(rows > 0)
    span_guess = np.clip(np.ceil(x.max(1) - x.min(1))[live], 1, width + 1).astype(np.int64)
    piece_tri, piece_row, piece_rows, cost = _row_pieces(live, rows, y0, span_guess)
    cum = np.cumsum(cost)
    bounds = [0]
    while bounds[-1] < len(piece_tri):
        base = cum[bounds[-1] - 1] if bounds[-1] else 0
        nxt = int(np.searchsorted(cum, base + _CHUNK_PIXELS, side="right"))
        bounds.append(max(nxt, bounds[-1] + 1))
    for first, last in zip(bounds[:-1], bounds[1:]):
        n = piece_rows[first:last]
        starts = np.cumsum(n) - n
        tri = np.repeat(piece_tri[first:last], n)
        py = np.repeat(piece_row[first:last] - starts, n) + np.arange(int(n.sum()))
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
        px = np.repeat(xs - (np.cumsum(span) - span), span) + np.arange(len(who))
        py, tri = py[who], tri[who]
        del who
        key = planes.key(tri, px + 0.5, py + 0.5)
        pix = py * width + px
        if accept is not None:
            ok = key >= accept(px, py)
            pix, key, tri = pix[ok], key[ok], tri[ok]
        del px, py
        np.minimum.at(zbuf, pix, key)
        win = key <= zbuf[pix]
        owner[pix[win]] = tri[win]
    return owner, planes

"""Lightmaps: per-face ``ColorRGBExp32`` samples, decoded and packed into one atlas.

Where a face's samples are (bspfile.h, the engine's lightmap upload):

* ``dface_t.lightofs`` is a byte offset into the lighting lump (``LIGHTING``
  for LDR, ``LIGHTING_HDR`` for HDR, addressed by ``FACES`` / ``FACES_HDR``);
  ``-1`` means unlit (CS:GO maps use offsets that are not multiples of 4);
* a face's lightmap has ``m_LightmapTextureSizeInLuxels + 1`` samples per
  axis, stored row by row (``t`` rows of ``s`` samples);
* each light style in ``styles`` (up to the first ``255``) has its own block;
  a face whose texinfo has ``SURF_BUMPLIGHT`` stores four blocks per style:
  the flat lighting followed by the three bump-basis directions.  So block
  ``(style, bump)`` starts at byte ``lightofs + 4 * (style * sets + bump) * w * h``, ``sets`` being 4 for bump-mapped faces and 1 otherwise.

Samples decode to linear light with :func:`sourcebsp.codecs.lighting.rgbexp_to_float`
(``c / 255 * 2 ** exponent``).

Tone mapping (to 8-bit sRGB for PNG files and previews)
-------------------------------------------------------
Linear values are first multiplied by ``exposure``.  ``"clip"`` (the
default for LDR lighting) clamps to ``[0, 1]``; this is how LDR lightmaps
look in the engine, which clamps overbright values as well.  ``"reinhard"``
(the default for HDR lighting, whose values run far above 1) maps each
channel ``c`` to ``c / (1 + c)``, which keeps detail in bright areas while
dark areas stay nearly linear.  Both then apply the sRGB transfer curve,
since PNG viewers and glTF base-colour textures expect sRGB-encoded values.

Untrusted input (:mod:`sourcebsp.resources`): every face's lightmap must lie
inside its lighting lump (sizes compared without integer overflow), and an
atlas is sized against the memory budget before it is allocated.
"""
from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Sequence

import numpy as np

from .._extras import needs_extra
from .._io import atomic_write
from ..codecs.base import RawLump
from ..errors import BspFormatError
from ..lump_ids import LumpId
from ..resources import check_memory
from .geometry import SURF_BUMPLIGHT, face_table

if TYPE_CHECKING:
    from ..protocols import MapReader

__all__ = [
    "LightmapLayout", "LightmapAtlas", "lightmap_layout", "face_lightmap", "build_atlas",
    "tonemap", "require_pillow", "decode_samples", "encode_png",
]

Tonemap = Literal["clip", "reinhard"]

# Memory of an atlas: its float32 RGB image, and per copied luxel the int64 index
# arrays that place it (the budget's estimate, in bytes).
_BYTES_PER_ATLAS_PIXEL = 12
_BYTES_PER_COPIED_PIXEL = 96
#: Points placed per pass by :meth:`LightmapAtlas.uv`.
_UV_CHUNK = 1 << 10


def require_pillow() -> Any:
    """``PIL.Image``, or an ImportError that says which extra to install."""
    with needs_extra("writing PNG images", "export"):
        from PIL import Image  # a seam: Pillow is an optional extra
    return Image


def _lump_bytes(bsp: MapReader, hdr: bool) -> np.ndarray | None:
    """The decoded lighting lump as bytes (``uint8``), or None when absent.

    Samples are addressed by byte: CS:GO maps place lightmaps at offsets
    that are not multiples of 4, so whole-sample indexing would be wrong.
    """
    lump = LumpId.LIGHTING_HDR if hdr else LumpId.LIGHTING
    if not bsp.has_lump(lump):
        return None
    value = bsp.get_lump(lump)
    if isinstance(value, RawLump):
        return None
    samples = np.ascontiguousarray(value.samples).view(np.uint8).ravel()
    tail = np.frombuffer(value.tail, np.uint8)
    return np.concatenate([samples, tail]) if len(tail) else samples


def decode_samples(raw: np.ndarray, byte_offsets: np.ndarray) -> np.ndarray:
    """Linear RGB ``(..., 3)`` of the ``ColorRGBExp32`` samples at ``byte_offsets`` in ``raw``.

    ``c / 255 * 2 ** exponent`` as :func:`sourcebsp.codecs.lighting.rgbexp_to_float`,
    for samples at any byte offset.
    """
    o = np.asarray(byte_offsets, np.int64)
    rgb = np.stack([raw[o], raw[o + 1], raw[o + 2]], axis=-1).astype(np.float32)
    exponent = raw[o + 3].view(np.int8).astype(np.int32)
    return rgb * np.ldexp(np.float32(1.0 / 255.0), exponent)[..., None].astype(np.float32)


def _check_atlas_size(bsp: MapReader, hdr: bool, width: int, packed_height: int, luxels: int) -> None:
    """The atlas (its height rounded up to a power of two: at most twice the packed height) fits the budget."""
    lump = LumpId.LIGHTING_HDR if hdr else LumpId.LIGHTING
    height = 2 * max(packed_height, 4)
    check_memory(bsp, width * height * _BYTES_PER_ATLAS_PIXEL + luxels * _BYTES_PER_COPIED_PIXEL,
                 f"a lightmap atlas of {width} x {packed_height}+ luxels", lump=lump.name,
                 offset=bsp.entry(lump).fileofs)


@dataclass
class LightmapLayout:
    """Where every face's lightmap samples are: arrays with one entry per face.

    ``offset`` is the byte offset of the face's first sample in the lighting
    lump (``dface_t.lightofs``; ``-1``: unlit),
    ``width`` / ``height`` its samples per row / column, ``styles`` the number
    of light styles, ``sets`` the sample blocks per style (4 for bump-mapped
    faces, else 1).
    """

    offset: np.ndarray
    width: np.ndarray
    height: np.ndarray
    styles: np.ndarray
    sets: np.ndarray

    @property
    def lit(self) -> np.ndarray:
        return (self.offset >= 0) & (self.styles > 0)

    @property
    def bumped(self) -> np.ndarray:
        return self.sets > 1

    def block_start(self, style: int = 0, bump: int = 0) -> np.ndarray:
        """Byte offset of block ``(style, bump)`` of every face (``-1`` where absent)."""
        has = self.lit & (style < self.styles) & (bump < self.sets)
        start = self.offset + 4 * (style * self.sets + bump) * self.width * self.height
        return np.where(has, start, -1)


def lightmap_layout(bsp: MapReader, *, hdr: bool = False) -> LightmapLayout:
    """The :class:`LightmapLayout` of every face of the map (LDR or HDR lighting)."""
    faces = face_table(bsp, hdr=hdr)
    raw = _lump_bytes(bsp, hdr)
    styles = faces["styles"]
    # Styles end at the first 255.
    count = np.argmax(np.concatenate([styles == 255, np.ones((len(faces), 1), bool)], 1), axis=1)
    lightofs = faces["lightofs"].astype(np.int64)
    width = faces["lightmap_texture_size_in_luxels"][:, 0].astype(np.int64) + 1
    height = faces["lightmap_texture_size_in_luxels"][:, 1].astype(np.int64) + 1
    texinfo = bsp.lump_or_none(LumpId.TEXINFO)
    bump = np.zeros(len(faces), bool)
    if texinfo is not None and not isinstance(texinfo, RawLump) and len(texinfo):
        ti = faces["texinfo"].astype(np.int64)
        ok = (ti >= 0) & (ti < len(texinfo))
        bump[ok] = (texinfo["flags"][ti[ok]] & SURF_BUMPLIGHT) != 0
    sets = np.where(bump, 4, 1)
    lit = (lightofs >= 0) & (count > 0) & (width > 0) & (height > 0)
    if raw is None:
        lit[:] = False
    offset = np.where(lit, lightofs, -1)
    total = 0 if raw is None else len(raw)
    # In floating point: sizes read from the file could overflow int64 when multiplied.
    end = offset + 4.0 * count * sets * width.astype(np.float64) * height
    over = lit & (end > total)
    if over.any():
        k = int(np.flatnonzero(over)[0])
        lump = LumpId.LIGHTING_HDR if hdr else LumpId.LIGHTING
        raise BspFormatError(
            f"face {k}'s lightmap ({int(count[k])} styles of {int(sets[k])}x{int(width[k])}x{int(height[k])} "
            f"samples at byte {int(lightofs[k])}) runs past the {total}-byte lump",
            lump=lump.name, offset=bsp.entry(lump).fileofs + int(lightofs[k]),
        )
    return LightmapLayout(offset, np.where(lit, width, 0), np.where(lit, height, 0),
                          np.where(lit, count, 0), sets)


def face_lightmap(bsp: MapReader, face: int, *, style: int = 0, bump: int = 0, hdr: bool = False) -> np.ndarray | None:
    """One face's lightmap as linear RGB ``(height, width, 3)``, or None if it has none.

    ``bump`` 1..3 selects the bump-basis blocks of a bump-mapped face.
    """
    layout = lightmap_layout(bsp, hdr=hdr)
    start = int(layout.block_start(style, bump)[face])
    if start < 0:
        return None
    w, h = int(layout.width[face]), int(layout.height[face])
    raw = _lump_bytes(bsp, hdr)
    if raw is None:
        return None
    return decode_samples(raw, start + 4 * np.arange(w * h)).reshape(h, w, 3)


@dataclass
class LightmapAtlas:
    """Every lit face's lightmap in one linear-RGB image.

    ``image`` is ``(H, W, 3)`` float32, linear light; ``rects[f] = (x, y, w, h)``
    gives where face ``f``'s samples lie (``x`` / ``y`` of sample ``(0, 0)``),
    ``-1`` for faces that are not in the atlas.  Each rectangle has a border
    of copied edge samples so bilinear filtering does not bleed.  ``white``
    is the centre (in pixels) of a full-bright patch used for unlit faces.

    ``tonemapped``: None for the linear float32 image; a tone-mapping method
    when the atlas was built already as 8-bit sRGB ``(H, W, 3)`` uint8 with it
    (``build_atlas(..., tonemapped=...)``, a quarter of the memory, for exports).
    """

    image: np.ndarray
    rects: np.ndarray
    white: tuple[float, float]
    hdr: bool = False
    style: int = 0
    bump: int = 0
    tonemapped: Tonemap | None = None

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    @property
    def height(self) -> int:
        return int(self.image.shape[0])

    def uv(self, faces: np.ndarray, luxels: np.ndarray) -> np.ndarray:
        """Atlas UVs (``[0, 1]``, ``v`` down as in glTF) of points given in face luxels.

        Faces without a lightmap get the centre of the full-bright patch.
        """
        faces, luxels = np.asarray(faces, np.int64), np.asarray(luxels)
        out = np.empty((len(faces), 2), np.float32)
        size = np.array([self.width, self.height], np.float64)
        # In runs: the float64 and int64 temporaries take ~130 bytes a point, ten times the result.
        for begin in range(0, len(faces), _UV_CHUNK):
            rect = self.rects[faces[begin : begin + _UV_CHUNK]]
            has = rect[:, 0] >= 0
            lux = np.clip(luxels[begin : begin + _UV_CHUNK], 0.0, np.maximum(rect[:, 2:4] - 1, 0))
            px = np.where(has[:, None], rect[:, 0:2] + lux + 0.5, np.array(self.white))
            out[begin : begin + len(px)] = px / size
        return out

    def without_pixels(self) -> "LightmapAtlas":
        """The same layout (size, rectangles, full-bright patch) without the image's memory.

        For a caller that has encoded the pixels and still places UVs with
        :meth:`uv`; the image reads as zeros.
        """
        blank = np.broadcast_to(np.zeros((), self.image.dtype), self.image.shape)
        return dataclasses.replace(self, image=blank)

    def sample(self, uv: np.ndarray) -> np.ndarray:
        """Bilinear samples of the linear image at UVs ``(N, 2)``: ``(N, 3)``."""
        if self.tonemapped is not None:
            raise ValueError("this atlas holds 8-bit sRGB pixels, not linear light: build it without tonemapped=")
        w, h = self.width, self.height
        x = np.clip(uv[:, 0].astype(np.float32) * w - 0.5, 0, w - 1)
        y = np.clip(uv[:, 1].astype(np.float32) * h - 0.5, 0, h - 1)
        x0 = x.astype(np.int64)  # x >= 0: truncation is floor
        y0 = y.astype(np.int64)
        dx = np.minimum(x0 + 1, w - 1) - x0
        dy = (np.minimum(y0 + 1, h - 1) - y0) * w
        fx = (x - x0)[:, None]
        fy = (y - y0)[:, None]
        flat = self.image.reshape(-1, 3)
        i = y0 * w + x0
        top = flat[i] + (flat[i + dx] - flat[i]) * fx
        bottom = flat[i + dy] + (flat[i + dy + dx] - flat[i + dy]) * fx
        return top + (bottom - top) * fy  # type: ignore[no-any-return]

    def to_rgb8(self, *, method: Tonemap | None = None, exposure: float = 1.0) -> np.ndarray:
        """The atlas as 8-bit sRGB ``(H, W, 3)`` (see the module notes on tone mapping)."""
        if self.tonemapped is not None:
            if (method or self.tonemapped) != self.tonemapped or exposure != 1.0:
                raise ValueError(f"this atlas was tone-mapped with {self.tonemapped!r} at exposure 1 when built")
            return self.image
        return tonemap(self.image, method=method or ("reinhard" if self.hdr else "clip"), exposure=exposure)

    def pillow_image(self, *, method: Tonemap | None = None, exposure: float = 1.0) -> Any:
        """The atlas as 8-bit sRGB in a Pillow ``RGB`` image: Pillow's own copy of the pixels.

        A caller done with this atlas's pixels can drop them before :func:`encode_png`
        encodes the image (``atlas = atlas.without_pixels()``): the encoder then
        reuses their memory.
        """
        return require_pillow().fromarray(self.to_rgb8(method=method, exposure=exposure), "RGB")

    def png_bytes(self, *, method: Tonemap | None = None, exposure: float = 1.0) -> bytes:
        return encode_png(self.pillow_image(method=method, exposure=exposure))

    def save_png(self, path: str | Path, *, method: Tonemap | None = None, exposure: float = 1.0) -> Path:
        """Write the atlas as a PNG file (atomically: an existing file is replaced only once this one is whole)."""
        path = Path(path)
        atomic_write(path, self.png_bytes(method=method, exposure=exposure))
        return path


def encode_png(image: Any) -> bytes:
    """A Pillow image as a PNG file."""
    buffer = io.BytesIO()
    # zlib level 3: much faster than Pillow's default 6 on corpus atlases, files slightly larger.
    image.save(buffer, "PNG", compress_level=3)
    return buffer.getvalue()


#: Samples tone-mapped per pass (a few MiB of float32 at a time).
_TONEMAP_CHUNK = 1 << 18


def tonemap(linear: np.ndarray, *, method: Tonemap = "clip", exposure: float = 1.0) -> np.ndarray:
    """Linear RGB to 8-bit sRGB: scale by ``exposure``, then ``clip`` or ``reinhard`` (``c/(1+c)``).

    Works through the image in chunks, in float32, so an atlas is never
    copied whole at float precision.
    """
    if method not in ("clip", "reinhard"):
        raise ValueError(f"unknown tone mapping {method!r} (use 'clip' or 'reinhard')")
    source = np.asarray(linear)
    out = np.empty(source.shape, np.uint8)
    flat_in, flat_out = source.reshape(-1), out.reshape(-1)
    scale = np.float32(exposure)
    for begin in range(0, len(flat_in), _TONEMAP_CHUNK):
        value = flat_in[begin : begin + _TONEMAP_CHUNK].astype(np.float32)  # a copy: the input is kept
        value *= scale
        np.maximum(value, 0, out=value)
        if method == "reinhard":
            np.divide(value, 1 + value, out=value)
        np.minimum(value, 1, out=value)
        dark = value <= 0.0031308
        linear_part = value[dark] * 12.92
        np.power(value, 1 / 2.4, out=value)
        value *= 1.055
        value -= 0.055
        value[dark] = linear_part
        value *= 255
        np.round(value, out=value)
        flat_out[begin : begin + len(value)] = value
    return out


def _shelf_pack(widths: np.ndarray, heights: np.ndarray, atlas_width: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Shelf packing: boxes sorted by height fill rows left to right.

    Returns the x and y of every box and the total height.  The loop runs
    once per shelf; the boxes of a shelf are placed with a cumulative sum.
    """
    n = len(widths)
    order = np.lexsort((-widths, -heights))
    w, h = widths[order], heights[order]
    x = np.zeros(n, np.int64)
    y = np.zeros(n, np.int64)
    start, top = 0, 0
    while start < n:
        run = np.cumsum(w[start:])
        count = max(int(np.searchsorted(run, atlas_width, side="right")), 1)
        stop = start + count
        x[order[start:stop]] = run[:count] - w[start:stop]
        y[order[start:stop]] = top
        top += int(h[start])  # the tallest box of the shelf comes first
        start = stop
    return x, y, top


def _fill_boxes(image: np.ndarray, raw: np.ndarray, start: np.ndarray, sw: np.ndarray, sh: np.ndarray,
                x: np.ndarray, y: np.ndarray, box_w: np.ndarray, box_h: np.ndarray, padding: int,
                method: Tonemap | None) -> None:
    """Decode every padded box's samples into ``image`` (edges copied into the border).

    Boxes go in runs of 1k to 64k pixels (about a 64th of the atlas), so
    the per-pixel index arithmetic never exists for the whole atlas at once;
    with ``method`` each run is tone-mapped to 8-bit sRGB as it is written.
    """
    npix = box_w * box_h
    ends = np.cumsum(npix)
    chunk = int(np.clip(int(ends[-1]) // 64, 1024, 1 << 16))
    flat = image.reshape(-1, 3)
    atlas_width = image.shape[1]
    first = 0
    while first < len(npix):
        # Boxes [first, last): at least one, up to about ``chunk`` pixels.
        base = int(ends[first] - npix[first])
        last = max(int(np.searchsorted(ends, base + chunk, side="right")), first + 1)
        counts = npix[first:last]
        owner = np.repeat(np.arange(first, last), counts)
        local = np.arange(int(counts.sum())) - np.repeat(ends[first:last] - counts - base, counts)
        py, px = np.divmod(local, box_w[owner])
        del local
        sx = np.clip(px - padding, 0, sw[owner] - 1)
        sy = np.clip(py - padding, 0, sh[owner] - 1)
        sy *= sw[owner]
        sy += sx
        del sx
        samples = decode_samples(raw, start[owner] + 4 * sy)
        del sy
        py += y[owner]
        py *= atlas_width
        px += x[owner]
        px += py
        flat[px] = samples if method is None else tonemap(samples, method=method)
        first = last


def build_atlas(bsp: MapReader, *, hdr: bool = False, style: int = 0, bump: int = 0,
                faces: Sequence[int] | np.ndarray | None = None, padding: int = 1,
                tonemapped: Tonemap | bool | None = None) -> LightmapAtlas | None:
    """Pack the lightmap block ``(style, bump)`` of every lit face into one atlas.

    ``faces`` limits the atlas to some faces (indices).  Returns None when the
    map has no lighting of that kind (``hdr``) at all.  ``tonemapped`` (a method,
    or True for the default one: ``"reinhard"`` for HDR, ``"clip"`` for LDR)
    builds the atlas directly as 8-bit sRGB, the same pixels
    :meth:`LightmapAtlas.to_rgb8` gives, in a quarter of the memory.
    """
    method: Tonemap | None = None
    if tonemapped is True:
        method = "reinhard" if hdr else "clip"
    elif tonemapped:
        method = tonemapped
    raw = _lump_bytes(bsp, hdr)
    if raw is None or len(raw) < 4:
        return None
    layout = lightmap_layout(bsp, hdr=hdr)
    start = layout.block_start(style, bump)
    chosen = np.zeros(len(start), bool)
    if faces is None:
        chosen[:] = True
    else:
        chosen[np.asarray(faces, np.int64)] = True
    which = np.flatnonzero(chosen & (start >= 0))
    sw, sh = layout.width[which], layout.height[which]
    # Box 0 is the full-bright patch for unlit faces.
    bw = np.concatenate([[2], sw]) + 2 * padding
    bh = np.concatenate([[2], sh]) + 2 * padding
    area = int((bw * bh).sum())
    atlas_width = 1 << max(int(np.ceil(np.log2(max(np.sqrt(area * 1.1), int(bw.max()), 4)))), 2)
    x, y, total = _shelf_pack(bw, bh, atlas_width)
    _check_atlas_size(bsp, hdr, atlas_width, total, area)
    atlas_height = 1 << max(int(np.ceil(np.log2(max(total, 4)))), 2)  # powers of two suit every GPU
    image = np.zeros((atlas_height, atlas_width, 3), np.float32 if method is None else np.uint8)
    image[y[0] : y[0] + bh[0], x[0] : x[0] + bw[0]] = 1.0 if method is None else tonemap(np.ones(3), method=method)
    rects = np.full((len(start), 4), -1, np.int64)
    rects[which, 0] = x[1:] + padding
    rects[which, 1] = y[1:] + padding
    rects[which, 2] = sw
    rects[which, 3] = sh
    if len(which):
        _fill_boxes(image, raw, start[which], sw, sh, x[1:], y[1:], bw[1:], bh[1:], padding, method)
    white = (float(x[0] + padding + 1), float(y[0] + padding + 1))
    return LightmapAtlas(image, rects, white, hdr, style, bump, method)


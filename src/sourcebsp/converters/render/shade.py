"""Shading a drawn frame into a picture, a band of rows at a time.

Each covered pixel interpolates its triangle's UVs and samples the
lightmap atlas (and texture); its colour is albedo times light, with an
automatic exposure.  Without usable lightmaps the light comes from the face
normal and a fixed sun direction.

Memory stays near 25 bytes a covered pixel whatever the picture: the frame
keeps only the triangle of every pixel (:mod:`.raster`), and the
picture is made in passes over bands of rows, keeping between passes only
what the next one needs (one float32 colour and a flag per covered pixel):

1. light: the lightmap at every covered pixel, and how bright the
   lightmaps are (they may be flat or black: then shade by normals);
2. colour: albedo (texture or average colour) times light, the view's
   own shading (``modulate``: height tint, depth cue), and luminance;
3. exposure from the 98th percentile of luminance, then 8-bit sRGB.

Statistics over the whole picture (percentiles, medians, deviations) are
taken on arrays holding every covered pixel in order, so the picture is
the same as shading all pixels at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...model.lightmaps import tonemap
from .raster import Band, Frame
from .scene import LM_UV, LUMINANCE, TEX_UV, Scene

__all__ = ["Shaded", "Modulate", "shade", "contrast"]

_SUN = (np.array([0.35, 0.25, 0.9]) / np.linalg.norm([0.35, 0.25, 0.9])).astype(np.float32)

#: A view's own shading of a band's linear colours ``(len(band.pix), 3)``: returns the new colours.
Modulate = Callable[[Band, np.ndarray], np.ndarray]


@dataclass
class Shaded:
    """How a picture was shaded."""

    lit: bool  # by lightmaps (else by face normals)
    textured: bool  # some pixels sample real textures


def _sample_textures(images: np.ndarray, which: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Nearest texel of image ``which`` at repeating UVs ``(N, 2)``: linear ``(N, 3)``."""
    size = images.shape[1]
    uv = np.nan_to_num(uv, nan=0.0, posinf=0.0, neginf=0.0)
    u = np.floor(np.mod(uv[:, 0], 1.0) * size).astype(np.int64) % size
    v = np.floor(np.mod(uv[:, 1], 1.0) * size).astype(np.int64) % size
    return images[which, v, u]  # type: ignore[no-any-return]


def _sun(scene: Scene, source: np.ndarray) -> np.ndarray:
    """Light from a fixed sun direction on the triangles ``source``, 0.45 to 1."""
    n = scene.normal[source].astype(np.float32)
    return np.float32(0.45) + np.float32(0.55) * np.clip(n @ _SUN, 0, 1)  # type: ignore[no-any-return]


def _source(frame: Frame, band: Band) -> np.ndarray:
    return frame.ids[frame.owner[band.pix]]  # type: ignore[no-any-return]


def _light(frame: Frame, scene: Scene, light: np.ndarray, unlit: np.ndarray) -> bool:
    """Pass 1: lightmap light at every covered pixel into ``light``, shaded a little by the sun.

    ``unlit`` is set where the triangle has no lightmap (props).  Returns
    whether the lightmaps are worth using.
    """
    atlas = scene.atlas
    if atlas is None:
        return False
    level = np.empty(len(light), np.float32)  # brightness of the lit pixels, in order
    levels = 0
    for band in frame.bands():
        source = _source(frame, band)
        sample = atlas.sample(frame.interpolate(band.pix, LM_UV, 2))
        lit = scene.lit_by_atlas[source]
        unlit[band.part] = ~lit
        shown = sample[lit].mean(1)
        level[levels:levels + len(shown)] = shown
        levels += len(shown)
        sample *= np.float32(0.85) + np.float32(0.15) * _sun(scene, source)[:, None]
        light[band.part] = sample
    level = level[:levels] if levels else np.zeros(1, np.float32)
    # A map compiled without lights has lightmaps of one flat value (or
    # black): shading by normals then shows more.
    # Lightmaps darker than one 8-bit step everywhere (VTMB's) are as good as none.
    flat = float(np.std(level)) <= 0.01 * float(np.mean(level))
    return not flat and float(np.percentile(level, 98, overwrite_input=True)) >= 1 / 512


def _median_light(light: np.ndarray, unlit: np.ndarray) -> np.ndarray:
    """The median light of the lit pixels, a channel at a time (a copy of one channel, not three)."""
    lit = ~unlit
    return np.array([np.median(light[lit, k], overwrite_input=True) for k in range(3)], np.float32)


def _colour(frame: Frame, scene: Scene, colour: np.ndarray, unlit: np.ndarray, lit: bool,
            modulate: Modulate | None) -> tuple[np.ndarray, bool]:
    """Pass 2: albedo (texture or average colour) times light, in place; the luminance of every pixel."""
    # Props (no lightmap) in a lit picture: its median light, shaded by the sun.
    typical = _median_light(colour, unlit) if lit and unlit.any() else None
    luminance = np.empty(len(colour), np.float32)
    textured = False
    for band in frame.bands():
        source = _source(frame, band)
        sun = _sun(scene, source)
        if lit:
            light = colour[band.part]
            props = unlit[band.part]
            if typical is not None and props.any():
                light[props] = typical * sun[props, None]
        else:
            light = np.repeat(sun[:, None], 3, 1)
        albedo = scene.albedo[source].astype(np.float32)
        if scene.images is not None:
            tex = scene.texture[source]
            has = tex >= 0
            if has.any():
                uv = frame.interpolate(band.pix[has], TEX_UV, 2)
                albedo[has] = _sample_textures(scene.images, tex[has], uv)
                textured = True
        albedo *= np.float32(0.88)
        albedo += np.float32(0.12)
        albedo *= light
        shown = albedo if modulate is None else modulate(band, albedo)
        luminance[band.part] = shown @ LUMINANCE
        colour[band.part] = shown
    return luminance, textured


def _depth_cue(frame: Frame, count: int) -> Modulate:
    """Darken what is far, up to a third at the 98th percentile of depth (in float32, as the colour)."""
    depth = np.empty(count, np.float32)
    for band in frame.bands():
        depth[band.part] = frame.depth_at(band.pix)
    far = max(float(np.percentile(depth, 98, overwrite_input=True)), 1.0)
    del depth

    def darken(band: Band, colour: np.ndarray) -> np.ndarray:
        near = frame.depth_at(band.pix).astype(np.float32)
        near /= np.float32(far)
        np.clip(near, 0, 1, out=near)
        colour *= (np.float32(1.0) - np.float32(0.35) * near)[:, None]
        return colour

    return darken


def shade(frame: Frame, scene: Scene, background: np.ndarray, *, depth_cue: bool = False,
          modulate: Modulate | None = None, target: float = 0.9) -> tuple[np.ndarray, Shaded]:
    """The picture ``(H, W, 3)`` uint8 of a frame, and how it was shaded.

    ``depth_cue`` darkens what is far (up to a third at the far end of the
    view), so a flat floor or a long wall shows its shape; ``modulate`` is
    the view's own shading.  The 98th percentile of luminance is brought to
    ``target``.
    """
    count = int(np.count_nonzero(frame.owner >= 0))
    colour = np.empty((count, 3), np.float32)  # light, then colour
    unlit = np.zeros(count, bool)
    lit = _light(frame, scene, colour, unlit) if count else False
    if depth_cue and count:
        modulate = _depth_cue(frame, count)
    textured = False
    exposure = 1.0
    if count:
        luminance, textured = _colour(frame, scene, colour, unlit, lit, modulate)
        top = float(np.percentile(luminance, 98, overwrite_input=True))
        exposure = target / top if top > 0 else 1.0
        del luminance
    del unlit
    image = np.empty((frame.width * frame.height, 3), np.uint8)
    image[:] = background
    for band in frame.bands():
        image[band.pix] = tonemap(colour[band.part], method="clip", exposure=exposure)
    return image.reshape(frame.height, frame.width, 3), Shaded(lit, textured)


def contrast(image: np.ndarray, frame: Frame) -> float:
    """The standard deviation of the covered pixels' luminance (0..1)."""
    count = int(np.count_nonzero(frame.owner >= 0))
    if not count:
        return 0.0
    flat = image.reshape(-1, 3)
    luminance = np.empty(count)
    for band in frame.bands():
        luminance[band.part] = (flat[band.pix].astype(np.float64) / 255) @ LUMINANCE
    return float(luminance.std())

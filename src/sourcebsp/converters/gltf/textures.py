"""Base textures for the glTF export (``--textures``), from the materials and textures ``content`` reads.

A material's look is what the glTF material can carry: ``$basetexture``
(and ``$basetexture2``, the second texture of a displacement blend
material), ``$alphatest`` (with ``$alphatestreference``), ``$translucent``
and ``$nocull``, read by :func:`sourcebsp.content.materials.material_params`
(``patch`` materials, vbsp's per-map cubemap copies, followed through their
``include``).  Each texture is decoded once (:mod:`sourcebsp.content.vtf`)
from the largest mipmap no wider and no taller than the size asked for, and
encoded as PNG; files are looked up in the map's pakfile first, then in the
mounted game.  A file that is missing or cannot be read leaves its material
with the colour it has without textures.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..._extras import import_extra
from ...content.gamefs import GameFS, fold
from ...content.materials import material_params, texture_path
from ...content.vtf import read_vtf, srgb_to_linear
from ...errors import BspFormatError
from ...model.lightmaps import encode_png

__all__ = ["MaterialLook", "TextureImage", "TextureLibrary", "DEFAULT_TEXTURE_SIZE"]

DEFAULT_TEXTURE_SIZE = 512
_MAX_FILE = 64 << 20  # bytes: a larger VMT or VTF is not read


@dataclass(frozen=True)
class MaterialLook:
    """What a glTF material takes from a VMT."""

    base: str | None = None
    base2: str | None = None
    alpha_test: bool = False
    alpha_cutoff: float = 0.5
    translucent: bool = False
    two_sided: bool = False


@dataclass(frozen=True)
class TextureImage:
    """A decoded texture: its PNG, size, mean colour (linear RGB) and whether any texel is not opaque."""

    png: bytes
    size: tuple[int, int]
    mean: tuple[float, float, float]
    has_alpha: bool


def _stem(name: str, suffix: str) -> str:
    """``name`` folded, without ``suffix``: the key a material or texture is read once by."""
    key = fold(name)
    return key[: -len(suffix)] if key.endswith(suffix) else key


def _flag(value: str) -> bool:
    try:
        return float(value.strip().strip('"')) != 0
    except ValueError:
        return False


class TextureLibrary:
    """Materials and textures of one export, each read once (the pakfile first, then the game)."""

    def __init__(self, read: Callable[[str], bytes | None], max_size: int = DEFAULT_TEXTURE_SIZE) -> None:
        # Asked for textures without srctools: said at once, not only once a material is found.
        import_extra("srctools.vmt", "reading materials", "deps")
        self._read = read
        self.max_size = max(1, int(max_size))
        self._looks: dict[str, MaterialLook | None] = {}
        self._images: dict[str, TextureImage | None] = {}
        self.failed: list[str] = []  # texture files found but not decoded

    @classmethod
    def for_game(cls, fs: GameFS, max_size: int = DEFAULT_TEXTURE_SIZE) -> "TextureLibrary":
        """Files from a mounted game (with the map's pakfile attached to it)."""
        return cls(lambda name: fs.read_file(name, max_size=_MAX_FILE), max_size)

    def look(self, material: str) -> MaterialLook | None:
        """The look of ``material`` (``concrete/wall01``, without ``materials/``), or None when not found."""
        key = _stem(material, ".vmt")
        return self._looks[key] if key in self._looks else self._looks.setdefault(key, self._parse(key))

    def _parse(self, material: str) -> MaterialLook | None:
        values = material_params(self._read, material)
        if values is None:
            return None
        return MaterialLook(
            base=values.get("$basetexture") or None, base2=values.get("$basetexture2") or None,
            alpha_test=_flag(values.get("$alphatest", "0")), alpha_cutoff=_cutoff(values.get("$alphatestreference", "")),
            translucent=_flag(values.get("$translucent", "0")), two_sided=_flag(values.get("$nocull", "0")))

    def image(self, texture: str) -> TextureImage | None:
        """The texture ``texture`` (without ``materials/`` and ``.vtf``) decoded, or None."""
        key = _stem(texture, ".vtf")
        return self._images[key] if key in self._images else self._images.setdefault(key, self._decode(key))

    def _decode(self, key: str) -> TextureImage | None:
        name = texture_path(key)
        data = self._read(name)
        if data is None:
            return None
        try:
            vtf = read_vtf(data, name)
            picture = vtf.rgba(vtf.mip_at_most(self.max_size))
        except BspFormatError:
            self.failed.append(key)
            return None
        if max(picture.size) > self.max_size:  # no mipmap small enough
            scale = self.max_size / max(picture.size)
            picture = picture.resize((max(1, round(picture.width * scale)), max(1, round(picture.height * scale))))
        pixels = np.asarray(picture)
        has_alpha = bool((pixels[..., 3] < 255).any())
        linear = srgb_to_linear(pixels[..., :3].reshape(-1, 3).mean(0) / 255.0)
        if not has_alpha:
            picture = picture.convert("RGB")
        return TextureImage(encode_png(picture), picture.size, (float(linear[0]), float(linear[1]), float(linear[2])),
                            has_alpha)


def _cutoff(value: str) -> float:
    try:
        cutoff = float(value.strip().strip('"'))
    except ValueError:
        return 0.5
    return cutoff if 0.0 < cutoff <= 1.0 else 0.5

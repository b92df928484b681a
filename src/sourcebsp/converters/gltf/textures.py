"""Base textures for the glTF export (``--textures``): VMT read by ``srctools.vmt``, VTF by ``srctools.vtf``.

A material's look is what the glTF material can carry: ``$basetexture``
(and ``$basetexture2``, the second texture of a displacement blend
material), ``$alphatest`` (with ``$alphatestreference``), ``$translucent``
and ``$nocull``; ``patch`` materials (vbsp's per-map cubemap copies) are
followed through their ``include``.  Each texture is decoded once from the
largest mipmap no wider and no taller than the size asked for, and encoded
as PNG; files are looked up in the map's pakfile first, then in the mounted
game.  A file that is missing or cannot be read leaves its material with
the colour it has without textures.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from ...content.gamefs import fold
from ..render.textures import _PARSE_ERRORS

if TYPE_CHECKING:
    from ...content.gamefs import GameFS

__all__ = ["MaterialLook", "TextureImage", "TextureLibrary", "DEFAULT_TEXTURE_SIZE"]

DEFAULT_TEXTURE_SIZE = 512
_MAX_FILE = 64 << 20  # bytes: a larger VMT or VTF is not read
_MAX_INCLUDES = 4


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


def _flag(value: str) -> bool:
    try:
        return float(value.strip().strip('"')) != 0
    except ValueError:
        return False


class TextureLibrary:
    """Materials and textures of one export, each read once (the pakfile first, then the game)."""

    def __init__(self, read: Callable[[str], bytes | None], max_size: int = DEFAULT_TEXTURE_SIZE) -> None:
        self._read = read
        self.max_size = max(1, int(max_size))
        self._looks: dict[str, MaterialLook | None] = {}
        self._images: dict[str, TextureImage | None] = {}
        self.failed: list[str] = []  # texture files found but not decoded

    @classmethod
    def for_game(cls, fs: "GameFS", max_size: int = DEFAULT_TEXTURE_SIZE) -> "TextureLibrary":
        """Files from a mounted game (with the map's pakfile attached to it)."""

        def read(name: str) -> bytes | None:
            location = fs.find(name)
            if location is None:
                return None
            data = fs.read(location)
            return data if len(data) <= _MAX_FILE else None

        return cls(read, max_size)

    def look(self, material: str) -> MaterialLook | None:
        """The look of ``material`` (``concrete/wall01``, without ``materials/``), or None when not found."""
        key = fold(material)
        if key.endswith(".vmt"):
            key = key[:-4]
        if key not in self._looks:
            self._looks[key] = self._parse(f"materials/{key}.vmt")
        return self._looks[key]

    def _parse(self, name: str) -> MaterialLook | None:
        from srctools.tokenizer import TokenSyntaxError
        from srctools.vmt import Material

        values: dict[str, str] = {}
        for _ in range(_MAX_INCLUDES):
            data = self._read(name)
            if data is None:
                break
            try:
                # Lines keep their ends: a // comment ends at its line, not at the file's end.
                mat = Material.parse(data.decode("utf-8", "replace").splitlines(keepends=True), name)
            except (*_PARSE_ERRORS, TokenSyntaxError):
                break
            params = dict((k.lower(), str(v)) for k, v in mat.items())
            if mat.shader.lower() != "patch":
                values = {**params, **values}  # a patch's own values win over what it includes
                return MaterialLook(
                    base=values.get("$basetexture") or None, base2=values.get("$basetexture2") or None,
                    alpha_test=_flag(values.get("$alphatest", "0")),
                    alpha_cutoff=_cutoff(values.get("$alphatestreference", "")),
                    translucent=_flag(values.get("$translucent", "0")), two_sided=_flag(values.get("$nocull", "0")))
            for block in mat.blocks:  # ``insert`` / ``replace`` blocks
                for child in block:
                    if not child.has_children():
                        values.setdefault(child.name.lower(), str(child.value))
            include = params.get("include", "")
            if not include:
                break
            name = fold(include)
        return None

    def image(self, texture: str) -> TextureImage | None:
        """The texture ``texture`` (without ``materials/`` and ``.vtf``) decoded, or None."""
        key = fold(texture)
        if key.endswith(".vtf"):
            key = key[:-4]
        if key not in self._images:
            self._images[key] = self._decode(key)
        return self._images[key]

    def _decode(self, key: str) -> TextureImage | None:
        from srctools.vtf import VTF

        from ...model.lightmaps import encode_png

        data = self._read(f"materials/{key}.vtf")
        if data is None:
            return None
        try:
            vtf = VTF.read(io.BytesIO(data))
            mip = 0
            while mip + 1 < vtf.mipmap_count and max(vtf.width >> mip, vtf.height >> mip) > self.max_size:
                mip += 1
            picture = vtf.get(mipmap=mip).to_PIL().convert("RGBA")
        except _PARSE_ERRORS:
            self.failed.append(key)
            return None
        if max(picture.size) > self.max_size:  # no mipmap small enough
            scale = self.max_size / max(picture.size)
            picture = picture.resize((max(1, round(picture.width * scale)), max(1, round(picture.height * scale))))
        pixels = np.asarray(picture)
        has_alpha = bool((pixels[..., 3] < 255).any())
        srgb = pixels[..., :3].reshape(-1, 3).mean(0) / 255.0
        linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
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

"""Materials (VMT), read through srctools' ``srctools.vmt``.

The one module that parses VMT text: swap it here.  :func:`material_refs`
lists what one VMT names (the dependency graph follows each name);
:func:`material_params` reads a material as the engine loads it, ``patch``
materials (the per-map cubemap copies vbsp writes into the pakfile)
followed through their ``include`` (the previews and the glTF export read
their looks from it).  A parameter is a texture or a material reference
when srctools' shader parameter database says so; a few parameters the
database types as textures name materials in the engine
(``$underwateroverlay`` is drawn as a material).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from .._extras import needs_extra
from ..errors import BspFormatError
from .gamefs import fold

if TYPE_CHECKING:
    from srctools.vmt import Material

__all__ = ["MaterialRefs", "material_refs", "parse_material", "material_params", "material_path", "texture_path",
           "MAX_INCLUDES"]

#: Files read for one material at the most: a patch, what it includes, ... (the engine nests no deeper).
MAX_INCLUDES = 4

# Parameters whose value is a material (a .vmt), whatever the database says.
_MATERIAL_PARAMS = frozenset({"$bottommaterial", "$crackmaterial", "$underwateroverlay", "$fallbackmaterial",
                              "$reflectskyboxmaterial", "$stickermaterial"})
_NOT_A_TEXTURE = frozenset({"env_cubemap", "", "0", "1"})


def material_path(name: str) -> str:
    """The file of a material as a map, a model or a material names it: ``materials/<name>.vmt``, folded
    (``materials/`` and ``.vmt`` not doubled, a sprite's ``.spr`` dropped)."""
    path = fold(name)
    if not path.startswith("materials/"):
        path = "materials/" + path
    if path.endswith(".spr"):
        path = path[:-4]
    return path if path.endswith(".vmt") else path + ".vmt"


def texture_path(name: str) -> str:
    """The file of a texture as a material names it: ``materials/<name>.vtf``, folded."""
    path = fold(name)
    if not path.startswith("materials/"):
        path = "materials/" + path
    return path if path.endswith(".vtf") else path + ".vtf"


def parse_material(text: str, name: str = "") -> "Material":
    """The VMT ``text`` parsed (srctools' ``Material``); :class:`BspFormatError` when it is not a VMT
    (:class:`~sourcebsp.errors.MissingExtraError` without srctools)."""
    with needs_extra("reading materials", "deps"):
        from srctools.vmt import Material
    try:
        # Lines keep their ends: a // comment ends at its line, not at the file's end.
        return Material.parse(text.splitlines(keepends=True), name)
    except Exception as exc:  # srctools' tokenizer errors: the file is not a VMT
        raise BspFormatError(f"cannot parse the material {name}: {exc}") from exc


def material_params(read: Callable[[str], bytes | None], material: str) -> dict[str, str] | None:
    """The parameters of ``material`` (``concrete/wall01``) as the engine loads it, by lower-case name.

    ``read`` gives a file's bytes (``materials/concrete/wall01.vmt``) or None.
    A ``patch`` material's ``insert`` and ``replace`` values win over those of
    the material it includes (the outermost patch first).  None when a file of
    the chain is not found or is not a VMT, or the chain is longer than
    :data:`MAX_INCLUDES`, as the engine then draws its error material.
    """
    name = material_path(material)
    values: dict[str, str] = {}
    for _ in range(MAX_INCLUDES):
        data = read(name)
        if data is None:
            return None
        try:
            mat = parse_material(data.decode("utf-8", "replace"), name)
        except BspFormatError:
            return None
        params = {key.lower(): str(value) for key, value in mat.items()}
        if mat.shader.lower() != "patch":
            return {**params, **values}
        for block in mat.blocks:  # ``insert`` / ``replace`` blocks
            for child in block:
                if not child.has_children():
                    values.setdefault(child.name.lower(), str(child.value))
        include = params.get("include", "")
        if not include:
            return None
        name = fold(include)  # a path from the game's root, ``materials/`` included
    return None


@dataclass
class MaterialRefs:
    """What one VMT names: textures (without ``materials/`` and ``.vtf``),
    materials (without ``materials/`` and ``.vmt``), and the file a patch includes."""

    shader: str
    textures: list[tuple[str, str]] = field(default_factory=list)  # (parameter, value)
    materials: list[tuple[str, str]] = field(default_factory=list)
    include: str | None = None
    uses_env_cubemap: bool = False


def material_refs(text: str, name: str = "") -> MaterialRefs:
    """The references of the VMT ``text``; :class:`BspFormatError` when it is not a VMT."""
    with needs_extra("reading materials", "deps"):
        from srctools.vmt import VarType, get_parm_type
    material = parse_material(text, name)
    refs = MaterialRefs(material.shader.lower())
    params: list[tuple[str, str]] = list(material.items())
    # Fallback blocks (``LightmappedGeneric_DX9``, ``GPU>=2?``) and patch ``insert``/``replace`` blocks.
    for block in material.blocks:
        params.extend((child.name, child.value) for child in block if not child.has_children())
    for param, value in params:
        key = param.lower()
        value = value.strip()
        if key == "include":
            refs.include = value
            continue
        if key == "$envmap" and value.lower() == "env_cubemap":
            refs.uses_env_cubemap = True
            continue
        if value.lower() in _NOT_A_TEXTURE or value[:1] in "[{" or value[:1].isdigit() and " " in value:
            continue
        if key in _MATERIAL_PARAMS:
            refs.materials.append((key, value))
            continue
        kind = get_parm_type(key.split("?", 1)[-1])
        if kind is VarType.TEXTURE:
            refs.textures.append((key, value))
        elif kind is VarType.MATERIAL:
            refs.materials.append((key, value))
    return refs

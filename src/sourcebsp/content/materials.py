"""Material (VMT) references, read through srctools' ``srctools.vmt``.

The one module that parses VMT text: swap it here.  A parameter is a texture
or a material reference when srctools' shader parameter database says so;
a few parameters the database types as textures name materials in the
engine (``$underwateroverlay`` is drawn as a material).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .._extras import needs_extra
from ..errors import BspError

__all__ = ["MaterialRefs", "material_refs"]

# Parameters whose value is a material (a .vmt), whatever the database says.
_MATERIAL_PARAMS = frozenset({"$bottommaterial", "$crackmaterial", "$underwateroverlay", "$fallbackmaterial",
                              "$reflectskyboxmaterial", "$stickermaterial"})
_NOT_A_TEXTURE = frozenset({"env_cubemap", "", "0", "1"})


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
    """The references of the VMT ``text``; :class:`BspError` when it is not a VMT."""
    with needs_extra("reading materials", "deps"):
        from srctools.vmt import Material, VarType, get_parm_type
    try:
        material = Material.parse(text.splitlines(keepends=True), name)
    except Exception as exc:  # srctools' tokenizer errors: the file is not a VMT
        raise BspError(f"cannot parse the material {name}: {exc}") from exc
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

"""Which entity keys name assets: srctools' FGD entity database, with value
patterns for classes and keys it does not know.  The one module that reads the
entity database: swap it here."""
from __future__ import annotations

from functools import lru_cache

__all__ = ["asset_kind", "is_entity_class", "ASSET_KINDS"]

#: FGD value type -> dependency kind.
ASSET_KINDS = {
    "studio": "model", "sprite": "sprite", "sound": "sound", "particlesystem": "particle-system",
    "scene": "scene", "scriptlist": "vscript", "script": "vscript", "decal": "decal",
    "material": "material", "texture": "material", "soundscape": "soundscape",
}
# Value patterns for keys the database does not type: file extension -> kind.
_EXTENSIONS = {".mdl": "model", ".vmt": "material", ".spr": "sprite", ".wav": "sound", ".mp3": "sound",
               ".ogg": "sound", ".pcf": "particle-file", ".nut": "vscript", ".vcd": "scene"}
# Keys every class has that never name files, skipped before any look-up.
_NEVER = frozenset({"classname", "targetname", "origin", "angles", "spawnflags", "hammerid", "parentname",
                    "target", "rendercolor", "renderamt", "rendermode", "renderfx", "_light", "_lighthdr"})


@lru_cache(maxsize=None)
def _class_keys(classname: str) -> dict[str, str] | None:
    """{key: asset kind, or "" for keys that name no asset} of a class; None for a class the database lacks.

    Built once per class: srctools copies the definition on every look-up.
    """
    try:
        from srctools.fgd import EntityDef
    except ImportError:  # pragma: no cover - depends on the install
        return None
    if classname not in EntityDef.engine_classes():
        return None
    entity = EntityDef.engine_def(classname)
    return {key.lower(): ASSET_KINDS.get(entity.kv[key].type.value, "") for key in entity.kv}


def _fgd_kind(classname: str, key: str) -> str | None:
    keys = _class_keys(classname)
    return None if keys is None else keys.get(key)


def asset_kind(classname: str, key: str, value: str) -> str | None:
    """The kind of asset the key names (``"model"``, ``"sound"``, ...), or None when it names none."""
    key = key.lower()
    if key in _NEVER or not value or key.startswith("on"):
        return None
    kind = _fgd_kind(classname.lower(), key)
    if kind:
        return kind
    lowered = value.lower()
    for ext, pattern_kind in _EXTENSIONS.items():
        if lowered.endswith(ext):
            return pattern_kind
    return None


# Classes the engine creates itself, not in the entity database.
_ENGINE_CLASSES = frozenset({"player", "worldspawn", "viewmodel", "predicted_viewmodel"})


def is_entity_class(name: str) -> bool:
    """Whether ``name`` is an entity class (outputs may target a class the game spawns itself)."""
    if name.lower() in _ENGINE_CLASSES:
        return True
    try:
        from srctools.fgd import EntityDef
    except ImportError:  # pragma: no cover - depends on the install
        return False
    return name.lower() in EntityDef.engine_classes()

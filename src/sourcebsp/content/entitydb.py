"""Which entity keys name assets, and what each class loads without a key
naming it: srctools' FGD entity database (its ``@resources``, which simulate
the game code's ``Precache()``), with value patterns for classes and keys it
does not know.  The one module that reads the entity database: swap it here."""
from __future__ import annotations

import io
from functools import lru_cache
from typing import Any, Iterable

from ..errors import BspError
from .models import check_model

__all__ = ["asset_kind", "is_entity_class", "ASSET_KINDS", "ClassResources", "GAME_TAGS", "game_tags"]

#: Game folder -> the entity database's tags for that game (Portal's code is HL2's episodic code).
GAME_TAGS: dict[str, tuple[str, ...]] = {
    "hl2": ("hl2",), "lostcoast": ("hl2",), "episodic": ("hl2", "episodic"), "ep2": ("hl2", "episodic"),
    "portal": ("hl2", "episodic"), "hl1": ("hls",), "hl1mp": ("hls",), "tf": ("tf2",), "tf2classic": ("tf2",),
    "open_fortress": ("tf2",), "portal2": ("p2",), "bms": ("mesa",), "ez2": ("hl2", "episodic", "entropyzero2"),
}


def game_tags(fs: Any) -> tuple[str, ...]:
    """The entity database tags of the mounted game, told by its folder name; () when unknown."""
    mod_dir = getattr(fs, "mod_dir", None)
    return GAME_TAGS.get(mod_dir.name.lower(), ()) if mod_dir is not None else ()

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
def _entity_def(classname: str) -> Any:
    """srctools' definition of a class, None when the database lacks it.

    Looked up once per class: srctools copies the definition on every look-up.
    """
    try:
        from srctools.fgd import EntityDef  # an optional extra (deps): imported where used
    except ImportError:  # pragma: no cover - depends on the install
        return None
    if classname not in EntityDef.engine_classes():
        return None
    return EntityDef.engine_def(classname)


@lru_cache(maxsize=None)
def _class_keys(classname: str) -> dict[str, str] | None:
    """{key: asset kind, or "" for keys that name no asset} of a class; None for a class the database lacks."""
    entity = _entity_def(classname)
    if entity is None:
        return None
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
        from srctools.fgd import EntityDef  # an optional extra (deps): imported where used
    except ImportError:  # pragma: no cover - depends on the install
        return False
    return name.lower() in EntityDef.engine_classes()


# srctools FileType value -> dependency kind ("breakable-chunk": a gib set of scripts/propdata.txt).
_RESOURCE_KINDS = {
    "mdl": "model", "vmt": "material", "vtf": "texture", "wav": "sound", 2: "sound", 3: "particle-system",
    "pcf": "particle-file", 8: "soundscape", 9: "soundscape-file", 1: "soundscript", "nut": "vscript",
    "vcd": "scene", 7: "weapon-script", 0: "file", 6: "breakable-chunk",
}
# Keys that never change what a class precaches (srctools ignores the same ones).
_PLACE_KEYS = frozenset({"origin", "angles", "targetname", "id", "hammerid", "nodeid"})


def _filesystem(fs: Any) -> Any:
    """A srctools filesystem over a mounted :class:`~sourcebsp.content.GameFS`, for the class
    functions that look at files (a door's model options, numbered smoke materials)."""
    from srctools.filesys import File, FileSystem  # an optional extra (deps): imported where used

    class GameFileSystem(FileSystem[Any]):
        def _get_file(self, name: str) -> Any:
            location = fs.find(name)
            if location is None:
                raise FileNotFoundError(name)
            return File(self, name, location)

        def open_bin(self, name: Any) -> Any:
            file = name if isinstance(name, File) else self._get_file(name)
            data = fs.read(file._data)
            if file.path.lower().endswith(".mdl"):
                check_model(file.path, data)  # refuse hostile counts before srctools sizes lists by them
            return io.BytesIO(data)

        def open_str(self, name: Any, encoding: str = "utf8") -> Any:
            return io.TextIOWrapper(self.open_bin(name), encoding, errors="replace")

        def walk_folder(self, folder: str = "") -> Any:
            return iter(())

    return GameFileSystem("game")


class ClassResources:
    """What entities load because of their class: ``resources(classname, keys)`` gives
    ``(kind, name)`` pairs, kinds as in :data:`ASSET_KINDS` plus ``"texture"``,
    ``"soundscript"``, ``"soundscape-file"``, ``"weapon-script"``, ``"breakable-chunk"`` (a gib
    set named in ``scripts/propdata.txt``) and ``"file"``.

    Parameters
    ----------
    fs
        The mounted game (a door's model is read for its hardware options).
    map_name
        Some classes pick files by the map's name.
    tags
        Engine branch tags of srctools' database (``"episodic"``, ``"mapbase"``, ``"tf2"``...):
        resources marked for other branches are left out.
    """

    def __init__(self, fs: Any, map_name: str = "", tags: Iterable[str] = ()) -> None:
        self.fs = fs
        self.map_name = map_name
        self.tags = tuple(tags)
        self._ctx: Any = None
        self._cache: dict[tuple[str, frozenset[tuple[str, str]]], list[tuple[str, str]]] = {}

    def context(self) -> Any:
        if self._ctx is None:
            from srctools.fgd import ResourceCtx  # an optional extra (deps): imported where used

            def get_def(classname: str) -> Any:
                found = _entity_def(classname.lower())
                if found is None:
                    raise KeyError(classname)
                return found

            self._ctx = ResourceCtx(tags=self.tags, fsys=_filesystem(self.fs), fgd=get_def, mapname=self.map_name)
        return self._ctx

    def __call__(self, classname: str, keys: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """The ``(kind, name)`` pairs a ``classname`` entity with ``keys`` loads; BspError when
        the class's resource function cannot read what it needs."""
        classname = classname.lower()
        definition = _entity_def(classname)
        if definition is None or not definition.resources:
            return []
        pairs = frozenset((k.lower(), v) for k, v in keys if k.lower() not in _PLACE_KEYS and not k.lower().startswith("on"))
        found = self._cache.get((classname, pairs))
        if found is None:
            found = self._cache[(classname, pairs)] = self._resources(definition, classname, pairs)
        return found

    def _resources(self, definition: Any, classname: str, pairs: frozenset[tuple[str, str]]) -> list[tuple[str, str]]:
        from srctools.vmf import VMF  # an optional extra (deps): imported where used

        entity = VMF(preserve_ids=False).create_ent(classname)
        for key, value in pairs:
            entity[key] = value
        out: list[tuple[str, str]] = []
        try:
            for file_type, name in definition.get_resources(self.context(), ent=entity):
                kind = _RESOURCE_KINDS.get(file_type.value)
                if kind is not None and name:
                    out.append((kind, name.split("#", 1)[0] if kind == "model" else name))
        except Exception as exc:  # a class function meeting a file it cannot (or must not) parse
            raise BspError(f"{classname}: cannot list what the class loads: {exc}") from exc
        return list(dict.fromkeys(out))

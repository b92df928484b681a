"""Every file a map needs: the whole dependency graph, walked from the map.

Roots (what the map itself names): the TEXDATA materials (world, displacement,
overlay and water materials, the pakfile's patched cubemap materials among
them), the static and detail prop models, the detail sprite material, the
skybox's six faces (and their HDR variants when shipped), every entity key
that names an asset (typed by srctools' FGD database, value patterns for the
rest), what each entity's class loads without a key naming it (the database's
``@resources``: referenced with key ``"@resources"``, optional), and the files the engine loads by the map's name (navigation mesh,
``maps/<map>.res``, soundscapes, particle manifest, level sounds, radar
overview, ...).

Then each found file is opened and what it names is added in turn:
materials give textures, ``include``\\ d materials and material parameters;
models give ``.vvd``/``.vtx``/``.phy``/``.ani``, included models, gibs and the
material of every skin through ``cdmaterials``; soundscripts, soundscapes and
particle files give wave files and materials; weapon scripts give models, sounds
and HUD sprites; a class's gib set gives the models ``scripts/propdata.txt`` lists.

Compile-time files come last: ``detail.vbsp`` (the worldspawn's ``detailvbsp``)
and the detail models it names are read by vbsp, not the engine (the models it
placed are in the detail prop lump), so they are ``compile_only``: listed,
never packed.

A *required* file that no search path has is ``missing``; *optional* ones
(``.dx80.vtx``, ``.phy``, HDR sky faces, the files loaded by map name, ...) are
listed only when found.

JSON form (:meth:`DependencyGraph.to_json`, stable): ``{"map", "compiled_names", "search_paths":
[{kind, path, stock, keys}], "unresolved_search_paths": [...], "summary":
{"total", "pakfile", "folder", "vpk", "missing"}, "dependencies": [{"path",
"kind", "optional", "found": null | {where, source, name, stock},
"referenced_by": [{"lump", "index"} | {"entity", "classname", "key"} |
{"asset", "via"} | {"map", "via"}], "compile_only"}], "problems": [files found but
unreadable]}``,
dependencies sorted by path.  Names no script defines (a soundscript entry, a
particle system, a soundscape) are listed as ``<kind>:<name>``, missing.
"""
from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..protocols import MapReader
from ..errors import BspError
from ..lump_ids import LumpId
from ..model.geometry import texture_names
from .damage import Damage, tolerant
from .entitydb import ClassResources, asset_kind, game_tags
from .gamefs import GameFS, Location, fold, parse_keyvalues
from .materials import material_path, material_refs, texture_path
from .models import model_refs
from .particles import particle_systems
from .sounds import manifest_files, sound_file, soundscape_entries, soundscript_entries
from .studiomodel import VTX_SUFFIXES

if TYPE_CHECKING:
    from ..codecs.entities import Entity

__all__ = ["Dependency", "DependencyGraph", "map_dependencies", "SKY_SIDES"]

SKY_SIDES = ("rt", "lf", "bk", "ft", "up", "dn")
# vtx variants: dx90 is what current engines load; the others (the studio model reader's, then the
# consoles') are kept when shipped.
_OPTIONAL_VTX = VTX_SUFFIXES[1:] + (".xbox.vtx", ".360.vtx")
Ref = dict[str, Any]


def _ref_text(ref: Ref) -> str:
    if "lump" in ref:
        return f"{ref['lump']}[{ref['index']}]"
    if "entity" in ref:
        return f"entity {ref['entity']} {ref['classname']}.{ref['key']}"
    if "asset" in ref:
        return f"{ref['asset']} {ref['via']}"
    return f"map {ref['via']}"


@dataclass
class Dependency:
    """One file the map needs."""

    path: str  # lower case, forward slashes, relative to the game folder
    kind: str
    optional: bool
    location: Location | None = None
    referenced_by: list[Ref] = field(default_factory=list)
    #: Read by the map compiler only (``detail.vbsp`` and the models it names), never by the
    #: engine: listed, never packed.
    compile_only: bool = False

    @property
    def where(self) -> str:
        """``"pakfile"``, ``"folder"``, ``"vpk"`` or ``"missing"``."""
        return self.location.where if self.location is not None else "missing"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path, "kind": self.kind, "optional": self.optional,
            "found": self.location.to_json() if self.location is not None else None,
            "referenced_by": self.referenced_by, "compile_only": self.compile_only,
        }

    def references_text(self, limit: int = 2) -> str:
        texts = [_ref_text(r) for r in self.referenced_by[:limit]]
        more = len(self.referenced_by) - limit
        return "; ".join(texts) + (f" (+{more})" if more > 0 else "")


@dataclass
class DependencyGraph:
    """The files a map needs, keyed by folded path."""

    map_name: str
    fs: GameFS
    #: The names the map was compiled as (``materials/maps/<name>/`` in its pakfile): vbsp
    #: writes cubemaps and patched materials under that name, which a renamed file keeps.
    compiled_names: list[str] = field(default_factory=list)
    deps: dict[str, Dependency] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # files found but unreadable
    #: The lumps of the map that did not decode (what they name is not listed).
    damaged: list[Damage] = field(default_factory=list)

    def __iter__(self) -> Any:
        return iter(sorted(self.deps.values(), key=lambda d: d.path))

    def __len__(self) -> int:
        return len(self.deps)

    def get(self, path: str) -> Dependency | None:
        return self.deps.get(fold(path))

    def missing(self) -> list[Dependency]:
        """The files found nowhere that no unmounted search path could hold (see :meth:`unverified`)."""
        return [d for d in self if d.location is None and not self.is_unverified(d)]

    def unverified(self) -> list[Dependency]:
        """The files found nowhere that a search path the game names but that could not be
        mounted (the base game of a mod, not installed here) may hold: neither found nor missing."""
        return [d for d in self if d.location is None and self.is_unverified(d)]

    def is_unverified(self, dep: Dependency) -> bool:
        if dep.location is not None or not self.fs.unmounted_game:
            return False
        # The map's own compiled files (cubemaps, patched materials) are in no game's content.
        return not any(dep.path.startswith(f"materials/maps/{name}/") for name in self.compiled_names)

    def summary(self) -> dict[str, int]:
        counts = {"total": len(self.deps), "pakfile": 0, "folder": 0, "vpk": 0, "missing": 0}
        if self.fs.unmounted_game:  # the key only then: a game mounted whole reports as before
            counts["unverified"] = 0
        for dep in self.deps.values():
            counts["unverified" if self.is_unverified(dep) else dep.where] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "map": self.map_name,
            "compiled_names": list(self.compiled_names),
            "search_paths": [p.to_json() for p in self.fs.paths],
            "unresolved_search_paths": list(self.fs.unresolved),
            "summary": self.summary(),
            "dependencies": [{**d.to_json(), "unverified": True} if self.is_unverified(d) else d.to_json()
                             for d in self],
            "problems": list(self.problems),
            **({"damaged": [d.to_json() for d in self.damaged]} if self.damaged else {}),
        }


class _Walker:
    def __init__(self, bsp: MapReader, fs: GameFS, map_name: str, tags: Iterable[str] = ()) -> None:
        self.bsp = bsp
        self.fs = fs
        self.graph = DependencyGraph(map_name, fs, _compiled_names(fs.pakfile_names()))
        self.class_resources = ClassResources(fs, map_name, tags)
        self.detail_vbsp: tuple[str, Ref] | None = None
        self.compile_only = False  # set while the compile-time files are walked, after the rest
        self.queue: deque[Dependency] = deque()
        self._soundscripts: dict[str, tuple[str, list[str]]] | None = None
        self._soundscapes: dict[str, tuple[str, list[str]]] | None = None
        self._particles: dict[str, tuple[str, list[str]]] | None = None
        self._map_pcfs: list[str] = []
        self._chunks: dict[str, list[str]] | None = None

    # ---- bookkeeping ----------------------------------------------------------------
    def add(self, path: str, kind: str, ref: Ref, *, optional: bool = False) -> Dependency | None:
        key = fold(path)
        if not key:
            return None
        dep = self.graph.deps.get(key)
        if dep is None:
            location = self.fs.find(key)
            if location is None and optional:
                return None
            dep = Dependency(key, kind, optional, location, compile_only=self.compile_only)
            self.graph.deps[key] = dep
            self.queue.append(dep)
        elif dep.optional and not optional:
            dep.optional = False
        if ref not in dep.referenced_by:
            dep.referenced_by.append(ref)
        return dep

    def read_text(self, dep: Dependency) -> str | None:
        if dep.location is None:
            return None
        try:
            return self.fs.read(dep.location).decode("utf-8", errors="replace")
        except (OSError, BspError) as exc:
            self.graph.problems.append(f"{dep.path}: {exc}")
            return None

    # ---- roots ----------------------------------------------------------------------
    def roots(self) -> None:
        bsp = self.bsp
        for index, name in enumerate(texture_names(bsp)):
            if name:
                self.add(material_path(name), "material", {"lump": "TEXDATA", "index": index})
        if bsp.has_lump(LumpId.GAME_LUMP):
            for index, name in enumerate(bsp.static_props.names):
                if name:
                    self.add(name, "model", {"lump": "sprp", "index": index})
            detail = bsp.detail_props
            if detail is not None:
                for index, name in enumerate(detail.names):
                    if name:
                        self.add(name, "model", {"lump": "dprp", "index": index})
        compiled = self.graph.compiled_names
        name = compiled[0] if len(compiled) == 1 else self.graph.map_name.lower()
        cubemaps = bsp.lump_or_none(LumpId.CUBEMAPS)
        if cubemaps is not None and len(cubemaps):
            # vbsp -buildcubemaps writes one texture per env_cubemap into the pakfile (checked by ``check``).
            for index, origin in enumerate(cubemaps["origin"].tolist()):
                stem = f"materials/maps/{name}/c{origin[0]}_{origin[1]}_{origin[2]}"
                ref = {"lump": "CUBEMAPS", "index": index}
                self.add(stem + ".vtf", "cubemap", ref, optional=True)
                self.add(stem + ".hdr.vtf", "cubemap", ref, optional=True)
            for stem in ("cubemapdefault", "cubemapdefault.hdr"):
                self.add(f"materials/maps/{name}/{stem}.vtf", "cubemap", {"lump": "CUBEMAPS", "index": -1},
                         optional=True)
        for pak_name in self.fs.pakfile_names():
            # Per-vertex static prop lighting (vrad -staticproplighting), loaded by prop index.
            if pak_name.startswith(("sp_", "sp_hdr_")) and pak_name.endswith(".vhv"):
                self.add(pak_name, "prop-lighting", {"lump": "sprp", "index": _prop_index(pak_name)}, optional=True)
        entities = bsp.lump_or_none(LumpId.ENTITIES, "list the assets entities name")
        for index, entity in enumerate(entities or ()):
            self.entity(index, entity, bool(bsp.detail_props is not None and len(bsp.detail_props)))
        self.map_files()

    def entity(self, index: int, entity: Entity, has_detail: bool) -> None:
        classname = (entity.classname or "").lower()
        for key, value in entity.items():
            value = value.strip()
            if not value:
                continue
            ref = {"entity": index, "classname": classname, "key": key}
            lowered = key.lower()
            if classname == "worldspawn":
                if lowered == "skyname":
                    self.skybox(value, ref)
                    continue
                if lowered == "detailmaterial":
                    self.add(material_path(value), "material", ref)
                    continue
                if lowered == "detailvbsp":
                    self.detail_vbsp = (value, ref)
                    continue
            kind = asset_kind(classname, key, value)
            if kind is not None:
                self.entity_value(kind, value, ref)
        if classname == "worldspawn" and has_detail and "detailmaterial" not in entity:
            self.add("materials/detail/detailsprites.vmt", "material",
                     {"entity": index, "classname": classname, "key": "detailmaterial (default)"})
        if classname == "worldspawn" and has_detail and self.detail_vbsp is None:
            # vbsp reads detail.vbsp unless the key names another file.
            self.detail_vbsp = ("detail.vbsp", {"entity": index, "classname": classname, "key": "detailvbsp (default)"})
        if classname and classname != "worldspawn":
            self.class_loads(index, classname, entity)

    def class_loads(self, index: int, classname: str, entity: Entity) -> None:
        """What the class loads without a key naming it (its ``Precache()``).  Optional: the
        game ships them, so they are listed (and packed) only when found."""
        try:
            resources = self.class_resources(classname, entity.items())
        except BspError as exc:
            self.graph.problems.append(f"entity {index}: {exc}")
            return
        ref: Ref = {"entity": index, "classname": classname, "key": "@resources"}
        for kind, name in resources:
            if kind == "texture":
                self.add(texture_path(name), kind, ref, optional=True)
            elif kind in ("soundscript", "soundscape-file", "weapon-script", "file"):
                self.add(name, kind, ref, optional=True)
            elif kind == "breakable-chunk":
                self.breakable_chunk(name, ref)
            else:
                self.entity_value(kind, name, ref, optional=True)

    def entity_value(self, kind: str, value: str, ref: Ref, *, optional: bool = False) -> None:
        lowered = value.lower()
        if kind == "model":
            # "*N" brush models live in the map; a model key may also hold a sprite.
            if lowered.endswith(".mdl"):
                self.add(value, "model", ref, optional=optional)
            elif lowered.endswith((".vmt", ".spr")):
                self.add(material_path(value), "sprite", ref, optional=optional)
        elif kind in ("material", "decal", "sprite"):
            self.add(material_path(value), kind, ref, optional=optional)
        elif kind == "sound":
            self.sound(value, ref, optional=optional)
        elif kind == "particle-system":
            self.particle_system(value, ref, optional=optional)
        elif kind == "vscript":
            for script in value.replace(",", " ").split():
                path = script if script.lower().startswith("scripts/vscripts/") else "scripts/vscripts/" + script
                if "." not in path.rsplit("/", 1)[-1]:
                    path += ".nut"
                self.add(path, "vscript", ref, optional=optional)
        elif kind == "scene":
            # Scenes usually live compiled in scenes/scenes.image: a loose file is optional.
            self.add(value, "scene", ref, optional=True)
        elif kind == "soundscape":
            self.soundscape(value, ref, optional=optional)
        elif kind == "particle-file":
            self.add(value, "particle-file", ref, optional=optional)

    def skybox(self, sky: str, ref: Ref) -> None:
        for side in SKY_SIDES:
            self.add(f"materials/skybox/{sky}{side}.vmt", "skybox", ref)
            self.add(f"materials/skybox/{sky}_hdr{side}.vmt", "skybox", ref, optional=True)

    def names(self) -> list[str]:
        """The map's file name and the names it was compiled as."""
        return list(dict.fromkeys([self.graph.map_name.lower(), *self.graph.compiled_names]))

    def map_files(self) -> None:
        for name in self.names():
            self.map_files_named(name)

    def map_files_named(self, name: str) -> None:
        ref: Ref = {"map": name, "via": "map name"}
        for path, kind in (
            (f"maps/{name}.nav", "nav"), (f"maps/{name}.res", "map-res"), (f"maps/{name}.txt", "map-info"),
            (f"maps/cfg/{name}.cfg", "config"), (f"maps/{name}_commentary.txt", "commentary"),
            (f"maps/{name}_level_sounds.txt", "soundscript"), (f"scripts/soundscapes_{name}.txt", "soundscape-file"),
            (f"particles/{name}_manifest.txt", "particle-manifest"), (f"maps/{name}_particles.txt", "particle-manifest"),
            (f"resource/overviews/{name}.txt", "overview"), (f"maps/{name}_camera.txt", "config"),
            (f"resource/overviews/{name}_radar.dds", "overview"),  # CS:GO radar image
            ("__preload_section.pre", "preload"),  # Xbox 360 maps: read at load time
        ):
            self.add(path, kind, ref, optional=True)

    # ---- names resolved through scripts ---------------------------------------------
    def _index(self, manifest: str, parse: Any, extra: Iterable[str] = ()) -> dict[str, tuple[str, list[str]]]:
        """{entry: (file, files it names)} over the files a manifest lists, plus ``extra`` files."""
        index: dict[str, tuple[str, list[str]]] = {}
        files = list(extra)
        text = self.fs.read_text(manifest)
        if text is not None:
            try:
                files += manifest_files(text, manifest)
            except BspError as exc:
                self.graph.problems.append(str(exc))
        for path in files:
            location = self.fs.find(path)
            if location is None:
                continue
            try:
                data = self.fs.read(location)
                entries = parse(data, path)
            except BspError as exc:
                self.graph.problems.append(str(exc))
                continue
            for entry, found in entries.items():
                index.setdefault(entry, (fold(path), found))
        return index

    def sound(self, value: str, ref: Ref, *, optional: bool = False) -> None:
        bare = value.lstrip("*#@><^)}$!?&~`+%(")
        if bare.lower().endswith((".wav", ".mp3", ".ogg")):
            self.add(sound_file(value), "sound", ref, optional=optional)
            return
        if self._soundscripts is None:
            extra = [f"maps/{name}_level_sounds.txt" for name in self.names()]
            if self.fs.find("scripts/game_sounds_manifest.txt") is None:
                # No manifest mounted (a mod without its base game): the soundscripts it ships.
                extra += [n for n in self.fs.names_under("scripts", ".txt") if n.startswith("scripts/game_sounds")]
            self._soundscripts = self._index(
                "scripts/game_sounds_manifest.txt",
                lambda data, path: soundscript_entries(data.decode("utf-8", "replace"), path), extra)
        self.resolve(self._soundscripts, value, ref, "soundscript-entry", "soundscript", optional)

    def soundscape(self, value: str, ref: Ref, *, optional: bool = False) -> None:
        if self._soundscapes is None:
            own = [f"scripts/soundscapes_{name}.txt" for name in self.names()]
            self._soundscapes = self._index(
                "scripts/soundscapes_manifest.txt",
                lambda data, path: soundscape_entries(data.decode("utf-8", "replace"), path), own)
        self.resolve(self._soundscapes, value, ref, "soundscape", "soundscape-file", optional)

    def particle_system(self, value: str, ref: Ref, *, optional: bool = False) -> None:
        if self._particles is None:
            self._particles = self._index("particles/particles_manifest.txt", particle_systems, self._map_pcfs)
        self.resolve(self._particles, value, ref, "particle-system", "particle-file", optional)

    def resolve(self, index: dict[str, tuple[str, list[str]]], value: str, ref: Ref, kind: str,
                file_kind: str, optional: bool = False) -> None:
        """A name defined in a script file: the file, and what the entry names in it
        (wave files, or a particle system's materials and models)."""
        entry = index.get(value.lower())
        if entry is None:
            if not optional:
                self.add_unresolved(value, kind, ref)
            return
        script, files = entry
        self.add(script, file_kind, ref, optional=optional)
        for path in files:
            child = "sound" if path.startswith("sound/") else "material" if path.endswith(".vmt") else "model"
            self.add(path, child, {"asset": script, "via": value}, optional=optional)

    def breakable_chunk(self, name: str, ref: Ref) -> None:
        """A gib set (``WoodChunks``...): ``scripts/propdata.txt``'s ``BreakableChunks`` block lists
        its models, of which the engine picks at random when the entity breaks."""
        if self._chunks is None:
            self._chunks = {}
            text = self.fs.read_text("scripts/propdata.txt")
            try:
                root = parse_keyvalues(text, "scripts/propdata.txt") if text is not None else None
            except BspError as exc:
                self.graph.problems.append(str(exc))
                root = None
            blocks = [b for top in _blocks(root) for b in _blocks(top) if b.name == "breakablechunks"] if root is not None else []
            for block in blocks:
                for chunk in _blocks(block):
                    self._chunks.setdefault(chunk.name, []).extend(
                        m.real_name for m in chunk if not m.has_children() and m.real_name.lower().endswith(".mdl"))
        if self._chunks.get(name.lower()):
            self.add("scripts/propdata.txt", "propdata", ref, optional=True)
        for model in self._chunks.get(name.lower(), ()):
            self.add(model, "model", {"asset": "scripts/propdata.txt", "via": f"BreakableChunks/{name}"}, optional=True)

    def add_unresolved(self, name: str, kind: str, ref: Ref) -> None:
        """A name no script defines: listed as missing under ``<kind>:<name>`` (not a file)."""
        key = f"{kind}:{name.lower()}"
        dep = self.graph.deps.get(key)
        if dep is None:
            dep = self.graph.deps[key] = Dependency(key, kind, False, None)
        if ref not in dep.referenced_by:
            dep.referenced_by.append(ref)

    # ---- expanding found files ------------------------------------------------------
    def parsed(self, dep: Dependency, parse: Callable[[str, str], Any]) -> Any:
        """``parse(text, path)`` of a found file; None (and a problem noted) when it cannot be read."""
        text = self.read_text(dep)
        if text is None:
            return None
        try:
            return parse(text, dep.path)
        except BspError as exc:
            self.graph.problems.append(str(exc))
            return None

    def expand(self, dep: Dependency) -> None:
        if dep.location is None:
            return
        path = dep.path
        if path.endswith(".vmt"):
            self.expand_material(dep)
        elif path.endswith(".mdl"):
            self.expand_model(dep)
        elif dep.kind == "particle-manifest":
            for pcf in self.parsed(dep, manifest_files) or ():
                self._map_pcfs.append(pcf)
                self.add(pcf, "particle-file", {"asset": path, "via": "manifest"})
        elif path.endswith(".pcf") and not dep.location.stock:
            # The map's own particle files: everything they draw goes with them.
            try:
                systems = particle_systems(self.fs.read(dep.location), path)
            except BspError as exc:
                self.graph.problems.append(str(exc))
                return
            for system, files in systems.items():
                for file in files:
                    self.add(file, "material" if file.endswith(".vmt") else "model", {"asset": path, "via": system})
        elif dep.kind == "soundscape-file" and any(r.get("via") == "map name" for r in dep.referenced_by):
            for name, waves in (self.parsed(dep, soundscape_entries) or {}).items():
                for wave in waves:
                    self.add(wave, "sound", {"asset": path, "via": name})
        elif dep.kind in ("overview", "map-res") and path.endswith((".txt", ".res")):
            self.expand_keyvalue_files(dep)
        elif dep.kind == "detail-vbsp":
            self.expand_detail_vbsp(dep)
        elif dep.kind == "weapon-script" and path.endswith(".txt"):
            self.expand_weapon_script(dep)

    def expand_weapon_script(self, dep: Dependency) -> None:
        """A weapon script's ``WeaponData``: its models, sounds (``SoundData``), particle effects
        and HUD sprites (``TextureData`` blocks naming a ``file``)."""
        optional = dep.optional
        for data in self.parsed(dep, parse_keyvalues) or ():
            if data.name.lower() != "weapondata" or not data.has_children():
                continue
            for child in data:
                name, via = child.name.lower(), {"asset": dep.path, "via": child.real_name}
                if not child.has_children():
                    value = child.value.strip()
                    if name in _WEAPON_MODEL_KEYS and value:
                        self.add(value, "model", via, optional=optional)
                    elif name in _WEAPON_PARTICLE_KEYS and value:
                        self.particle_system(value, via, optional=optional)
                elif name == "sounddata":
                    for sound in child:
                        if not sound.has_children() and sound.value.strip():
                            self.sound(sound.value.strip(), {"asset": dep.path, "via": f"SoundData/{sound.real_name}"},
                                       optional=optional)
                elif name == "texturedata":
                    for sprite in _blocks(child):
                        for key in sprite:
                            if key.name.lower() == "file" and not key.has_children() and key.value.strip():
                                self.add(material_path(key.value.strip()), "material",
                                         {"asset": dep.path, "via": f"TextureData/{sprite.real_name}"}, optional=optional)

    def expand_detail_vbsp(self, dep: Dependency) -> None:
        """The models of ``detail.vbsp``: detail types hold groups hold entries, an entry names a
        ``model`` or cuts a ``sprite`` out of the worldspawn's detail material."""
        for root in self.parsed(dep, parse_keyvalues) or ():
            for detail_type in _blocks(root):
                for group in _blocks(detail_type):
                    for entry in _blocks(group):
                        for child in entry:
                            if child.name.lower() == "model" and not child.has_children() and child.value.strip():
                                via = f"{detail_type.real_name}/{group.real_name}/{entry.real_name}"
                                self.add(child.value.strip(), "model", {"asset": dep.path, "via": via}, optional=True)

    def expand_keyvalue_files(self, dep: Dependency) -> None:
        for block in self.parsed(dep, parse_keyvalues) or ():
            for child in block if block.has_children() else ():
                if child.has_children():
                    continue
                if dep.kind == "overview" and child.name.lower() == "material":
                    self.add(material_path(child.value), "material", {"asset": dep.path, "via": "material"})
                    self.add(material_path(child.value + "_spectate"), "material",
                             {"asset": dep.path, "via": "material"}, optional=True)
                elif dep.kind == "map-res":
                    self.add(child.name, "file", {"asset": dep.path, "via": "resource list"})

    def expand_material(self, dep: Dependency) -> None:
        refs = self.parsed(dep, material_refs)
        if refs is None:
            return
        if refs.include:
            self.add(refs.include if refs.include.lower().startswith("materials/") else material_path(refs.include),
                     "material", {"asset": dep.path, "via": "include"})
        for param, value in refs.textures:
            ref = {"asset": dep.path, "via": param}
            self.add(texture_path(value), "texture", ref)
            if param == "$envmap":
                # Built cubemaps come with an HDR twin in HDR maps.
                self.add(texture_path(value + ".hdr"), "texture", ref, optional=True)
        for param, value in refs.materials:
            self.add(material_path(value), "material", {"asset": dep.path, "via": param})

    def expand_model(self, dep: Dependency) -> None:
        assert dep.location is not None
        stem = dep.path[: -len(".mdl")]
        try:
            mdl = self.fs.read(dep.location)
            phy_location = self.fs.find(stem + ".phy")
            phy = self.fs.read(phy_location) if phy_location is not None else None
            refs = model_refs(dep.path, mdl, phy)
        except (BspError, OSError) as exc:
            self.graph.problems.append(f"{dep.path}: {exc}")
            return
        self.graph.problems += refs.problems
        ref: Ref = {"asset": dep.path, "via": "model files"}
        self.add(stem + ".vvd", "model-vertices", ref, optional=not refs.has_mesh)
        # The engine needs one mesh file: dx90 today, dx80/sw on old or low-end paths.
        vtx_found = [self.add(stem + ext, "model-mesh", ref, optional=True) for ext in (".dx90.vtx",) + _OPTIONAL_VTX]
        if refs.has_mesh and not any(vtx_found):
            self.add(stem + ".dx90.vtx", "model-mesh", ref)
        self.add(stem + ".phy", "model-physics", ref, optional=True)
        self.add(stem + ".ani", "model-animation", ref, optional=True)
        for included in refs.included:
            self.add(included, "model", {"asset": dep.path, "via": "$includemodel"})
        for gib in refs.gibs:
            self.add(gib, "model", {"asset": dep.path, "via": "break model"})
        folders = refs.cdmaterials or [""]
        for texture in refs.textures:
            candidates = [material_path(f"{folder}{texture}") for folder in folders]
            found = next((c for c in candidates if self.fs.find(c) is not None), candidates[0])
            self.add(found, "material", {"asset": dep.path, "via": "skin"})
        # Loaded by the engine with every texture of the table, but often stock: listed when found.
        for texture in refs.unreferenced:
            for candidate in (material_path(f"{folder}{texture}") for folder in folders):
                if self.add(candidate, "material", {"asset": dep.path, "via": "texture table"}, optional=True):
                    break

    def drain(self) -> None:
        while self.queue:
            self.expand(self.queue.popleft())

    def walk(self) -> DependencyGraph:
        self.roots()
        self.drain()
        if self.detail_vbsp is not None:
            # Last, so that only files the engine does not load end up compile-only.
            self.compile_only = True
            name, ref = self.detail_vbsp
            self.add(name, "detail-vbsp", ref, optional=True)
            self.drain()
        return self.graph


# Weapon script keys naming models and particle systems (HL2, L4D2, Alien Swarm, HL2 VR mods).
_WEAPON_MODEL_KEYS = frozenset({"viewmodel", "playermodel", "viewmodel_dual", "playermodel_dual", "vrmodel",
                                "vrmodel_l", "worldmodel", "addonmodel", "displaymodel"})
_WEAPON_PARTICLE_KEYS = frozenset({"muzzleflasheffect_1stperson", "muzzleflasheffect_3rdperson", "ejectbrasseffect"})


def _blocks(kv: Any) -> Iterable[Any]:
    return [child for child in kv if child.has_children()] if kv.has_children() else []


def _compiled_names(pak_names: Iterable[str]) -> list[str]:
    names = {n.split("/")[2] for n in pak_names if n.startswith("materials/maps/") and n.count("/") >= 3}
    return sorted(names)


def _prop_index(name: str) -> int:
    digits = name.rsplit("_", 1)[-1].split(".", 1)[0]
    return int(digits) if digits.isdigit() else -1


def map_dependencies(bsp: MapReader, fs: GameFS | None = None, *, map_name: str | None = None,
                     tags: Iterable[str] = ()) -> DependencyGraph:
    """Every file the map needs, found through ``fs`` (and the map's own pakfile).

    Parameters
    ----------
    bsp
        An open :class:`~sourcebsp.BspFile`.
    fs
        The mounted game; None looks only in the pakfile.
    map_name
        The name the engine knows the map by (default: the file name without ``.bsp``).
    tags
        Engine branch tags of the entity database (``"episodic"``, ``"mapbase"``, ``"tf2"``...)
        choosing which class resources count (see :class:`~sourcebsp.content.entitydb.ClassResources`);
        when empty, the mounted game's (by its folder name, :data:`~sourcebsp.content.entitydb.GAME_TAGS`).
    """
    fs = fs if fs is not None else GameFS()
    if map_name is None:
        map_name = Path(bsp.path).stem if bsp.path is not None else "map"
    # A lump that does not decode is walked as absent and reported in ``graph.damaged``.
    bsp, damaged = tolerant(bsp)
    pak = bsp.lump_or_none(LumpId.PAKFILE, "look for files in the pakfile")
    fs.attach_pakfile(pak, os.fspath(bsp.path) if bsp.path is not None else map_name)
    graph = _Walker(bsp, fs, map_name, tuple(tags) or game_tags(fs)).walk()
    graph.damaged = damaged
    return graph

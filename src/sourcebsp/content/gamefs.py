"""A game filesystem: search paths mounted as the engine mounts them.

A :class:`GameFS` is an ordered list of search paths (loose folders and VPK
archives), optionally preceded by a map's pakfile.  Look-ups are
case-insensitive with ``/`` and ``\\`` equal, like the engine's; every answer
is a :class:`Location` that says where the file was found.

:meth:`GameFS.from_gameinfo` reads ``gameinfo.txt``'s ``FileSystem/SearchPaths``
in order: every line whose key has a ``game``, ``mod`` or ``platform`` part is
mounted (write-only and ``gamebin`` keys are not content); ``|gameinfo_path|``
is the folder of ``gameinfo.txt``, ``|all_source_engine_paths|`` the folder
above it (where the engine's executable lives); a path ending in ``.vpk``
mounts ``<name>_dir.vpk``; ``<folder>/*`` mounts every sub-folder and VPK of
``<folder>`` (``custom/*``) in name order.  ``|appid_N|`` (another Steam app)
cannot be resolved without Steam; such lines are kept in
:attr:`GameFS.unresolved`.

What is *stock*: files in the VPKs ``gameinfo.txt`` names and in extra VPKs
given by the user, and in folders outside the mod's folder (the one holding
``gameinfo.txt``).  Loose files in the mod, folders and VPKs in its
``custom`` folder (addons) and extra content folders given by the user are
custom content, which :mod:`sourcebsp.content.pack` packs.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal

from .._extras import needs_extra
from ..errors import BspError
from .vpk import VpkArchive

if TYPE_CHECKING:
    from ..codecs.pakfile import Pakfile

__all__ = ["Location", "SearchPath", "GameFS", "fold", "parse_keyvalues"]

Where = Literal["pakfile", "folder", "vpk"]
_SEPARATORS = re.compile(r"[\\/]+")
_CONTENT_KEYS = frozenset({"game", "mod", "platform", "custom_mod"})


def fold(name: str) -> str:
    """A path as the engine compares it: lower case, forward slashes, no leading ``./`` or ``/``."""
    parts = [p for p in _SEPARATORS.split(name.strip().lower()) if p not in ("", ".")]
    return "/".join(parts)


@dataclass(frozen=True)
class Location:
    """Where a file was found.

    ``where`` is ``"pakfile"``, ``"folder"`` or ``"vpk"``; ``source`` the map,
    folder or VPK file; ``name`` the file's name there as stored (its case);
    ``stock`` whether it is the game's own content.
    """

    where: Where
    source: str
    name: str
    stock: bool

    def describe(self) -> str:
        if self.where == "pakfile":
            return f"pakfile:{self.name}"
        return f"{self.where}:{self.source}:{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {"where": self.where, "source": self.source, "name": self.name, "stock": self.stock}


@dataclass
class SearchPath:
    """One mounted folder or VPK archive."""

    kind: Literal["folder", "vpk"]
    path: Path
    stock: bool
    keys: tuple[str, ...] = ()  # the gameinfo keys that mounted it ("game", "mod", ...)
    _index: dict[str, str] | None = field(default=None, repr=False)
    _archive: VpkArchive | None = field(default=None, repr=False)

    def _folder_index(self) -> dict[str, str]:
        if self._index is None:
            index: dict[str, str] = {}
            root = str(self.path)
            for folder, dirs, files in os.walk(root):
                dirs.sort()
                rel = os.path.relpath(folder, root)
                for name in sorted(files):
                    stored = name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")
                    index.setdefault(stored.lower(), stored)
            self._index = index
        return self._index

    def names(self) -> dict[str, str]:
        """{folded name: stored name} of every file."""
        if self.kind == "vpk":
            if self._archive is None:
                self._archive = VpkArchive(self.path)
            return self._archive.names()
        return self._folder_index()

    def read(self, stored: str) -> bytes:
        if self.kind == "vpk":
            assert self._archive is not None  # names() was called to find ``stored``
            return self._archive.read(stored.lower())
        return (self.path / stored).read_bytes()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": str(self.path), "stock": self.stock, "keys": list(self.keys)}


def parse_keyvalues(text: str, name: str = "") -> Any:
    """Parse KeyValues text with srctools (the one place this module uses it)."""
    with needs_extra("reading game files", "deps"):
        from srctools.keyvalues import Keyvalues
    try:
        # single_line: several pairs on one line, as the engine's own parser accepts.
        return Keyvalues.parse(text, name, allow_escapes=False, single_line=True)
    except Exception as exc:  # srctools raises its own tokenizer errors; any of them means bad text
        raise BspError(f"cannot parse {name or 'keyvalues'}: {exc}") from exc


class GameFS:
    """Search paths (and optionally a pakfile), looked up in order."""

    def __init__(self, paths: Iterable[SearchPath] = (), *, mod_dir: Path | None = None) -> None:
        self.paths: list[SearchPath] = list(paths)
        self.mod_dir = mod_dir
        self.unresolved: list[str] = []  # search paths that could not be mounted, as written
        #: Whether one of them is stock game content (a ``game`` path outside the mod: its base
        #: game, not installed here), so that a file found nowhere may still be stock content.
        self.unmounted_game = False
        self._pak_names: dict[str, str] = {}
        self._pakfile: Pakfile | None = None
        self._pak_source = ""

    # ---- mounting -------------------------------------------------------------------
    @classmethod
    def from_gameinfo(cls, gameinfo: str | os.PathLike[str], *, content: Iterable[str | os.PathLike[str]] = (),
                      vpks: Iterable[str | os.PathLike[str]] = ()) -> "GameFS":
        """Mount a game from its ``gameinfo.txt`` (or the folder holding it).

        ``content`` folders are mounted first (custom content, packed by
        ``pack``); ``vpks`` last (stock).
        """
        path = Path(gameinfo)
        if path.is_dir():
            path = path / "gameinfo.txt"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise BspError(f"cannot read {path}: {exc.strerror or exc}") from exc
        mod_dir = path.parent.resolve()
        fs = cls(mod_dir=mod_dir)
        for folder in content:
            fs.add_folder(folder, stock=False)
        root = parse_keyvalues(text, str(path))
        search = None
        for info in root.find_all("GameInfo", "FileSystem", "SearchPaths"):
            search = info
        if search is None:
            raise BspError(f"{path} has no GameInfo/FileSystem/SearchPaths block")
        for line in search:
            if line.has_children():
                continue
            keys = tuple(k for k in line.real_name.lower().split("+") if k)
            if not _CONTENT_KEYS.intersection(keys):
                continue
            fs._mount_line(line.value, keys, mod_dir)
        for vpk in vpks:
            fs.add_vpk(vpk, stock=True)
        return fs

    @classmethod
    def from_folders(cls, folders: Iterable[str | os.PathLike[str]] = (),
                     vpks: Iterable[str | os.PathLike[str]] = ()) -> "GameFS":
        """Custom content folders and stock VPKs, without a ``gameinfo.txt``."""
        fs = cls()
        for folder in folders:
            fs.add_folder(folder, stock=False)
        for vpk in vpks:
            fs.add_vpk(vpk, stock=True)
        return fs

    def _mount_line(self, value: str, keys: tuple[str, ...], mod_dir: Path) -> None:
        lowered = value.lower()
        if lowered.startswith("|gameinfo_path|"):
            target = mod_dir / value[len("|gameinfo_path|"):]
        elif lowered.startswith("|all_source_engine_paths|"):
            target = mod_dir.parent / value[len("|all_source_engine_paths|"):]
        elif lowered.startswith("|"):
            self._unmounted(value, keys, stock=True)  # another Steam app's folder
            return
        else:
            target = mod_dir.parent / value
        if target.name == "*" or target.name.endswith("*"):
            folder = target.parent
            prefix = target.name[:-1].lower()
            if not folder.is_dir():
                return
            for child in sorted(folder.iterdir(), key=lambda p: p.name.lower()):
                if not child.name.lower().startswith(prefix):
                    continue
                if child.is_dir():
                    self._add(SearchPath("folder", child.resolve(), self._stock(child), keys))
                elif child.name.lower().endswith(".vpk") and not re.search(r"_\d{3}\.vpk$", child.name.lower()):
                    # An addon VPK in the mod's custom folder is not the game's own content.
                    self._add(SearchPath("vpk", child.resolve(), self._stock(child), keys))
            return
        if target.suffix.lower() == ".vpk":
            found = self._vpk_file(target)
            if found is None:
                self._unmounted(value, keys, stock=self._stock(target.parent))
            else:
                self._add(SearchPath("vpk", found, True, keys))
            return
        if target.is_dir():
            self._add(SearchPath("folder", target.resolve(), self._stock(target), keys))
            # The engine also mounts a folder's own pak01 archive.
            pak = target / "pak01_dir.vpk"
            if pak.is_file():
                self._add(SearchPath("vpk", pak.resolve(), True, keys))
        else:
            self._unmounted(value, keys, stock=self._stock(target))

    def _unmounted(self, value: str, keys: tuple[str, ...], *, stock: bool) -> None:
        """A search path that could not be mounted; one of the game's content outside the mod
        (its base game) means a file found nowhere may still be stock content."""
        self.unresolved.append(value)
        self.unmounted_game |= stock and "game" in keys

    @staticmethod
    def _vpk_file(target: Path) -> Path | None:
        """``name.vpk`` in gameinfo means ``name_dir.vpk`` (or ``name.vpk`` for a single-file archive)."""
        candidates = [target.with_name(target.stem + "_dir.vpk"), target]
        if target.stem.lower().endswith("_dir"):
            candidates.reverse()
        for candidate in candidates:
            if candidate.is_file():
                return candidate.resolve()
        return None

    def _stock(self, folder: Path) -> bool:
        if self.mod_dir is None:
            return False
        resolved = folder.resolve()
        return not (resolved == self.mod_dir or self.mod_dir in resolved.parents)

    def _add(self, path: SearchPath) -> None:
        if any(p.kind == path.kind and p.path == path.path for p in self.paths):
            return  # mounted by an earlier line (mod+mod_write and game+game_write both name ".")
        self.paths.append(path)

    def add_folder(self, folder: str | os.PathLike[str], *, stock: bool = False) -> None:
        """Mount a loose folder after the current search paths."""
        path = Path(folder)
        if not path.is_dir():
            raise BspError(f"content folder {path} does not exist")
        self._add(SearchPath("folder", path.resolve(), stock, ("content",)))

    def add_vpk(self, vpk: str | os.PathLike[str], *, stock: bool = True) -> None:
        """Mount a VPK archive after the current search paths."""
        found = self._vpk_file(Path(vpk))
        if found is None:
            raise BspError(f"VPK {vpk} does not exist")
        self._add(SearchPath("vpk", found, stock, ("content",)))

    def attach_pakfile(self, pakfile: Pakfile | None, source: str = "") -> None:
        """Look in a map's pakfile (:class:`~sourcebsp.codecs.pakfile.Pakfile`) before every search path."""
        self._pakfile = pakfile
        self._pak_source = source
        names: dict[str, str] = {}
        for name in pakfile.names() if pakfile is not None else ():
            names.setdefault(fold(name), name)
        self._pak_names = names

    def pakfile_names(self) -> list[str]:
        """The folded names of the attached pakfile's files."""
        return list(self._pak_names)

    # ---- look-ups -------------------------------------------------------------------
    def find(self, name: str, *, pakfile: bool = True) -> Location | None:
        """Where ``name`` is found first, or None."""
        key = fold(name)
        if pakfile and key in self._pak_names:
            return Location("pakfile", self._pak_source, self._pak_names[key], False)
        for path in self.paths:
            stored = path.names().get(key)
            if stored is not None:
                return Location(path.kind, str(path.path), stored, path.stock)
        return None

    def find_outside_pakfile(self, name: str) -> Location | None:
        """Where ``name`` is found in the search paths, ignoring the pakfile."""
        return self.find(name, pakfile=False)

    def names_under(self, folder: str, suffix: str = "") -> list[str]:
        """Folded names of every file directly or deeper under ``folder`` ending in ``suffix``, in any search path."""
        prefix = fold(folder) + "/"
        found = {n for n in self._pak_names if n.startswith(prefix) and n.endswith(suffix)}
        for path in self.paths:
            found.update(n for n in path.names() if n.startswith(prefix) and n.endswith(suffix))
        return sorted(found)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def read(self, location: Location) -> bytes:
        """The contents of a file found by :meth:`find`."""
        if location.where == "pakfile":
            if self._pakfile is None:  # a location from another GameFS, or found before a detach
                raise BspError(f"{location.name}: no pakfile is attached to read it from")
            return bytes(self._pakfile.read(location.name))
        for path in self.paths:
            if str(path.path) == location.source and path.kind == location.where:
                return path.read(location.name)
        raise BspError(f"{location.source} is not mounted")

    def fetch(self, name: str, *, max_size: int | None = None) -> tuple[Location, bytes] | None:
        """Where ``name`` is found first and its contents; None when it is found nowhere or holds more
        than ``max_size`` bytes (a pakfile entry is then not even decompressed)."""
        location = self.find(name)
        if location is None:
            return None
        if max_size is not None and location.where == "pakfile" and self._pakfile is not None \
                and self._pakfile.get_entry(location.name).size > max_size:
            return None
        data = self.read(location)
        return None if max_size is not None and len(data) > max_size else (location, data)

    def read_file(self, name: str, *, max_size: int | None = None) -> bytes | None:
        """The contents of ``name`` wherever it is found first, or None (see :meth:`fetch`)."""
        found = self.fetch(name, max_size=max_size)
        return None if found is None else found[1]

    def read_text(self, name: str) -> str | None:
        """The text of ``name`` wherever it is found first, or None."""
        location = self.find(name)
        if location is None:
            return None
        return self.read(location).decode("utf-8", errors="replace")

    @property
    def mounted(self) -> bool:
        """Whether any search path is mounted (without one, only the pakfile answers)."""
        return bool(self.paths)

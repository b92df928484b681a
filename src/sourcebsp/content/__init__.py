"""Game content: a game filesystem, the files a map needs, packing them, and a linter.

Parsers of other Source formats come from srctools (``pip install 'sourcebsp[deps]'``),
each behind one module: :mod:`.vpk`, :mod:`.materials`, :mod:`.vtf`, :mod:`.models`,
:mod:`.sounds`, :mod:`.particles`, :mod:`.entitydb`; studio model meshes are read
with numpy alone (:mod:`.studiomodel`).  The previews, the glTF export, ``deps``
and ``pack`` all read through these modules and :class:`GameFS`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from ..errors import BspError
from .deps import Dependency, DependencyGraph, map_dependencies
from .gamefs import GameFS, Location, fold

__all__ = ["GameFS", "Location", "Dependency", "DependencyGraph", "map_dependencies", "mount", "fold"]


def mount(game: str | os.PathLike[str] | None = None, *, gameinfo: str | os.PathLike[str] | None = None,
          content: Iterable[str | os.PathLike[str]] = (), vpks: Iterable[str | os.PathLike[str]] = ()) -> GameFS:
    """A game filesystem from a game folder (holding ``gameinfo.txt``) or a ``gameinfo.txt``,
    plus extra content folders and VPKs; with neither, only the extra ones.

    A game folder without ``gameinfo.txt`` is mounted as one custom content folder.
    """
    if game is not None and gameinfo is not None:
        raise BspError("give a game folder or a gameinfo.txt, not both")
    content = [Path(c).expanduser() for c in content]
    vpks = [Path(v).expanduser() for v in vpks]
    if gameinfo is not None:
        return GameFS.from_gameinfo(Path(gameinfo).expanduser(), content=content, vpks=vpks)
    if game is not None:
        folder = Path(game).expanduser()
        if (folder / "gameinfo.txt").is_file():
            return GameFS.from_gameinfo(folder, content=content, vpks=vpks)
        if not folder.is_dir():
            raise BspError(f"game folder {folder} does not exist")
        return GameFS.from_folders([folder, *content], vpks)
    return GameFS.from_folders(content, vpks)

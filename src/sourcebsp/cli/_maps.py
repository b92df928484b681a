"""The maps a command is given, and a batch run over them: one way for every command.

:func:`find_maps` turns what the user typed (files, folders, glob patterns) into
the list of maps; :func:`run_batch` runs a command's per-map work over that list
with a progress bar, one error line per map that fails (starting with its path)
and the command's summary table.
"""
from __future__ import annotations

import os
import re
import sys
import time
from typing import TYPE_CHECKING, Callable, Generic, Sequence, TypeVar

from ..errors import BspError
from ._common import CommandError, one_line, print_table
from ._progress import steps

if TYPE_CHECKING:
    from pathlib import Path

T = TypeVar("T")

#: The file name endings of maps, compared without regard to case.
MAP_SUFFIXES = (".bsp", ".bsp.bz2")


def is_map_name(name: str) -> bool:
    """Whether a file name ends like a map (``.bsp`` or ``.bsp.bz2``, any case)."""
    return name.lower().endswith(MAP_SUFFIXES)


def map_stem(path: str | os.PathLike[str]) -> str:
    """The file name without its map ending: ``de_dust2`` for ``de_dust2.BSP`` or ``de_dust2.bsp.bz2``."""
    name = os.path.basename(os.fspath(path))
    for suffix in sorted(MAP_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return os.path.splitext(name)[0]


class MapList:
    """The maps named on a command line, in order, each once.

    Attributes
    ----------
    names
        The maps as paths in text: files as typed, folders' maps (searched
        recursively, sorted), glob patterns' matches (sorted).  :attr:`paths`
        gives them as :class:`~pathlib.Path`.
    batch
        Whether the user asked for many maps (several names, a folder or a
        pattern) rather than one.
    relative
        For each map found in a folder, its path inside that folder: batch
        outputs keep the folder's layout, so maps of the same name in two
        mod folders do not write the same file.
    """

    # Plain classes, not dataclasses: ``dataclasses`` (with inspect) is a noticeable part of an ``info`` process.
    __slots__ = ("names", "batch", "relative")

    def __init__(self, names: list[str] | None = None, batch: bool = False,
                 relative: dict[str, str] | None = None) -> None:
        self.names = [] if names is None else names
        self.batch = batch
        self.relative = {} if relative is None else relative

    def __repr__(self) -> str:
        return f"MapList(names={self.names!r}, batch={self.batch!r}, relative={self.relative!r})"

    @property
    def paths(self) -> list[Path]:
        from pathlib import Path  # a seam: info and the other one-map reads load no pathlib

        return [Path(name) for name in self.names]

    def output(self, path: str | os.PathLike[str], folder: Path, suffix: str) -> Path:
        """Where a batch writes the output of ``path``: ``folder/<map>.suffix``, in the
        map's sub-folder when it was found in a sub-folder of a folder given."""
        inside = self.relative.get(os.fspath(path))
        name = map_stem(path) + suffix
        if inside is not None:
            parent = os.path.dirname(inside)
            if parent:
                return folder / parent / name
        return folder / name


_MAGIC = re.compile(r"[*?[]")  # what makes a name a glob pattern (glob.has_magic, without importing glob)


def find_maps(names: Sequence[str]) -> MapList:
    """The maps named by ``names``: the one listing of every command that takes maps.

    Each name is, in this order:

    * an existing file: taken literally, whatever its characters (a folder named
      ``[THS] Maps`` holds no pattern);
    * an existing folder: every map in it and in its sub-folders (``.bsp`` and
      ``.bsp.bz2``, any case), sorted;
    * a glob pattern (``*``, ``?``, ``[...]``, ``**``): the files it matches, sorted;
    * anything else: taken as a file name, so opening it says what is wrong.

    Raises
    ------
    CommandError
        A folder holds no map, or a pattern matches no file.
    """
    found = MapList(batch=len(names) > 1)
    for name in names:
        if os.path.isdir(name):
            inside = _folder_maps(name)
            if not inside:
                raise CommandError(f"no .bsp files in {name}")
            for path in inside:
                found.relative.setdefault(path, os.path.relpath(path, name))
            found.names += inside
            found.batch = True
        elif os.path.exists(name) or not _MAGIC.search(name):
            found.names.append(name)
        else:
            import glob  # a seam, as pathlib: only a pattern loads it

            matches = sorted((p for p in glob.glob(name, recursive=True) if os.path.isfile(p)), key=_parts)
            if not matches:
                raise CommandError(f"no .bsp file matches {name}")
            found.names += matches
            found.batch = True
    once: dict[str, str] = {}  # each map once, however it was named ("a/x.bsp", "./a/x.bsp")
    for name in found.names:
        once.setdefault(os.path.normpath(name), name)
    found.names = list(once.values())
    return found


def _parts(path: str) -> list[str]:
    """A sort key that orders paths as pathlib does: part by part."""
    return os.path.normpath(path).split(os.sep)


def _folder_maps(folder: str) -> list[str]:
    paths = []
    for root, dirs, files in os.walk(folder):
        paths += [os.path.join(root, name) for name in files if is_map_name(name)]
    return sorted(paths, key=_parts)


class MapResult(Generic[T]):
    """What one map of a batch gave: the work's value, or the one-line error."""

    def __init__(self, path: Path, value: T | None = None, error: str | None = None, seconds: float = 0.0) -> None:
        self.path = path
        self.value = value
        self.error = error
        self.seconds = seconds

    def __repr__(self) -> str:
        return f"MapResult(path={self.path!r}, value={self.value!r}, error={self.error!r}, seconds={self.seconds!r})"


class Batch(Generic[T]):
    """The results of :func:`run_batch`, in the order of the maps; ``interrupted`` when
    Ctrl-C stopped it (the maps not reached are left out)."""

    def __init__(self, results: list[MapResult[T]], total: int, interrupted: bool = False) -> None:
        self.results = results
        self.total = total
        self.interrupted = interrupted

    @property
    def failed(self) -> list[MapResult[T]]:
        return [r for r in self.results if r.error is not None]


#: The failures of one map that end that map only, not the batch.
MAP_ERRORS: tuple[type[BaseException], ...] = (BspError, CommandError, OSError, ValueError, ImportError)


def map_error(path: str | os.PathLike[str], message: object) -> str:
    """A per-map error line as every batch prints it: the map's path first."""
    return f"{os.fspath(path)}: {one_line(message)}"


def run_batch(title: str, maps: Sequence[Path], work: Callable[[Path], T], *,
              errors: tuple[type[BaseException], ...] = MAP_ERRORS) -> Batch[T]:
    """Run ``work`` on each map in turn, with a progress bar titled ``title``.

    A map whose work raises one of ``errors`` gets one line on stderr
    (``sourcebsp: error: PATH: message``) and the others go on.  Ctrl-C stops
    the batch: the maps done so far are returned with ``interrupted`` set, so
    the command can still write what it reports, then end with exit code 130.
    """
    batch: Batch[T] = Batch([], len(maps))
    with steps(title, [str(p) for p in maps]) as progress:
        for path in maps:
            start = time.perf_counter()
            try:
                value = work(path)
            except KeyboardInterrupt:
                batch.interrupted = True
                break
            except errors as exc:
                result: MapResult[T] = MapResult(path, error=one_line(_os_text(exc, path)))
                print(f"sourcebsp: error: {map_error(path, result.error)}", file=sys.stderr)
            else:
                result = MapResult(path, value)
            result.seconds = time.perf_counter() - start
            batch.results.append(result)
            progress(str(path))
    return batch


def _os_text(exc: BaseException, path: Path) -> str:
    """An OSError as its reason and file name ("No such file or directory: x.vmf"), the name
    left out when it is the map's (the line starts with it); others as they are."""
    if isinstance(exc, OSError) and exc.strerror:
        named = exc.filename is not None and os.fspath(exc.filename) != os.fspath(path)
        return f"{exc.strerror}: {exc.filename}" if named else exc.strerror
    return str(exc)


def print_batch_table(title: str, batch: Batch[T], columns: Sequence[str],
                      row: Callable[[MapResult[T]], Sequence[object]], right: Sequence[str] = ()) -> None:
    """The summary table of a batch: one row per map (the command's ``row``), the title
    a summary line (on stderr when piped)."""
    print_table(title, columns, [row(r) for r in batch.results], right=right, summary=True)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 map``, ``2 maps``: a count with its noun in the right number."""
    return f"{count} {word if count == 1 else many or word + 's'}"

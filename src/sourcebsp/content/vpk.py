"""VPK archives (v1 and v2), read through srctools' ``srctools.vpk``.

The one module that touches the VPK library: swap it here.  srctools was
chosen over the ``vpk`` package because the other Source formats (VMT, MDL,
soundscripts, particles, FGD) come from srctools too, so the ``deps`` extra is
one well-kept, typed dependency instead of two; both read v1 and v2.
"""
from __future__ import annotations

import os
from pathlib import Path

from .._extras import needs_extra
from ..errors import BspError

__all__ = ["VpkArchive", "write_vpk"]


class VpkArchive:
    """The file index of one ``*_dir.vpk`` (or single-file ``.vpk``), loaded on first use.

    Names are kept in lower case with forward slashes, as the engine looks them up.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._vpk: object | None = None
        self._names: dict[str, str] | None = None  # folded name -> name as stored

    def _open(self) -> dict[str, str]:
        if self._names is None:
            with needs_extra("reading VPK archives", "deps"):
                from srctools.vpk import VPK
            try:
                vpk = VPK(self.path)
            except (OSError, ValueError) as exc:
                raise BspError(f"cannot read the VPK {self.path}: {exc}") from exc
            self._vpk = vpk
            self._names = {name.replace("\\", "/").lower(): name for name in vpk.filenames()}
        return self._names

    @property
    def version(self) -> int:
        self._open()
        return int(getattr(self._vpk, "version", 0))

    def names(self) -> dict[str, str]:
        """{lower-case name: name as stored} of every file."""
        return self._open()

    def stored_name(self, folded: str) -> str | None:
        """The stored name of the file whose folded name is ``folded``, or None."""
        return self._open().get(folded)

    def read(self, folded: str) -> bytes:
        """The contents of the file whose folded name is ``folded``."""
        name = self._open()[folded]
        try:
            return bytes(self._vpk[name].read())  # type: ignore[index]
        except (OSError, ValueError) as exc:
            raise BspError(f"cannot read {name} from the VPK {self.path}: {exc}") from exc


def write_vpk(path: str | os.PathLike[str], files: dict[str, bytes]) -> Path:
    """Write a single-file VPK (version 1, everything in the directory file) holding ``files``."""
    from srctools.vpk import VPK, OpenModes  # an optional extra (deps): imported where used

    target = Path(path)
    with VPK(target, mode=OpenModes.WRITE) as vpk:
        for name, data in files.items():
            vpk.add_file(name, data)
    return target

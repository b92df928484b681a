"""The one exception hierarchy of sourcebsp.

Every error raised for bad input is a :class:`BspError`; its message names the
lump (when there is one) and the absolute file offset where the problem lies,
and the same facts are kept as attributes for programs.
"""
from __future__ import annotations

__all__ = [
    "BspError",
    "BspFormatError",
    "TruncatedError",
    "LumpSizeError",
    "CompressionError",
    "UnsupportedError",
    "NotSourceMapError",
    "LumpNotInBranchError",
    "ClosedMapError",
    "LimitExceededError",
    "MissingExtraError",
]


class BspError(Exception):
    """Base class of every sourcebsp error.

    Attributes
    ----------
    lump : str or None
        Name of the lump concerned, e.g. ``"PLANES"``.
    offset : int or None
        Absolute byte offset in the file (or buffer) where the problem lies.
    needed, available : int or None
        Sizes involved, when the problem is one of size.
    """

    def __init__(
        self,
        message: str,
        *,
        lump: str | None = None,
        offset: int | None = None,
        needed: int | None = None,
        available: int | None = None,
    ) -> None:
        self.reason = message
        self.lump = lump
        self.offset = offset
        self.needed = needed
        self.available = available
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = []
        if self.lump is not None:
            where.append(f"lump {self.lump}")
        if self.offset is not None:
            where.append(f"file offset {self.offset} (0x{self.offset:x})")
        prefix = ", ".join(where)
        return f"{prefix}: {self.reason}" if prefix else self.reason


class BspFormatError(BspError, ValueError):
    """The input is malformed: it breaks a rule of the format."""


class TruncatedError(BspFormatError, EOFError):
    """The data ends before a structure it declares."""


class LumpSizeError(BspFormatError):
    """A lump's length is not a whole number of its records."""


class CompressionError(BspFormatError):
    """LZMA data that is corrupt, or that does not expand to its stated size."""


class UnsupportedError(BspError):
    """A valid-looking file that this version of sourcebsp cannot read."""


class ClosedMapError(BspError, ValueError):
    """The map was closed: its lumps can no longer be read or saved.

    A :class:`ValueError`, like I/O on a closed file.
    """


class LumpNotInBranchError(UnsupportedError):
    """The map's engine branch has no such lump: ``bsp.faces`` of a Titanfall map, whose
    meshes take the place of faces.  Every container raises it for a member of
    :class:`~sourcebsp.protocols.MapReader` its branch cannot have."""


class NotSourceMapError(UnsupportedError):
    """The file is not a Source engine map: another BSP format (GoldSrc, Quake, rBSP...) or
    another kind of file, named by the message.  ``offset`` is 0 (the file's first bytes
    tell); the message leaves it out, since it is about the whole file."""

    def _compose(self) -> str:
        return self.reason


class LimitExceededError(BspError):
    """Reading the map would take more than a resource limit allows.

    Raised before the memory is asked for.  ``limit`` names the limit (an
    attribute of :class:`sourcebsp.resources.Budget` or of
    :class:`sourcebsp.codecs.pakfile.PakLimits`) and the message says how to
    raise it; ``needed`` and ``available`` are the sizes compared.  ``limit``
    is ``"memory"`` when the system itself refused the memory (a process
    address-space limit below what the map asks for).
    """

    def __init__(self, message: str, *, limit: str, **context: object) -> None:
        self.limit = limit
        super().__init__(message, **context)  # type: ignore[arg-type]


class MissingExtraError(BspError, ImportError):
    """A feature needs an optional dependency that is not installed.

    The message says what needs which package and the extra that installs it
    (``pip install 'sourcebsp[deps]'``); ``extra`` and ``package`` keep them.
    An :class:`ImportError` too, for code that catches that.
    """

    def __init__(self, what: str, package: str, extra: str) -> None:
        self.extra = extra
        self.package = package
        super().__init__(f"{what} needs {package}: pip install 'sourcebsp[{extra}]'")

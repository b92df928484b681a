"""What every lump codec shares: the context it works in, raw lumps, record layouts.

No numpy here, so that opening a map and reading its entities does not import it
(its import would be most of such a process).  Tables of fixed-size records are
:mod:`sourcebsp.codecs.arrays`.
"""
from __future__ import annotations

import functools
import struct
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Protocol

from ..header import Endian

if TYPE_CHECKING:
    import numpy as np

# lump -> lump version (None: any other) -> numpy dtype or codec
Layouts = Mapping[Any, Mapping[Any, Any]]

__all__ = ["Endian", "Fields", "Layouts", "LumpContext", "Codec", "RawLump", "fields_dtype", "fields_struct",
           "fields_unpack", "record_struct", "vec3"]


class LumpContext(NamedTuple):
    """Where a lump lives: used for error messages and for offsets inside lumps.

    A named tuple: one is made for every lump decoded, and as a frozen
    dataclass it cost five times as much to make (and to define, at import).
    """

    lump: int
    name: str
    version: int  # lump_t.version
    bsp_version: int
    endian: Endian
    file_offset: int  # absolute offset of the lump's bytes in the file


class Codec(Protocol):
    """Turns a lump's (uncompressed) bytes into a Python value and back.

    Change tracking needs nothing from a codec: when a map is saved, every
    loaded value is encoded again and written only if the bytes differ from
    the file's, so an in-place edit of any decoded object is kept.  Two
    optional declarations refine that:

    ``mutable = False``
        The codec's values cannot change in place (the container then skips
        encoding them unless they were set with ``set_lump``).  Read-only
        numpy views of the file are recognised without it.  Missing or
        ``True``: values are compared.
    ``relocated(data, ctx, file_offset) -> bytes | None``
        For a lump whose bytes may hold absolute file offsets: ``data`` (as
        at ``ctx.file_offset``) as it must be at ``file_offset``, where the
        lump lands when the lumps are laid out anew; None when its bytes do
        not depend on where it is.
    ``decompresses = False``
        Decoding never decompresses data inside the lump (game lumps do), so
        the container need not open the file's decompression budget for it.
    """

    def decode(self, data: memoryview, ctx: LumpContext) -> Any: ...

    def encode(self, value: Any, ctx: LumpContext) -> bytes: ...

    def count(self, value: Any) -> int | None: ...


class RawLump:
    """A lump sourcebsp does not decode: its bytes, kept as they are, and why.

    A plain class rather than a dataclass, as :class:`~sourcebsp.header.Header`.
    """

    __slots__ = ("data", "reason")

    def __init__(self, data: bytes, reason: str = "no codec for this lump") -> None:
        self.data = data
        self.reason = reason

    def __len__(self) -> int:
        return len(self.data)

    def __eq__(self, other: object) -> bool:
        return type(other) is RawLump and (self.data, self.reason) == (other.data, other.reason)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"RawLump(data={self.data!r}, reason={self.reason!r})"


_STRUCT_CODES = {("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q", ("u", 1): "B", ("u", 2): "H",
                 ("u", 4): "I", ("u", 8): "Q", ("f", 4): "f", ("f", 8): "d"}


@functools.lru_cache(maxsize=None)
def record_struct(dtype: np.dtype, endian: Endian) -> struct.Struct:
    """A record of scalar fields (``dtype``, its one declaration) as a :class:`struct.Struct`
    in ``endian`` byte order: for records read or written one at a time (directories, counts,
    headers in a walk), where a call to numpy costs more than the work, ten times more when
    the caches are cold."""
    layout: Mapping[str, Any] = dtype.fields or {}
    fields = [layout[name][0] for name in dtype.names] if dtype.names else [dtype]
    try:
        codes = [f"{f.itemsize}s" if f.kind == "S" else _STRUCT_CODES[(f.kind, f.itemsize)] for f in fields]
    except KeyError:
        raise ValueError(f"{dtype} is not a record of scalar fields") from None
    record = struct.Struct(endian + "".join(codes))
    offsets = [layout[name][1] for name in dtype.names] if dtype.names else [0]
    if record.size != dtype.itemsize or offsets != sorted(offsets):
        raise ValueError(f"{dtype} has padding or fields out of order: not one struct format")
    return record


# A packed record of scalar fields as (field, struct code) pairs: the one declaration of the
# structures read a record at a time without numpy (the zip and game lump directories,
# the lump file header).
Fields = tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=None)
def fields_struct(fields: Fields, endian: Endian = "<") -> struct.Struct:
    """``fields`` in ``endian`` byte order, as a :class:`struct.Struct`."""
    return struct.Struct(endian + "".join(code for _, code in fields))


def fields_unpack(fields: Fields, buffer: bytes | memoryview, offset: int = 0, endian: Endian = "<") -> dict[str, Any]:
    """The record at ``offset`` in ``buffer``, by field name."""
    values = fields_struct(fields, endian).unpack_from(buffer, offset)
    return {name: value for (name, _), value in zip(fields, values)}


def fields_dtype(fields: Fields, endian: Endian = "<") -> np.dtype:
    """``fields`` as a numpy dtype, for tables of such records (imports numpy)."""
    import numpy as np

    return np.dtype([(name, endian + code) for name, code in fields])


def vec3(name: str) -> tuple[str, str, tuple[int]]:
    """A ``Vector`` field (three floats)."""
    return (name, "<f4", (3,))

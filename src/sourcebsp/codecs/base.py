"""What every lump codec shares: the context it works in, raw lumps, record layouts.

No numpy here, so that opening a map and reading its entities does not import it
(its import would be most of such a process).  A fixed-size struct is declared once,
as a :class:`Record` (its fields in numpy's spelling): its size, and so the element
count of a table of them, come without numpy; its numpy dtype is made when a lump of
them is first decoded (:mod:`sourcebsp.codecs.arrays`).
"""
from __future__ import annotations

import functools
import importlib
import struct
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Protocol, Sequence, Union

from .._loading import load_quietly
from ..header import Endian

if TYPE_CHECKING:
    import numpy as np

# lump -> lump version (None: any other) -> Record (a table of them), Deferred, codec or numpy dtype
Layouts = Mapping[Any, Mapping[Any, Any]]

__all__ = ["COLOR_RGB_EXP32", "Deferred", "Endian", "Field", "Fields", "Layouts", "LumpContext", "Codec", "RawLump",
           "Record", "fields_dtype", "fields_struct", "fields_unpack", "record_struct", "vec3"]


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
    import numpy as np  # a seam: the records' declarations load no numpy (reading entities needs none)

    return np.dtype([(name, endian + code) for name, code in fields])


def vec3(name: str) -> tuple[str, str, tuple[int]]:
    """A ``Vector`` field (three floats)."""
    return (name, "<f4", (3,))


Shape = Union[int, tuple[int, ...]]
# A field as numpy spells it: (name, type) or (name, type, shape); the type a scalar code
# with its byte order ("<u2", "u1", "S8") or a Record.
Field = tuple[Any, ...]
_SCALAR_SIZES: dict[str, int] = {}  # the records of a table share a few codes: each read once


def _scalar_size(code: str) -> int:
    size = _SCALAR_SIZES.get(code)
    if size is None:
        body = code[1:] if code[:1] in "<>|=" else code
        if len(body) < 2 or body[0] not in "iufbSV" or not body[1:].isdigit():
            raise ValueError(f"{code!r} is not a scalar of a kind and byte count (such as '<u2', 'u1', 'S8')")
        size = _SCALAR_SIZES[code] = int(body[1:])
    return size


def _type_size(kind: "str | Record", shape: Shape = 1) -> int:
    size = kind.size if isinstance(kind, Record) else _scalar_size(kind)
    for count in (shape,) if isinstance(shape, int) else shape:  # (math would be one more import)
        size *= count
    return size


def _numpy_form(kind: "str | Record") -> Any:
    return kind.dtype if isinstance(kind, Record) else kind


class Record:
    """A fixed-size struct, declared once: its fields as numpy spells them, without numpy.

    ``Record([("planenum", "<u2"), ("styles", "u1", (4,)), vec3("origin")])``, a scalar
    (``Record("<i4")``) or an array of one (``Record(("<f4", 3))``), packed as the file
    holds it.  :attr:`size` (the ``sizeof``, hence the element count of a table of them)
    is counted without numpy; :attr:`dtype` is made on first use.  A Record goes wherever
    numpy takes a dtype (``np.zeros(n, PLANE)``, ``np.frombuffer(data, PLANE)``): numpy
    reads its ``dtype`` attribute.
    """

    __slots__ = ("spec", "_size", "_dtype")

    def __init__(self, spec: "str | tuple[str | Record, Shape] | Sequence[Field]") -> None:  # see Field
        self.spec: Any = tuple(spec) if isinstance(spec, list) else spec
        self._size: int | None = None  # counted when first asked: a process reads few of its records
        self._dtype: np.dtype | None = None

    @property
    def size(self) -> int:
        """The record's ``sizeof``, in bytes (counted without numpy)."""
        if self._size is None:
            if isinstance(self.spec, str):
                self._size = _scalar_size(self.spec)
            elif not isinstance(self.spec[0], tuple):  # (type, shape)
                self._size = _type_size(*self.spec)
            else:
                self._size = sum(_type_size(field[1], field[2]) if len(field) > 2 else _type_size(field[1])
                                 for field in self.spec)
        return self._size

    @property
    def fields(self) -> tuple[Field, ...]:
        """The fields of a struct, in order (empty for a scalar or an array of one)."""
        return self.spec if isinstance(self.spec, tuple) and isinstance(self.spec[0], tuple) else ()

    @property
    def names(self) -> tuple[str, ...]:
        """The field names, in order."""
        return tuple(field[0] for field in self.fields)

    @property
    def dtype(self) -> "np.dtype":
        """The record as a numpy dtype (imports numpy; made once)."""
        if self._dtype is None:
            import numpy as np  # the one place a record meets numpy: when a table of them is decoded

            if self.fields:
                form: Any = [(name, _numpy_form(kind), *shape) for name, kind, *shape in self.fields]
            elif isinstance(self.spec, tuple):
                form = (_numpy_form(self.spec[0]), self.spec[1])
            else:
                form = self.spec
            self._dtype = np.dtype(form)
        return self._dtype

    def struct(self, endian: Endian = "<") -> struct.Struct:
        """A record of scalar fields (and arrays of them) as a :class:`struct.Struct` in ``endian``
        byte order, for records read one at a time (headers in a walk), without numpy."""
        return _record_struct(self, endian)

    def count_bytes(self, data: memoryview, endian: Endian) -> int | None:
        """How many records ``data`` holds; None when its length is not a whole number of them."""
        return None if len(data) % self.size else len(data) // self.size

    def __repr__(self) -> str:
        return f"Record({self.size} bytes: {', '.join(self.names) or self.spec})"


@functools.lru_cache(maxsize=None)
def _record_struct(record: Record, endian: Endian) -> struct.Struct:
    fields = record.fields or (("", *record.spec) if isinstance(record.spec, tuple) else ("", record.spec),)
    codes = []
    for _, kind, *shape in fields:
        if isinstance(kind, Record):
            raise ValueError(f"{record} nests a record: not one struct format")
        size, count = _scalar_size(kind), _type_size("u1", *shape)
        letter = kind.lstrip("<>|=")[0]
        code = f"{size * count}s" if letter == "S" else _STRUCT_CODES[(letter, size)]
        codes.append(code if letter == "S" or count == 1 else f"{count}{code}")
    return struct.Struct(endian + "".join(codes))


class Deferred:
    """A codec that needs numpy, named in a lump table by where it lives: imported when a
    lump of its kind is first decoded, so that the tables (and the counts of ``info``) are
    built without it.  ``count_bytes`` gives the element count its codec would decode,
    from the lump's bytes and without numpy; None where the codec must decide (or raise).

    A plain class rather than a named tuple, as :class:`RawLump`: defining one costs a
    process start a millisecond.
    """

    __slots__ = ("module", "name", "count_bytes")

    def __init__(self, module: str, name: str, count_bytes: Callable[[memoryview, Endian], "int | None"]) -> None:
        self.module = module  # under sourcebsp.codecs
        self.name = name
        self.count_bytes = count_bytes

    def codec(self) -> Codec:
        """The codec (its module, and numpy, imported with the collector off the first time)."""
        module = load_quietly(lambda: importlib.import_module(f"{__package__}.{self.module}"))
        codec: Codec = getattr(module, self.name)
        return codec

    def __repr__(self) -> str:
        return f"Deferred({self.module}.{self.name})"


# ColorRGBExp32: byte r, g, b; signed char exponent.  Linear value = c * 2**exponent / 255.
COLOR_RGB_EXP32 = Record([("r", "u1"), ("g", "u1"), ("b", "u1"), ("exponent", "i1")])

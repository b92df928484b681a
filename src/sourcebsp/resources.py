"""The resource rule: how much memory reading a map may take, and the checks that keep it.

Maps come from strangers, so what a map says about sizes is checked before
anything is sized from it.  The rule every library operation keeps:

    **peak memory <= memory_factor x input size + allowance**

where the *input size* is the file size plus the uncompressed size of its
LZMA-compressed lumps, ``memory_factor`` is 64 and ``allowance`` 256 MiB by
default (a fixed amount per operation, for small maps and for numpy's own
overhead).  Time grows near-linearly with the input.  Decompression has its
own budget (:mod:`sourcebsp.compression`), and so has the pakfile
(:class:`sourcebsp.codecs.pakfile.PakLimits`).

How it is kept:

* every count, index and offset is checked against the table it refers to
  before an array is sized from it (:func:`expand_ranges` does it for the
  ``first, count`` pairs the format is full of);
* every expansion that can outgrow its input (polygon and brush sides that
  several records share, lightmap atlases, visibility matrices) asks
  :func:`check_memory` first, which raises
  :class:`~sourcebsp.errors.LimitExceededError` instead of allocating.

A caller who trusts a map, or runs with less memory, changes the budget for
a block of code::

    >>> import sourcebsp.resources as resources
    >>> with resources.budget(memory_factor=256, allowance=2 << 30):   # doctest: +SKIP
    ...     mesh = build_mesh(bsp)
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple, Protocol

import numpy as np

from .compression import MAX_UNCOMPRESSED_SIZE
from .errors import BspFormatError, LimitExceededError
from .numeric import floats, range_rows, sorted_unique  # noqa: F401 - floats, sorted_unique: their earlier home

if TYPE_CHECKING:
    from .header import LumpEntry
    from .lump_ids import LumpId

__all__ = ["Budget", "budget", "current_budget", "input_size", "memory_limit", "check_memory",
           "expand_ranges", "check_indices", "SizedMap"]


class SizedMap(Protocol):
    """What the checks read of a map: its sizes and where its lumps are.

    The part of :class:`~sourcebsp.protocols.MapReader` below the codecs
    (which call these checks, and which the full protocol names).
    """

    @property
    def file_size(self) -> int: ...

    def iter_lumps(self) -> "Iterator[tuple[int, LumpEntry]]": ...

    def entry(self, key: "LumpId | int | str") -> "LumpEntry": ...

    def lump_name(self, key: "LumpId | int | str") -> str: ...

_MIB = 1 << 20


class Budget(NamedTuple):
    """Memory one library operation may use on one map.

    Attributes
    ----------
    memory_factor : float
        Bytes allowed per byte of input (file size plus uncompressed sizes of
        compressed lumps).
    allowance : int
        Bytes allowed on top, whatever the input size.
    """

    memory_factor: float = 64.0
    allowance: int = 256 * _MIB

    def limit(self, size: int) -> int:
        """The bytes allowed for an input of ``size`` bytes."""
        return int(self.memory_factor * size) + int(self.allowance)


_current: contextvars.ContextVar[Budget] = contextvars.ContextVar("sourcebsp_budget", default=Budget())


def current_budget() -> Budget:
    """The budget in force (the defaults unless :func:`budget` changed it)."""
    return _current.get()


@contextlib.contextmanager
def budget(**changes: Any) -> Iterator[Budget]:
    """Change the budget for the ``with`` block (this thread / task only).

    Keyword arguments are :class:`Budget` fields (``memory_factor``,
    ``allowance``).
    """
    token = _current.set(_current.get()._replace(**changes))
    try:
        yield _current.get()
    finally:
        _current.reset(token)


def input_size(bsp: SizedMap | int) -> int:
    """File size plus the stated uncompressed size of each compressed lump.

    ``bsp`` may also be a number: the size of an input that is not a map
    (a lump's value used on its own).
    """
    if isinstance(bsp, int):
        return bsp
    size = int(getattr(bsp, "file_size", 0))
    for _, entry in bsp.iter_lumps():
        if entry.compressed:
            size += min(int(entry.fourcc), MAX_UNCOMPRESSED_SIZE)
    return size


def memory_limit(bsp: SizedMap | int) -> int:
    """Bytes one operation on ``bsp`` may use under the current budget."""
    return current_budget().limit(input_size(bsp))


def check_memory(bsp: SizedMap | int, needed: int, what: str, *, lump: str | None = None,
                 offset: int | None = None) -> None:
    """Raise :class:`LimitExceededError` when ``needed`` bytes are over the budget for ``bsp``.

    ``bsp`` is the map (a :class:`~sourcebsp.BspFile`) or the size of the input in bytes.

    ``what`` says what would be built ("the lightmap atlas of 9000 x 9000 luxels").
    """
    allowed = memory_limit(bsp)
    if needed > allowed:
        b = current_budget()
        raise LimitExceededError(
            f"{what} would need about {needed / _MIB:.0f} MiB, over the memory budget of "
            f"{allowed / _MIB:.0f} MiB ({b.memory_factor:g} x the {input_size(bsp)}-byte input + "
            f"{b.allowance / _MIB:.0f} MiB); to allow more, run it inside "
            f"sourcebsp.resources.budget(memory_factor=..., allowance=...)",
            limit="memory_factor", lump=lump, offset=offset, needed=int(needed), available=allowed,
        )


def _record_offset(bsp: SizedMap, lump: "LumpId | int | str", record: int, itemsize: int) -> int | None:
    try:
        return int(bsp.entry(lump).fileofs) + record * itemsize
    except (AttributeError, KeyError, TypeError):
        return None


def _lump_name(bsp: SizedMap, lump: "LumpId | int | str") -> str:
    try:
        return str(bsp.lump_name(lump))
    except (AttributeError, KeyError, TypeError):
        return str(getattr(lump, "name", lump))


def check_indices(index: np.ndarray, size: int, *, bsp: SizedMap, lump: "LumpId | int | str", field: str, target: str,
                  records: np.ndarray | None = None, itemsize: int = 0) -> None:
    """Every ``index`` is in ``0 .. size - 1``, or a :class:`BspFormatError` naming the first record that is not.

    ``lump`` holds the records whose ``field`` is ``index``; ``records`` gives
    their record numbers in that lump (default ``0 .. len(index) - 1``) and
    ``itemsize`` their size, for the file offset of the message.
    """
    index = np.asarray(index)
    if not len(index):
        return
    bad = (index < 0) | (index >= size)
    if not bad.any():
        return
    first = int(np.argmax(bad))
    record = int(records[first]) if records is not None else first
    raise BspFormatError(
        f"record {record}: {field} {int(index[first])} is outside the {size} {target}",
        lump=_lump_name(bsp, lump), offset=_record_offset(bsp, lump, record, itemsize),
    )


def expand_ranges(first: np.ndarray, count: np.ndarray, size: int, *, bsp: SizedMap, lump: "LumpId | int | str",
                  fields: tuple[str, str], target: str, bytes_per_item: int = 64,
                  records: np.ndarray | None = None, itemsize: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``first, count`` ranges into a table of ``size`` rows, then expand them.

    Each range must satisfy ``0 <= count`` and ``0 <= first`` and
    ``first + count <= size`` (checked record by record, before anything
    is allocated), and the total of ``count`` -- ranges may overlap, so it
    can exceed ``size`` -- must fit the memory budget at ``bytes_per_item``
    bytes per expanded item (the caller's estimate of what it builds per item).

    Returns
    -------
    owner, index : ndarray of int64
        For every expanded item, the position of its range in ``first`` and
        its row in the table.
    """
    first = np.asarray(first).astype(np.int64)
    count = np.asarray(count).astype(np.int64)
    bad = (count < 0) | (first < 0) | (first + count > size)
    if bad.any():
        i = int(np.argmax(bad))
        record = int(records[i]) if records is not None else i
        raise BspFormatError(
            f"record {record}: {fields[0]} {int(first[i])} and {fields[1]} {int(count[i])} "
            f"do not lie within the {size} {target}",
            lump=_lump_name(bsp, lump), offset=_record_offset(bsp, lump, record, itemsize),
        )
    total = int(count.sum())
    if total:
        # Ranges may share rows, so the total is not bounded by the table's size.
        check_memory(bsp, total * bytes_per_item, f"expanding {total} {target} rows referred to by "
                     f"{len(count)} records", lump=_lump_name(bsp, lump),
                     offset=_record_offset(bsp, lump, 0, itemsize))
    return range_rows(first, count)


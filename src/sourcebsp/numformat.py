"""Numbers as text, exactly as the ``%`` operator prints them, for many numbers at once.

:func:`format_lines` is ``(template * n) % tuple(values.ravel())`` byte for
byte (``%.Nf`` and ``%d`` fields), without a Python call per number: the
OBJ and VMF writers print millions of coordinates with it.
:func:`format_line_blocks` cuts the same text into blocks of lines, and
:func:`format_many` writes numbers as Hammer does (``16``, ``0.25``, never ``-0``).
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Iterator, TypeVar

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

_Number = TypeVar("_Number", float, np.ndarray)

__all__ = ["format_lines", "format_line_blocks", "format_many"]

# Fixed-point text without a Python call per number.  Each number gets a
# field of a uint8 character matrix, one row per output line; padding is 0
# and the non-zero bytes of the matrix, in order, are the text, so a sign,
# a leading zero or a stripped trailing zero is placed or dropped without
# moving anything.  The digits are those of round(|x| * 10**d) (half to
# even), which is what "%.{d}f" prints.  The float64 product t of |x| and
# 10**d is rounded, but rounding is monotonic and every half below 2**52 is
# a float, so rint(t) can only differ from the exact product's rounding when
# t is exactly a half; there the product's exact error (Dekker's
# two-product) decides.  What a field cannot hold (NaN, infinities, 16 or
# more digits) goes to the % operator.

_SPEC = re.compile(r"%(?:\.(\d+)f|d)")
_CHUNK_NUMBERS = 1 << 16  # bounds the temporaries (a few MB)
_SMALL_INPUT = 1024  # numbers; below this the % operator's lower fixed cost wins
_MAX_SCALED = 2.0 ** 52  # below this a float64 holds every integer and every half
_SPLITTER = 2.0 ** 27 + 1  # Veltkamp: splits a float64 into two halves of 26 bits
_ZERO, _POINT, _MINUS = ord("0"), ord("."), ord("-")


def _halves(x: _Number) -> tuple[_Number, _Number]:
    """``x == high + low`` with both halves short enough to multiply exactly."""
    c = x * _SPLITTER
    high = c - (c - x)
    return high, x - high


def _round_exactly(magnitude: np.ndarray, scale: float, product: np.ndarray) -> np.ndarray:
    """round(magnitude * scale), half to even, of the exact product; ``product`` is its float64."""
    mh, ml = _halves(magnitude)
    sh, sl = _halves(scale)
    error = ((mh * sh - product) + mh * sl + ml * sh) + ml * sl  # product + error is exact
    below = np.floor(product)
    beyond_half = (product - (below + 0.5)) + error
    up = (beyond_half > 0) | ((beyond_half == 0) & (np.fmod(below, 2) == 1))
    rounded: np.ndarray = below + up
    return rounded


def _scaled(values: np.ndarray, decimals: int | None) -> tuple[np.ndarray, np.ndarray] | None:
    """``(digits, negative)``: round(|x| * 10**decimals) as uint64 and whether '-' is printed.

    ``decimals=None`` is ``%d``.  None when a number does not fit a field.
    """
    if values.dtype.kind in "iub":
        if len(values) and not -_MAX_SCALED < int(values.min()) <= int(values.max()) < _MAX_SCALED:
            return None
        ints = values.astype(np.int64)
        return np.abs(ints).astype(np.uint64), ints < 0
    x = values.astype(np.float64)
    magnitude = np.abs(x)
    if decimals is None:  # %d of a float truncates: -0.5 prints as 0
        whole = np.trunc(magnitude)
        if not np.all(whole < _MAX_SCALED):  # also False for NaN
            return None
        return whole.astype(np.uint64), (x < 0) & (whole > 0)
    if decimals > 22:  # 10.0**decimals is no longer exact
        return None
    scale = 10.0 ** decimals
    with np.errstate(over="ignore", invalid="ignore"):  # NaN and infinities go to the % operator
        product = magnitude * scale
    if len(product) and not product.max() < _MAX_SCALED:  # also False for NaN
        return None
    rounded = np.rint(product)
    tie = np.flatnonzero(np.abs(product - rounded) == 0.5)
    if len(tie):
        rounded[tie] = _round_exactly(magnitude[tie], scale, product[tie])
    return rounded.astype(np.uint64), np.signbit(x)


def _write_fields(out: np.ndarray, digits: np.ndarray, negative: np.ndarray, decimals: int,
                  hammer: bool) -> None:
    """Write the text of each number into its field ``out[..., :]`` (zeros), right-aligned.

    ``out`` has one field of ``1 + whole digits + point + decimals`` bytes per
    number.  With ``hammer``, trailing zeros of the fraction and a bare point
    are left out and a number printed as zero has no sign.
    """
    width = out.shape[-1]
    whole_count = width - 1 - (decimals > 0) - decimals
    if hammer:
        negative = negative & (digits != 0)
    out[..., 0] = negative * _MINUS  # the padding between disappears, so '-' can stay in column 0
    top = int(digits.max()) if digits.size else 0
    rest = digits
    shown: np.ndarray | bool = True
    for column in range(width - 1, 0, -1):
        if decimals and column == whole_count + 1:
            out[..., column] = shown * _POINT if hammer else _POINT
            continue
        if rest.dtype == np.uint64 and top < 2 ** 32:
            rest = rest.astype(np.uint32)  # a cheaper division
        quotient = rest // 10
        digit = rest - quotient * 10
        if column > whole_count:  # a decimal
            if hammer:  # shown once a non-zero decimal is at or right of it
                shown = digit != 0 if column == width - 1 else shown | (digit != 0)
                out[..., column] = (digit + _ZERO) * shown
            else:
                out[..., column] = digit + _ZERO
        elif column == whole_count:  # the units digit, always
            out[..., column] = digit + _ZERO
        else:  # a leading zero is padding
            out[..., column] = (digit + _ZERO) * (rest != 0)
        rest = quotient
        top //= 10


@functools.lru_cache(maxsize=64)
def _parse(template: str) -> tuple[tuple[int | None, ...], tuple[bytes, ...]]:
    """The ``%.Nf`` (N) and ``%d`` (None) fields of ``template`` and the texts around them."""
    specs = tuple(None if m.group(1) is None else int(m.group(1)) for m in _SPEC.finditer(template))
    literals = tuple(text.encode("ascii") for text in _SPEC.split(template)[::2])
    if not specs or "%" in _SPEC.sub("", template) or any(b"\0" in text for text in literals):
        raise ValueError(f"unsupported template {template!r} (one %.Nf or %d per column, no other %)")
    return specs, literals


def _rows_of(template: str, values: ArrayLike) -> tuple[tuple[int | None, ...], tuple[bytes, ...], np.ndarray]:
    """The template's fields and literals, and ``values`` as one row per line."""
    specs, literals = _parse(template)
    array = np.asarray(values)
    array = array.reshape(len(array), -1) if array.size else array.reshape(0, len(specs))
    if array.shape[1] != len(specs):
        raise ValueError(f"{template!r} has {len(specs)} fields, the values {array.shape[1]} columns")
    return specs, literals, array


def _percent(template: str, rows: np.ndarray) -> bytes:
    """The % operator on ``template`` repeated once per row."""
    return ((template * len(rows)) % tuple(rows.ravel().tolist())).encode("ascii")


def _format_rows(specs: tuple[int | None, ...], literals: tuple[bytes, ...], rows: np.ndarray,
                 hammer: bool = False) -> np.ndarray | None:
    """The character matrix of ``rows`` (one line each), or None when a number does not fit.

    A line is one slot per column: room for the first literal (filled in the
    first slot only), the field, then the literal after it.  Columns with
    the same format are formatted together; the room a slot does not use is
    padding.  Equal slots make the matrix a plain ``(rows * columns, slot)``
    table when every column has the same format.
    """
    n, columns = rows.shape
    head = literals[0]
    after = max(map(len, literals[1:]))
    same_format: dict[int | None, list[int]] = {}
    for column, decimals in enumerate(specs):
        same_format.setdefault(decimals, []).append(column)
    groups = []
    for decimals, group in same_format.items():
        scaled = _scaled(rows[:, group].ravel() if len(group) < columns else rows.ravel(), decimals)
        if scaled is None:
            return None
        places = decimals or 0
        top = int(scaled[0].max()) if scaled[0].size else 0
        width = 2 + max(len(str(top)) - places, 1) + places - (places == 0)  # sign, digits, point
        groups.append((group, scaled, places, width))
    field = max(width for *_, width in groups)
    slot = len(head) + field + after
    matrix = np.zeros((n, columns * slot), np.uint8)
    slots = matrix.reshape(n, columns, slot)
    slots[:, 0, : len(head)] = np.frombuffer(head, np.uint8)
    literal_room = np.zeros((columns, after), np.uint8)
    for i, literal in enumerate(literals[1:]):
        literal_room[i, : len(literal)] = np.frombuffer(literal, np.uint8)
    slots[:, :, len(head) + field :] = literal_room
    fields = slots[..., len(head) : len(head) + field]
    for group, (digits, negative), places, width in groups:
        if len(group) == columns:  # one table of rows * columns fields
            _write_fields(matrix.reshape(n * columns, slot)[:, len(head) : len(head) + width], digits, negative,
                          places, hammer)
        elif group[-1] - group[0] == len(group) - 1:  # neighbours: written in place
            shape = (n, len(group))
            _write_fields(fields[:, group[0] : group[-1] + 1, :width], digits.reshape(shape),
                          negative.reshape(shape), places, hammer)
        else:
            shape = (n, len(group))
            block = np.zeros((*shape, width), np.uint8)
            _write_fields(block, digits.reshape(shape), negative.reshape(shape), places, hammer)
            fields[:, group, :width] = block
    return matrix


def _format_slowly(specs: tuple[int | None, ...], literals: tuple[bytes, ...], rows: np.ndarray,
                   hammer: bool) -> list[bytes]:
    """One line per row with the % operator (for what a field cannot hold)."""
    lines = []
    for row in rows.tolist():
        parts = [literals[0]]
        for value, decimals, literal in zip(row, specs, literals[1:]):
            text = "%d" % value if decimals is None else "%.*f" % (decimals, value)
            if hammer and "." in text:
                text = text.rstrip("0").rstrip(".")
            parts += [b"0" if hammer and text == "-0" else text.encode("ascii"), literal]
        lines.append(b"".join(parts))
    return lines


def format_lines(template: str, values: ArrayLike, *, hammer: bool = False) -> bytes:
    """``template % row`` for every row of ``values``, as ASCII bytes.

    Parameters
    ----------
    template : str
        ASCII text with one ``%.Nf`` or ``%d`` per column of ``values`` and
        no other ``%``; usually ending with a newline.
    values : array_like, shape (n, columns)
        Numbers; integer columns print exactly, floats as the % operator
        rounds them (NaN and infinities included).
    hammer : bool
        Numbers as Hammer writes them instead (see :func:`format_many`):
        no trailing zeros or bare point, never ``-0``, NaN and infinities as ``0``.

    Returns
    -------
    bytes
        Byte for byte what ``(template * n) % tuple(values.ravel())`` gives.
    """
    specs, literals, rows = _rows_of(template, values)
    if not hammer and rows.size < _SMALL_INPUT:
        return _percent(template, rows)
    return b"".join(text for text, _ in _formatted_chunks(specs, literals, rows, False, hammer))


def format_line_blocks(template: str, values: ArrayLike, counts: ArrayLike, *, hammer: bool = False) -> list[bytes]:
    """:func:`format_lines` in one pass, cut into consecutive blocks of ``counts[i]`` lines."""
    specs, literals, rows = _rows_of(template, values)
    ends = np.cumsum(np.concatenate([[0], np.asarray(counts, np.int64)]), dtype=np.int64)
    if not hammer and rows.size < _SMALL_INPUT:
        return [_percent(template, rows[start:end]) for start, end in zip(ends[:-1].tolist(), ends[1:].tolist())]
    # A line ends where its one newline is: cheaper to find than to count every line's bytes.
    newline_ends = template.endswith("\n") and template.count("\n") == 1
    chunks = list(_formatted_chunks(specs, literals, rows, True, hammer, newline_ends))
    text = b"".join(text for text, _ in chunks)
    line_ends = np.cumsum(np.concatenate([[0], *(lengths for _, lengths in chunks)]), dtype=np.int64)
    cuts = line_ends[ends].tolist()
    return [text[start:end] for start, end in zip(cuts[:-1], cuts[1:])]


def _formatted_chunks(specs: tuple[int | None, ...], literals: tuple[bytes, ...], rows: np.ndarray,
                      lengths: bool, hammer: bool, newline_ends: bool = False) -> Iterator[tuple[bytes, np.ndarray]]:
    """The text of ``rows`` a chunk at a time, with each line's length if asked for."""
    if hammer and rows.dtype.kind == "f":
        rows = np.where(np.isfinite(rows), rows, 0.0)
    no_lengths = np.zeros(0, np.int64)
    step = max(1, _CHUNK_NUMBERS // len(specs))
    for start in range(0, len(rows), step):
        chunk = rows[start : start + step]
        matrix = _format_rows(specs, literals, chunk, hammer)
        if matrix is None:  # NaN, infinities or 16+ digits: the % operator
            lines = _format_slowly(specs, literals, chunk, hammer)
            yield b"".join(lines), np.array([len(line) for line in lines], np.int64)
            continue
        keep = matrix != 0
        text = matrix[keep].tobytes()
        if not lengths:
            yield text, no_lengths
        elif newline_ends:
            yield text, _newline_lengths(text)
        else:
            yield text, np.count_nonzero(keep, axis=1)


def _newline_lengths(text: bytes) -> np.ndarray:
    """The length of each line of ``text`` (every line ending with a newline)."""
    return np.diff(np.flatnonzero(np.frombuffer(text, np.uint8) == 10), prepend=-1)


def format_many(values: ArrayLike, decimals: int = 6) -> list[str]:
    """Every number of ``values`` as Hammer writes it, in one pass.

    ``16``, ``0.25``, ``-4.5``: fixed point with up to ``decimals`` decimals and
    no trailing zeros, never in exponent form, never ``-0``; NaN and infinities
    are written as ``0``.
    """
    flat = np.asarray(values, np.float64).ravel()
    if not len(flat):
        return []
    return format_lines(f"%.{decimals}f\n", flat.reshape(-1, 1), hammer=True)[:-1].decode("ascii").split("\n")

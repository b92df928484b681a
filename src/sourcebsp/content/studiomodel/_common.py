"""What the studio model readers share: their error class and the checked table read."""
from __future__ import annotations

import numpy as np

from ...errors import BspFormatError, TruncatedError

__all__ = ["ModelFormatError", "ModelTruncatedError", "Tables", "table", "read_int", "cstring"]


class ModelFormatError(BspFormatError):
    """A studio model file (``.mdl``, ``.vvd``, ``.vtx``) that breaks a rule of its format.

    ``file`` names the file and ``offset`` the byte in it where the problem lies.
    """

    def __init__(self, message: str, *, file: str, offset: int | None = None, **context: int) -> None:
        self.file = file
        super().__init__(message, offset=offset, **context)  # type: ignore[arg-type]

    def _compose(self) -> str:
        where = f"{self.file}" + ("" if self.offset is None else f", offset {self.offset} (0x{self.offset:x})")
        return f"{where}: {self.reason}"


class ModelTruncatedError(ModelFormatError, TruncatedError):
    """A studio model file that ends before a table it declares."""


def table(buf: bytes | memoryview, offset: int, count: int, dtype: np.dtype, what: str, file: str) -> np.ndarray:
    """``count`` records of ``dtype`` at ``offset`` of ``buf``, checked to lie within it (zero-copy)."""
    size = memoryview(buf).nbytes
    if count < 0:
        raise ModelFormatError(f"{what}: negative count {count}", file=file, offset=offset)
    if offset < 0 or offset > size or count * dtype.itemsize > size - offset:
        raise ModelTruncatedError(f"{what}: {count} records of {dtype.itemsize} bytes at {offset} do not fit "
                                  f"in the file's {size} bytes", file=file, offset=max(offset, 0),
                                  needed=count * dtype.itemsize, available=max(size - offset, 0))
    return np.frombuffer(buf, dtype, count, offset)


class Tables:
    """Checked tables of one file, the bytes they cover in all capped at twice the file's size.

    A well-formed file holds each table once; a hostile one can point many headers at one
    big table (every mesh at the same strip group) and have it expanded again and again.
    """

    def __init__(self, buf: bytes | memoryview, file: str) -> None:
        self.buf, self.file = buf, file
        self.limit = 2 * memoryview(buf).nbytes + 4096
        self.claimed = 0

    def __call__(self, offset: int, count: int, dtype: np.dtype, what: str) -> np.ndarray:
        records = table(self.buf, offset, count, dtype, what, self.file)
        self.claim(records.nbytes, what, offset)
        return records

    def claim(self, size: int, what: str, offset: int) -> None:
        """Count ``size`` more bytes read (or expanded); ModelFormatError past the cap."""
        self.claimed += size
        if self.claimed > self.limit:
            raise ModelFormatError(f"{what}: the file's tables cover {self.claimed} bytes, more than twice its "
                                   f"{memoryview(self.buf).nbytes}: they overlap", file=self.file,
                                   offset=max(offset, 0), needed=self.claimed, available=self.limit)


def read_int(buf: bytes | memoryview, offset: int, what: str, file: str) -> int:
    """The little-endian int32 at ``offset``."""
    return int(table(buf, offset, 1, np.dtype("<i4"), what, file)[0])


def cstring(buf: bytes | memoryview, offset: int, what: str, file: str, limit: int = 1024) -> str:
    """The NUL-terminated string at ``offset`` (at most ``limit`` bytes), decoded leniently."""
    data = bytes(memoryview(buf)[offset:offset + limit]) if 0 <= offset < memoryview(buf).nbytes else b""
    if not data:
        raise ModelTruncatedError(f"{what}: string offset {offset} outside the file", file=file,
                                  offset=max(offset, 0))
    end = data.find(b"\0")
    if end < 0:
        raise ModelFormatError(f"{what}: string at {offset} has no end within {limit} bytes", file=file,
                               offset=offset)
    return data[:end].decode("utf-8", errors="replace")

"""Tables of fixed-size records: a numpy dtype per lump, decoded without a copy."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import LumpSizeError
from .base import COLOR_RGB_EXP32, Endian, LumpContext

__all__ = ["ArrayCodec", "COLOR_RGB_EXP32"]


class ArrayCodec:
    """A table of fixed-size records: one numpy dtype, decoded without a copy."""

    decompresses = False  # a view of the lump's bytes

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = np.dtype(dtype)

    def __repr__(self) -> str:
        return f"ArrayCodec({self.dtype.itemsize}-byte {self.dtype})"

    def with_byte_order(self, endian: Endian) -> "ArrayCodec":
        return self if endian == "<" else ArrayCodec(self.dtype.newbyteorder(endian))

    def decode(self, data: memoryview, ctx: LumpContext) -> np.ndarray:
        size = self.dtype.itemsize
        if len(data) % size:
            raise LumpSizeError(
                f"length {len(data)} is not a multiple of the {size}-byte record "
                f"(lump version {ctx.version}, BSP version {ctx.bsp_version})",
                lump=ctx.name, offset=ctx.file_offset, needed=size, available=len(data),
            )
        return np.frombuffer(data, self.dtype)

    def encode(self, value: Any, ctx: LumpContext) -> bytes:
        return np.ascontiguousarray(value, dtype=self.dtype).tobytes()

    def count(self, value: Any) -> int:
        return len(value)


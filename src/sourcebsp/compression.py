"""Valve's LZMA lump compression (``public/tier1/lzmaDecoder.h``).

A compressed lump (or game lump) starts with ``lzma_header_t`` -- always
little-endian, also in big-endian console maps -- followed by a raw LZMA1
stream.  The standard library ``lzma`` module decodes it once the 5 property
bytes and the uncompressed size are put in front as an ``.lzma`` (alone)
header.
"""
from __future__ import annotations

import lzma
import struct

import numpy as np

from .errors import CompressionError, TruncatedError

__all__ = [
    "LZMA_HEADER",
    "LZMA_ID",
    "MAX_UNCOMPRESSED_SIZE",
    "is_lzma",
    "lzma_decompress",
    "lzma_compress",
]

LZMA_ID = b"LZMA"
LZMA_HEADER = np.dtype(
    [
        ("id", "S4"),  # unsigned int id ('LZMA')
        ("actual_size", "<u4"),  # unsigned int actualSize (uncompressed)
        ("lzma_size", "<u4"),  # unsigned int lzmaSize (compressed, without this header)
        ("properties", "u1", (5,)),  # unsigned char properties[LZMA_PROPS_SIZE]
    ]
)  # 17 bytes, packed

# No Source map holds a lump anywhere near this; a larger claim is an LZMA bomb.
MAX_UNCOMPRESSED_SIZE = 1 << 30


def is_lzma(data: bytes | memoryview) -> bool:
    return bytes(data[:4]) == LZMA_ID


def lzma_decompress(
    data: bytes | memoryview,
    *,
    lump: str | None = None,
    offset: int = 0,
    expected_size: int | None = None,
) -> bytes:
    """Decompress one Valve LZMA block.

    ``offset`` is the absolute file offset of ``data`` (for error messages);
    ``expected_size``, when known from the directory, must equal the header's
    ``actualSize``.
    """
    if len(data) < LZMA_HEADER.itemsize:
        raise TruncatedError(
            f"compressed data of {len(data)} bytes is shorter than the "
            f"{LZMA_HEADER.itemsize}-byte lzma_header_t",
            lump=lump, offset=offset, needed=LZMA_HEADER.itemsize, available=len(data),
        )
    head = np.frombuffer(data, LZMA_HEADER, 1)[0]
    if bytes(head["id"]) != LZMA_ID:
        raise CompressionError(
            f"lzma_header_t id is {bytes(head['id'])!r}, expected {LZMA_ID!r}",
            lump=lump, offset=offset,
        )
    actual = int(head["actual_size"])
    packed = int(head["lzma_size"])
    if expected_size is not None and actual != expected_size:
        raise CompressionError(
            f"lzma_header_t says {actual} uncompressed bytes, the directory says {expected_size}",
            lump=lump, offset=offset, needed=expected_size, available=actual,
        )
    if actual > MAX_UNCOMPRESSED_SIZE:
        raise CompressionError(
            f"lzma_header_t claims {actual} uncompressed bytes, over the "
            f"{MAX_UNCOMPRESSED_SIZE}-byte limit",
            lump=lump, offset=offset, needed=actual, available=MAX_UNCOMPRESSED_SIZE,
        )
    body_start = LZMA_HEADER.itemsize
    if body_start + packed > len(data):
        raise TruncatedError(
            f"lzma_header_t says {packed} compressed bytes, only "
            f"{len(data) - body_start} follow it",
            lump=lump, offset=offset + body_start, needed=packed, available=len(data) - body_start,
        )
    alone = bytes(head["properties"]) + struct.pack("<Q", actual)
    decoder = lzma.LZMADecompressor(format=lzma.FORMAT_ALONE)
    try:
        # max_length bounds the output: a bomb cannot grow past the stated size.
        out = decoder.decompress(alone + bytes(data[body_start : body_start + packed]), actual)
    except lzma.LZMAError as exc:
        raise CompressionError(
            f"corrupt LZMA data: {exc}", lump=lump, offset=offset + body_start
        ) from exc
    if len(out) != actual:
        raise CompressionError(
            f"LZMA data expands to {len(out)} bytes, lzma_header_t says {actual}",
            lump=lump, offset=offset + body_start, needed=actual, available=len(out),
        )
    return out


def lzma_compress(data: bytes) -> bytes:
    """Compress ``data`` into a Valve LZMA block (``lzma_header_t`` + stream)."""
    alone = lzma.compress(
        data,
        format=lzma.FORMAT_ALONE,
        filters=[{"id": lzma.FILTER_LZMA1, "preset": 6, "dict_size": 1 << 20}],
    )
    properties, stream = alone[:5], alone[13:]
    head = np.zeros((), LZMA_HEADER)
    head["id"] = LZMA_ID
    head["actual_size"] = len(data)
    head["lzma_size"] = len(stream)
    head["properties"] = np.frombuffer(properties, "u1")
    return head.tobytes() + stream

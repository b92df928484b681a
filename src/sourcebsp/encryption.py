"""Tactical Intervention's encrypted maps: the whole file XOR-ed with a 32-byte key.

The facts (BSPSource ``BspFile.createBuffer`` and ``XORUtils``; bsp_tool 0.7.0
``extensions/decrypt_xor.py``): byte ``i`` of the file is XOR-ed with byte
``i % 32`` of the key, from the file's first byte on.  The key is not kept
anywhere else: bytes 384-416 of a plain map are zeros (the ``lump_t``
entries of lumps 23-25, which Tactical Intervention's BSP 20-21 maps leave
unused), so the encrypted file holds the key itself there, and the first four
bytes XOR-ed with the key's first four give ``VBSP``.

The game's own key is not published in the sources we checked (BSPSource and
bsp_tool read it from each file; the decompiled game strings of
Tsuey/Tactically-Decompiled name a ``CTacIntEncryption`` class but hold no
such key), so a map sourcebsp makes from nothing is encrypted with
:data:`NEW_FILE_KEY`, a key of its own; a map read from a file is always
written back with the key it was read with.

Decrypting and encrypting are one vectorized numpy XOR over the file viewed as
rows of 32 bytes: the file's bytes are read once and one decrypted copy is made.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import BspFormatError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["KEY_END", "KEY_OFFSET", "KEY_SIZE", "NEW_FILE_KEY", "decrypt", "encrypt", "find_key", "xor"]

KEY_SIZE = 32
KEY_OFFSET = 384  # where the encrypted file holds the key (zeros in the plain map)
KEY_END = KEY_OFFSET + KEY_SIZE  # the first bytes that tell an encrypted map and hold its key
_PLAIN_IDENT = b"VBSP"  # Tactical Intervention is a PC game: little-endian maps only

# sourcebsp's own key, for maps it makes (the example room): not the game's.
NEW_FILE_KEY = b"sourcebsp example key, not TI's!"


def find_key(head: bytes | memoryview) -> bytes | None:
    """The key of an encrypted map from its first bytes (at least 416), or None when
    ``head`` does not start an encrypted map (a plain one, or too short to tell)."""
    if len(head) < KEY_END or bytes(head[:4]) == _PLAIN_IDENT:
        return None
    key = bytes(head[KEY_OFFSET:KEY_END])
    ident = bytes(a ^ b for a, b in zip(bytes(head[:4]), key))
    return key if ident == _PLAIN_IDENT else None


def xor(data: "bytes | bytearray | memoryview", key: bytes) -> "np.ndarray":
    """``data`` XOR-ed with ``key`` repeated from its first byte, as a new uint8 array
    (XOR is its own inverse: this both encrypts and decrypts)."""
    import numpy as np  # a seam: opening a plain map (every map but Tactical Intervention's) loads no numpy

    if len(key) != KEY_SIZE:
        raise ValueError(f"the key must be {KEY_SIZE} bytes, not {len(key)}")
    source = np.frombuffer(data, np.uint8)
    key_bytes = np.frombuffer(key, np.uint8)
    out = np.empty(len(source), np.uint8)
    whole = len(source) - len(source) % KEY_SIZE
    np.bitwise_xor(source[:whole].reshape(-1, KEY_SIZE), key_bytes, out=out[:whole].reshape(-1, KEY_SIZE))
    np.bitwise_xor(source[whole:], key_bytes[:len(source) - whole], out=out[whole:])
    return out


def decrypt(data: "bytes | bytearray | memoryview", key: bytes) -> memoryview:
    """The plain map of an encrypted file (read-only bytes)."""
    return xor(data, key).data.toreadonly()


def encrypt(plain: "bytes | bytearray | memoryview", key: bytes) -> memoryview:
    """The encrypted file of a plain map.

    Raises
    ------
    BspFormatError
        The plain map's bytes 384-416 are not zeros (lumps 23-25 in use): a reader
        could not find the key in the file.
    """
    view = memoryview(plain).cast("B")
    hidden = view[KEY_OFFSET:KEY_END]
    if len(hidden) < KEY_SIZE or any(hidden):
        raise BspFormatError(
            f"cannot encrypt: bytes {KEY_OFFSET}-{KEY_END} of the map must be zeros, where "
            "readers find the key (the directory entries of lumps 23-25 must be empty)",
            offset=KEY_OFFSET)
    return decrypt(view, key)

"""Element counts of lumps without numpy: all that ``sourcebsp info`` counts.

A table of records holds ``length / itemsize`` elements, the other lumps say
their count in their first bytes (or a chain of headers, the collision
models): none needs numpy, whose import is most of an ``info`` process.
The record sizes below are the built-in layout tables' dtypes written out
once more, without numpy; tests/test_counts.py derives them from the dtypes
themselves and holds them to it for every branch, lump and lump version.

A count is given only where it checks all that the lump's codec checks; for
anything else (a length the record does not divide, an offset out of range,
a table or codec not known here) :data:`UNKNOWN` sends the caller to the
codec, which decodes the lump with numpy and raises the error it always did.
"""
from __future__ import annotations

import struct
from typing import Any, Mapping, Union

from ..header import Endian

__all__ = ["Kind", "TABLES", "UNKNOWN", "count_from_bytes", "lookup"]

# An int: a table of records of that size.  "codec": decoded by its own codec, which needs no
# numpy (entities, pakfile, game lump).  "visibility", "lightmaps", "physcollide", "strings":
# as below.  ("counted", size, ...): arrays each after its int count (occlusion).
# ("physdisp", width): a count and a size table of that width, then the blobs.
Kind = Union[int, str, tuple[Any, ...]]
_Table = dict[int, dict[Union[int, None], Kind]]
UNKNOWN: Any = object()  # no count without the codec

# lump -> lump version (None: any other, as Variant.codec resolves it) -> kind: SDK 2013 in full,
# the other branches as (changed lumps, removed lumps).
_SDK2013: _Table = {
    0: {None: "codec"}, 1: {0: 20, None: 20}, 2: {0: 32, None: 32}, 3: {0: 12, None: 12},
    4: {None: "visibility"}, 5: {0: 32, None: 32}, 6: {0: 72, None: 72}, 7: {0: 56, 1: 56, None: 56},
    8: {0: "lightmaps", 1: "lightmaps", None: "lightmaps"},
    9: {1: ("counted", 36, 12, 4), 2: ("counted", 40, 12, 4)}, 10: {0: 56, 1: 32}, 11: {0: 2, None: 2},
    12: {0: 4, None: 4}, 13: {0: 4, None: 4}, 14: {0: 48, None: 48}, 15: {0: 88, 1: 100}, 16: {0: 2, None: 2},
    17: {0: 2, None: 2}, 18: {0: 12, None: 12}, 19: {0: 8, None: 8}, 20: {0: 8, None: 8}, 21: {0: 12, None: 12},
    26: {0: 176, None: 176}, 27: {0: 56, 1: 56, None: 56}, 28: {0: ("physdisp", 2), None: ("physdisp", 2)},
    29: {0: "physcollide", None: "physcollide"}, 30: {0: 12, None: 12}, 31: {0: 2, None: 2},
    32: {0: 1, None: 1}, 33: {0: 20, None: 20}, 34: {0: 1, None: 1}, 35: {0: "codec", None: "codec"},
    36: {0: 12, None: 12}, 37: {0: 10, None: 10}, 38: {0: 12, None: 12}, 39: {0: 2, None: 2},
    40: {None: "codec"}, 41: {0: 12, None: 12}, 42: {0: 16, None: 16}, 43: {0: "strings", None: "strings"},
    44: {0: 4, None: 4}, 45: {0: 352, None: 352}, 46: {0: 2, None: 2}, 47: {0: 2, None: 2}, 48: {0: 2, None: 2},
    50: {0: 1120, None: 1120}, 51: {0: 4, None: 4}, 52: {0: 4, None: 4},
    53: {0: "lightmaps", 1: "lightmaps", None: "lightmaps"}, 54: {0: 88, 1: 100}, 55: {1: 28, None: 24},
    56: {1: 28, None: 24}, 58: {0: 56, 1: 56, None: 56}, 59: {0: 4, None: 4}, 60: {0: 8, None: 8},
    61: {0: 4, None: 4},
}
_CHANGES: dict[str, tuple[_Table, tuple[int, ...]]] = {
    "SOURCE2004": ({
        22: {0: 16, None: 16}, 23: {0: 8, None: 8}, 24: {0: 2, None: 2}, 25: {0: 2, None: 2},
        49: {0: "physcollide", None: "physcollide"},
    }, (51, 52)),
    "VAMPIRE": ({
        7: {0: 104, 1: 56}, 10: {0: 32, 1: 32, None: 32}, 22: {0: 16, None: 16}, 23: {0: 8, None: 8},
        24: {0: 2, None: 2}, 25: {0: 2, None: 2}, 27: {0: 104, 1: 56},
        49: {0: "physcollide", None: "physcollide"},
    }, (51, 52)),
    "STRATA": ({
        5: {0: 32, 1: 48}, 7: {0: 56, 1: 56, 2: 72}, 10: {0: 56, 1: 32, 2: 56}, 11: {0: 4, 1: 4, None: 4},
        12: {0: 4, 1: 8}, 16: {0: 2, 1: 4}, 17: {0: 2, 1: 4}, 19: {0: 8, 1: 16}, 21: {0: 12, 1: 20},
        22: {0: 2, 1: 4}, 23: {0: 4, 1: 8}, 26: {0: 176, 1: 232}, 27: {0: 72, 1: 56, 2: 72},
        28: {0: ("physdisp", 2), 2: ("physdisp", 4)}, 31: {0: 2, 1: 4}, 36: {0: 12, 1: 12, None: 12},
        37: {0: 10, 1: 20}, 45: {0: 352, 1: 356}, 50: {0: 1120, 1: 1124}, 51: {0: 4, 1: 8}, 52: {0: 4, 1: 8},
        58: {0: 56, 1: 56, 2: 72},
    }, ()),
    "LEFT4DEAD2": ({
        22: {0: 8, None: 8}, 23: {0: 16, None: 16}, 24: {0: 12, None: 12}, 25: {0: 8, None: 8},
    }, ()),
    "CSGO": ({
        22: {0: 2, None: 2}, 23: {0: 4, None: 4},
    }, ()),
    "DARK_MESSIAH": ({
        6: {0: 96, None: 96}, 14: {0: 52, None: 52}, 15: {0: 92, 1: 100}, 54: {0: 92, 1: 100},
    }, ()),
    "VINDICTUS": ({
        5: {0: 48, None: 48}, 7: {0: 56, 1: 72, 2: 76}, 10: {0: 56, 1: 56}, 12: {0: 8, None: 8},
        16: {0: 4, None: 4}, 17: {0: 4, None: 4}, 19: {0: 16, None: 16}, 21: {0: 20, None: 20},
        26: {0: 232, None: 232}, 27: {0: 56, 1: 72, 2: 76}, 45: {0: 356, None: 356}, 58: {0: 56, 1: 72, 2: 76},
    }, ()),
    "DOTA2_V22": ({26: {0: 180, None: 180}, 45: {0: 356, None: 356}}, ()),
    "DOTA2_V23": ({26: {0: 184, None: 184}, 45: {0: 356, None: 356}}, ()),
    "HL2_BETA18": ({
        7: {0: 72, 1: 72, None: 72}, 10: {0: 32, 1: 32, None: 32}, 22: {0: 16, None: 16}, 23: {0: 8, None: 8},
        24: {0: 2, None: 2}, 25: {0: 2, None: 2}, 27: {0: 72, 1: 72, None: 72},
        49: {0: "physcollide", None: "physcollide"},
    }, (51, 52)),
    "HL2_BETA17": ({
        7: {0: 68, 1: 68, None: 68}, 10: {0: 32, 1: 32, None: 32}, 22: {0: 16, None: 16}, 23: {0: 8, None: 8},
        24: {0: 2, None: 2}, 25: {0: 2, None: 2}, 26: {0: 172, None: 172}, 27: {0: 68, 1: 68, None: 68},
        49: {0: "physcollide", None: "physcollide"},
    }, (51, 52)),
    "SOURCE_XBOX": ({
        22: {0: 16, None: 16}, 23: {0: 8, None: 8}, 24: {0: 2, None: 2}, 25: {0: 2, None: 2},
        49: {0: "physcollide", None: "physcollide"}, 52: {0: 8, None: 8},
    }, (51,)),
    "INFRA": ({}, (37,)),
    "ZENO_CLASH": ({}, ()),  # SDK 2013's records; its static prop sub-lump differs (a codec)
}


def _compose(changes: _Table, removed: tuple[int, ...]) -> _Table:
    table = {**_SDK2013, **changes}
    for lump in removed:
        del table[lump]
    return table


# Respawn's rBSP (codecs/respawn.py): its own 128 lump ids, any lump version; Titanfall 2 the same sizes.
_TITANFALL: _Table = {
    0: {None: "codec"}, 1: {None: 16}, 2: {None: 36}, 3: {None: 12}, 14: {None: 32}, 30: {None: 12},
    44: {None: 4}, 71: {None: 20}, 72: {None: 36}, 73: {None: 44}, 74: {None: 28}, 75: {None: 92},
    79: {None: 2}, 80: {None: 28}, 81: {None: 32}, 82: {None: 12}, 85: {None: 28}, 86: {None: 4}, 87: {None: 8},
    89: {None: 4}, 91: {None: 4}, 92: {None: 32}, 93: {None: 2}, 94: {None: 2}, 95: {None: 32},
}

# Layout table name (variants.LazyLayouts.table) -> lump -> lump version (None: any other) -> kind.
TABLES: Mapping[str, _Table] = {"SDK2013": _SDK2013, **{name: _compose(*change) for name, change in _CHANGES.items()},
                                "TITANFALL": _TITANFALL, "TITANFALL2": _TITANFALL}

_RAW = "raw"


def lookup(table: str, lump: int, lump_version: int) -> Kind | None:
    """What a built-in layout table reads ``lump`` at ``lump_version`` with: a kind, ``"raw"``
    (no codec: the lump stays raw), or None (a table not known here)."""
    layouts = TABLES.get(table)
    if layouts is None:
        return None
    versions = layouts.get(lump)
    if not versions:
        return _RAW
    if lump_version in versions:
        return versions[lump_version]
    return versions.get(None, _RAW)


def count_from_bytes(kind: Kind, data: memoryview, endian: Endian) -> Any:
    """The element count a lump of ``kind`` decodes to (what its codec's ``count`` gives),
    from its uncompressed bytes; :data:`UNKNOWN` where its codec would raise or decide."""
    length = len(data)
    if isinstance(kind, int):
        return UNKNOWN if length % kind else length // kind
    if kind == "lightmaps":
        return length // 4  # whole ColorRGBExp32 samples (a short tail is kept apart)
    if kind == "visibility":
        return _visibility(data, endian)
    if kind == "strings":
        if length and data[-1]:
            return UNKNOWN  # the last name has no NUL
        return sum(1 for name in bytes(data).split(b"\0") if name)
    if kind == "physcollide":
        return _physcollide(data, endian)
    if isinstance(kind, tuple) and kind[0] == "counted":
        return _counted(data, endian, kind[1:])
    if isinstance(kind, tuple) and kind[0] == "physdisp":
        return _physdisp(data, endian, kind[1])
    return UNKNOWN


def _visibility(data: memoryview, endian: Endian) -> Any:
    size = len(data)
    if size == 0:
        return 0
    if size < 4:
        return UNKNOWN
    count: int = struct.unpack_from(endian + "i", data)[0]
    header = 4 + 8 * count
    if count < 0 or header > size or (count and size == header):
        return UNKNOWN
    if count:
        offsets = struct.unpack_from(f"{endian}{2 * count}i", data, 4)
        if min(offsets) < header or max(offsets) >= size:
            return UNKNOWN
    return count


def _counted(data: memoryview, endian: Endian, sizes: tuple[int, ...]) -> Any:
    position, first = 0, None
    for size in sizes:
        if position + 4 > len(data):
            return UNKNOWN
        count: int = struct.unpack_from(endian + "i", data, position)[0]
        position += 4 + count * size
        if count < 0 or position > len(data):
            return UNKNOWN
        first = count if first is None else first
    return UNKNOWN if position != len(data) else first


def _physdisp(data: memoryview, endian: Endian, width: int) -> Any:
    length = len(data)
    if length == 0:
        return 0
    code = {2: "H", 4: "I"}[width]
    if length < width:
        return UNKNOWN
    count: int = struct.unpack_from(endian + code, data)[0]
    table_end = width * (1 + count)
    if table_end > length:
        return UNKNOWN
    end = table_end + sum(struct.unpack_from(f"{endian}{count}{code}", data, width))
    return count if end == length else UNKNOWN


def _physcollide(data: memoryview, endian: Endian) -> Any:
    # dphysmodel_t {int modelIndex, dataSize, keydataSize, solidCount}, then the solids (each
    # after its int size) and the key data, until modelIndex -1.  Key data is Latin-1: any bytes.
    length, position, models = len(data), 0, 0
    if length == 0:
        return 0
    header, size_field = struct.Struct(endian + "4i"), struct.Struct(endian + "i")
    while True:
        if position + 16 > length:
            return UNKNOWN
        index, data_size, keydata_size, solid_count = header.unpack_from(data, position)
        if index == -1:
            return models
        start = position + 16
        end = start + data_size + keydata_size
        if min(index, data_size, keydata_size, solid_count) < 0 or end > length:
            return UNKNOWN
        solid, limit = start, start + data_size
        for _ in range(solid_count):
            if solid + 4 > limit:
                return UNKNOWN
            size: int = size_field.unpack_from(data, solid)[0]
            solid += 4 + size
            if size < 0 or solid > limit:
                return UNKNOWN
        if solid != limit:
            return UNKNOWN
        models, position = models + 1, end

"""Texture lumps: texinfo, texdata, the texdata string table and string data,
face macro texture info.

bspfile.h structs: ``texinfo_t``, ``dtexdata_t``; ``LUMP_TEXDATA_STRING_TABLE``
is an ``int`` offset per name into ``LUMP_TEXDATA_STRING_DATA``, a buffer of
NUL-terminated material names.
"""
from __future__ import annotations

from typing import Iterator

from ..errors import BspFormatError
from ..lump_ids import LumpId
from .base import Endian, Layouts, LumpContext, Record, vec3

TEXINFO = Record(
    [
        ("texture_vecs", "<f4", (2, 4)),  # float textureVecsTexelsPerWorldUnits[2][4]
        ("lightmap_vecs", "<f4", (2, 4)),  # float lightmapVecsLuxelsPerWorldUnits[2][4]
        ("flags", "<i4"),  # int flags (SURF_* of bspflags.h)
        ("texdata", "<i4"),  # int texdata
    ]
)  # 72 bytes

# Dark Messiah's texinfo_t: 24 bytes of unknown meaning between the vectors and the flags
# (bsp_tool's arkane branch: "16f24s2i").
TEXINFO_DARK_MESSIAH = Record(
    [
        ("texture_vecs", "<f4", (2, 4)),  # float textureVecsTexelsPerWorldUnits[2][4]
        ("lightmap_vecs", "<f4", (2, 4)),  # float lightmapVecsLuxelsPerWorldUnits[2][4]
        ("unknown", "u1", (24,)),  # 24 bytes, meaning unknown: kept
        ("flags", "<i4"),  # int flags (SURF_*)
        ("texdata", "<i4"),  # int texdata
    ]
)  # 96 bytes

TEXDATA = Record(
    [
        vec3("reflectivity"),  # Vector reflectivity
        ("name_string_table_id", "<i4"),  # int nameStringTableID
        ("width", "<i4"),  # int width
        ("height", "<i4"),  # int height
        ("view_width", "<i4"),  # int view_width
        ("view_height", "<i4"),  # int view_height
    ]
)  # 32 bytes

STRING_TABLE = Record("<i4")  # int offset into the string data
FACE_MACRO_TEXTURE_INFO = Record("<i2")  # short m_MacroTextureNameID per face; -1 = none


class StringData:
    """The texdata string data: NUL-terminated names found by byte offset.

    The names are kept by offset with the total size, so that encoding puts
    every name back where it was and the remaining bytes stay zero.
    """

    def __init__(self, strings: dict[int, str] | None = None, size: int | None = None) -> None:
        self.strings: dict[int, str] = dict(strings or {})
        end = max((o + len(s.encode("utf-8", "surrogateescape")) + 1 for o, s in self.strings.items()), default=0)
        self.size = end if size is None else max(size, end)

    def __len__(self) -> int:
        return len(self.strings)

    def __iter__(self) -> Iterator[str]:
        return iter(self.strings[o] for o in sorted(self.strings))

    def __repr__(self) -> str:
        return f"StringData({len(self.strings)} names, {self.size} bytes)"

    def at(self, offset: int) -> str:
        """The name that starts at byte ``offset`` (or runs through it)."""
        if offset in self.strings:
            return self.strings[offset]
        for start, text in self.strings.items():
            raw = text.encode("utf-8", "surrogateescape")
            if start <= offset < start + len(raw):
                return raw[offset - start :].decode("utf-8", "surrogateescape")
        raise KeyError(offset)

    @classmethod
    def from_bytes(cls, blob: bytes) -> "StringData":
        """The names of a string data lump by offset.  A last name without its NUL raises
        ``ValueError`` whose argument is that name's offset."""
        strings: dict[int, str] = {}
        offset = 0
        for name in blob.split(b"\0"):
            if name:
                strings[offset] = name.decode("utf-8", "surrogateescape")
            offset += len(name) + 1
        if blob and blob[-1]:
            raise ValueError(max(strings))
        value = cls(size=len(blob))  # every name ends inside the lump: no need to measure them again
        value.strings = strings
        return value

    def add(self, name: str) -> int:
        """Append ``name`` (or find it) and return its offset."""
        for start, text in self.strings.items():
            if text == name:
                return start
        start = self.size
        self.strings[start] = name
        self.size = start + len(name.encode("utf-8", "surrogateescape")) + 1
        return start


class StringDataCodec:
    def decode(self, data: memoryview, ctx: LumpContext) -> StringData:
        try:
            return StringData.from_bytes(bytes(data))
        except ValueError as exc:
            raise BspFormatError("last texture name is not NUL-terminated",
                                 lump=ctx.name, offset=ctx.file_offset + exc.args[0]) from None

    def encode(self, value: StringData, ctx: LumpContext) -> bytes:
        out = bytearray(value.size)
        for start, text in value.strings.items():
            raw = text.encode("utf-8", "surrogateescape")
            out[start : start + len(raw)] = raw
        return bytes(out)

    def count(self, value: StringData) -> int:
        return len(value)

    def count_bytes(self, data: memoryview, endian: Endian) -> int | None:
        """The names in a string data lump, without decoding it (None when the last has no NUL)."""
        if len(data) and data[-1]:
            return None
        return sum(1 for name in bytes(data).split(b"\0") if name)


LAYOUTS_DARK_MESSIAH: Layouts = {LumpId.TEXINFO: {0: TEXINFO_DARK_MESSIAH}}
LAYOUTS: Layouts = {
    LumpId.TEXINFO: {0: TEXINFO},
    LumpId.TEXDATA: {0: TEXDATA},
    LumpId.TEXDATA_STRING_TABLE: {0: STRING_TABLE},
    LumpId.TEXDATA_STRING_DATA: {0: StringDataCodec()},
    LumpId.FACE_MACRO_TEXTURE_INFO: {0: FACE_MACRO_TEXTURE_INFO},
}

"""The texdata string data (lump 43): names by byte offset, as the string table points at them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp import BspFormatError, LumpId
from sourcebsp.codecs.base import LumpContext
from sourcebsp.codecs.textures import StringData, StringDataCodec


def test_names_are_every_run_of_bytes_between_nuls(map_path: Path) -> None:
    """Checked against a regular expression over the raw lump, and the string table's offsets
    all name a texture; encoding gives the lump back."""
    with sourcebsp.open(map_path) as bsp:
        blob = bytes(bsp.lump_bytes(LumpId.TEXDATA_STRING_DATA))
        names = bsp.get_lump(LumpId.TEXDATA_STRING_DATA)
        expected = {m.start(): m.group().decode("utf-8", "surrogateescape") for m in re.finditer(rb"[^\0]+", blob)}
        assert names.strings == expected and names.size == len(blob)
        assert all(names.at(int(offset)) for offset in bsp.get_lump(LumpId.TEXDATA_STRING_TABLE))
        assert StringDataCodec().encode(names, bsp._context(LumpId.TEXDATA_STRING_DATA)) == blob


@pytest.mark.parametrize(("blob", "bad_name_at"), [(b"abc\0de", 4), (b"\0\0ab\0\0cd", 6), (b"x", 0)])
def test_an_unterminated_last_name_is_reported_where_it_starts(blob: bytes, bad_name_at: int) -> None:
    ctx = LumpContext(int(LumpId.TEXDATA_STRING_DATA), "TEXDATA_STRING_DATA", 0, 20, "<", 5000)
    with pytest.raises(BspFormatError, match="not NUL-terminated") as info:
        StringDataCodec().decode(memoryview(blob), ctx)
    assert info.value.offset == 5000 + bad_name_at and info.value.lump == "TEXDATA_STRING_DATA"


def test_empty_and_padded_lumps() -> None:
    assert StringData.from_bytes(b"").strings == {} and StringData.from_bytes(b"").size == 0
    padded = StringData.from_bytes(b"a\0\0\0b\0\0\0")
    assert padded.strings == {0: "a", 4: "b"} and padded.size == 8

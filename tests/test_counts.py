"""codecs/counts.py: the element counts ``info`` prints, without numpy.

The record sizes there are written out a second time; they are held here to
the dtypes of every built-in layout table, and each count to what the codec
itself counts after decoding, on every lump of every corpus map.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

import sourcebsp
from sourcebsp.codecs import counts
from sourcebsp.codecs.base import LumpContext
from sourcebsp.errors import BspError
from sourcebsp.variants import VARIANTS, LazyLayouts


def kind_of(found: Any) -> counts.Kind:
    """The kind of a layout table's entry (a numpy dtype or a codec): what ``counts.TABLES``
    holds for it."""
    if not hasattr(found, "decode"):
        return int(found.itemsize)
    name = type(found).__name__
    if name == "OcclusionCodec":
        from sourcebsp.codecs.occlusion import OCCLUDER_POLY, OCCLUDER_VERTEX_INDEX

        return ("counted", found.occluder.itemsize, OCCLUDER_POLY.itemsize, OCCLUDER_VERTEX_INDEX.itemsize)
    if name == "PhysDispCodec":
        return ("physdisp", found.field.itemsize)
    return {"EntitiesCodec": "codec", "PakfileCodec": "codec", "GameLumpCodec": "codec",
            "VisibilityCodec": "visibility", "LightmapsCodec": "lightmaps", "PhysCollideCodec": "physcollide",
            "StringDataCodec": "strings"}.get(name, f"unknown {name}")


def derive_tables() -> dict[str, Any]:
    """``counts.TABLES`` as the built-in layout tables give it, resolved as
    :meth:`sourcebsp.variants.Variant.codec` resolves a lump version."""
    from sourcebsp import variants

    derived: dict[str, Any] = {}
    for name in variants._TABLE_NAMES:
        table: dict[int, Any] = {}
        for lump, versions in getattr(variants, name).items():
            kinds: dict[int | None, counts.Kind] = {v: kind_of(c) for v, c in versions.items() if v is not None}
            if None in versions:
                kinds[None] = kind_of(versions[None])
            elif len(set(map(id, versions.values()))) == 1:
                kinds[None] = kind_of(next(iter(versions.values())))
            table[int(lump)] = kinds
        derived[name] = table
    return derived


def test_size_table_matches_every_dtype_and_codec_of_every_branch() -> None:
    derived = derive_tables()
    assert set(derived) == set(counts.TABLES)
    for name, table in derived.items():
        assert table == counts.TABLES[name], name
        assert not [k for v in table.values() for k in v.values() if str(k).startswith("unknown")], name
    # Every built-in variant reads with one of those tables.
    assert {v.layouts.table for v in VARIANTS.values() if isinstance(v.layouts, LazyLayouts)} <= set(counts.TABLES)


def test_lookup_resolves_lump_versions_as_the_variant_does() -> None:
    for variant in VARIANTS.values():
        if not isinstance(variant.layouts, LazyLayouts):
            continue
        for lump in range(64):
            for version in (0, 1, 2, 3, 7):
                codec = variant.codec(lump, version)
                kind = counts.lookup(variant.layouts.table, lump, version)
                assert (kind == "raw") == (codec is None), (variant.name, lump, version)
                if codec is not None:
                    assert kind == kind_of(getattr(codec, "dtype", codec)), (variant.name, lump, version)
    assert counts.lookup("no such table", 1, 0) is None


def test_counts_equal_the_decoded_counts_on_every_corpus_lump(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        table = bsp.variant.layouts.table
        checked = 0
        for lump, entry in bsp.iter_lumps():
            kind = counts.lookup(table, int(lump), entry.version)
            if kind in ("codec", "raw"):
                continue
            got = counts.count_from_bytes(kind, bsp.lump_bytes(lump), bsp.endian)
            assert got == bsp.count(lump), bsp.lump_name(lump)
            checked += 1
        assert checked > 0


@pytest.mark.parametrize("kind, data", [
    (12, b"\0" * 13),  # not a whole number of records
    ("strings", b"name\0last"),  # the last name without its NUL
    ("visibility", struct.pack("<3i", 1, 12, 99)),  # a row offset past the lump
    ("visibility", struct.pack("<i", -1)),
    (("counted", 40, 12, 4), struct.pack("<3i", 0, 0, 0) + b"x"),  # bytes after the vertex indices
    (("counted", 40, 12, 4), struct.pack("<i", 5)),
    (("physdisp", 2), struct.pack("<3H", 2, 1, 1) + b"x"),  # one blob byte short
    ("physcollide", struct.pack("<4i", 0, 8, 0, 1) + struct.pack("<i", 9) + b"\0" * 4),  # solid past dataSize
    ("physcollide", struct.pack("<4i", 0, 0, 0, 0)),  # no terminator
])
def test_what_the_codec_would_reject_is_left_to_the_codec(kind: counts.Kind, data: bytes) -> None:
    assert counts.count_from_bytes(kind, memoryview(data), "<") is counts.UNKNOWN
    with pytest.raises(BspError):  # the codec itself rejects the lump
        _codec(kind).decode(memoryview(data), _CONTEXT)


@pytest.mark.parametrize("kind, data", [
    ("visibility", struct.pack("<i", 0)),  # no clusters
    ("visibility", struct.pack("<3i", 1, 12, 12) + b"\xff"),
    ("strings", b""),
    ("strings", b"a\0\0b\0"),  # an empty name between two
    (("counted", 36, 12, 4), struct.pack("<i", 1) + b"\0" * 36 + struct.pack("<2i", 0, 0)),
    (("physdisp", 4), struct.pack("<3I", 2, 1, 2) + b"xyz"),
    ("physcollide", b""),
    ("physcollide", struct.pack("<4i", 3, 8, 2, 1) + struct.pack("<i", 4) + b"abcd" + b"k\0"
     + struct.pack("<4i", -1, -1, 0, 0)),
    ("lightmaps", b"\0" * 9),  # two samples and a tail
    (12, b""),
])
def test_counts_of_edge_cases_equal_the_codecs(kind: counts.Kind, data: bytes) -> None:
    codec = _codec(kind)
    assert counts.count_from_bytes(kind, memoryview(data), "<") == codec.count(codec.decode(memoryview(data), _CONTEXT))


_CONTEXT = LumpContext(0, "TEST", 0, 20, "<", 1000)


def _codec(kind: counts.Kind) -> Any:
    """The built-in codec of a kind (numpy: the test may import it)."""
    import numpy as np

    from sourcebsp.codecs.arrays import ArrayCodec
    from sourcebsp.codecs.lighting import LightmapsCodec
    from sourcebsp.codecs.occlusion import OCCLUDER, OCCLUDER_V1, OcclusionCodec
    from sourcebsp.codecs.physics import PhysCollideCodec, PhysDispCodec
    from sourcebsp.codecs.textures import StringDataCodec
    from sourcebsp.codecs.visibility import VisibilityCodec

    if isinstance(kind, int):
        return ArrayCodec(np.dtype(f"V{kind}"))
    if isinstance(kind, tuple):
        if kind[0] == "counted":
            return OcclusionCodec(OCCLUDER if kind[1] == OCCLUDER.itemsize else OCCLUDER_V1)
        return PhysDispCodec("<u2" if kind[1] == 2 else "<u4")
    return {"visibility": VisibilityCodec, "strings": StringDataCodec, "physcollide": PhysCollideCodec,
            "lightmaps": LightmapsCodec}[kind]()

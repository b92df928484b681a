"""codecs/counts.py: the element counts ``info`` prints, without numpy.

Every count comes from the lump tables' own entries (a record's size, a codec's walk of
its headers): each is held here to what the codec itself counts after decoding, on every
lump of every branch's example room and of every corpus map, and to the codec's verdict
on the edge cases where a count is given or left to the codec.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

import sourcebsp
from sourcebsp import BspFile
from sourcebsp.codecs import counts, records, tables, textures
from sourcebsp.codecs.base import Deferred, LumpContext, Record
from sourcebsp.codecs.geometry import VECTOR
from sourcebsp.errors import BspError
from sourcebsp.examples.branches import example_branch_bytes, example_branches
from sourcebsp.lump_ids import LumpId
from sourcebsp.respawn import RespawnBsp
from sourcebsp.variants import VARIANTS, LazyLayouts

from .conftest import CORPUS


def _checked_counts(bsp: BspFile) -> int:
    """Every lump of ``bsp`` that its table counts: the count equals the decoded one."""
    table = bsp.variant.layouts.table  # type: ignore[attr-defined]
    checked = 0
    for lump, entry in bsp.iter_lumps():
        kind = counts.lookup(table, int(lump), entry.version)
        if kind in ("codec", "raw"):
            continue
        got = counts.count_from_bytes(kind, bsp.lump_bytes(lump), bsp.endian)
        assert got == bsp.count(lump), (table, bsp.lump_name(lump))
        checked += 1
    return checked


def test_counts_equal_the_decoded_counts_on_every_corpus_lump(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        assert _checked_counts(bsp) > 0


@pytest.mark.parametrize("name", example_branches())
def test_counts_equal_the_decoded_counts_on_every_branch_example(name: str) -> None:
    versions = sorted(VARIANTS[name].versions) or [None]
    for version in versions:
        data = example_branch_bytes(name, bsp_version=version)
        with BspFile.from_bytes(data, variant=name) as bsp:
            assert isinstance(bsp.variant.layouts, LazyLayouts)
            assert _checked_counts(bsp) > 10, (name, version)


def _respawn_counts(bsp: RespawnBsp, table: str) -> int:
    checked = 0
    for index, entry in bsp.iter_lumps():
        kind = counts.lookup(table, index, entry.version)
        if kind in ("codec", "raw"):
            assert bsp.count(index) is None or index == 0, index  # only ENTITIES has a codec of its own
            continue
        assert counts.count_from_bytes(kind, memoryview(bsp.raw(index)), "<") == bsp.count(index), index
        checked += 1
    return checked


@pytest.mark.parametrize("name", ["titanfall", "titanfall2"])
def test_rbsp_counts_equal_the_decoded_counts(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.bsp"
    path.write_bytes(example_branch_bytes(name))
    with RespawnBsp.open(path) as bsp:
        assert _respawn_counts(bsp, VARIANTS[name].layouts.table) > 10  # type: ignore[attr-defined]
    crossfire = CORPUS / "other-engines" / "titanfall2_mp_crossfire.bsp"
    if name == "titanfall2" and crossfire.exists():
        with RespawnBsp.open(crossfire) as bsp:
            assert _respawn_counts(bsp, "TITANFALL2") > 10


def test_lookup_resolves_lump_versions_as_the_variant_does() -> None:
    for variant in VARIANTS.values():
        if not isinstance(variant.layouts, LazyLayouts):
            continue
        for lump in range(64):
            for version in (0, 1, 2, 3, 7):
                codec = variant.codec(lump, version)
                kind = counts.lookup(variant.layouts.table, lump, version)
                assert (kind == "raw") == (codec is None), (variant.name, lump, version)
                if isinstance(kind, Record):
                    assert codec.dtype == kind.dtype.newbyteorder(variant.endian)  # type: ignore[union-attr]
                elif isinstance(kind, Deferred):
                    assert codec is kind.codec()
                elif codec is not None:
                    assert kind in ("codec", codec), (variant.name, lump, version)
    assert counts.lookup("no such table", 1, 0) is None
    # The entities, pakfile and game lump are read by their own codecs, numpy-free.
    assert {counts.lookup("SDK2013", lump, 0) for lump in tables.SOLE_MODULES} == {"codec"}


_OCCLUSION = records.OCCLUSION[LumpId.OCCLUSION]
_PHYSDISP_V2 = records.PHYSICS_V25[LumpId.PHYSDISP][2]
_PHYSDISP = records.PHYSICS[LumpId.PHYSDISP][0]
_PHYSCOLLIDE = records.PHYSICS[LumpId.PHYSCOLLIDE][0]
_VISIBILITY = records.VISIBILITY[LumpId.VISIBILITY][None]
_LIGHTMAPS = records.LIGHTING[LumpId.LIGHTING][0]
_STRINGS = textures.LAYOUTS[LumpId.TEXDATA_STRING_DATA][0]


@pytest.mark.parametrize("kind, data", [
    (VECTOR, b"\0" * 13),  # not a whole number of records
    (_STRINGS, b"name\0last"),  # the last name without its NUL
    (_VISIBILITY, struct.pack("<3i", 1, 12, 99)),  # a row offset past the lump
    (_VISIBILITY, struct.pack("<i", -1)),
    (_OCCLUSION[2], struct.pack("<3i", 0, 0, 0) + b"x"),  # bytes after the vertex indices
    (_OCCLUSION[2], struct.pack("<i", 5)),
    (_PHYSDISP, struct.pack("<3H", 2, 1, 1) + b"x"),  # one blob byte short
    (_PHYSCOLLIDE, struct.pack("<4i", 0, 8, 0, 1) + struct.pack("<i", 9) + b"\0" * 4),  # solid past dataSize
    (_PHYSCOLLIDE, struct.pack("<4i", 0, 0, 0, 0)),  # no terminator
])
def test_what_the_codec_would_reject_is_left_to_the_codec(kind: counts.Kind, data: bytes) -> None:
    assert counts.count_from_bytes(kind, memoryview(data), "<") is counts.UNKNOWN
    with pytest.raises(BspError):  # the codec itself rejects the lump
        _codec(kind).decode(memoryview(data), _CONTEXT)


@pytest.mark.parametrize("kind, data", [
    (_VISIBILITY, struct.pack("<i", 0)),  # no clusters
    (_VISIBILITY, struct.pack("<3i", 1, 12, 12) + b"\xff"),
    (_STRINGS, b""),
    (_STRINGS, b"a\0\0b\0"),  # an empty name between two
    (_OCCLUSION[1], struct.pack("<i", 1) + b"\0" * 36 + struct.pack("<2i", 0, 0)),
    (_PHYSDISP_V2, struct.pack("<3I", 2, 1, 2) + b"xyz"),
    (_PHYSCOLLIDE, b""),
    (_PHYSCOLLIDE, struct.pack("<4i", 3, 8, 2, 1) + struct.pack("<i", 4) + b"abcd" + b"k\0"
     + struct.pack("<4i", -1, -1, 0, 0)),
    (_LIGHTMAPS, b"\0" * 9),  # two samples and a tail
    (VECTOR, b""),
])
def test_counts_of_edge_cases_equal_the_codecs(kind: counts.Kind, data: bytes) -> None:
    codec = _codec(kind)
    assert counts.count_from_bytes(kind, memoryview(data), "<") == codec.count(codec.decode(memoryview(data), _CONTEXT))


_CONTEXT = LumpContext(0, "TEST", 0, 20, "<", 1000)


def _codec(kind: Any) -> Any:
    """The codec a table entry stands for (numpy: the test may import it)."""
    from sourcebsp.codecs.arrays import ArrayCodec

    if isinstance(kind, Record):
        return ArrayCodec(kind.dtype)
    return kind.codec() if isinstance(kind, Deferred) else kind

"""The entity lump read lazily: what it costs in memory, and that it reads and
writes exactly what an entity whose strings were all built does.

References: the file's own size and bytes, the lump's bytes, Python's
tracemalloc, and the public Entity API writing a block afresh.
"""
from __future__ import annotations

import copy
import pickle
import tracemalloc
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.codecs.entities import Entity, EntitySyntaxError, parse_entities
from sourcebsp.compression import lzma_compress

# What an edit + save costs whatever the map's size: the header and lump
# directory, the write plan, the output file's buffer.  On the corpus' smallest
# maps (34-130 KB files, a few KB of entities) the whole run peaks at 50-110 KB.
FIXED_COST = 128 * 1024


def lump_bytes(path: Path) -> bytes:
    with sourcebsp.open(path) as bsp:
        if not bsp.has_lump(LumpId.ENTITIES):
            pytest.skip("no entity lump")
        return bytes(bsp.lump_bytes(LumpId.ENTITIES))


def edit_and_save(path: Path, out: Path) -> None:
    bsp = sourcebsp.open(path)
    try:
        bsp.entities[0]["sourcebsp_probe"] = "v"
        bsp.save(out)
    finally:
        bsp.close()


def peak(action: object) -> int:
    tracemalloc.start()
    try:
        action()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_edit_and_save_peak_memory(map_path: Path, tmp_path: Path) -> None:
    """Open, change one worldspawn key and save: at most 1.5x the file's size
    (plus fixed costs), where building every entity's strings took 9-16x."""
    data = lump_bytes(map_path)
    edit_and_save(map_path, tmp_path / "warm.bsp")  # imports and compiled patterns are not the map's cost
    allowed = int(1.5 * map_path.stat().st_size) + FIXED_COST
    with sourcebsp.open(map_path) as bsp:
        compressed = bytes(bsp.raw_lump(LumpId.ENTITIES)[:4]) == b"LZMA"
    if compressed:
        # The edited lump is compressed again: the LZMA encoder's own tables
        # (about 2 MB whatever the input) are a cost of compression, not of entities.
        allowed += peak(lambda: lzma_compress(bytes(len(data))))
    used = peak(lambda: edit_and_save(map_path, tmp_path / "edited.bsp"))
    assert used <= allowed, (used, allowed)
    with sourcebsp.open(tmp_path / "edited.bsp") as saved:
        assert saved.entities[0]["sourcebsp_probe"] == "v"
        assert len(saved.entities) == len(parse_entities(data))


def test_lazy_and_eager_entities_write_the_same_bytes(map_path: Path) -> None:
    data = lump_bytes(map_path)
    lazy = parse_entities(data)
    eager = parse_entities(data)
    for entity in eager:  # every string built
        assert entity.items() is not None and entity.trail is not None
    assert lazy.to_bytes() == eager.to_bytes() == data
    # Entities pickled each with its own block's bytes write the lump again too.
    assert pickle.loads(pickle.dumps(eager)).to_bytes() == data
    assert copy.deepcopy(lazy).to_bytes() == data

    # One entity changed, in the middle: only its block is written afresh.
    reference = parse_entities(data)
    k = len(reference) // 2
    pieces = [reference._head] + [e.to_text(reference.newline) + e.trail for e in reference]
    assert "".join(pieces).encode("utf-8", "surrogateescape") == data.split(b"\0", 1)[0]
    fresh = Entity(reference[k].items() + [("sourcebsp_probe", "1")])
    pieces[k + 1] = fresh.to_text(reference.newline) + reference[k].trail
    expected = "".join(pieces).encode("utf-8", "surrogateescape") + b"\0"
    for entities in (lazy, eager):
        entities[k]["sourcebsp_probe"] = "1"
        assert entities[k].changed and entities.changed
        assert entities.to_bytes()[: len(expected)] == expected


def test_entities_are_read_the_same_lazily_and_eagerly(map_path: Path) -> None:
    data = lump_bytes(map_path)
    eager = parse_entities(data)
    eager_pairs = [e.items() for e in eager]
    lazy = parse_entities(data)
    # Asked for from the end first, one at a time: the same pairs, and the same objects again.
    for index in reversed(range(len(lazy))):
        assert lazy[index].items() == eager_pairs[index]
        assert lazy[index] is lazy[index]
    assert [e.to_text() for e in lazy] == [e.to_text() for e in eager]


def test_syntax_error_in_the_last_block_is_raised_at_decode(corpus_file) -> None:
    data = lump_bytes(corpus_file("v42_rot_main.bsp"))
    text = data.split(b"\0", 1)[0]
    last_close = text.rindex(b"}")
    broken = text[:last_close] + b" " + text[last_close + 1 :] + b"\0"
    with pytest.raises(EntitySyntaxError) as info:
        parse_entities(broken, file_offset=5000)
    at = text.rindex(b"{")  # the last block's brace, never closed now
    line_start = text.rfind(b"\n", 0, at) + 1
    error = info.value
    assert "never closed" in str(error)
    assert (error.lump_offset, error.offset) == (at, 5000 + at)
    assert error.line == text.count(b"\n", 0, at) + 1
    assert error.column == len(text[line_start:at].decode("utf-8", "surrogateescape")) + 1


def test_entities_outlive_the_closed_map(corpus_file) -> None:
    path = corpus_file("v42_rot_main.bsp")
    data = lump_bytes(path)
    with sourcebsp.open(path) as bsp:
        entities = bsp.entities
        first = entities[0].items()
    assert entities[0].items() == first
    assert entities[-1].items() == parse_entities(data)[-1].items()
    assert entities.to_bytes() == data


def test_writable_buffers_are_copied() -> None:
    buffer = bytearray(b'{"classname" "worldspawn"}\n{"classname" "info_target"}\n\x00')
    entities = parse_entities(memoryview(buffer))
    buffer[14:24] = b"xxxxxxxxxx"
    assert entities[0].classname == "worldspawn"
    assert entities.to_bytes() == b'{"classname" "worldspawn"}\n{"classname" "info_target"}\n\x00'


def test_entities_not_yet_read_are_not_none() -> None:
    entities = parse_entities(b'{"classname" "worldspawn"}\n{"classname" "info_target"}\n\x00')
    assert None not in entities  # type: ignore[comparison-overlap]
    with pytest.raises(ValueError):
        entities.index(None)
    assert [e.classname for e in entities[1:]] == ["info_target"]

"""Lump patch files (sourcebsp/lumpfile.py): mapname_l_N.lmp."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.lumpfile import (
    LumpFile,
    RevisionMismatchError,
    apply_lump_file,
    lump_file_name,
    read_lump_file,
    write_lump_file,
)


def test_write_read_apply_gives_back_the_same_map(map_path: Path, tmp_path: Path) -> None:
    """Every non-empty lump, written to a .lmp, read back and applied: the map is unchanged."""
    original = map_path.read_bytes()
    with sourcebsp.open(map_path) as bsp:
        lumps = [lump for lump, _ in bsp.iter_lumps()]
        files = {}
        for number, lump in enumerate(lumps):
            files[lump] = write_lump_file(bsp, lump, lump_file_name(tmp_path / map_path.name, number))
    with sourcebsp.open(map_path) as bsp:
        for lump in lumps:
            read = read_lump_file(files[lump])
            assert read.lump == lump and read.map_revision == bsp.map_revision
            assert read.version == bsp.entry(lump).version
            apply_lump_file(bsp, read)
        out = bsp.save(tmp_path / "patched.bsp")
    assert out.read_bytes() == original


def test_header_layout(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_test_physcollide.bsp")
    with sourcebsp.open(source) as bsp:
        path = write_lump_file(bsp, LumpId.ENTITIES, lump_file_name(tmp_path / source.name))
        entities = bytes(bsp.lump_bytes(LumpId.ENTITIES))
        revision, version = bsp.map_revision, bsp.entry(LumpId.ENTITIES).version
    assert path.name == "tf2_test_physcollide_l_0.lmp"
    raw = path.read_bytes()
    # lumpfileheader_t: lumpOffset, lumpID, lumpVersion, lumpLength, mapRevision.
    assert struct.unpack_from("<5i", raw) == (20, 0, version, len(entities), revision)
    assert raw[20:] == entities
    assert tuple(read_lump_file(path)) == (LumpId.ENTITIES, version, revision, entities)


def test_big_endian_map_writes_a_big_endian_header(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("x360_shack.bsp")
    with sourcebsp.open(source) as bsp:
        path = write_lump_file(bsp, LumpId.PLANES, tmp_path / "shack_l_0.lmp")
        planes = bytes(bsp.lump_bytes(LumpId.PLANES))
        revision = bsp.map_revision
    raw = path.read_bytes()
    assert struct.unpack_from(">5i", raw) == (20, 1, 0, len(planes), revision)
    assert read_lump_file(path).data == planes


def test_patched_entities_reach_srctools(tmp_path: Path, corpus_file) -> None:
    """An edited entity lump shipped as a lump file changes the map as the engine would see it."""
    from srctools.bsp import BSP

    source = corpus_file("tf2_test_physcollide.bsp")
    with sourcebsp.open(source) as bsp:
        entities = bytes(bsp.lump_bytes(LumpId.ENTITIES))
        assert b'"skyname" "sky_tf2_04"' in entities
        patched = entities.replace(b'"skyname" "sky_tf2_04"', b'"skyname" "sky_badlands_01"')
        lump_file = LumpFile(LumpId.ENTITIES, bsp.entry(LumpId.ENTITIES).version, bsp.map_revision + 1, patched)
        apply_lump_file(bsp, lump_file)
        out = bsp.save(tmp_path / "patched.bsp")
    with sourcebsp.open(out) as bsp:
        assert bytes(bsp.lump_bytes(LumpId.ENTITIES)) == patched
        assert bytes(bsp.lump_bytes(LumpId.PHYSCOLLIDE)) == bytes(sourcebsp.open(source).lump_bytes(LumpId.PHYSCOLLIDE))
    assert BSP(out).ents.spawn["skyname"] == "sky_badlands_01"


def test_lump_version_comes_from_the_lump_file(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_test_physcollide.bsp")
    with sourcebsp.open(source) as bsp:
        data = bytes(bsp.lump_bytes(LumpId.OCCLUSION))
        assert bsp.entry(LumpId.OCCLUSION).version == 2
        value = apply_lump_file(bsp, LumpFile(LumpId.OCCLUSION, 1, bsp.map_revision, data))
        assert value.occluders.dtype.itemsize == 36  # read with the version-1 layout
        out = bsp.save(tmp_path / "v1.bsp")
    with sourcebsp.open(out) as bsp:
        assert bsp.entry(LumpId.OCCLUSION).version == 1


def test_older_revision_is_refused_unless_asked(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_test_physcollide.bsp")
    with sourcebsp.open(source) as bsp:
        old = LumpFile(LumpId.ENTITIES, 0, bsp.map_revision - 1, b'{\n"classname" "worldspawn"\n}\n\x00')
        with pytest.raises(RevisionMismatchError, match="older"):
            apply_lump_file(bsp, old)
        assert not bsp.is_loaded(LumpId.ENTITIES)  # nothing was changed
        apply_lump_file(bsp, old, check_revision=False)
        out = bsp.save(tmp_path / "forced.bsp")
    with sourcebsp.open(out) as bsp:
        assert bytes(bsp.lump_bytes(LumpId.ENTITIES)) == old.data


def test_apply_from_a_path_and_overwrite_guard(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_mp_lobby.bsp")
    with sourcebsp.open(source) as bsp:
        path = write_lump_file(bsp, "physcollide", tmp_path / "mp_lobby_l_0.lmp")
        with pytest.raises(sourcebsp.BspError, match="overwrite"):
            write_lump_file(bsp, "physcollide", path)
        value = apply_lump_file(bsp, path)
        assert len(value) == len(sourcebsp.open(source).physcollide)


def test_malformed_lump_files(tmp_path: Path) -> None:
    short = tmp_path / "short.lmp"
    short.write_bytes(b"\x14\0\0\0")
    with pytest.raises(sourcebsp.TruncatedError):
        read_lump_file(short)
    cut = tmp_path / "cut.lmp"
    cut.write_bytes(struct.pack("<5i", 20, 0, 0, 100, 1) + b"x" * 10)
    with pytest.raises(sourcebsp.TruncatedError) as caught:
        read_lump_file(cut)
    assert caught.value.offset == 20
    garbage = tmp_path / "garbage.lmp"
    garbage.write_bytes(struct.pack("<5i", 20, 99, 0, 0, 1))
    with pytest.raises(sourcebsp.BspFormatError, match="not a lump file"):
        read_lump_file(garbage)

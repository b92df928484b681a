"""The pakfile (lump 40) on every corpus map, checked against zipfile, srctools
and a reading of the zip directory by the engine's rules, done here with struct.
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import srctools.bsp

import sourcebsp
from sourcebsp import BspFormatError, LumpId, UnsupportedError
from sourcebsp.codecs.pakfile import XZIP_COMMENT, ZIP_LZMA, ZIP_STORED, Pakfile

HEADER_SIZE = 1036


# ---- independent readings of the file ------------------------------------------------------------
def pak_location(data: bytes) -> tuple[int, int]:
    """(fileofs, filelen) of lump 40 from the raw header, in either lump_t field order."""
    endian = "<" if data[:4] == b"VBSP" else ">"
    fields = struct.unpack_from(endian + "4i", data, 8 + 16 * 40)
    for offset, length in ((fields[0], fields[1]), (fields[1], fields[2])):  # std, then L4D2 order
        if offset >= HEADER_SIZE and offset + length <= len(data) and length >= 22:
            tail = data[offset : offset + length]
            if tail.rfind(b"PK\x05\x06", max(0, len(tail) - 22 - 0xFFFF)) >= 0:
                return offset, length
    raise AssertionError("no pakfile lump found")


def raw_pak(path: Path) -> bytes:
    data = path.read_bytes()
    offset, length = pak_location(data)
    return data[offset : offset + length]


def engine_directory(zip_bytes: bytes) -> list[tuple[str, int, int, int]]:
    """(name, data position, stored size, crc) per file, as zip_utils.cpp reads them.

    The end record's comment selects the XZip format; in format 2 a central
    directory entry is followed by its name only.
    """
    end = zip_bytes.rfind(b"PK\x05\x06")
    _, _, _, _, count, _, cd_offset, comment_length = struct.unpack_from("<IHHHHIIH", zip_bytes, end)
    comment = zip_bytes[end + 22 : end + 22 + comment_length]
    compatible = not (comment[:3].upper() == b"XZP" and comment[3:4] == b"2")
    out, position = [], cd_offset
    for _ in range(count):
        fields = struct.unpack_from("<IHHHHHHIIIHHHHHII", zip_bytes, position)
        assert fields[0] == 0x02014B50
        crc, stored, name_len, extra_len, comment_len, local = fields[7], fields[8], fields[10], fields[11], fields[12], fields[16]
        name = zip_bytes[position + 46 : position + 46 + name_len].decode("cp437")
        out.append((name, local + 30 + name_len + extra_len, stored, crc))
        position += 46 + name_len + ((extra_len + comment_len) if compatible else 0)
    return out


def is_xzp2(zip_bytes: bytes) -> bool:
    end = zip_bytes.rfind(b"PK\x05\x06")
    return zip_bytes[end + 22 : end + 26] == b"XZP2"


def srctools_pak(path: Path) -> zipfile.ZipFile | None:
    """srctools' reading of the pakfile; None for big-endian console maps, which it does not read."""
    if path.read_bytes()[:4] == b"PSBV":
        with pytest.raises(ValueError):
            srctools.bsp.BSP(path)
        return None
    return srctools.bsp.BSP(path).pakfile


# ---- reading ---------------------------------------------------------------------------------------
def test_file_list_matches_zipfile_srctools_and_engine(map_path: Path) -> None:
    raw = raw_pak(map_path)
    engine = engine_directory(raw)
    with sourcebsp.open(map_path) as bsp:
        pak = bsp.pakfile
        assert isinstance(pak, Pakfile)
        names = pak.names()
        assert names == [e[0] for e in engine]
        assert bsp.count(LumpId.PAKFILE) == len(engine)
        plain = zipfile.ZipFile(io.BytesIO(raw))
        if is_xzp2(raw):
            # zipfile takes the phantom extra-field lengths of XZP2 entries at their word
            # and swallows the following entries; the engine (and sourcebsp) does not.
            assert pak.xzip_format == 2
            assert len(plain.namelist()) < len(names)
        else:
            assert pak.xzip_format == 1
            assert names == plain.namelist()
            for entry, info in zip(pak.entries(), plain.infolist()):
                assert (entry.size, entry.compressed_size, entry.compress_type, entry.crc) == \
                    (info.file_size, info.compress_size, info.compress_type, info.CRC)
            # The directory as sourcebsp reads it, without zipfile: every field zipfile gives.
            members = [slot.info for slot in pak._slots]
            assert [(m.name, m.flag_bits, m.date_time, m.header_offset) for m in members] == \
                [(i.filename, i.flag_bits, i.date_time, i.header_offset) for i in plain.infolist()]
        theirs = srctools_pak(map_path)
        if theirs is not None:
            assert names == theirs.namelist()
        assert all(name in pak for name in names)
        assert all(name.upper() in pak for name in names)  # the engine ignores case


def test_contents_match_the_stored_bytes(map_path: Path) -> None:
    raw = raw_pak(map_path)
    engine = engine_directory(raw)
    theirs = srctools_pak(map_path)
    with sourcebsp.open(map_path) as bsp:
        pak = bsp.pakfile
        for (name, contents), (engine_name, position, stored, crc) in zip(pak.iter_files(), engine):
            assert name == engine_name
            assert zlib.crc32(contents) == crc
            entry = pak.get_entry(name)
            if entry.compress_type == ZIP_STORED:
                assert contents == raw[position : position + stored]
            if theirs is not None:
                assert contents == theirs.read(name)
            assert pak.read(name) == contents


def test_decode_then_encode_is_identical(map_path: Path, tmp_path: Path) -> None:
    original = map_path.read_bytes()
    with sourcebsp.open(map_path) as bsp:
        pak = bsp.pakfile
        assert not pak.modified
        codec = bsp.codec(LumpId.PAKFILE)
        assert codec is not None and codec.mutable
        ctx = bsp._context(LumpId.PAKFILE)
        assert codec.encode(pak, ctx) == raw_pak(map_path) == bytes(bsp.lump_bytes(LumpId.PAKFILE))
        assert bsp.to_bytes() == original
        out = bsp.save(tmp_path / "same.bsp", reencode=True)
    assert out.read_bytes() == original


def test_pakfile_offsets_are_relative_to_the_lump(map_path: Path) -> None:
    """Every corpus pakfile counts zip offsets from the lump: the end record follows the directory."""
    raw = raw_pak(map_path)
    end = raw.rfind(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack_from("<II", raw, end + 12)
    assert cd_offset + cd_size == end
    with sourcebsp.open(map_path) as bsp:
        assert bsp.pakfile.offset_base == "lump"


# ---- editing -----------------------------------------------------------------------------------------
ADDED_NAME = "materials/sourcebsp_test/added.vmt"
ADDED_DATA = b'"UnlitGeneric"\r\n{\r\n\t"$basetexture" "dev/dev_measuregeneric01"\r\n}\r\n' + bytes(range(256))


def test_add_then_remove_restores_the_file_list(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        pak = bsp.pakfile
        before = list(pak.iter_files())
        pak.add(ADDED_NAME, ADDED_DATA)
        assert pak.modified and len(pak) == len(before) + 1
        assert pak.names()[-1] == ADDED_NAME and pak.read(ADDED_NAME.upper()) == ADDED_DATA
        pak.remove(ADDED_NAME)
        assert ADDED_NAME not in pak
        assert list(pak.iter_files()) == before
        if pak.xzip_format == 2:
            with pytest.raises(UnsupportedError):
                pak.to_bytes()
            return
        # The rebuilt archive holds the same files, and zipfile finds nothing wrong with it.
        rebuilt = pak.to_bytes()
        again = Pakfile(rebuilt)
        assert list(again.iter_files()) == before
        check = zipfile.ZipFile(io.BytesIO(rebuilt))
        assert check.testzip() is None
        assert check.comment == zipfile.ZipFile(io.BytesIO(raw_pak(map_path))).comment


def local_headers(zip_bytes: bytes) -> list[tuple[int, ...]]:
    archive = zipfile.ZipFile(io.BytesIO(zip_bytes))
    return [struct.unpack_from("<IHHHHHIIIHH", zip_bytes, i.header_offset) for i in archive.infolist()]


def test_add_save_reopen(map_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "added.bsp"
    with sourcebsp.open(map_path) as bsp:
        pak = bsp.pakfile
        before = dict(pak.iter_files())
        others = {i: bytes(bsp.lump_bytes(i)) for i in range(64)
                  if i not in (LumpId.PAKFILE, LumpId.GAME_LUMP)}
        games = [(g.id, g.data) for g in bsp.game_lumps]
        pak.add(ADDED_NAME, ADDED_DATA)
        if pak.xzip_format == 2:
            with pytest.raises(UnsupportedError, match="XZP2"):
                bsp.save(out)
            assert not out.exists()
            return
        bsp.save(out)
    data = out.read_bytes()
    with sourcebsp.open(out) as bsp:
        pak = bsp.pakfile
        assert pak.read(ADDED_NAME) == ADDED_DATA
        assert {n: d for n, d in pak.iter_files() if n != ADDED_NAME} == before
        assert {i: bytes(bsp.lump_bytes(i)) for i in others} == others
        assert [(g.id, g.data) for g in bsp.game_lumps] == games
        # The pakfile is the last lump of the re-laid file.
        entry = bsp.entry(LumpId.PAKFILE)
        for lump, other in bsp.iter_lumps():
            if lump != LumpId.PAKFILE:
                assert other.fileofs + other.filelen <= entry.fileofs
        assert entry.fileofs + entry.filelen <= len(data) < entry.fileofs + entry.filelen + 4
    # What bspzip writes: stored, no data descriptor, no encryption, no zip64, zero dates.
    raw = raw_pak(out)
    new = [h for h, info in zip(local_headers(raw), zipfile.ZipFile(io.BytesIO(raw)).infolist())
           if info.filename == ADDED_NAME]
    signature, needed, flags, method, time, date = new[0][:6]
    assert (signature, needed, flags & 0x0009, method, time, date) == (0x04034B50, 10, 0, 0, 0, 0)
    assert not any(info.extra for info in zipfile.ZipFile(io.BytesIO(raw)).infolist())
    assert engine_directory(raw)[-1][0] == ADDED_NAME
    theirs = srctools.bsp.BSP(out).pakfile
    assert theirs.read(ADDED_NAME) == ADDED_DATA
    assert sorted(theirs.namelist()) == sorted([*before, ADDED_NAME])


def test_replace_keeps_the_place_and_ignores_case(corpus_file, tmp_path: Path) -> None:
    path = corpus_file("css_2000.bsp")
    with sourcebsp.open(path) as bsp:
        pak = bsp.pakfile
        names = pak.names()
        target = names[3]
        pak.add(target.upper().replace("/", "\\"), b"replaced")
        assert len(pak) == len(names)
        assert pak.read(target) == b"replaced"
        assert pak.names()[3] == target.upper()  # the new spelling, in the old place
        bsp.save(tmp_path / "replaced.bsp")
    theirs = srctools.bsp.BSP(tmp_path / "replaced.bsp").pakfile
    assert theirs.read(target.upper()) == b"replaced"
    with pytest.raises(KeyError):
        Pakfile(raw_pak(path)).remove("no/such/file.vmt")


def test_lzma_entries_are_an_option(corpus_file, tmp_path: Path) -> None:
    path = corpus_file("csgo_2000.bsp")
    with sourcebsp.open(path) as bsp:
        pak = bsp.pakfile
        before = dict(pak.iter_files())
        pak.set_compression(ZIP_LZMA)
        pak.add(ADDED_NAME, ADDED_DATA * 50, compression="lzma")
        bsp.save(tmp_path / "lzma.bsp")
    raw = raw_pak(tmp_path / "lzma.bsp")
    infos = zipfile.ZipFile(io.BytesIO(raw)).infolist()
    assert {i.compress_type for i in infos} == {zipfile.ZIP_LZMA}
    assert sum(i.compress_size for i in infos) < sum(i.file_size for i in infos)
    theirs = srctools.bsp.BSP(tmp_path / "lzma.bsp").pakfile
    with sourcebsp.open(tmp_path / "lzma.bsp") as bsp:
        ours = dict(bsp.pakfile.iter_files())
    assert ours == {**before, ADDED_NAME: ADDED_DATA * 50}
    assert {n: theirs.read(n) for n in theirs.namelist()} == ours
    with pytest.raises(ValueError):
        Pakfile().add("x.txt", b"", compression=zipfile.ZIP_DEFLATED)


def test_lzma_entries_of_a_corpus_map_are_read_and_kept(corpus_file, tmp_path: Path) -> None:
    """tf2c_vipr_downfall packs LZMA entries; a changed pakfile keeps them LZMA."""
    path = corpus_file("tf2c_vipr_downfall.bsp")
    with sourcebsp.open(path) as bsp:
        pak = bsp.pakfile
        assert {e.compression for e in pak.entries()} == {"lzma"}
        before = dict(pak.iter_files())
        pak.add(ADDED_NAME, ADDED_DATA)
        bsp.save(tmp_path / "tf2c.bsp")
    with sourcebsp.open(tmp_path / "tf2c.bsp") as bsp:
        pak = bsp.pakfile
        kinds = {e.name: e.compression for e in pak.entries()}
        assert kinds.pop(ADDED_NAME) == "stored" and set(kinds.values()) == {"lzma"}
        assert {n: d for n, d in pak.iter_files() if n != ADDED_NAME} == before


def test_new_pakfile_is_what_bspzip_writes() -> None:
    pak = Pakfile()
    assert len(pak) == 0 and pak.to_bytes() == b""  # an absent pakfile stays absent
    pak.add("a.txt", b"a")
    pak.remove("a.txt")
    empty = pak.to_bytes()
    assert empty == b"PK\x05\x06" + bytes(16) + struct.pack("<H", 32) + XZIP_COMMENT  # 54 bytes


def test_pakfile_stays_last_when_it_was_not(corpus_file, tmp_path: Path) -> None:
    """vtmb_sp_genesisdevice_1 stores its entities after the pakfile; a re-laid map does not."""
    path = corpus_file("vtmb_sp_genesisdevice_1.bsp")
    with sourcebsp.open(path) as bsp:
        assert bsp.entry(LumpId.ENTITIES).fileofs > bsp.entry(LumpId.PAKFILE).fileofs
        bsp.pakfile.add(ADDED_NAME, ADDED_DATA)
        bsp.save(tmp_path / "vtmb.bsp")
    with sourcebsp.open(tmp_path / "vtmb.bsp") as bsp:
        pak = bsp.entry(LumpId.PAKFILE)
        assert all(e.fileofs + e.filelen <= pak.fileofs for l, e in bsp.iter_lumps() if l != LumpId.PAKFILE)
        assert bsp.pakfile.read(ADDED_NAME) == ADDED_DATA


# ---- extraction --------------------------------------------------------------------------------------
def test_extract_all(map_path: Path, tmp_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        pak = bsp.pakfile
        written = pak.extract_all(tmp_path / "out")
        files = dict(pak.iter_files())
    assert len(written) == len(files)
    on_disk = sorted(p for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert sorted(written) == on_disk
    for name, contents in files.items():
        assert (tmp_path / "out" / name.replace("\\", "/")).read_bytes() == contents


@pytest.mark.parametrize("bad", ["../evil.txt", "materials/../../evil.txt", "/etc/evil.txt",
                                 "C:\\evil.txt", "materials\\..\\..\\evil.txt"])
def test_extract_refuses_path_traversal(corpus_file, tmp_path: Path, bad: str) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("materials/fine.vmt", b"fine")
        archive.writestr(bad, b"evil")
    copy = tmp_path / "evil.bsp"
    with sourcebsp.open(corpus_file("css_2000.bsp")) as bsp:
        bsp.pakfile = Pakfile(buffer.getvalue())
        bsp.save(copy)
    folder = tmp_path / "deep" / "out"
    with sourcebsp.open(copy) as bsp:
        assert bsp.pakfile.names()[-1] == bad
        with pytest.raises(BspFormatError, match="refusing to extract") as info:
            bsp.pakfile.extract_all(folder)
        entry = zipfile.ZipFile(io.BytesIO(raw_pak(copy))).infolist()[1]
        assert info.value.offset == bsp.entry(LumpId.PAKFILE).fileofs + entry.header_offset
    assert not folder.exists() and not (tmp_path / "evil.txt").exists()
    with pytest.raises(ValueError, match="bad archive name"):
        Pakfile().add(bad, b"evil")


# ---- damaged input -----------------------------------------------------------------------------------
def damaged(source: Path, tmp_path: Path, where: int, patch: bytes) -> Path:
    data = bytearray(source.read_bytes())
    data[where : where + len(patch)] = patch
    copy = tmp_path / ("damaged_" + source.name)
    copy.write_bytes(bytes(data))
    return copy


def test_corrupt_central_directory(corpus_file, tmp_path: Path) -> None:
    path = corpus_file("css_de_rats.bsp")
    offset, length = pak_location(path.read_bytes())
    raw = raw_pak(path)
    end = raw.rfind(b"PK\x05\x06")
    cd_offset = struct.unpack_from("<I", raw, end + 16)[0]
    copy = damaged(path, tmp_path, offset + cd_offset, b"JUNK")
    with sourcebsp.open(copy) as bsp:
        with pytest.raises(BspFormatError) as info:
            bsp.pakfile
    # The error points at the damaged entry: the first one, where the end record says the directory starts.
    assert info.value.offset == offset + cd_offset and info.value.lump == "PAKFILE"
    assert f"file offset {offset + cd_offset}" in str(info.value) and "bad zip data" in str(info.value)
    assert "bad signature of central directory entry 0" in str(info.value)


def test_truncated_pakfile(corpus_file, tmp_path: Path) -> None:
    """The lump's length cut short: the end record is gone."""
    path = corpus_file("css_2000.bsp")
    data = path.read_bytes()
    offset, length = pak_location(data)
    fields = list(struct.unpack_from("<4i", data, 8 + 16 * 40))
    assert fields[:2] == [offset, length]
    copy = damaged(path, tmp_path, 8 + 16 * 40 + 4, struct.pack("<i", length // 2))
    with sourcebsp.open(copy) as bsp:
        with pytest.raises(BspFormatError, match="end-of-central-directory") as info:
            bsp.pakfile
    assert info.value.offset == offset


def test_corrupt_file_data(corpus_file, tmp_path: Path) -> None:
    path = corpus_file("css_2000.bsp")
    offset, _ = pak_location(path.read_bytes())
    name, position, stored, _ = engine_directory(raw_pak(path))[2]
    copy = damaged(path, tmp_path, offset + position, b"\xff" * 8)
    with sourcebsp.open(copy) as bsp:
        pak = bsp.pakfile
        assert pak.read(pak.names()[0])  # the others still read
        with pytest.raises(BspFormatError, match="CRC") as info:
            pak.read(name)
        header_offset = zipfile.ZipFile(io.BytesIO(raw_pak(copy))).getinfo(name).header_offset
        assert info.value.offset == offset + header_offset


def test_end_record_count_disagrees(corpus_file, tmp_path: Path) -> None:
    path = corpus_file("css_2000.bsp")
    offset, length = pak_location(path.read_bytes())
    end = raw_pak(path).rfind(b"PK\x05\x06")
    copy = damaged(path, tmp_path, offset + end + 8, struct.pack("<HH", 3, 3))
    with sourcebsp.open(copy) as bsp:
        with pytest.raises(BspFormatError, match="lists 3 files") as info:
            bsp.pakfile
    assert info.value.offset == offset + end


# ---- zip offsets counted from the file start ---------------------------------------------------------
def file_relative(zip_bytes: bytes, base: int) -> bytes:
    """The archive with every offset counted from ``base`` bytes before it (as old bspzip wrote)."""
    out = bytearray(zip_bytes)
    end = zip_bytes.rfind(b"PK\x05\x06")
    count, _, cd_offset = struct.unpack_from("<HII", zip_bytes, end + 10)
    position = cd_offset
    for _ in range(count):
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", zip_bytes, position + 28)
        local = struct.unpack_from("<I", zip_bytes, position + 42)[0]
        struct.pack_into("<I", out, position + 42, local + base)
        position += 46 + name_len + extra_len + comment_len
    struct.pack_into("<I", out, end + 16, cd_offset + base)
    return bytes(out)


@pytest.fixture()
def file_relative_map(corpus_file, tmp_path: Path) -> tuple[Path, Path]:
    source = corpus_file("css_2000.bsp")
    data = bytearray(source.read_bytes())
    offset, length = pak_location(bytes(data))
    data[offset : offset + length] = file_relative(bytes(data[offset : offset + length]), offset)
    path = tmp_path / "file_relative.bsp"
    path.write_bytes(bytes(data))
    return source, path


def test_file_relative_offsets_are_read(file_relative_map: tuple[Path, Path]) -> None:
    source, path = file_relative_map
    with sourcebsp.open(source) as bsp:
        expected = dict(bsp.pakfile.iter_files())
    with sourcebsp.open(path) as bsp:
        pak = bsp.pakfile
        assert pak.offset_base == "file"
        assert dict(pak.iter_files()) == expected
        assert bsp.to_bytes() == path.read_bytes()  # untouched: byte-identical
    theirs = srctools.bsp.BSP(path).pakfile  # zipfile copes with the shift as well
    assert {n: theirs.read(n) for n in theirs.namelist()} == expected


def test_file_relative_offsets_move_with_the_lump(file_relative_map: tuple[Path, Path], tmp_path: Path) -> None:
    source, path = file_relative_map
    with sourcebsp.open(path) as bsp:
        expected = dict(bsp.pakfile.iter_files())
        vertexes = np.concatenate([bsp.vertexes, bsp.vertexes[:5]])
        bsp.set_lump(LumpId.VERTEXES, vertexes)
        old = bsp.entry(LumpId.PAKFILE).fileofs
        bsp.save(tmp_path / "moved.bsp")
    moved = (tmp_path / "moved.bsp").read_bytes()
    offset, length = pak_location(moved)
    assert offset == old + 60
    raw = moved[offset : offset + length]
    assert raw == file_relative(raw_pak(source), offset)  # the same archive, counted from the new place
    with sourcebsp.open(tmp_path / "moved.bsp") as bsp:
        assert bsp.pakfile.offset_base == "file"
        assert dict(bsp.pakfile.iter_files()) == expected


@pytest.mark.parametrize("junk", [0xFFFFFFF0, 0])
def test_file_relative_offsets_that_point_outside_the_lump_stay_as_they_are(file_relative_map: tuple[Path, Path],
                                                                           tmp_path: Path, junk: int) -> None:
    """An entry whose local header offset points outside the archive (junk from a file) is
    no offset into it: moving the lump leaves it as it was, near 2**32 too (no overflow)."""
    _, path = file_relative_map
    data = bytearray(path.read_bytes())
    offset, length = pak_location(bytes(data))
    end = bytes(data).rfind(b"PK\x05\x06", offset, offset + length)
    cd_offset = struct.unpack_from("<I", data, end + 16)[0]  # counted from the file start
    first = cd_offset  # the first entry of the central directory
    struct.pack_into("<I", data, first + 42, junk)
    damaged = tmp_path / "junk.bsp"
    damaged.write_bytes(bytes(data))
    with sourcebsp.open(damaged) as bsp:
        assert bsp.pakfile.offset_base == "file"
        bsp.set_lump(LumpId.VERTEXES, np.concatenate([bsp.vertexes, bsp.vertexes[:5]]))
        bsp.save(tmp_path / "moved.bsp")
    moved = (tmp_path / "moved.bsp").read_bytes()
    new_offset, new_length = pak_location(moved)
    assert (new_offset, new_length) == (offset + 60, length)
    raw = moved[new_offset : new_offset + new_length]
    assert struct.unpack_from("<I", raw, first - offset + 42)[0] == junk  # left as it was
    second = first - offset + 46 + sum(struct.unpack_from("<HHH", raw, first - offset + 28))
    assert struct.unpack_from("<I", raw, second + 42)[0] == \
        struct.unpack_from("<I", data, offset + second + 42)[0] + 60  # the others moved


def test_changed_file_relative_pakfile_is_written_lump_relative(file_relative_map: tuple[Path, Path],
                                                                 tmp_path: Path) -> None:
    _, path = file_relative_map
    with sourcebsp.open(path) as bsp:
        expected = {**dict(bsp.pakfile.iter_files()), ADDED_NAME: ADDED_DATA}
        bsp.pakfile.add(ADDED_NAME, ADDED_DATA)
        bsp.save(tmp_path / "changed.bsp")
    raw = raw_pak(tmp_path / "changed.bsp")
    end = raw.rfind(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack_from("<II", raw, end + 12)
    assert cd_offset + cd_size == end
    archive = zipfile.ZipFile(io.BytesIO(raw))
    assert {n: archive.read(n) for n in archive.namelist()} == expected
    with sourcebsp.open(tmp_path / "changed.bsp") as bsp:
        assert bsp.pakfile.offset_base == "lump"


# ---- XZP2 (Xbox 360) ---------------------------------------------------------------------------------
def test_xzp2_directory_is_read_as_the_engine_reads_it(corpus_file) -> None:
    path = corpus_file("x360_shack.bsp")
    raw = raw_pak(path)
    assert is_xzp2(raw)
    engine = engine_directory(raw)
    with sourcebsp.open(path) as bsp:
        pak = bsp.pakfile
        assert pak.names() == [e[0] for e in engine]
        assert len(pak) == struct.unpack_from("<H", raw, raw.rfind(b"PK\x05\x06") + 10)[0] == 5
        for (name, position, stored, crc) in engine:
            assert position % 2048 == 0  # data aligned as the comment "XZP2 2048" says
            assert pak.read(name) == raw[position : position + stored]
        assert pak.to_bytes() == raw


def test_moving_an_untouched_pakfile_does_not_read_it(corpus_file, tmp_path: Path) -> None:
    """Lump-relative offsets need no change when the lump moves: a damaged pakfile is carried as is."""
    path = corpus_file("css_2000.bsp")
    offset, length = pak_location(path.read_bytes())
    end = raw_pak(path).rfind(b"PK\x05\x06")
    cd_offset = struct.unpack_from("<I", raw_pak(path), end + 16)[0]
    copy = damaged(path, tmp_path, offset + cd_offset, b"JUNK")
    with sourcebsp.open(copy) as bsp:
        bsp.set_lump(LumpId.VERTEXES, np.concatenate([bsp.vertexes, bsp.vertexes[:1]]))
        bsp.save(tmp_path / "moved.bsp")
        assert not bsp.is_loaded(LumpId.PAKFILE)
    moved = (tmp_path / "moved.bsp").read_bytes()
    new_offset, new_length = pak_location(moved)
    assert new_offset == offset + 12
    assert moved[new_offset : new_offset + new_length] == raw_pak(copy)


# ---- the central directory, read without zipfile ----------------------------------------------------
def _zip_of(names: list[str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for index, name in enumerate(names):
            archive.writestr(zipfile.ZipInfo(name, date_time=(2001, 2, 3, 4, 5, 6 + 2 * index)), name.encode() * 3)
    return out.getvalue()


def _patch_entry(data: bytes, index: int, at: int, value: bytes) -> bytes:
    """``data`` with bytes ``at`` of central directory entry ``index`` replaced (standard zip layout)."""
    end = data.rfind(b"PK\x05\x06")
    position = struct.unpack_from("<I", data, end + 16)[0]
    for _ in range(index):
        position += 46 + sum(struct.unpack_from("<HHH", data, position + 28))
    out = bytearray(data)
    out[position + at : position + at + len(value)] = value
    return bytes(out)


def test_names_dates_and_offsets_are_read_as_zipfile_reads_them() -> None:
    names = ["materials/a.vmt", "sound/é.wav", "models/ü.mdl"]
    data = _zip_of(names)  # zipfile flags the non-ASCII names as UTF-8 (bit 11)
    # The third entry's flags cleared in the central directory: its name is read as code page 437,
    # as zipfile reads it (whose reading of the file then finds the local header's name differs).
    data = _patch_entry(data, 2, 8, b"\0\0")
    pak, plain = Pakfile(data), zipfile.ZipFile(io.BytesIO(data))
    assert pak.names() == plain.namelist() and pak.names()[1] == "sound/é.wav"
    assert pak.names()[2] == names[2].encode().decode("cp437") != names[2]
    assert [(s.info.date_time, s.info.header_offset) for s in pak._slots] == \
        [(i.date_time, i.header_offset) for i in plain.infolist()]
    assert [pak.read(n) for n in names[:2]] == [plain.read(n) for n in names[:2]]


def test_a_name_cut_at_a_nul_as_zipfile_cuts_it() -> None:
    data = _zip_of(["scripts/a.txt"])
    end = data.rfind(b"PK\x05\x06")
    name_at = struct.unpack_from("<I", data, end + 16)[0] + 46
    patched = bytearray(data)
    patched[name_at + 9] = 0  # "scripts/a\0txt" in the central directory
    pak = Pakfile(bytes(patched))
    assert pak.names() == zipfile.ZipFile(io.BytesIO(bytes(patched))).namelist() == ["scripts/a"]


def test_bad_utf8_name_is_a_format_error() -> None:
    data = _patch_entry(_zip_of(["sound/é.wav"]), 0, 46 + len("sound/"), b"\xff")
    with pytest.raises(BspFormatError, match="bad zip data") as info:
        Pakfile(data, offset=1000)
    assert info.value.offset == 1000 + struct.unpack_from("<I", data, data.rfind(b"PK\x05\x06") + 16)[0]


def test_a_newer_zip_version_is_unsupported_as_zipfile_finds_it() -> None:
    data = _patch_entry(_zip_of(["a.txt", "b.txt"]), 1, 6, bytes([64]))  # "version needed" 6.4
    with pytest.raises(NotImplementedError):
        zipfile.ZipFile(io.BytesIO(data))
    with pytest.raises(UnsupportedError, match="zip file version 6.4"):
        Pakfile(data)


@pytest.mark.parametrize("delta", [-1, 1, 46])
def test_directory_size_that_does_not_hold_the_entries(delta: int) -> None:
    data = bytearray(_zip_of(["a.txt", "b.txt"]))
    end = data.rfind(b"PK\x05\x06")
    size, start = struct.unpack_from("<II", data, end + 12)
    struct.pack_into("<II", data, end + 12, size + delta, start - delta)  # still ends at the end record
    with pytest.raises(zipfile.BadZipFile):  # zipfile reads it as damaged too (or as more entries)
        if len(zipfile.ZipFile(io.BytesIO(bytes(data))).infolist()) != 2:
            raise zipfile.BadZipFile("count")
    with pytest.raises(BspFormatError, match="bad zip data") as info:
        Pakfile(bytes(data), offset=500)
    assert info.value.offset is not None and info.value.offset >= 500

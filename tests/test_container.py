"""BspFile: construction without I/O, lazy decoding, saving and re-laying."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import BspFile, LumpId
from sourcebsp.header import HEADER_SIZE


def test_empty_map_is_valid() -> None:
    bsp = BspFile()
    assert bsp.version == 20 and bsp.file_size == 0
    assert len(bsp.planes) == 0
    data = bsp.to_bytes()
    assert len(data) == HEADER_SIZE
    again = BspFile.from_bytes(data)
    assert again.version == 20 and all(e.filelen == 0 for e in again.header.lumps)


def test_lumps_decode_lazily(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        assert not any(bsp.is_loaded(i) for i in range(64))
        bsp.vertexes
        assert bsp.is_loaded(LumpId.VERTEXES)
        assert [i for i in range(64) if bsp.is_loaded(i)] == [LumpId.VERTEXES]


def test_from_bytes_equals_open(map_path: Path) -> None:
    data = map_path.read_bytes()
    from_bytes = BspFile.from_bytes(data)
    with sourcebsp.open(map_path) as opened:
        assert from_bytes.header == opened.header
        np.testing.assert_array_equal(from_bytes.planes, opened.planes)
        assert from_bytes.to_bytes() == data


def test_lump_access_by_name_index_and_id(corpus_file) -> None:
    with sourcebsp.open(corpus_file("tf2_test2.bsp")) as bsp:
        assert bsp["planes"] is bsp[1] is bsp[LumpId.PLANES] is bsp.planes
        with pytest.raises(KeyError):
            bsp["no_such_lump"]
        with pytest.raises(KeyError):
            bsp[64]


def test_decoded_arrays_are_read_only_views(corpus_file) -> None:
    with sourcebsp.open(corpus_file("tf2_test2.bsp")) as bsp:
        planes = bsp.planes
        assert not planes.flags.writeable
        with pytest.raises(ValueError):
            planes["dist"][0] = 1.0


def test_save_refuses_to_overwrite_input(corpus_file, tmp_path: Path) -> None:
    copy = tmp_path / "map.bsp"
    copy.write_bytes(corpus_file("tf2_mp_lobby.bsp").read_bytes())
    with sourcebsp.open(copy) as bsp:
        with pytest.raises(sourcebsp.BspError, match="overwrite"):
            bsp.save(copy)
        planes = bsp.planes.copy()
        planes["dist"] += 1.0
        bsp.planes = planes
        bsp.save(copy, overwrite=True)
    with sourcebsp.open(copy) as bsp:
        np.testing.assert_array_equal(bsp.planes["dist"], planes["dist"])
    assert [p.name for p in tmp_path.iterdir()] == ["map.bsp"]  # no temporary left behind


def test_save_refuses_the_input_by_any_name(corpus_file, tmp_path: Path) -> None:
    """A symbolic link, a hard link or a path through another folder name the same file."""
    original = tmp_path / "map.bsp"
    original.write_bytes(corpus_file("tf2_mp_lobby.bsp").read_bytes())
    (tmp_path / "link.bsp").symlink_to(original)
    os.link(original, tmp_path / "hard.bsp")
    (tmp_path / "sub").mkdir()
    names = [tmp_path / "link.bsp", tmp_path / "hard.bsp", tmp_path / "sub" / ".." / "map.bsp"]
    with sourcebsp.open(original) as bsp:
        for name in names:
            with pytest.raises(sourcebsp.BspError, match="overwrite"):
                bsp.save(name)
        bsp.save(tmp_path / "other.bsp")  # a new file is fine
    with sourcebsp.open(tmp_path / "link.bsp") as bsp:
        with pytest.raises(sourcebsp.BspError, match="overwrite"):
            bsp.save(original)
    assert original.read_bytes() == corpus_file("tf2_mp_lobby.bsp").read_bytes()


def test_save_refuses_the_inputs_name_after_another_file_took_it(corpus_file, tmp_path: Path) -> None:
    original = tmp_path / "map.bsp"
    original.write_bytes(corpus_file("tf2_mp_lobby.bsp").read_bytes())
    with sourcebsp.open(original) as bsp:
        (tmp_path / "newer.bsp").write_bytes(b"the user's newer file")
        os.replace(tmp_path / "newer.bsp", original)  # as an editor saving atomically does
        with pytest.raises(sourcebsp.BspError, match="overwrite"):
            bsp.save(original)
    assert original.read_bytes() == b"the user's newer file"


def _edit_and_save(source: Path, out: Path) -> np.ndarray:
    with sourcebsp.open(source) as bsp:
        planes = np.concatenate([bsp.planes, bsp.planes[:3]])  # changes the lump's size
        bsp.planes = planes
        bsp.save(out)
    return planes


def test_edited_map_is_relaid(map_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "edited.bsp"
    planes = _edit_and_save(map_path, out)
    with sourcebsp.open(map_path) as before, sourcebsp.open(out) as after:
        np.testing.assert_array_equal(after.planes, planes)
        assert after.header.lump_order == before.header.lump_order
        assert after.endian == before.endian and after.map_revision == before.map_revision
        ends = []
        for index, entry in enumerate(after.header.lumps):
            old = before.header.lumps[index]
            assert entry.version == old.version
            if index == LumpId.PLANES or not entry.filelen:
                continue
            assert entry.fileofs % 4 == 0
            ends.append(entry.fileofs + entry.filelen)
            if index == LumpId.GAME_LUMP:
                continue  # its absolute offsets move with it
            # Untouched lumps are byte-identical, compression included.
            assert bytes(after.raw_lump(index)) == bytes(before.raw_lump(index)), after.lump_name(index)
        # The pakfile is the last lump in the file.
        pak = after.entry(LumpId.PAKFILE)
        if pak.filelen:
            assert pak.fileofs + pak.filelen == max(ends)
            assert 0 <= after.file_size - max(ends) < 4  # end padded to 4 bytes
        # Game lumps survive the move.
        assert [(g.id, g.version, g.flags, g.data) for g in after.game_lumps] == \
            [(g.id, g.version, g.flags, g.data) for g in before.game_lumps]


def test_edit_then_restore_gives_identical_content(corpus_file, tmp_path: Path) -> None:
    source = corpus_file("tf2c_vipr_downfall.bsp")  # LZMA lumps and game lumps
    edited, restored = tmp_path / "edited.bsp", tmp_path / "restored.bsp"
    _edit_and_save(source, edited)
    with sourcebsp.open(source) as original:
        planes = original.planes.copy()
    with sourcebsp.open(edited) as bsp:
        bsp.planes = planes
        bsp.save(restored)
    with sourcebsp.open(source) as a, sourcebsp.open(restored) as b:
        for index in range(64):
            assert bytes(a.lump_bytes(index)) == bytes(b.lump_bytes(index)) or index == LumpId.GAME_LUMP
        assert [g.data for g in a.game_lumps] == [g.data for g in b.game_lumps]


def test_saved_file_has_ordinary_permissions(corpus_file, tmp_path: Path) -> None:
    import os
    import stat

    out = tmp_path / "out.bsp"
    with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp")) as bsp:
        bsp.save(out)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    out.chmod(0o640)
    with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp")) as bsp:
        bsp.save(out)  # replacing a file keeps its mode
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_closed_map_raises(corpus_file, tmp_path: Path) -> None:
    with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp")) as bsp:
        bsp.entities  # something decoded before closing
    assert bsp.closed and "closed" in repr(bsp)
    for access in (lambda: bsp.planes, lambda: bsp.entities, lambda: bsp.get_lump(LumpId.FACES),
                   lambda: bsp.lump_or_none(LumpId.FACES), lambda: bsp.raw_lump(LumpId.PLANES),
                   lambda: bsp.lump_bytes(LumpId.PLANES), lambda: bsp.decode_all(),
                   lambda: bsp.to_bytes(), lambda: bsp.save(tmp_path / "out.bsp"),
                   lambda: bsp.set_lump(LumpId.PLANES, np.zeros(0))):
        with pytest.raises(sourcebsp.ClosedMapError, match="closed"):
            access()
    with pytest.raises(ValueError):  # like I/O on a closed file
        bsp.planes
    assert not (tmp_path / "out.bsp").exists()
    assert bsp.version == 20 and bsp.entry(LumpId.PLANES).filelen > 0  # the header stays readable


def test_closed_in_memory_map_raises() -> None:
    bsp = BspFile()
    bsp.close()
    with pytest.raises(sourcebsp.ClosedMapError):
        bsp.to_bytes()


def test_from_bytes_arrays_are_read_only() -> None:
    data = bytearray(BspFile().to_bytes())
    bsp = BspFile.from_bytes(data)
    assert not bsp.planes.flags.writeable


def test_typed_attribute_of_a_raw_lump_raises(corpus_file) -> None:
    # VTMB's occlusion lump has version 0, for which no layout is known.
    with sourcebsp.open(corpus_file("vtmb_sp_genesisdevice_1.bsp")) as bsp:
        assert isinstance(bsp.get_lump(LumpId.OCCLUSION), sourcebsp.RawLump)
        assert bsp.lump_or_none(LumpId.OCCLUSION) is None
        with pytest.raises(sourcebsp.UnsupportedError, match="get_lump"):
            bsp.occlusion
        # The accessors' table: a raw lump is None, or an error naming the purpose.
        for call in (lambda: bsp.lump_or_none(LumpId.OCCLUSION, "read occluders"),
                     lambda: bsp.lump_or_raise(LumpId.OCCLUSION, "read occluders")):
            with pytest.raises(sourcebsp.UnsupportedError, match="cannot read occluders") as exc:
                call()
            assert exc.value.lump == "OCCLUSION" and exc.value.offset == bsp.entry(LumpId.OCCLUSION).fileofs


def test_accessors_on_a_missing_lump() -> None:
    bsp = BspFile()
    assert bsp.lump_or_none(LumpId.PLANES) is None and bsp.lump_or_none(LumpId.PLANES, "x") is None
    with pytest.raises(sourcebsp.BspFormatError, match="cannot build meshes: the map has no PLANES lump"):
        bsp.lump_or_raise(LumpId.PLANES, "build meshes")
    planes = bsp.get_lump(LumpId.PLANES)
    assert len(planes) == 0
    # A value read or set on the map is found even when the file has none (an edit saves it).
    assert bsp.lump_or_raise(LumpId.PLANES, "x") is planes


@pytest.mark.parametrize("container", ["BspFile", "RespawnBsp"])
def test_lump_attributes_cover_every_lump(container: str) -> None:
    """Both containers have every lump's attribute (from the one TypedLumps they share)."""
    import sourcebsp
    from sourcebsp.container import LumpAttr

    cls = getattr(sourcebsp, container)
    attrs = {name: value for klass in reversed(cls.__mro__) for name, value in vars(klass).items()
             if isinstance(value, LumpAttr)}
    assert sorted(a.lump for a in attrs.values()) == list(LumpId)
    assert all(name == attr.lump.name.lower() for name, attr in attrs.items())


def test_decoded_lumps_survive_pickle_and_deepcopy(map_path: Path) -> None:
    """A decoded lump sent to another process (pickled) or deep-copied is the same lump: same
    type, and it encodes to the same bytes (views of the map become copies of their bytes)."""
    import copy
    import pickle

    with sourcebsp.open(map_path) as bsp:
        decoded = bsp.decode_all()
        assert decoded
        for lump, value in decoded.items():
            codec = bsp.codec(lump)
            context = bsp._context(int(lump))
            want = None if codec is None or isinstance(value, sourcebsp.RawLump) else codec.encode(value, context)
            for copied in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value)):
                assert type(copied) is type(value), bsp.lump_name(lump)
                if want is not None:
                    assert codec.encode(copied, context) == want, bsp.lump_name(lump)

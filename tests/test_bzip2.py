"""Maps packed whole with bzip2 (``MAP.bsp.bz2``, as FastDL folders hold them), opened in memory."""
from __future__ import annotations

import bz2
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sourcebsp
from sourcebsp import BspError, CompressionError, DecompressionLimitError, Limits
from sourcebsp.cli import main
from sourcebsp.compression import bzip2_decompress, is_bzip2


def _packed(path: Path, folder: Path, level: int = 1) -> Path:
    out = folder / (path.name + ".bz2")
    out.write_bytes(bz2.compress(path.read_bytes(), compresslevel=level))
    return out


@pytest.mark.slow
def test_every_corpus_map_opens_from_bz2_with_the_same_lumps(map_path: Path, tmp_path: Path) -> None:
    packed = _packed(map_path, tmp_path)
    with sourcebsp.open(map_path) as plain, sourcebsp.open(packed) as unpacked:
        assert unpacked.path == packed
        assert unpacked.file_size == plain.file_size == map_path.stat().st_size
        assert (unpacked.version, unpacked.variant, unpacked.map_revision) == \
            (plain.version, plain.variant, plain.map_revision)
        assert unpacked.header.lumps == plain.header.lumps
        for lump, _ in plain.iter_lumps():
            assert bytes(unpacked.raw_lump(lump)) == bytes(plain.raw_lump(lump)), lump
    # Nothing is written beside the input (no temporary file left or made there).
    assert sorted(p.name for p in tmp_path.iterdir()) == [packed.name]


def test_magic_needs_the_block_size_digit() -> None:
    assert is_bzip2(bz2.compress(b"x"))
    assert not is_bzip2(b"BZh0....")  # '0' is no block size
    assert not is_bzip2(b"BZ")
    assert not is_bzip2(b"VBSP")


def test_budget_tied_to_the_compressed_size() -> None:
    assert Limits().bzip2_for(1000) == 256 << 20
    assert Limits().bzip2_for(100 << 20) == 3200 << 20
    assert Limits(bzip2_size=5).bzip2_for(100 << 20) == 5


def test_a_bomb_is_refused_having_produced_no_more_than_the_budget(tmp_path: Path) -> None:
    bomb = bz2.compress(bytes(8 << 20), compresslevel=9)  # 8 MiB of zeros in about 50 bytes
    assert len(bomb) < 200
    with pytest.raises(DecompressionLimitError) as caught:
        bzip2_decompress(bomb, limits=Limits(bzip2_size=1 << 20))
    assert caught.value.limit == "bzip2_size"
    assert caught.value.needed == (1 << 20) + 1  # stopped one byte past the budget, not at 64 MiB
    path = tmp_path / "bomb.bsp.bz2"
    path.write_bytes(bomb)
    with pytest.raises(DecompressionLimitError):
        sourcebsp.open(path, limits=Limits(bzip2_size=1 << 20))
    # Under a budget large enough it is simply not a map.
    with pytest.raises(BspError) as other:
        sourcebsp.open(path)
    assert not isinstance(other.value, DecompressionLimitError)


def test_truncated_corrupt_and_trailing_bytes_are_bsp_errors(corpus_file, tmp_path: Path) -> None:
    data = bz2.compress(corpus_file("tf2_test2.bsp").read_bytes())
    cases = {
        "truncated": data[: len(data) // 2],
        "corrupt": data[:100] + bytes(b ^ 0x55 for b in data[100:400]) + data[400:],
        "trailing": data + b"not bzip2",
    }
    for name, broken in cases.items():
        path = tmp_path / f"{name}.bsp.bz2"
        path.write_bytes(broken)
        with pytest.raises(CompressionError) as caught:
            sourcebsp.open(path)
        assert str(path) in str(caught.value), name
    assert "truncated" in str(pytest.raises(CompressionError, sourcebsp.open, tmp_path / "truncated.bsp.bz2").value)


def test_streams_one_after_another_are_joined(corpus_file, tmp_path: Path) -> None:
    data = corpus_file("tf2_test2.bsp").read_bytes()
    half = len(data) // 2
    path = tmp_path / "two.bsp.bz2"
    path.write_bytes(bz2.compress(data[:half]) + bz2.compress(data[half:]) + bytes(16))  # NUL padding allowed
    with sourcebsp.open(path) as bsp:
        assert bsp.file_size == len(data)
        assert bytes(bsp.raw_lump(sourcebsp.LumpId.PLANES)) == \
            bytes(sourcebsp.open(corpus_file("tf2_test2.bsp")).raw_lump(sourcebsp.LumpId.PLANES))


def _same_reports(plain: Path, packed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``info``, ``entities`` and ``props`` give the same JSON for the map and its ``.bz2`` (but the path)."""
    for command in (["info", "--json"], ["entities", "--json"], ["props", "--json"]):
        assert main([command[0], str(plain), *command[1:]]) == 0
        expected = json.loads(capsys.readouterr().out)
        assert main([command[0], str(packed), *command[1:]]) == 0
        found = json.loads(capsys.readouterr().out)
        if command[0] == "info":
            assert found.pop("path") == str(packed)
            expected.pop("path")
        assert found == expected, command


def test_reading_commands_work_on_bz2(corpus_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = corpus_file("tf2_test2.bsp")
    packed = _packed(plain, tmp_path)
    _same_reports(plain, packed, capsys)
    # repack writes a plain map: byte for byte the original.
    out = tmp_path / "out.bsp"
    assert main(["repack", str(packed), "-o", str(out)]) == 0
    assert out.read_bytes() == plain.read_bytes()
    # never over the .bz2 input without --overwrite
    assert main(["repack", str(packed), "-o", str(packed)]) == 1
    assert "input map" in capsys.readouterr().err
    assert is_bzip2(packed.read_bytes()[:4])
    glb = tmp_path / "out.glb"
    assert main(["export", str(packed), "-o", str(glb)]) == 0
    assert glb.read_bytes()[:4] == b"glTF"
    vmf = tmp_path / "out.vmf"
    assert main(["decompile", str(packed), "-o", str(vmf)]) == 0
    assert "world" in vmf.read_text()


_SMALL = bz2.compress(sourcebsp.BspFile().to_bytes() + bytes(4000), 9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_SMALL) - 1), st.integers(0, 255)), min_size=1, max_size=8),
       st.integers(0, len(_SMALL)))
def test_any_damage_to_the_stream_is_a_bsp_error_or_a_map(edits: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(_SMALL)
    for at, value in edits:
        data[at] = value
    data = data[:max(cut, 4)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzzed.bsp.bz2"
        path.write_bytes(bytes(data))
        try:
            with sourcebsp.open(path) as bsp:
                bsp.decode_all()
        except BspError:
            pass


# ---- Titanfall's rBSP maps packed the same way ------------------------------------------------

@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_rbsp_commands_work_on_bz2_with_the_files_beside_the_map(variant: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.examples.respawn import write_example_respawn
    from sourcebsp import open as open_map
    from sourcebsp.opening import map_head
    from sourcebsp.respawn import RespawnBsp

    plain = write_example_respawn(tmp_path / "mp_room.bsp", variant)
    (tmp_path / "packed").mkdir()
    packed = _packed(plain, tmp_path / "packed")
    packed = packed.rename(tmp_path / "mp_room.bsp.bz2")
    assert map_head(packed) == plain.read_bytes()[:8] and is_bzip2(packed.read_bytes()[:4])
    bsp = open_map(packed)
    assert isinstance(bsp, RespawnBsp) and bsp.path == packed and bsp.variant.name == variant
    assert bsp.to_bytes() == plain.read_bytes()
    _same_reports(plain, packed, capsys)
    out = tmp_path / "out" / "mp_out.bsp"
    assert main(["repack", str(packed), "-o", str(out)]) == 0
    assert out.read_bytes() == plain.read_bytes()
    assert main(["repack", str(packed), "-o", str(packed)]) == 1  # never over the input unasked
    capsys.readouterr()
    assert is_bzip2(packed.read_bytes()[:4])
    glb, vmf = tmp_path / "out.glb", tmp_path / "out.vmf"
    assert main(["export", str(packed), "-o", str(glb)]) == 0 and glb.read_bytes()[:4] == b"glTF"
    assert main(["decompile", str(packed), "-o", str(vmf)]) == 0
    assert '"classname" "func_brush"' in vmf.read_text()


def test_the_ent_files_of_an_rbsp_bz2_are_those_of_its_map(corpus_file, tmp_path: Path) -> None:
    from sourcebsp.respawn import RespawnBsp

    source = corpus_file("other-engines/titanfall2_mp_crossfire.bsp")
    plain = tmp_path / "mp_crossfire.bsp"
    plain.write_bytes(source.read_bytes())
    assert "spawn" in RespawnBsp.open(plain).partitions
    (tmp_path / "mp_crossfire_spawn.ent").write_bytes(
        b'ENTITIES01\n{\n"classname" "info_spawnpoint_human"\n"origin" "64 0 0"\n}\n\0')
    packed = _packed(plain, tmp_path)
    plain.unlink()  # only the .bz2 and the .ent beside it
    bsp = RespawnBsp.open(packed)
    assert sorted(bsp.ent_files) == ["spawn"] and bsp.path == packed
    assert [e.classname for _, found in bsp.entity_sets()[1:] for e in found] == ["info_spawnpoint_human"]


def test_a_damaged_or_oversized_rbsp_bz2_is_a_bsp_error(tmp_path: Path) -> None:
    from sourcebsp.examples.respawn import example_respawn_bytes
    from sourcebsp import open as open_map
    from sourcebsp.opening import map_head
    from sourcebsp.respawn import RespawnBsp

    data = example_respawn_bytes("titanfall2")
    packed = tmp_path / "mp_room.bsp.bz2"
    packed.write_bytes(bz2.compress(data))
    with pytest.raises(DecompressionLimitError):
        RespawnBsp.open(packed, limits=Limits(bzip2_size=1000))
    with pytest.raises(DecompressionLimitError):
        open_map(packed, limits=Limits(bzip2_size=1000))
    damaged = bytearray(packed.read_bytes())
    damaged[20:60] = bytes(40)
    packed.write_bytes(bytes(damaged))
    assert map_head(packed) == b""  # not read as an rBSP: the Source path says what is wrong
    with pytest.raises(BspError):
        open_map(packed)

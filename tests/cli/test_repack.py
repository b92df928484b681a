"""``sourcebsp repack``."""
from __future__ import annotations

from pathlib import Path

import pytest

import sourcebsp
from sourcebsp.cli import main


@pytest.mark.parametrize("options", [[], ["--reencode"]])
def test_repack_is_byte_identical(map_path: Path, tmp_path: Path, options: list[str]) -> None:
    out = tmp_path / "out.bsp"
    assert main(["repack", str(map_path), "-o", str(out), *options]) == 0
    assert out.read_bytes() == map_path.read_bytes()


def test_compress_then_decompress(corpus_file, tmp_path: Path) -> None:
    source = corpus_file("tf2_test2.bsp")
    packed, unpacked = tmp_path / "packed.bsp", tmp_path / "unpacked.bsp"
    assert main(["repack", str(source), "-o", str(packed), "--compress"]) == 0
    assert main(["repack", str(packed), "-o", str(unpacked), "--decompress"]) == 0
    assert packed.stat().st_size < source.stat().st_size
    with sourcebsp.open(source) as a, sourcebsp.open(packed) as b, sourcebsp.open(unpacked) as c:
        assert sum(e.compressed for e in b.header.lumps) > 20
        for index in range(64):
            if index != sourcebsp.LumpId.GAME_LUMP:
                assert bytes(a.lump_bytes(index)) == bytes(b.lump_bytes(index)) == bytes(c.lump_bytes(index))


def test_repack_refuses_input_as_output(corpus_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "map.bsp"
    copy.write_bytes(corpus_file("tf2_mp_lobby.bsp").read_bytes())
    assert main(["repack", str(copy), "-o", str(copy), "--compress"]) == 1
    assert "overwrite" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["repack", str(copy), "-o", str(tmp_path / "x.bsp"), "--compress", "--decompress"])


def test_repack_reports_what_it_did(corpus_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = corpus_file("tf2_test2.bsp")
    packed = tmp_path / "packed.bsp"
    assert main(["repack", str(source), "-o", str(packed), "--compress"]) == 0
    out = capsys.readouterr().out
    with sourcebsp.open(source) as a, sourcebsp.open(packed) as b:
        lumps = (sum(e.compressed for e in a.header.lumps), sum(e.compressed for e in b.header.lumps))
    assert f"{source.stat().st_size:,} -> {packed.stat().st_size:,} bytes" in out
    assert f"compressed lumps {lumps[0]} -> {lumps[1]}" in out and "LZMA-compressed" in out


@pytest.mark.parametrize("name", ["vtmb_sp_genesisdevice_1.bsp", "css_aim_ag_texture2.bsp"])
def test_compress_is_refused_for_bsp_17_to_19(name: str, corpus_file, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    source = corpus_file(name)
    out = tmp_path / "packed.bsp"
    with sourcebsp.open(source) as bsp:
        assert 17 <= bsp.version <= 19
    assert main(["repack", str(source), "-o", str(out), "--compress"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot load LZMA" in err and "--force" in err
    assert not out.exists()
    assert main(["repack", str(source), "-o", str(out), "--compress", "--force"]) == 0
    assert "WARNING" in capsys.readouterr().err
    with sourcebsp.open(out) as bsp:
        assert any(e.compressed for e in bsp.header.lumps)

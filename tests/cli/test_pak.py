"""``sourcebsp pak``: list, extract, add, addlist, remove."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
import srctools.bsp

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.cli.pak import read_list_file

from ..codecs.test_pakfile import engine_directory, pak_location, raw_pak


def test_list_json_on_every_map(map_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pak", str(map_path), "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    raw = raw_pak(map_path)
    engine = engine_directory(raw)
    assert [row["name"] for row in listed] == [e[0] for e in engine]
    assert [row["compressed_size"] for row in listed] == [e[2] for e in engine]
    if raw[raw.rfind(b"PK\x05\x06") + 22 :][:4] != b"XZP2":
        infos = zipfile.ZipFile(io.BytesIO(raw)).infolist()
        assert [(r["size"], r["compression"]) for r in listed] == \
            [(i.file_size, "lzma" if i.compress_type == zipfile.ZIP_LZMA else "stored") for i in infos]


def test_list_table(corpus_file, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sourcebsp.cli._common.is_terminal", lambda: True)
    path = corpus_file("css_cs_crackhouse.bsp")
    assert main(["pak", str(path), "list"]) == 0
    out = capsys.readouterr().out
    total = sum(zipfile.ZipFile(io.BytesIO(raw_pak(path))).getinfo(n).file_size
                for n in zipfile.ZipFile(io.BytesIO(raw_pak(path))).namelist())
    assert f"6 files, {total:,} bytes" in out
    assert "stored" in out and "compression" in out


def test_extract(map_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "unpacked"
    assert main(["pak", str(map_path), "extract", str(folder)]) == 0
    engine = engine_directory(raw_pak(map_path))
    assert f"extracted {len(engine)} file" in capsys.readouterr().out
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert files == sorted(name.replace("\\", "/") for name, *_ in engine)


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder laid out like a game folder, made the current directory."""
    (tmp_path / "materials" / "custom").mkdir(parents=True)
    (tmp_path / "materials" / "custom" / "a.vmt").write_bytes(b'"LightmappedGeneric" {}')
    (tmp_path / "materials" / "custom" / "b.vtf").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "sound.wav").write_bytes(b"RIFF....WAVE")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def pak_files(path: Path) -> dict[str, bytes]:
    with sourcebsp.open(path) as bsp:
        return dict(bsp.pakfile.iter_files())


def test_add_files_and_folders(corpus_file, workdir: Path) -> None:
    source = corpus_file("css_2000.bsp")
    before = pak_files(source)
    assert main(["pak", str(source), "add", "materials", "sound.wav", "-o", "out.bsp"]) == 0
    assert main(["pak", "out.bsp", "add", str(workdir / "sound.wav"), "--as", "sound/custom/x.wav",
                 "-o", "out2.bsp"]) == 0
    expected = {
        **before,
        "materials/custom/a.vmt": (workdir / "materials/custom/a.vmt").read_bytes(),
        "materials/custom/b.vtf": (workdir / "materials/custom/b.vtf").read_bytes(),
        "sound.wav": b"RIFF....WAVE",
        "sound/custom/x.wav": b"RIFF....WAVE",
    }
    assert pak_files(workdir / "out2.bsp") == expected
    theirs = srctools.bsp.BSP(workdir / "out2.bsp").pakfile
    assert {n: theirs.read(n) for n in theirs.namelist()} == expected


def test_add_lzma(corpus_file, workdir: Path) -> None:
    source = corpus_file("csgo_tooltextures.bsp")
    assert main(["pak", str(source), "add", "materials", "--as", "materials/x", "--lzma", "-o", "out.bsp"]) == 0
    infos = {i.filename: i for i in zipfile.ZipFile(io.BytesIO(raw_pak(workdir / "out.bsp"))).infolist()}
    assert infos["materials/x/custom/b.vtf"].compress_type == zipfile.ZIP_LZMA
    assert infos["materials/x/custom/b.vtf"].compress_size < 1024
    assert pak_files(workdir / "out.bsp")["materials/x/custom/b.vtf"] == bytes(range(256)) * 4


def test_addlist_reads_bspzip_list_files(corpus_file, workdir: Path) -> None:
    source = corpus_file("tf2_mp_lobby.bsp")  # an empty pakfile
    listing = workdir / "files.txt"
    listing.write_bytes(
        b"materials/custom/a.vmt\r\n" + str(workdir / "materials/custom/a.vmt").encode() + b"\r\n"
        b"sound/x.wav\nsound.wav\n\n"
    )
    assert read_list_file(listing) == [("materials/custom/a.vmt", str(workdir / "materials/custom/a.vmt")),
                                       ("sound/x.wav", "sound.wav")]
    assert main(["pak", str(source), "addlist", str(listing), "-o", "out.bsp"]) == 0
    assert pak_files(workdir / "out.bsp") == {
        "materials/custom/a.vmt": b'"LightmappedGeneric" {}', "sound/x.wav": b"RIFF....WAVE"}
    assert srctools.bsp.BSP(workdir / "out.bsp").pakfile.read("sound/x.wav") == b"RIFF....WAVE"
    listing.write_text("materials/only_a_name.vmt\n")
    assert main(["pak", str(source), "addlist", str(listing), "-o", "bad.bsp"]) == 1
    assert not (workdir / "bad.bsp").exists()


def test_remove_and_overwrite(corpus_file, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = workdir / "map.bsp"
    copy.write_bytes(corpus_file("css_cs_crackhouse.bsp").read_bytes())
    before = pak_files(copy)
    first, second = list(before)[:2]
    assert main(["pak", str(copy), "remove", first.upper(), second, "--overwrite"]) == 0
    assert "removed 2 files" in capsys.readouterr().out
    after = pak_files(copy)
    assert after == {n: d for n, d in before.items() if n not in (first, second)}
    assert sorted(srctools.bsp.BSP(copy).pakfile.namelist()) == sorted(after)


def test_errors_and_usage(corpus_file, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = str(corpus_file("css_2000.bsp"))
    # Changing commands need somewhere to write.
    with pytest.raises(SystemExit) as exit_info:
        main(["pak", source, "add", "sound.wav"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["pak", source, "add", "sound.wav", "materials", "--as", "x", "-o", "o.bsp"])
    assert exit_info.value.code == 2
    capsys.readouterr()
    # Input errors: one line, exit 1, nothing written.
    assert main(["pak", source, "remove", "no/such/file.vmt", "-o", "o.bsp"]) == 1
    assert main(["pak", source, "add", "missing.vmt", "-o", "o.bsp"]) == 1
    assert main(["pak", source, "add", "sound.wav", "--as", "../x.wav", "-o", "o.bsp"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("sourcebsp: error:") for line in err)
    assert "no/such/file.vmt" in err[0] and "missing.vmt" in err[1] and ".." in err[2]
    assert not (workdir / "o.bsp").exists()
    # The input map is not overwritten without --overwrite.
    copy = workdir / "map.bsp"
    copy.write_bytes(Path(source).read_bytes())
    assert main(["pak", str(copy), "add", "sound.wav", "-o", str(copy)]) == 1
    assert copy.read_bytes() == Path(source).read_bytes()


def test_broken_zip_is_one_line(corpus_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = corpus_file("css_de_rats.bsp")
    data = bytearray(source.read_bytes())
    offset, length = pak_location(bytes(data))
    end = offset + bytes(data[offset : offset + length]).rfind(b"PK\x05\x06")
    data[end : end + 4] = b"XXXX"
    broken = tmp_path / "broken.bsp"
    broken.write_bytes(bytes(data))
    assert main(["pak", str(broken), "list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"file offset {offset}" in err and "PAKFILE" in err


# ---- wildcards, argument order, LZMA refusal -----------------------------------------------
def test_extract_and_remove_by_pattern(corpus_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_file("tf2c_vipr_downfall.bsp")
    names = [e[0] for e in engine_directory(raw_pak(path))]
    vtf = [n for n in names if n.lower().endswith(".vtf")]
    assert 0 < len(vtf) < len(names)
    folder = tmp_path / "vtf"
    assert main(["pak", str(path), "extract", str(folder), "*.VTF"]) == 0
    assert f"extracted {len(vtf)} files" in capsys.readouterr().out
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == \
        sorted(n.replace("\\", "/") for n in vtf)
    with zipfile.ZipFile(io.BytesIO(raw_pak(path))) as archive:
        assert (folder / vtf[0]).read_bytes() == archive.read(vtf[0])
    # Remove them (both argument orders), keep the rest.
    out = tmp_path / "no_vtf.bsp"
    assert main(["pak", "remove", str(path), "*.vtf", "-o", str(out)]) == 0
    assert f"removed {len(vtf)} files" in capsys.readouterr().out
    assert main(["pak", "list", str(out), "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == [n for n in names if n not in vtf]


def test_a_pattern_that_matches_nothing_is_an_error(corpus_file, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_file("css_cs_crackhouse.bsp")
    assert main(["pak", str(path), "remove", "*.nothing", "-o", str(tmp_path / "x.bsp")]) == 1
    assert main(["pak", str(path), "extract", str(tmp_path / "d"), "*.nothing"]) == 1
    err = capsys.readouterr().err
    assert err.count("no file in the pakfile matches *.nothing") == 2
    assert not (tmp_path / "x.bsp").exists() and not (tmp_path / "d").exists()


def test_lzma_is_refused_for_engines_that_cannot_read_it(corpus_file, workdir: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    old = str(corpus_file("css_de_rats.bsp"))  # BSP 19
    assert main(["pak", old, "add", "sound.wav", "--lzma", "-o", "out.bsp"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "BSP version 19" in err and "--force" in err
    assert not (workdir / "out.bsp").exists()
    assert main(["pak", old, "add", "sound.wav", "--lzma", "--force", "-o", "out.bsp"]) == 0
    assert "WARNING" in capsys.readouterr().err
    assert main(["pak", "out.bsp", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[-1]["compression"] == "lzma"

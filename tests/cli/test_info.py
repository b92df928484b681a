"""``sourcebsp info``."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from sourcebsp.cli import main
from sourcebsp.header import read_header


def test_info_json_describes_every_nonempty_lump(map_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(map_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    data = map_path.read_bytes()
    header = read_header(data)
    # Independent facts straight from the file.
    assert report["ident"] == data[:4].decode()
    assert report["version"] == struct.unpack("<>"[data[:4] == b"PSBV"] + "i", data[4:8])[0]
    assert report["endianness"] == ("big" if data[:4] == b"PSBV" else "little")
    assert report["file_size"] == len(data)
    assert report["map_revision"] == header.map_revision
    nonempty = [i for i, e in enumerate(header.lumps) if e.filelen]
    assert [l["index"] for l in report["lumps"]] == nonempty
    for row in report["lumps"]:
        entry = header.lumps[row["index"]]
        assert set(row) >= {"index", "name", "version", "offset", "length", "compressed", "count"}
        assert (row["offset"], row["length"], row["version"]) == (entry.fileofs, entry.filelen, entry.version)
        assert row["compressed"] == (entry.fourcc != 0)
        assert row["count"] is None or row["count"] >= 0
    by_name = {row["name"]: row for row in report["lumps"]}
    assert by_name["PLANES"]["count"] == by_name["PLANES"]["uncompressed_length"] // 20
    entities = header.lumps[0]
    if not entities.compressed:  # compressed entity text cannot be counted from the file bytes
        assert report["entity_count"] == data[entities.fileofs : entities.fileofs + entities.filelen].count(b"{")
    assert isinstance(report["game_lumps"], list)


def test_info_table(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(corpus_file("l4d2_tooltextures.bsp"))]) == 0
    out = capsys.readouterr().out
    assert "left4dead2" in out and "PLANES" in out and "l4d2" in out


@pytest.mark.parametrize("bad", ["missing.bsp", "README.md"])
def test_bad_input_is_one_line_exit_1(bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / bad
    if bad.endswith(".md"):
        path.write_text("# not a map\n")
    assert main(["info", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("sourcebsp: error:")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    with pytest.raises(SystemExit) as info:
        main(["info"])
    assert info.value.code == 2

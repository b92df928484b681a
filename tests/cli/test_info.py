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


def _damaged_example(tmp_path: Path) -> tuple[Path, int]:
    """The example map with an entity lump that does not parse; (path, the lump's file offset)."""
    from sourcebsp.examples import example_map_bytes

    data = bytearray(example_map_bytes())
    header = read_header(bytes(data))
    start = header.lumps[0].fileofs
    brace = data.index(b"}", start)
    data[brace : brace + 1] = b"{"  # an unclosed block
    path = tmp_path / "damaged.bsp"
    path.write_bytes(bytes(data))
    return path, start


def test_damaged_lump_is_reported_and_the_rest_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, offset = _damaged_example(tmp_path)
    assert main(["info", str(path), "--json"]) == 1
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert captured.err.count("\n") == 1 and "damaged" in captured.err
    assert [d["lump"] for d in report["damaged"]] == ["ENTITIES"]
    damage = report["damaged"][0]
    assert damage["offset"] >= offset and str(damage["offset"]) in damage["error"]
    rows = {row["name"]: row for row in report["lumps"]}
    assert rows["ENTITIES"]["damaged"] and rows["ENTITIES"]["count"] is None
    assert rows["PLANES"]["count"] == rows["PLANES"]["length"] // 20 and not rows["PLANES"]["damaged"]
    assert report["entity_count"] == 0
    # The table says so too.
    assert main(["info", str(path)]) == 1
    out = capsys.readouterr().out
    assert "DAMAGED" in out and "damaged: lump ENTITIES" in out


def test_strict_stops_at_the_first_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = _damaged_example(tmp_path)
    assert main(["info", str(path), "--strict"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "lump ENTITIES" in captured.err


def test_many_maps_in_worker_processes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.examples import write_example_map

    folder = tmp_path / "maps"
    folder.mkdir()
    for name in ("a.bsp", "b.bsp", "c.bsp"):
        write_example_map(folder / name)
    (folder / "d.bsp").write_bytes(b"VBSP" + bytes(10))  # cannot be read at all
    _damaged_example(folder)
    assert main(["info", str(folder), "--json", "--jobs", "2"]) == 1
    captured = capsys.readouterr()
    reports = json.loads(captured.out)
    assert captured.out == json.dumps(reports, indent=2) + "\n"  # the workers' texts, joined
    assert [Path(r["path"]).name for r in reports] == ["a.bsp", "b.bsp", "c.bsp", "d.bsp", "damaged.bsp"]
    assert set(reports[3]) == {"path", "error"} and "sourcebsp: error:" in captured.err
    assert "damaged.bsp is damaged" in captured.err
    assert reports[4]["damaged"] and not reports[0]["damaged"]
    for jobs in ("1", "3", "8"):  # one share, uneven shares, more workers than maps
        assert main(["info", str(folder), "--json", "--jobs", jobs]) == 1
        assert capsys.readouterr() == captured
    assert main(["info", str(folder / "a.bsp"), str(folder / "b.bsp"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == reports[:2]
    with pytest.raises(SystemExit):
        main(["info", str(folder), "--jobs", "0"])


def test_the_corpus_in_two_workers_gives_the_reports_of_one(all_maps: list[Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Every corpus map, dealt out to two worker processes by size, is reported as by one process,
    in the order given."""
    paths = [str(p) for p in all_maps]
    assert main(["info", *paths, "--json", "--jobs", "2"]) == 0
    printed = capsys.readouterr().out
    two = json.loads(printed)
    assert printed == json.dumps(two, indent=2) + "\n"  # the workers' texts, joined
    assert main(["info", *paths, "--json", "--jobs", "1"]) == 0
    assert json.loads(capsys.readouterr().out) == two
    assert [r["path"] for r in two] == paths and all(r["lumps"] for r in two)


def test_a_truncated_download_lists_every_lump_and_reads_the_whole_ones(
        tmp_path: Path, corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    """A map cut short (an interrupted download): ``info`` lists every lump, the ones past the end
    marked with the file's size and the size each needs; ``entities`` reads the whole entity lump."""
    import struct

    from sourcebsp.lump_ids import LumpId

    source = corpus_file("valvebsp_testmap.bsp")
    data = source.read_bytes()
    directory = [struct.unpack_from("<iiii", data, 8 + 16 * i) for i in range(64)]
    entities_end = directory[LumpId.ENTITIES][0] + directory[LumpId.ENTITIES][1]
    size = max(entities_end, len(data) * 2 // 3)
    cut = tmp_path / "cut.bsp"
    cut.write_bytes(data[:size])
    past = {i for i, (ofs, length, _, _) in enumerate(directory) if length and ofs + length > size}
    assert past and LumpId.ENTITIES not in past

    assert main(["info", "--json", str(cut)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [row["index"] for row in report["lumps"]] == [i for i, d in enumerate(directory) if d[1]]
    assert {row["index"] for row in report["lumps"] if row.get("truncated")} == past
    for damage in report["damaged"]:
        needs = directory[damage["index"]][0] + directory[damage["index"]][1]
        assert f"truncated: the file is {size} bytes, this lump needs {needs}" in damage["error"]
    assert {d["index"] for d in report["damaged"]} == past
    assert main(["info", str(cut)]) == 1
    assert capsys.readouterr().out.count("TRUNCATED") == len(past)

    assert main(["entities", "--json", str(cut)]) == 0
    assert main(["entities", "--json", str(source)]) == 0
    whole, cut_short = capsys.readouterr().out.split("\n]\n", 1)
    assert whole + "\n]\n" == cut_short

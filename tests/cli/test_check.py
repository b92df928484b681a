"""``sourcebsp check``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sourcebsp.cli import main

from ..content._maps import build_game, build_map


def test_check_exit_code_gates_on_severity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = build_game(tmp_path / "game")
    path = build_map(tmp_path / "m.bsp", materials=["custom/nothere"], entities=[{"classname": "tf_gamerules"}])
    assert main(["check", str(path), "--game", str(mod)]) == 1  # missing assets are errors
    out = capsys.readouterr().out
    assert "SB101 error missing-asset: materials/custom/nothere.vmt" in out and "hint:" in out
    assert main(["check", str(path), "--game", str(mod), "--ignore", "SB101"]) == 0
    capsys.readouterr()
    # The example room, a TF2 map by its tf_gamerules, is not compressed (SB402, info): only --fail-on info fails on it.
    assert main(["check", str(path), "--select", "SB402", "--fail-on", "info"]) == 1
    assert main(["check", str(path), "--select", "SB402"]) == 0
    assert main(["check", str(path), "--select", "SB999"]) == 1


def test_check_folder_json_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "maps"
    folder.mkdir()
    build_map(folder / "a.bsp")
    build_map(folder / "b.bsp", entities=[{"classname": "logic_relay", "OnTrigger": "nobody_here,Trigger,,0,-1"}])
    (folder / "broken.bsp").write_bytes(b"VBSP not really")
    assert main(["check", str(folder), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [Path(m["map"]).name for m in report["maps"]] == ["a.bsp", "b.bsp", "broken.bsp"]
    assert "error" in report["maps"][2]
    assert report["counts"]["SB501"] == 1
    assert main(["check", str(folder), "--ignore", "SB402"]) == 1  # the unreadable map fails the run
    text = capsys.readouterr()
    assert "1 finding in 3 maps" in text.err and "b.bsp: SB501 warning output-target-missing" in text.out
    # The summary table: one tab-separated record per map when piped.
    assert "b.bsp\t0\t1\t0\t" in text.out and "broken.bsp\t0\t0\t0\tunreadable" in text.out


def test_check_every_corpus_map_runs(all_maps: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for path in all_maps:
        (folder / path.name).symlink_to(path)
    main(["check", str(folder), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert len(report["maps"]) == len(all_maps)
    assert not [m["map"] for m in report["maps"] if "error" in m]


def test_list_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "x.bsp", "--list-rules"]) == 0
    assert "SB701" in capsys.readouterr().out
    assert main(["check", "--list-rules"]) == 0  # no map needed
    assert "SB403" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["check"])


def test_check_engine_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = build_map(tmp_path / "m.bsp")  # no game-specific entities: branch unknown, no SB402
    assert main(["check", str(path), "--select", "SB402", "--fail-on", "info"]) == 0
    assert main(["check", str(path), "--select", "SB402", "--fail-on", "info", "--engine", "sdk2013mp"]) == 1
    assert "Source 2013 Multiplayer" in (out := capsys.readouterr().out) and "(as told) reads LZMA lumps" in out
    with pytest.raises(SystemExit) as exc:  # argparse refuses a branch the table lacks
        main(["check", str(path), "--engine", "nosuch"])
    assert exc.value.code == 2


def _with_stray_bytes_after_detail_props(source: Path, out: Path) -> int:
    """``source`` with 4 bytes after its detail props (a map the game still loads); the
    file offset of those bytes, from the game lump directory read with struct."""
    import struct

    import sourcebsp
    from sourcebsp.lump_ids import LumpId

    with sourcebsp.open(source) as bsp:
        dprp = bsp.game_lumps.get("dprp")
        assert dprp is not None and len(bsp.detail_props or ()) > 0
        dprp.data = bytes(dprp.data) + b"\0\0\0\0"
        bsp.set_lump(LumpId.GAME_LUMP, bsp.game_lumps)
        bsp.save(out)
    data = out.read_bytes()
    fileofs = struct.unpack_from("<i", data, 8 + 16 * int(LumpId.GAME_LUMP))[0]
    (count,) = struct.unpack_from("<i", data, fileofs)
    for k in range(count):
        ident, _, _, offset, length = struct.unpack_from("<4sHHii", data, fileofs + 4 + 16 * k)
        if ident[::-1] == b"dprp":
            return int(offset + length - 4)
    raise AssertionError("no dprp game lump")


@pytest.mark.slow
def test_check_reports_a_damaged_lump_and_checks_the_rest(tmp_path: Path, corpus_file,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The one corpus map with detail props, given 4 stray bytes after them: ``check --json``
    prints JSON, with the damage as an SB001 error naming the lump and its offset, and every
    other finding of the undamaged map."""
    source = corpus_file("valvebsp_testmap.bsp")
    damaged = tmp_path / "valvebsp_testmap.bsp"
    offset = _with_stray_bytes_after_detail_props(source, damaged)

    def findings(path: Path) -> tuple[int, list[dict[str, str]]]:
        code = main(["check", str(path), "--json"])
        return code, json.loads(capsys.readouterr().out)["maps"][0]["findings"]

    code, found = findings(damaged)
    _, clean = findings(source)
    assert code == 1
    sb001 = [f for f in found if f["rule"] == "SB001"]
    assert len(sb001) == 1 and sb001[0]["severity"] == "error"
    assert "GAME_LUMP/dprp" in sb001[0]["message"] and f"file offset {offset}" in sb001[0]["message"]
    assert [f for f in found if f["rule"] != "SB001"] == clean and len(clean) >= 3
    assert found[0] == sb001[0]  # the damage is listed first
    # deps: the graph of what decoded, and the damage as an error line (exit code 1).
    assert main(["deps", str(damaged), "--json"]) == 1
    seen = capsys.readouterr()
    graph = json.loads(seen.out)
    assert graph["damaged"] == [{"lump": "GAME_LUMP/dprp", "offset": offset,
                                 "error": sb001[0]["message"].split("does not decode: ")[1]}]
    assert len(graph["dependencies"]) > 10
    assert f"{damaged}: lump GAME_LUMP/dprp at file offset {offset} does not decode" in seen.err
    main(["check", str(damaged), "--ignore", "SB001", "--json"])
    assert json.loads(capsys.readouterr().out)["maps"][0]["findings"] == clean


def test_check_json_of_an_unreadable_map_is_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.bsp"
    bad.write_bytes(b"not a map at all")
    assert main(["check", str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["maps"][0]["map"] == str(bad) and "unknown ident" in report["maps"][0]["error"]


def test_check_takes_many_maps_and_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.examples import example_map_bytes

    for name in ("a.bsp", "sub/deeper/B.BSP", "c.bsp"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(example_map_bytes())
    assert main(["check", str(tmp_path / "a.bsp"), str(tmp_path / "sub"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [Path(m["map"]).name for m in report["maps"]] == ["a.bsp", "B.BSP"]
    main(["check", str(tmp_path / "a.bsp"), str(tmp_path / "c.bsp")])
    err = capsys.readouterr().err
    assert "in 2 maps" in err and "(s)" not in err

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

"""``sourcebsp props``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import srctools.bsp

from sourcebsp.cli import main

# srctools cannot read these maps' props (see tests/codecs/test_staticprops.py).
SRCTOOLS_UNREADABLE = {"x360_shack", "vtmb_sp_genesisdevice_1"}
REQUIRED = {"index", "model", "origin", "angles", "skin", "solid", "fade_min_dist", "fade_max_dist",
            "lighting_origin", "first_leaf", "leaf_count", "flags"}


@pytest.mark.slow
def test_props_json_on_every_map(map_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["props", str(map_path), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert isinstance(records, list)
    for i, record in enumerate(records):
        assert set(record) >= REQUIRED
        assert record["index"] == i
        assert not any(key.startswith("padding") for key in record)
        assert len(record["origin"]) == 3 and len(record["angles"]) == 3
    if map_path.stem in SRCTOOLS_UNREADABLE:
        return
    expected = srctools.bsp.BSP(map_path).props
    assert [(r["model"], tuple(r["origin"]), r["skin"], r["solid"]) for r in records] == [
        (p.model, tuple(p.origin), p.skin, p.solidity) for p in expected
    ]


def test_props_json_big_endian(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    # Values from the Hammer source of the Xbox 360 map (vmf/x360_shack.vmf).
    assert main(["props", str(corpus_file("x360_shack.bsp")), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["model"], r["origin"], r["angles"], r["solid"]) for r in records] == [
        ("models/props_foliage/shrub_01a.mdl", [-152.0, 296.0, -4.0], [0.0, 271.0, 0.0], 0),
        ("models/props_wasteland/lights_industrialcluster01a.mdl", [160.0, -480.0, 368.0], [0.0, 225.0, 0.0], 6),
    ]
    assert records[0]["min_dx_level"] == 0 and records[0]["forced_fade_scale"] == 1.0


def test_props_table(corpus_file, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: no cell is shortened
    monkeypatch.setattr("sourcebsp.cli._common.is_terminal", lambda: True)
    assert main(["props", str(corpus_file("css_2000.bsp"))]) == 0
    out = capsys.readouterr().out
    assert "16 static props, 1 models" in out and "layout v5" in out
    assert out.count("Floodlight.mdl") >= 1 and "1541-1766" in out


def test_props_of_map_without_props(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["props", str(corpus_file("tf2_mp_lobby.bsp")), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_props_bad_input_is_one_line_exit_1(tmp_path: Path, corpus_file,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["props", str(tmp_path / "missing.bsp")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sourcebsp: error:")
    # A static prop lump whose length fits no layout: one line naming the lump.
    data = bytearray(corpus_file("css_2000.bsp").read_bytes())
    marker = data.find(b"models/props/de_train/Floodlight.mdl")
    count_at = marker + 128 + 4 + 2 * 16  # after the dictionary and the 16 leafs
    assert int.from_bytes(data[count_at : count_at + 4], "little") == 16
    data[count_at : count_at + 4] = (17).to_bytes(4, "little")
    damaged = tmp_path / "damaged.bsp"
    damaged.write_bytes(bytes(data))
    assert main(["props", str(damaged), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "GAME_LUMP/sprp" in captured.err
    assert "no static prop layout fits" in captured.err


def test_props_usage_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["props"])
    assert info.value.code == 2

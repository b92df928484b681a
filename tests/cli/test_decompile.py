"""``sourcebsp decompile MAP -o OUT.vmf``."""
from __future__ import annotations

import re
import shutil

import pytest
from srctools.keyvalues import Keyvalues
from srctools.vmf import VMF

import sourcebsp
from sourcebsp.cli import COMMANDS, main
from sourcebsp.lump_ids import LumpId


@pytest.mark.slow
def test_decompiles_every_map(map_path, tmp_path, capsys):
    out = tmp_path / "map.vmf"
    assert main(["decompile", str(map_path), "-o", str(out)]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"{out}: ")
    vmf = VMF.parse(Keyvalues.parse(out.read_text(encoding="utf-8", errors="surrogateescape")))
    solids = len(vmf.brushes) + sum(len(e.solids) for e in vmf.entities)
    assert f"{solids} solids" in line
    with sourcebsp.open(map_path) as bsp:
        props = len(bsp.static_props) if bsp.entry(LumpId.GAME_LUMP).filelen else 0
    assert sum(1 for e in vmf.entities if e["classname"] == "prop_static") == props
    assert f"{props} static props" in line


def test_options(tmp_path, corpus_file, capsys):
    path = corpus_file("tf2_test2.bsp")
    out = tmp_path / "lean.vmf"
    assert main(["decompile", str(path), "-o", str(out), "--no-props", "--no-overlays", "--no-cubemaps",
                 "--detail-as-world"]) == 0
    assert "0 static props, 0 overlays, 0 cubemaps" in capsys.readouterr().out
    text = out.read_text(encoding="utf-8")
    for classname in ("prop_static", "info_overlay", "env_cubemap", "func_detail"):
        assert f'"classname" "{classname}"' not in text
    full = tmp_path / "full.vmf"
    assert main(["decompile", str(path), "-o", str(full)]) == 0
    full_text = full.read_text(encoding="utf-8")
    assert '"classname" "prop_static"' in full_text and '"classname" "func_detail"' in full_text
    # Same brushes either way: detail brushes only move from func_detail into the world.
    assert len(re.findall(r"^\tsolid$", full_text, re.M)) == len(re.findall(r"^\tsolid$", text, re.M))


def test_bad_input_is_one_line_and_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.bsp"
    bad.write_bytes(b"VBSP" + b"\0" * 20)
    assert main(["decompile", str(bad), "-o", str(tmp_path / "x.vmf")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sourcebsp: error:") and err.count("\n") == 1
    assert not (tmp_path / "x.vmf").exists()
    assert main(["decompile", str(tmp_path / "missing.bsp"), "-o", str(tmp_path / "x.vmf")]) == 1


def test_usage_errors_exit_2(tmp_path, corpus_file, capsys):
    path = corpus_file("tf2_mp_lobby.bsp")
    with pytest.raises(SystemExit) as exc:
        main(["decompile", str(path)])  # no -o
    assert exc.value.code == 2
    copy = tmp_path / "lobby.bsp"
    shutil.copy(path, copy)
    # Writing over the input is refused, with or without --overwrite: one line, exit 1.
    assert main(["decompile", str(copy), "-o", str(copy)]) == 1
    assert main(["decompile", str(copy), "-o", str(copy), "--overwrite"]) == 1
    assert capsys.readouterr().err.count("is the input map") == 2
    assert copy.read_bytes() == path.read_bytes()


def test_listed_in_the_commands():
    assert "decompile" in COMMANDS

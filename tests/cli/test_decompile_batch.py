"""``sourcebsp decompile`` batch mode, the new options and ``--report``."""
from __future__ import annotations

import json
import shutil

from srctools.keyvalues import Keyvalues
from srctools.vmf import VMF

from sourcebsp.cli import main


def _vmf(path):
    return VMF.parse(Keyvalues.parse(path.read_text(encoding="utf-8", errors="surrogateescape")))


def test_batch_decompiles_a_folder_into_another(tmp_path, corpus_file, capsys):
    maps = tmp_path / "maps"
    maps.mkdir()
    for name in ("tf2_mp_lobby.bsp", "tf2_test_physcollide.bsp"):
        shutil.copy(corpus_file(name), maps / name)
    (maps / "broken.bsp").write_bytes(b"VBSP" + b"\0" * 20)
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    assert main(["decompile", str(maps), "-o", str(out), "--report", str(report)]) == 1  # one map is broken
    captured = capsys.readouterr()
    assert "decompiled 2 of 3 maps" in captured.err  # the table's title (stdout holds records when piped)
    assert "\ntf2_mp_lobby.bsp\t6\t6/6\t" in captured.out
    assert captured.err.startswith("sourcebsp: error: ") and "broken.bsp" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["tf2_mp_lobby.vmf", "tf2_test_physcollide.vmf"]
    assert len(_vmf(out / "tf2_mp_lobby.vmf").brushes) == 6
    reports = {r["map"]: r for r in json.loads(report.read_text())}
    assert reports["tf2_mp_lobby"]["solids"]["written"] == 6
    assert reports["tf2_mp_lobby"]["compile_problems"] == []
    assert "error" in reports["broken"]
    # Existing outputs are never overwritten without being told.
    assert main(["decompile", str(maps / "tf2_mp_lobby.bsp"), str(maps / "tf2_test_physcollide.bsp"),
                 "-o", str(out)]) == 1
    assert "exist" in capsys.readouterr().err


def test_glob_pattern(tmp_path, corpus_file, capsys):
    shutil.copy(corpus_file("tf2_mp_lobby.bsp"), tmp_path / "a_lobby.bsp")
    shutil.copy(corpus_file("tf2_mp_lobby.bsp"), tmp_path / "b_lobby.bsp")
    assert main(["decompile", str(tmp_path / "*_lobby.bsp"), "-o", str(tmp_path / "vmf")]) == 0
    assert sorted(p.name for p in (tmp_path / "vmf").iterdir()) == ["a_lobby.vmf", "b_lobby.vmf"]


def test_report_on_stdout_and_options(tmp_path, corpus_file, capsys):
    path = corpus_file("css_de_rats.bsp")
    out = tmp_path / "rats.vmf"
    assert main(["decompile", str(path), "-o", str(out), "--report"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reconstructed"]["ladders"] == 20
    assert report["compile_problems"] == []
    assert report["sides"]["off_plane_over_1e-3"] == 0
    assert {r["rule"] for r in report["rotation"]} == {"movedir"}
    vmf = _vmf(out)
    assert sum(1 for e in vmf.entities if e["classname"] == "func_ladder") == 20
    assert vmf.cameras and vmf.vis_tree
    lean = tmp_path / "lean.vmf"
    assert main(["decompile", str(path), "-o", str(lean), "--no-ladders", "--no-visgroups", "--no-cameras"]) == 0
    vmf = _vmf(lean)
    assert not any(e["classname"] == "func_ladder" for e in vmf.entities)
    assert not vmf.cameras and not vmf.vis_tree


def test_visclusters_option(tmp_path, capsys):
    from ..converters._cluster_map import room_with

    path = tmp_path / "room.bsp"
    room_with(cluster=0).save(path)
    assert main(["decompile", str(path), "-o", str(tmp_path / "plain.vmf"), "--report"]) == 0
    assert json.loads(capsys.readouterr().out)["reconstructed"]["visclusters"] == 0
    assert main(["decompile", str(path), "-o", str(tmp_path / "vis.vmf"), "--visclusters", "--report"]) == 0
    assert json.loads(capsys.readouterr().out)["reconstructed"]["visclusters"] == 1
    assert [e["classname"] for e in _vmf(tmp_path / "vis.vmf").entities].count("func_viscluster") == 1
    assert "func_viscluster" not in (tmp_path / "plain.vmf").read_text()

"""``sourcebsp deps``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sourcebsp.cli import main

from ..content._maps import build_game, build_map

KEYS = {"path", "kind", "optional", "found", "referenced_by", "compile_only"}


def test_deps_json_on_every_corpus_map(map_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deps", str(map_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"map", "compiled_names", "search_paths", "unresolved_search_paths", "summary", "dependencies", "problems"}
    assert report["map"] == map_path.stem
    deps = report["dependencies"]
    assert [d["path"] for d in deps] == sorted(d["path"] for d in deps)
    assert all(set(d) == KEYS and d["referenced_by"] for d in deps)
    summary = report["summary"]
    assert summary["total"] == len(deps) == summary["pakfile"] + summary["folder"] + summary["vpk"] + summary["missing"]
    assert summary["missing"] == sum(d["found"] is None for d in deps)


def test_deps_text_and_game(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # wide enough that rich does not fold the paths
    mod = build_game(tmp_path / "game", vpk_files={"materials/brick/wall.vmt": b'"LightmappedGeneric" {}'},
                     loose={"materials/custom/thing.vmt": b'"UnlitGeneric" { "$basetexture" "custom/nothere" }'})
    path = build_map(tmp_path / "m.bsp", materials=["brick/wall", "custom/thing"])
    assert main(["deps", str(path), "--game", str(mod)]) == 0
    text = capsys.readouterr()
    assert "1 in folders, 1 in VPKs" in text.err and "custom/nothere.vtf" in text.out
    assert "sourcebsp: note: 1 search path not mounted (|appid_243750|platform): " in text.err
    assert "unverified" not in text.out  # platform content is no base game: what is not found is missing
    assert main(["deps", str(path), "--gameinfo", str(mod / "gameinfo.txt"), "--json", "--missing"]) == 0
    missing = json.loads(capsys.readouterr().out)["dependencies"]
    assert "materials/custom/nothere.vtf" in [d["path"] for d in missing]
    assert all(d["found"] is None for d in missing)


def test_deps_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = build_map(tmp_path / "m.bsp")
    assert main(["deps", str(path), "--game", str(tmp_path / "nope")]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        main(["deps", str(path), "--game", "a", "--gameinfo", "b"])
    assert exc.value.code == 2


def test_runs_as_python_dash_m() -> None:
    import os
    import subprocess
    import sys

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run([sys.executable, "-m", "sourcebsp.cli", "deps", "--help"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "usage:" in done.stdout and "--game" in done.stdout


def test_class_implied_models_follow_the_branch_tag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # item_ammo_357 precaches models/items/357ammo.mdl, but Black Mesa's (tag "mesa") another model.
    mod = build_game(tmp_path / "game", loose={"models/items/357ammo.mdl": b"IDST hl2",
                                               "models/weapons/w_357ammobox.mdl": b"IDST mesa"})
    path = build_map(tmp_path / "ammo.bsp", entities=[{"classname": "item_ammo_357"}])

    def listed(*extra: str) -> set[str]:
        assert main(["deps", str(path), "--game", str(mod), "--json", *extra]) == 0
        deps = json.loads(capsys.readouterr().out)["dependencies"]
        return {d["path"] for d in deps if any(r.get("key") == "@resources" for r in d["referenced_by"])}

    assert listed() == {"models/items/357ammo.mdl"}
    assert listed("--tag", "mesa") == {"models/weapons/w_357ammobox.mdl"}


def test_stock_content_of_a_base_game_not_installed_is_unverified(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mod whose base game is another Steam app's folder: a file found nowhere may be its
    stock content, so it is "unverified" (one SB102 warning per map with the count), not
    missing (SB101 errors); the unmounted paths are one note for the whole run."""
    mod = build_game(tmp_path / "game", loose={"materials/custom/thing.vmt": b'"UnlitGeneric" {}'},
                     base_installed=False)
    maps = [build_map(tmp_path / f"m{k}.bsp", materials=["brick/wall", "custom/thing", "metal/floor"])
            for k in range(2)]
    assert main(["deps", str(maps[0]), "--game", str(mod), "--json"]) == 0
    graph = json.loads(capsys.readouterr().out)
    unverified = [d["path"] for d in graph["dependencies"] if d.get("unverified")]
    assert graph["summary"]["unverified"] == len(unverified) and graph["summary"]["missing"] == 0
    assert {"materials/brick/wall.vmt", "materials/metal/floor.vmt"} <= set(unverified)
    assert all(d["found"] is None for d in graph["dependencies"] if d.get("unverified"))
    assert "materials/custom/thing.vmt" not in unverified
    assert main(["check", *map(str, maps), "--game", str(mod)]) == 0
    text = capsys.readouterr()
    assert "SB101" not in text.out
    sb102 = [line for line in text.out.splitlines() if "SB102" in line]
    assert len(sb102) == 2, sb102
    assert all(f"warning unverified-assets: {len(unverified)} referenced assets" in line for line in sb102)
    notes = [line for line in text.err.splitlines() if "not mounted" in line]
    assert notes == ["sourcebsp: note: 3 search paths not mounted (|appid_243750|hl2/hl2_misc.vpk, "
                     "|appid_243750|hl2, |appid_243750|platform): files only they could hold are unverified, "
                     "not missing"]
    # With the base game installed, the same files are missing: errors.
    installed = build_game(tmp_path / "installed", loose={"materials/custom/thing.vmt": b'"UnlitGeneric" {}'})
    assert main(["check", str(maps[0]), "--game", str(installed)]) == 1
    out = capsys.readouterr().out
    assert out.count("SB101 error") == len(unverified) and "SB102" not in out

"""``sourcebsp pack``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp.cli import main

from ..content._maps import build_game, build_map


@pytest.fixture
def game_and_map(tmp_path: Path) -> tuple[Path, Path]:
    mod = build_game(tmp_path / "game", vpk_files={"materials/brick/wall.vmt": b'"LightmappedGeneric" {}'},
                     loose={"materials/Custom/Thing.vmt": b'"UnlitGeneric" { "$basetexture" "custom/thing" }',
                            "materials/custom/thing.vtf": b"vtf"})
    return mod, build_map(tmp_path / "m.bsp", materials=["brick/wall", "custom/thing", "custom/gone"])


def test_pack_writes_and_reports(game_and_map: tuple[Path, Path], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    mod, source = game_and_map
    before = source.read_bytes()
    out = tmp_path / "out.bsp"
    assert main(["pack", str(source), "--game", str(mod), "-o", str(out)]) == 0
    text = capsys.readouterr()
    assert "packed materials/custom/thing.vmt" in text.out and "missing materials/custom/gone.vmt" in text.out
    # gone.vmt, the room's 3 materials, its detail sprite material, 6 sky faces and its prop
    assert "packed 2 files; 12 missing; 1 stock" in text.err
    assert source.read_bytes() == before
    with sourcebsp.open(out) as bsp:
        assert sorted(bsp.pakfile.names()) == ["materials/custom/thing.vmt", "materials/custom/thing.vtf"]
    # An existing output is kept unless --overwrite.
    assert main(["pack", str(source), "--game", str(mod), "-o", str(out)]) == 1
    assert "--overwrite" in capsys.readouterr().err
    assert main(["pack", str(source), "--game", str(mod), "-o", str(out), "--overwrite", "--lzma"]) == 0
    assert "not known to read LZMA pak entries" in capsys.readouterr().err  # a mod of no known branch
    with sourcebsp.open(out) as bsp:
        assert {e.compression for e in bsp.pakfile.entries()} == {"lzma"}
    # The input only when told, like every map-writing command.
    assert main(["pack", str(source), "--game", str(mod), "-o", str(source)]) == 1
    assert "input map" in capsys.readouterr().err
    assert source.read_bytes() == before
    assert main(["pack", str(source), "--game", str(mod), "-o", str(source), "--overwrite"]) == 0
    with sourcebsp.open(source) as bsp:
        assert "materials/custom/thing.vmt" in bsp.pakfile.names()


def test_pack_dry_run_json(game_and_map: tuple[Path, Path], tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    mod, source = game_and_map
    assert main(["pack", str(source), "--game", str(mod), "--dry-run", "--json", "--include-stock"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is True
    assert sorted(p["name"] for p in report["packed"]) == [
        "materials/brick/wall.vmt", "materials/custom/thing.vmt", "materials/custom/thing.vtf"]
    assert "materials/custom/gone.vmt" in [m["name"] for m in report["missing"]]
    assert not list(tmp_path.glob("out*"))


def test_pack_needs_output_and_content(game_and_map: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, source = game_and_map
    with pytest.raises(SystemExit) as exc:
        main(["pack", str(source)])
    assert exc.value.code == 2
    assert main(["pack", str(source), "--dry-run"]) == 1

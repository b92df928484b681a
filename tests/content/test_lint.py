"""Every ``check`` rule: a map built to break it, and one that passes it."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.codecs.base import RawLump
from sourcebsp.codecs.records import CUBEMAP
from sourcebsp.codecs.pakfile import Pakfile
from sourcebsp.content import mount
from sourcebsp.content.lint import RULES, check_map, select_rules
from sourcebsp.examples import build_example_map

from ._maps import add_materials, build_game, build_map

VMT = b'"UnlitGeneric" { "$basetexture" "custom/thing" }'


def rule_findings(path: Path, rule_id: str, fs: Any = None) -> list[Any]:
    with sourcebsp.open(path) as bsp:
        return [f for f in check_map(bsp, fs, rules=select_rules([rule_id])) if f.rule.startswith(rule_id)]


def raw_pak(entries: list[tuple[str, bytes, int]]) -> Pakfile:
    """A pakfile written by the standard library, with any names and methods (even ones ours refuses)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data, method in entries:
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return Pakfile.from_bytes(buffer.getvalue())


def map_with_pak(path: Path, entries: list[tuple[str, bytes, int]], materials: list[str] = ()) -> Path:  # type: ignore[assignment]
    bsp = build_example_map()
    add_materials(bsp, materials)
    bsp.set_lump(LumpId.PAKFILE, raw_pak(entries))
    bsp.save(path)
    return path


@pytest.fixture
def game(tmp_path: Path) -> Path:
    return build_game(tmp_path / "game", vpk_files={"materials/brick/wall.vtf": b"stock"},
                      loose={"materials/custom/thing.vmt": VMT, "materials/custom/thing.vtf": b"vtf"})


def test_rule_ids_are_unique_and_selectable() -> None:
    assert len({r.id for r in RULES}) == len({r.name for r in RULES}) == len(RULES) == 17
    assert [r.id for r in select_rules(["SB2"], ["pak-unreferenced"])] == ["SB201", "SB202", "SB203", "SB204", "SB205"]
    assert {r.severity for r in select_rules(["error"])} == {"error"}
    with pytest.raises(ValueError):
        select_rules(["SB999"])


def test_missing_asset(tmp_path: Path, game: Path) -> None:
    bad = build_map(tmp_path / "bad.bsp", materials=["custom/nothere"])
    good = build_map(tmp_path / "good.bsp", materials=["custom/thing"])
    fs = mount(game)
    assert any("materials/custom/nothere.vmt" in f.message for f in rule_findings(bad, "SB101", fs))
    assert not any("custom/" in f.message for f in rule_findings(good, "SB101", fs))
    assert rule_findings(bad, "SB101") == []  # no game mounted: nothing can be called missing


def test_pak_case_collision_and_upper_case(tmp_path: Path) -> None:
    bad = map_with_pak(tmp_path / "bad.bsp", [("materials/a.vtf", b"1", 0), ("Materials/A.vtf", b"2", 0)])
    good = map_with_pak(tmp_path / "good.bsp", [("materials/a.vtf", b"1", 0), ("materials/b.vtf", b"2", 0)])
    assert len(rule_findings(bad, "SB201")) == 1 and rule_findings(good, "SB201") == []
    assert [f.where for f in rule_findings(bad, "SB202")] == ["Materials/A.vtf"] and rule_findings(good, "SB202") == []


def test_stock_packed(tmp_path: Path, game: Path) -> None:
    fs = mount(game)
    bad = map_with_pak(tmp_path / "bad.bsp", [("materials/brick/wall.vtf", b"stock", 0)])
    good = map_with_pak(tmp_path / "good.bsp", [("materials/custom/thing.vtf", b"vtf", 0)])
    assert [f.where for f in rule_findings(bad, "SB203", fs)] == ["materials/brick/wall.vtf"]
    assert rule_findings(good, "SB203", fs) == []


def test_pak_method_and_compressed_sounds(tmp_path: Path) -> None:
    bad = map_with_pak(tmp_path / "bad.bsp", [("materials/a.vtf", b"x" * 100, zipfile.ZIP_DEFLATED),
                                              ("sound/a.wav", b"RIFF" * 50, zipfile.ZIP_LZMA)])
    good = map_with_pak(tmp_path / "good.bsp", [("materials/a.vtf", b"x" * 100, zipfile.ZIP_LZMA),
                                                ("sound/a.wav", b"RIFF" * 50, zipfile.ZIP_STORED)])
    assert [f.where for f in rule_findings(bad, "SB204")] == ["materials/a.vtf"]
    assert rule_findings(good, "SB204") == []
    assert [f.where for f in rule_findings(bad, "SB205")] == ["sound/a.wav"]
    assert rule_findings(good, "SB205") == []
    # LZMA entries: a warning on a BSP 20 map of no known game, an error before BSP 20 and in the CS:GO branch.
    assert [f.where for f in rule_findings(good, "SB403")] == ["materials/a.vtf"]
    assert [f.where for f in rule_findings(bad, "SB403")] == ["sound/a.wav"]
    old = _as_version(good, tmp_path / "old.bsp", 19)
    assert rule_findings(old, "SB403") == [] and [f.where for f in rule_findings(old, "SB401")] == ["materials/a.vtf"]
    csgo = _as_version(good, tmp_path / "new.bsp", 21)
    assert rule_findings(csgo, "SB403") == [] and [f.where for f in rule_findings(csgo, "SB401")] == ["materials/a.vtf"]


def test_unreferenced_pak_file(tmp_path: Path) -> None:
    bad = map_with_pak(tmp_path / "bad.bsp", [("materials/junk.vtf", b"x", 0)])
    good = map_with_pak(tmp_path / "good.bsp", [("materials/custom/thing.vmt", VMT, 0),
                                                ("materials/custom/thing.vtf", b"v", 0),
                                                # loaded by the engine without a name in the map
                                                ("__preload_section.pre", b"x", 0),
                                                ("resource/overviews/good_radar.dds", b"d", 0),
                                                ("materials/maps/good/cubemapdefault.vtf", b"c", 0),
                                                ("sp_0.vhv", b"v", 0)], ["custom/thing"])
    assert [f.where for f in rule_findings(bad, "SB206")] == ["materials/junk.vtf"]
    assert rule_findings(good, "SB206") == []


def _cubemap_map(path: Path, pak: list[tuple[str, bytes, int]]) -> Path:
    bsp = build_example_map()
    samples = np.zeros(1, dtype=CUBEMAP)
    samples["origin"] = [[0, 0, 64]]
    bsp.set_lump(LumpId.CUBEMAPS, samples)
    bsp.set_lump(LumpId.PAKFILE, raw_pak(pak))
    bsp.save(path)
    return path


def test_cubemaps_not_built(tmp_path: Path) -> None:
    bad = _cubemap_map(tmp_path / "bad.bsp", [("materials/maps/bad/cubemapdefault.vtf", b"d", 0)])
    good = _cubemap_map(tmp_path / "good.bsp", [("materials/maps/good/c0_0_64.vtf", b"c", 0)])
    found = rule_findings(bad, "SB301")
    assert len(found) == 1 and "only the default" in found[0].message
    assert rule_findings(good, "SB301") == []
    assert rule_findings(build_map(tmp_path / "none.bsp"), "SB301") == []  # no env_cubemap: nothing to build
    with sourcebsp.open(good) as bsp:  # the built cubemap is a dependency of the CUBEMAPS lump
        from sourcebsp.content import map_dependencies

        dep = map_dependencies(bsp).get("materials/maps/good/c0_0_64.vtf")
        assert dep is not None and dep.where == "pakfile" and dep.referenced_by == [{"lump": "CUBEMAPS", "index": 0}]


def _as_version(source: Path, target: Path, version: int) -> Path:
    """A copy of ``source`` whose header says BSP ``version`` (the lumps are the same for 19 and 20)."""
    data = bytearray(source.read_bytes())
    data[4:8] = version.to_bytes(4, "little")
    target.write_bytes(bytes(data))
    return target


def test_compression_against_engine_support(tmp_path: Path) -> None:
    # tf_gamerules: a TF2-family map, Source 2013 Multiplayer, which reads LZMA lumps.
    plain = build_map(tmp_path / "plain.bsp", entities=[{"classname": "tf_gamerules"}])
    compressed = tmp_path / "compressed.bsp"
    with sourcebsp.open(plain) as bsp:
        bsp.save(compressed, compression="lzma")
    [finding] = rule_findings(plain, "SB402")  # nothing compressed
    assert "Source 2013 Multiplayer" in finding.message and "tf_gamerules" in finding.message
    assert rule_findings(compressed, "SB402") == []
    assert rule_findings(compressed, "SB401") == []
    assert len(rule_findings(_as_version(compressed, tmp_path / "old.bsp", 19), "SB401")) > 0  # v19 cannot
    old_plain = _as_version(plain, tmp_path / "old_plain.bsp", 19)
    assert rule_findings(old_plain, "SB401") == rule_findings(old_plain, "SB402") == []
    # A BSP 20 map of no known game: no advice either way.
    assert rule_findings(build_map(tmp_path / "unknown.bsp"), "SB402") == []


def _game_folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "gameinfo.txt").write_text('"GameInfo" { FileSystem { SearchPaths { game |gameinfo_path|. } } }')
    return folder


def test_lzma_pak_entries_per_game(tmp_path: Path) -> None:
    def lzma_findings(path: Path, fs: Any = None) -> list[Any]:
        return [f for f in rule_findings(path, "SB4", fs) if f.rule in ("SB401", "SB403")]

    lzma = map_with_pak(tmp_path / "m.bsp", [("materials/a.vtf", b"x" * 100, zipfile.ZIP_LZMA)])
    assert [f.rule for f in lzma_findings(lzma)] == ["SB403"]  # game unknown
    # The game named by the mounted folder: TF2 Classic (Source 2013 Multiplayer) reads them, HL2 does not.
    assert lzma_findings(lzma, mount(_game_folder(tmp_path, "tf2classic"))) == []
    [error] = lzma_findings(lzma, mount(_game_folder(tmp_path, "hl2")))
    assert error.rule == "SB401" and "Singleplayer" in error.message and "mounted game is hl2" in error.message
    # Or told by the map's own entities.
    with sourcebsp.open(lzma) as bsp:
        bsp.entities.add({"classname": "tf_logic_koth"})
        bsp.save(tmp_path / "tf.bsp")
    assert lzma_findings(tmp_path / "tf.bsp") == []


def test_output_targets(tmp_path: Path) -> None:
    def outputs(path: Path, target: str) -> Path:
        return build_map(path, entities=[{"classname": "logic_relay", "targetname": "relay",
                                          "OnTrigger": f"{target},Trigger,,0,-1"}])

    bad = rule_findings(outputs(tmp_path / "bad.bsp", "nobody"), "SB501")
    assert len(bad) == 1 and "'nobody'" in bad[0].message
    for index, target in enumerate(("relay", "!activator", "!player", "rel*", "logic_relay", "tf_gamerules")):
        assert rule_findings(outputs(tmp_path / f"good{index}.bsp", target), "SB501") == [], target


def test_limits(tmp_path: Path) -> None:
    def with_texdata(path: Path, count: int) -> Path:
        return build_map(path, materials=[f"m/{i}" for i in range(count - 3)])  # the room has 3

    over = with_texdata(tmp_path / "over.bsp", 2049)
    near = with_texdata(tmp_path / "near.bsp", 1900)
    fine = with_texdata(tmp_path / "fine.bsp", 1000)
    assert [f.where for f in rule_findings(over, "SB601")] == ["MAX_MAP_TEXDATA"]
    assert rule_findings(near, "SB601") == []
    assert [f.where for f in rule_findings(near, "SB602")] == ["MAX_MAP_TEXDATA"]
    assert "1,900 of 2,048" in rule_findings(near, "SB602")[0].message
    assert rule_findings(fine, "SB601") == rule_findings(fine, "SB602") == []


def test_no_visibility(tmp_path: Path) -> None:
    good = build_map(tmp_path / "good.bsp")
    bsp = build_example_map()
    bsp.set_lump(LumpId.VISIBILITY, RawLump(b"", "removed for the test"))
    bsp.save(tmp_path / "bad.bsp")
    assert len(rule_findings(tmp_path / "bad.bsp", "SB701")) == 1
    assert rule_findings(good, "SB701") == []


def test_check_runs_on_every_corpus_map(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        findings = check_map(bsp)
    assert all(f.rule in {r.id for r in RULES} and f.message for f in findings)

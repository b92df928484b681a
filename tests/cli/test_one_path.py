"""One code path per command: a Source and a Titanfall map go through the same MapReader calls.

The commands that read maps for what every container has (info, entities, edit-entities,
props, pak, repack, scan) open them with ``sourcebsp.open``; what only one container has
(Titanfall's .ent partitions and .bsp_lump files, Source's encryption and LZMA lumps) is a
protocol member whose Source answer is ``MapQueries``' default.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.errors import UnsupportedError
from sourcebsp.examples.respawn import write_example_respawn
from sourcebsp.protocols import GameLumpEntry, PartitionFiles

from ..conftest import corpus_map

ONE_PATH_MODULES = ["cli/info.py", "cli/entities.py", "cli/edit_entities.py", "cli/props.py", "cli/pak.py",
                    "cli/repack.py", "scan/rows.py"]


@pytest.mark.parametrize("module", ONE_PATH_MODULES)
def test_no_command_chooses_a_container(module: str) -> None:
    text = (Path(sourcebsp.__file__).parent / module).read_text(encoding="utf-8")
    for name in ("is_rbsp", "is_respawn", "RespawnBsp", "_respawn."):
        assert name not in text, f"{module} names {name}"
    assert "BspFile" not in text


def test_the_cli_has_no_titanfall_module() -> None:
    cli = Path(sourcebsp.__file__).parent / "cli"
    assert not (cli / "_respawn.py").exists()
    assert not [path.name for path in cli.glob("*.py") if "is_rbsp" in path.read_text(encoding="utf-8")]


def _titanfall_with_companions(tmp_path: Path) -> Path:
    """Titanfall 2's corpus map with an .ent file for one of its two partitions and VERTICES
    in a .bsp_lump file of another length than the directory says."""
    path = tmp_path / "mp_crossfire.bsp"
    shutil.copy(corpus_map("other-engines/titanfall2_mp_crossfire.bsp"), path)
    path.chmod(0o644)
    (tmp_path / "mp_crossfire_env.ent").write_bytes(
        b'ENTITIES01\n{\n"classname" "light"\n}\n{\n"classname" "info_target"\n"targetname" "t"\n}\n\0')
    (tmp_path / "mp_crossfire.bsp.0003.bsp_lump").write_bytes(np.arange(36, dtype="<f4").tobytes())
    return path


def test_the_container_facts_of_a_source_map() -> None:
    with sourcebsp.open(corpus_map("tf2_mp_lobby.bsp")) as bsp:
        assert (bsp.ident, bsp.lump_order, bsp.encrypted, bsp.lzma_lumps, bsp.writes_pakfile) == \
            ("VBSP", "std", False, True, True)
        assert bsp.partition_files() is None and bsp.partition_entities() == {}
        assert bsp.companion_files(Path("out.bsp")) == {}
        for index, entry in bsp.iter_lumps():
            assert not bsp.is_external(index) and bsp.stored_size(index) == entry.filelen
        assert bsp.game_lump_directory() == [GameLumpEntry(g.id, g.version, len(g.data), g.compressed)
                                             for g in bsp.game_lumps]
        assert "sprp" in [g.id for g in bsp.game_lump_directory()]
        with pytest.raises(KeyError):
            bsp.set_partition_entities("env", bsp.entities)


def test_the_container_facts_of_a_titanfall_map(tmp_path: Path) -> None:
    with sourcebsp.open(_titanfall_with_companions(tmp_path)) as bsp:
        assert (bsp.ident, bsp.lump_order, bsp.encrypted, bsp.lzma_lumps, bsp.writes_pakfile) == \
            ("rBSP", "std", None, False, False)
        assert bsp.partition_files() == PartitionFiles(["env", "spawn"], ["env"])
        assert {k: len(v) for k, v in bsp.partition_entities().items()} == {"env": 2}
        assert bsp.is_external(3) and bsp.stored_size(3) == 144 != bsp.entry(3).filelen
        assert not bsp.is_external(1) and bsp.stored_size(1) == bsp.entry(1).filelen
        assert sorted(p.name for p in bsp.companion_files(tmp_path / "copy.bsp")) == \
            ["copy.bsp.0003.bsp_lump", "copy_env.ent"]
        assert bsp.game_lump_directory() == [GameLumpEntry("sprp", 13, len(bsp.game_sub_lump("sprp")[1]), False)]
        with pytest.raises(UnsupportedError, match="not compressed"):
            bsp.save(tmp_path / "lzma.bsp", compression="lzma")
        assert not (tmp_path / "lzma.bsp").exists()


def test_info_reports_the_files_beside_a_titanfall_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _titanfall_with_companions(tmp_path)
    assert main(["info", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "encrypted" not in report  # a container without encryption: no key, as before
    assert list(report)[-3:] == ["entity_partitions", "entity_files", "damaged"]
    assert (report["entity_partitions"], report["entity_files"]) == (["env", "spawn"], ["env"])
    with sourcebsp.open(path) as bsp:
        assert report["entity_count"] == len(bsp.entities) + 2
    vertices = next(row for row in report["lumps"] if row["name"] == "VERTICES")
    assert list(vertices)[-2:] == ["damaged", "external"]
    assert (vertices["length"], vertices["uncompressed_length"], vertices["count"]) == (144, 144, 12)
    assert all("external" not in row for row in report["lumps"] if row["name"] != "VERTICES")
    assert main(["info", str(corpus_map("tf2_mp_lobby.bsp")), "--json"]) == 0
    source = json.loads(capsys.readouterr().out)
    assert source["encrypted"] is False and "entity_partitions" not in source
    assert all("external" not in row for row in source["lumps"])


def test_repack_of_a_titanfall_map_writes_its_companions_and_refuses_lzma(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _titanfall_with_companions(tmp_path)
    out = tmp_path / "out" / "again.bsp"
    assert main(["repack", str(path), "-o", str(out), "--reencode"]) == 0
    assert capsys.readouterr().out.strip() == (f"{out}: copied and re-encoded, 1,123,460 -> 1,123,460 bytes, "
                                               "1 external lump files, 1 .ent files")
    assert out.read_bytes() == path.read_bytes()
    assert (out.parent / "again_env.ent").read_bytes() == (tmp_path / "mp_crossfire_env.ent").read_bytes()
    for option in ("--compress", "--decompress"):
        assert main(["repack", str(path), "-o", str(tmp_path / "lzma.bsp"), option]) == 1
        assert "Titanfall maps are not LZMA-compressed" in capsys.readouterr().err
        assert not (tmp_path / "lzma.bsp").exists()


def test_props_shows_a_titanfall_prop_scale_and_a_source_prop_fade(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    room = write_example_respawn(tmp_path / "room.bsp", "titanfall")  # v12: fade distances and a scale
    assert main(["props", str(room)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split("\t")[-1] == "scale" and row.split("\t")[-1] == "1"
    assert main(["props", str(room), "--json"]) == 0
    assert "vertex_lighting" not in json.loads(capsys.readouterr().out)[0]
    assert main(["props", str(corpus_map("css_2000.bsp"))]) == 0
    assert capsys.readouterr().out.splitlines()[0].split("\t")[-1] == "fade"

"""``sourcebsp lump MAP extract N`` and ``sourcebsp lump MAP apply FILE.lmp``."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp.cli import main


def test_extract_then_apply_round_trips_every_map(map_path: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lmp = tmp_path / "planes.lmp"
    assert main(["lump", str(map_path), "extract", "PLANES", "-o", str(lmp)]) == 0
    data = lmp.read_bytes()
    offset, lump_id, version, length, revision = struct.unpack("<>"[map_path.read_bytes()[:4] == b"PSBV"] + "5i",
                                                               data[:20])
    with sourcebsp.open(map_path) as bsp:
        plain = bytes(bsp.lump_bytes("PLANES"))
        assert (offset, lump_id, version, length, revision) == (20, 1, bsp.entry(1).version, len(plain),
                                                                bsp.map_revision)
    assert data[20:] == plain
    out = tmp_path / "patched.bsp"
    assert main(["lump", str(map_path), "apply", str(lmp), "-o", str(out)]) == 0
    assert "lump 1 PLANES" in capsys.readouterr().out
    with sourcebsp.open(out) as patched:
        assert bytes(patched.lump_bytes("PLANES")) == plain


def test_apply_changes_the_lump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.examples import write_example_map
    from sourcebsp.lumpfile import write_lump_file

    write_example_map(tmp_path / "a.bsp")
    with sourcebsp.open(tmp_path / "a.bsp") as bsp:
        bsp.entities[0].set("message", "from a lump file")
        write_lump_file(bsp, 0, tmp_path / "ents.lmp", map_revision=bsp.map_revision + 1)
    # Both argument orders.
    assert main(["lump", "apply", str(tmp_path / "a.bsp"), str(tmp_path / "ents.lmp"), "-o", str(tmp_path / "b.bsp")]) == 0
    with sourcebsp.open(tmp_path / "b.bsp") as bsp:
        assert bsp.entities[0]["message"] == "from a lump file"


def test_older_revision_is_refused_unless_told(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.examples import write_example_map
    from sourcebsp.lumpfile import write_lump_file

    write_example_map(tmp_path / "a.bsp")
    with sourcebsp.open(tmp_path / "a.bsp") as bsp:
        write_lump_file(bsp, 0, tmp_path / "old.lmp", map_revision=bsp.map_revision - 1)
    args = ["lump", str(tmp_path / "a.bsp"), "apply", str(tmp_path / "old.lmp"), "-o", str(tmp_path / "b.bsp")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--any-revision" in err and "check_revision" not in err
    assert not (tmp_path / "b.bsp").exists()
    assert main(args + ["--any-revision"]) == 0


def test_default_name_is_the_engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sourcebsp.examples import write_example_map

    write_example_map(tmp_path / "room.bsp")
    monkeypatch.chdir(tmp_path)
    assert main(["lump", "room.bsp", "extract", "0"]) == 0
    assert (tmp_path / "room_l_0.lmp").is_file()


@pytest.mark.parametrize("lump", ["64", "-1", "NOT_A_LUMP"])
def test_bad_lump_is_a_usage_error(lump: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["lump", "x.bsp", "extract", lump])
    assert info.value.code == 2 and "lump" in capsys.readouterr().err

"""No command writes over its input or an existing file unless told (``--overwrite``)."""
from __future__ import annotations

from pathlib import Path

import pytest

from sourcebsp.cli import main
from sourcebsp.examples import write_example_map

# command -> the arguments after MAP that write OUT (a path relative to the current folder)
WRITERS = {
    "render": lambda out: ["render", "map.bsp", "-o", out + ".png", "--size", "32x32"],
    "lightmaps": lambda out: ["lightmaps", "map.bsp", "-o", out],
    "export-glb": lambda out: ["export", "map.bsp", "-o", out + ".glb"],
    "export-obj": lambda out: ["export", "map.bsp", "-o", out + ".obj"],
    "decompile": lambda out: ["decompile", "map.bsp", "-o", out],
    "example": lambda out: ["example", "-o", out],
    "repack": lambda out: ["repack", "map.bsp", "-o", out],
    "edit-entities": lambda out: ["edit-entities", "map.bsp", "-o", out, "--all", "--set", "k=v"],
    "pak-add": lambda out: ["pak", "map.bsp", "add", "extra.txt", "-o", out],
    "pak-remove": lambda out: ["pak", "map.bsp", "remove", "*", "-o", out],
    "entities-ent": lambda out: ["entities", "map.bsp", "--ent", "-o", out],
    "lump-extract": lambda out: ["lump", "map.bsp", "extract", "0", "-o", out],
    "lump-apply": lambda out: ["lump", "map.bsp", "apply", "patch.lmp", "-o", out],
}
MAP_WRITERS = {"repack", "edit-entities", "pak-add", "pak-remove", "lump-apply"}


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_example_map(tmp_path / "map.bsp")
    (tmp_path / "extra.txt").write_text("packed\n")
    monkeypatch.chdir(tmp_path)
    assert main(["pak", "map.bsp", "add", "extra.txt", "-o", "packed.bsp"]) == 0
    (tmp_path / "packed.bsp").replace(tmp_path / "map.bsp")
    assert main(["lump", "map.bsp", "extract", "0", "-o", "patch.lmp"]) == 0
    return tmp_path


def _target(name: str, out: str) -> str:
    return WRITERS[name](out)[WRITERS[name](out).index("-o") + 1]


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_existing_output_is_kept_without_overwrite(name: str, workdir: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    target = _target(name, "out")
    (workdir / target).write_bytes(b"the user's file")
    capsys.readouterr()
    assert main(WRITERS[name]("out")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{target} exists: give --overwrite" in err
    assert "overwrite=True" not in err and ".sourcebsp-partial" not in err
    assert (workdir / target).read_bytes() == b"the user's file"
    # Told to, it replaces the file.
    assert main(WRITERS[name]("out") + ["--overwrite"]) == 0
    assert (workdir / target).read_bytes() != b"the user's file"
    leftovers = [p.name for p in workdir.iterdir() if p.name.startswith(".")]
    assert leftovers == []


# (export takes only .glb or .obj names: a map name is a usage error before anything is read)
@pytest.mark.parametrize("name", sorted(set(WRITERS) - {"example", "export-glb", "export-obj"}))
def test_input_map_is_never_replaced_by_another_kind_of_file(name: str, workdir: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    original = (workdir / "map.bsp").read_bytes()
    args = WRITERS[name]("out")
    args[args.index("-o") + 1] = "map.bsp"
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "map.bsp" in err
    if name not in MAP_WRITERS:
        # A picture, a model or a VMF never replaces the map, --overwrite or not.
        assert main(args + ["--overwrite"]) == 1
        assert "is the input map" in capsys.readouterr().err
    assert (workdir / "map.bsp").read_bytes() == original


@pytest.mark.parametrize("name", sorted(MAP_WRITERS))
def test_a_map_command_replaces_its_input_when_told(name: str, workdir: Path) -> None:
    args = WRITERS[name]("out")
    args[args.index("-o") + 1] = "map.bsp"
    assert main(args + ["--overwrite"]) == 0
    assert [p.name for p in workdir.iterdir() if p.name.startswith(".")] == []


def test_pak_in_place_needs_overwrite(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["pak", "map.bsp", "remove", "extra.txt"])
    assert "--overwrite" in capsys.readouterr().err
    assert main(["pak", "map.bsp", "remove", "extra.txt", "--overwrite"]) == 0
    assert main(["pak", "map.bsp", "list", "--json"]) == 0
    assert "extra.txt" not in capsys.readouterr().out


def test_pak_extract_refuses_existing_files(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "unpacked").mkdir()
    (workdir / "unpacked" / "extra.txt").write_text("mine\n")
    assert main(["pak", "map.bsp", "extract", "unpacked"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "extra.txt" in err and "--overwrite" in err
    assert (workdir / "unpacked" / "extra.txt").read_text() == "mine\n"
    assert main(["pak", "map.bsp", "extract", "unpacked", "--overwrite"]) == 0
    assert (workdir / "unpacked" / "extra.txt").read_text() == "packed\n"

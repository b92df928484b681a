"""The one way maps are named on the command line (:mod:`sourcebsp.cli._maps`), checked on every command.

Built from the package's example map, so these run on a fresh clone without the corpus.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sourcebsp.cli import _maps, main
from sourcebsp.examples import example_map_bytes

ADDON = "[THS] Base Campaign Company Test01"


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    """The same map as ``ROOM.BSP`` under an addon folder with brackets in its name, and under a plain one."""
    odd = tmp_path / ADDON / "maps" / "ROOM.BSP"
    plain = tmp_path / "plain" / "maps" / "ROOM.BSP"
    for path in (odd, plain):
        path.parent.mkdir(parents=True)
        path.write_bytes(example_map_bytes())
    return odd, plain


# Every command that takes a map: {map} the map, {out} a fresh output folder.
COMMANDS = {
    "info": ["info", "{map}"],
    "info-json": ["info", "--json", "{map}"],
    "entities": ["entities", "{map}"],
    "props": ["props", "{map}"],
    "pak": ["pak", "{map}", "list"],
    "vis": ["vis", "{map}", "--cluster", "0"],
    "export": ["export", "{map}", "-o", "{out}/x.glb"],
    "lightmaps": ["lightmaps", "{map}", "-o", "{out}/x.png"],
    "render": ["render", "{map}", "-o", "{out}/x.png", "--no-textures"],
    "decompile": ["decompile", "{map}", "-o", "{out}/x.vmf"],
    "deps": ["deps", "{map}"],
    "check": ["check", "{map}", "--json"],
    "lump": ["lump", "{map}", "extract", "0", "-o", "{out}/x.lmp"],
    "repack": ["repack", "{map}", "-o", "{out}/x.bsp"],
    "edit-entities": ["edit-entities", "{map}", "-o", "{out}/x.bsp", "--match-class", "light", "--set", "_light=1"],
    "pack": ["pack", "{map}", "--content", "{out}", "--dry-run"],
}
# The commands that take folders and patterns as well (batch mode).
BATCH = {
    "info": ["info", "{map}"],
    "check": ["check", "{map}", "--json"],
    "render": ["render", "{map}", "-o", "{out}/pictures", "--no-textures"],
    "decompile": ["decompile", "{map}", "-o", "{out}/vmfs"],
}


def _run(template: list[str], map_arg: str, out: Path, capsys: pytest.CaptureFixture[str],
         hide: str) -> tuple[int, str, str, list[str]]:
    out.mkdir(parents=True, exist_ok=True)
    code = main([a.replace("{map}", map_arg).replace("{out}", str(out)) for a in template])
    seen = capsys.readouterr()
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    def plain(text: str) -> str:
        return text.replace(str(out), "<out>").replace(hide, "<root>")

    return code, plain(seen.out), plain(seen.err), written


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_map_in_an_addon_folder_with_brackets_reads_as_any_other(
        name: str, trees: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``[THS] ...`` is a glob character class: an existing path must be taken literally, by every command."""
    odd, plain = trees
    got = _run(COMMANDS[name], str(odd), tmp_path / "out", capsys, str(odd.parent.parent))
    want = _run(COMMANDS[name], str(plain), tmp_path / "out2", capsys, str(plain.parent.parent))
    assert got[0] == 0, got[2]
    assert got == want


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BATCH))
@pytest.mark.parametrize("how", ["folder", "addon folder", "pattern"])
def test_batch_commands_find_upper_case_maps_in_sub_folders(
        name: str, how: str, trees: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder is searched recursively for maps of any case (``ROOM.BSP`` two levels down)."""
    odd, plain = trees
    arg = {"folder": str(tmp_path / "plain"), "addon folder": str(tmp_path / ADDON),
           "pattern": str(tmp_path / "plain" / "*" / "*.BSP")}[how]
    code, out, err, written = _run(BATCH[name], arg, tmp_path / "out", capsys, str(tmp_path))
    assert code == 0, err
    assert "ROOM" in out + err
    if name in ("render", "decompile"):
        assert len(written) == 1 and Path(written[0]).stem.startswith("ROOM"), written


def test_find_maps_lists_every_kind_of_name(tmp_path: Path) -> None:
    for name in ("a/one.bsp", "a/deep/er/TWO.BSP", "a/three.bsp.bz2", "a/notes.txt", "a/map.bsp.txt",
                 f"{ADDON}/maps/x.bsp"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    folder = _maps.find_maps([str(tmp_path / "a")])
    assert folder.batch
    assert sorted(p.relative_to(tmp_path / "a").as_posix() for p in folder.paths) == \
        ["deep/er/TWO.BSP", "one.bsp", "three.bsp.bz2"]
    deep = tmp_path / "a" / "deep" / "er" / "TWO.BSP"
    assert folder.output(deep, tmp_path / "o", ".vmf") == tmp_path / "o" / "deep" / "er" / "TWO.vmf"
    assert folder.output(tmp_path / "a" / "three.bsp.bz2", tmp_path / "o", ".vmf") == tmp_path / "o" / "three.vmf"
    literal = str(tmp_path / ADDON / "maps" / "x.bsp")
    one = _maps.find_maps([literal])
    assert one.paths == [Path(literal)] and one.names == [literal] and not one.batch
    # The same text as a pattern matches nothing: [THS] is one of T, H, S.
    pattern = str(tmp_path / "[THS]*" / "maps" / "x.bsp")
    with pytest.raises(_maps.CommandError, match="no .bsp file matches"):
        _maps.find_maps([pattern])
    both = _maps.find_maps([literal, literal, str(tmp_path / "a" / "*.bsp")])
    assert both.batch and both.paths == [Path(literal), tmp_path / "a" / "one.bsp"]
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(_maps.CommandError, match="no .bsp files in"):
        _maps.find_maps([str(tmp_path / "empty")])
    missing = _maps.find_maps([str(tmp_path / "gone.bsp")])
    assert missing.paths == [tmp_path / "gone.bsp"] and not missing.batch  # opening it says what is wrong


def test_map_stem_drops_the_map_ending_in_any_case() -> None:
    assert [_maps.map_stem(n) for n in ("a.bsp", "B.BSP", "c.bsp.bz2", "d.BSP.BZ2", "e.txt")] == \
        ["a", "B", "c", "d", "e"]
    assert _maps.plural(1, "finding") == "1 finding" and _maps.plural(2, "map") == "2 maps"


SINGLE = [name for name in COMMANDS if name not in BATCH and name not in ("info-json",)]


@pytest.mark.parametrize("name", SINGLE)
def test_a_folder_given_as_a_map_says_so(name: str, trees: tuple[Path, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = trees[1].parent
    (tmp_path / "out").mkdir()
    code = main([a.replace("{map}", str(folder)).replace("{out}", str(tmp_path / "out"))
                 for a in COMMANDS[name]])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "Invalid argument" not in err
    assert f"{folder} is a folder: give a .bsp file, or use a command that takes folders" in err


def test_batch_errors_start_with_the_map(trees: tuple[Path, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.bsp"
    notes.write_bytes(b"text, not a map")
    pool = tmp_path / "pool.bsp"
    pool.write_bytes(b"VBSP")
    assert main(["info", str(notes), str(pool), str(trees[1])]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 2
    assert errors[0].startswith(f"sourcebsp: error: {notes}: ") and "unknown ident" in errors[0]
    assert errors[1].startswith(f"sourcebsp: error: {pool}: ")


def test_outputs_get_their_missing_folders(trees: tuple[Path, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nodir" / "deeper" / "x.glb"
    assert main(["export", str(trees[1]), "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"glTF"
    ent = tmp_path / "other" / "x.ent"
    assert main(["entities", str(trees[1]), "--ent", "-o", str(ent)]) == 0
    assert ent.read_text().startswith("{")


def test_set_key_value_as_two_words_suggests_one(trees: tuple[Path, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["edit-entities", str(trees[1]), "-o", str(tmp_path / "x.bsp"), "--set", "_light", "255 0 0"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--set takes KEY=VALUE as one word: --set _light='255 0 0'" in err
    assert not (tmp_path / "x.bsp").exists()


def test_ctrl_c_ends_a_batch_with_130_and_keeps_the_report_of_finished_maps(
        trees: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.converters import vmf

    folder = tmp_path / "many"
    folder.mkdir()
    for name in ("a", "b", "c"):
        shutil.copy(trees[1], folder / f"{name}.bsp")
    real = vmf.decompile
    calls: list[Path] = []

    def interrupted_at_second(path: Path, *args: object, **kwargs: object) -> object:
        calls.append(Path(path))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(vmf, "decompile", interrupted_at_second)
    report = tmp_path / "report.json"
    assert main(["decompile", str(folder), "-o", str(tmp_path / "vmf"), "--report", str(report)]) == 130
    import json

    written = json.loads(report.read_text())
    assert [r["map"] for r in written] == ["a"] and "error" not in written[0]
    assert (tmp_path / "vmf" / "a.vmf").exists() and not (tmp_path / "vmf" / "c.vmf").exists()
    assert "interrupted" in capsys.readouterr().err


def test_ctrl_c_in_one_map_command_is_130(trees: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.cli import _common

    def interrupt() -> int:
        raise KeyboardInterrupt

    assert _common.run(interrupt) == 130
    assert capsys.readouterr().err == "sourcebsp: interrupted\n"


def test_a_missing_map_in_a_batch_is_named_once(trees: tuple[Path, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    gone = tmp_path / "gone.bsp"
    assert main(["check", str(gone), str(trees[1])]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert errors == [f"sourcebsp: error: {gone}: No such file or directory"]


@pytest.mark.slow
def test_python_m_sourcebsp_reads_the_addon_folder(trees: tuple[Path, Path], tmp_path: Path) -> None:
    """The same through ``python -m sourcebsp``, as a user runs it: the folder with brackets,
    its upper-case map found two levels down, one JSON report."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "sourcebsp", "info", "--json", str(tmp_path / ADDON)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [r["path"] for r in json.loads(done.stdout)] == [str(trees[0])]

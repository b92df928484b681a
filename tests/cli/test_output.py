"""Output that pipes, errors that read well, ``python -m sourcebsp``, argument checks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sourcebsp.cli import main

from ..conftest import ROOT


def run(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """The command in a child process, stdout a pipe (never a terminal)."""
    return subprocess.run([sys.executable, "-m", "sourcebsp", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}, timeout=300)


def test_piped_pak_list_has_every_name_of_the_json(map_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pak", str(map_path), "list", "--json"]) == 0
    names = [row["name"] for row in json.loads(capsys.readouterr().out)]
    assert main(["pak", str(map_path), "list"]) == 0  # capsys: stdout is not a terminal
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "name\tsize\tstored\tcompression"
    records = [line.split("\t") for line in lines[1:]]
    assert all(len(r) == 4 for r in records)
    assert [r[0] for r in records] == names  # whole names, one per line, however long


def test_piped_output_of_a_long_pak_through_grep(corpus_file) -> None:
    """The issue's case: ``pak list | grep`` found 84 of the 89 names a table folded at 80 columns."""
    path = corpus_file("tf2c_vipr_downfall.bsp")
    listed = [row["name"] for row in json.loads(run("pak", str(path), "list", "--json").stdout)]
    assert len(listed) > 80
    piped = run("pak", str(path), "list", COLUMNS="80")
    assert piped.returncode == 0 and piped.stderr == ""
    lines = piped.stdout.splitlines()
    for word in ("materials/", ".vtf", "cubemapdefault"):
        assert sum(word in line for line in lines) == sum(word in name for name in listed)
    assert [line.split("\t")[0] for line in lines[1:]] == listed


def test_piped_info_is_tab_separated(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(corpus_file("css_de_rats.bsp"))]) == 0
    out = capsys.readouterr().out
    assert "#\tname\tversion\toffset\tlength\tcompressed\tcount" in out
    assert "│" not in out and "┃" not in out


def test_python_m_sourcebsp(tmp_path: Path) -> None:
    result = run("example", "-o", "ex.bsp", cwd=tmp_path)
    assert result.returncode == 0 and (tmp_path / "ex.bsp").is_file()
    version = run("--version")
    from sourcebsp import __version__

    assert version.stdout.strip() == f"sourcebsp {__version__}"


def test_not_a_map_names_the_ident_without_byte_literals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "quake.bsp"
    path.write_bytes(b"IBSP" + bytes(1100))
    assert main(["info", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "IBSP" in err
    assert "b'" not in err and 'b"' not in err


@pytest.mark.parametrize("args, message", [
    (["--style", "4"], "--style must be 0-3"),
    (["--style", "-1"], "--style must be 0-3"),
    (["--exposure", "-0.5"], "--exposure must be"),
    (["--exposure", "nan"], "--exposure must be"),
])
def test_lightmaps_arguments_are_checked(args: list[str], message: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["lightmaps", "map.bsp", "-o", str(tmp_path / "a.png"), *args])
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_non_ascii_entities_under_an_ascii_locale(tmp_path: Path) -> None:
    from sourcebsp import open as open_bsp
    from sourcebsp.examples import write_example_map

    write_example_map(tmp_path / "ex.bsp")
    with open_bsp(tmp_path / "ex.bsp") as bsp:
        bsp.entities[0].set("message", "Café Ünïcode ☃")
        bsp.save(tmp_path / "utf8.bsp")
    for args in (["entities", "utf8.bsp"], ["entities", "utf8.bsp", "--json"], ["entities", "utf8.bsp", "--ent"]):
        result = run(*args, cwd=tmp_path, LC_ALL="C", LANG="C", PYTHONIOENCODING="ascii", PYTHONUTF8="0")
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr and result.stderr == ""
    shown = run("entities", "utf8.bsp", cwd=tmp_path, LC_ALL="C", PYTHONIOENCODING="ascii").stdout
    assert "Caf\\xe9" in shown and "\\u2603" in shown


def test_broken_pipe_is_quiet(corpus_file) -> None:
    path = corpus_file("tf2c_vipr_downfall.bsp")
    pipeline = subprocess.run(f'"{sys.executable}" -m sourcebsp entities "{path}" | head -1', shell=True,
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert pipeline.stdout.count("\n") == 1 and pipeline.stderr == ""


def test_packaging_metadata() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "version" not in project and project["dynamic"] == ["version"]  # one source: __version__
    extras = project["optional-dependencies"]
    assert set(extras["all"]) == set(extras["cli"]) | set(extras["export"]) | set(extras["render"]) | set(extras["deps"])
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # SPDX string instead
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'pip install ".[all]"' in readme.split("```sh", 1)[1].split("```", 1)[0]


def test_every_listed_slow_test_exists() -> None:
    from ..conftest import SLOW_TESTS

    for name in SLOW_TESTS:
        path, function = name.split("::")
        assert f"def {function}(" in (ROOT / path).read_text(encoding="utf-8"), name

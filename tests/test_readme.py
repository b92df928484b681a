"""The README's commands and code run as written: its first line twice in a row, and every
Python block, as one file, type-checks under ``mypy --strict`` and runs on the example map."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from mypy import api  # in the test extra

from sourcebsp.examples import example_map_bytes

from .content._studiomodels import box_spec, write_model

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
# One cache per checkout: mypy took another checkout's cached modules for this one's.
CACHE = ["--cache-dir", str(ROOT / ".mypy_cache" / "tests")]


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def test_first_command_runs_twice_in_a_row(tmp_path: Path) -> None:
    """The first shell line (after its pip install) works again in the same folder."""
    first = README.split("```sh\n", 1)[1].split("```", 1)[0].strip()
    assert first.startswith("pip install ") and " && sourcebsp example" in first
    commands = [shlex.split(part) for part in first.split(" && ")[1:]]
    assert [c[:2] for c in commands] == [["sourcebsp", "example"], ["sourcebsp", "info"]]
    for run in (1, 2):
        for command in commands:
            done = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, env=_env(),
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (run, command, done.stderr)
    assert (tmp_path / "example.bsp").read_bytes() == example_map_bytes()
    assert "already holds the example map" in done.stdout or "entities" in done.stdout


def test_python_blocks_type_check_as_one_file(tmp_path: Path, monkeypatch) -> None:
    """Under --strict, so every lump attribute the examples read is seen with its type."""
    blocks = _python_blocks()
    assert len(blocks) >= 4 and any("budget(" in b for b in blocks)
    assert any("bsp.planes" in b and "bsp.entities" in b for b in blocks)
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))  # this checkout's package, not an installed one
    script = tmp_path / "readme_blocks.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    out, err, status = api.run(["--strict", "--follow-imports=silent", "--config-file", "", str(script), *CACHE])
    assert status == 0, out + err


GAMEINFO = """"GameInfo"
{
    game "My mod"
    FileSystem { SteamAppId 243750 SearchPaths { game |gameinfo_path|. } }
}
"""


def test_python_blocks_run_on_the_example_map(tmp_path: Path) -> None:
    """All blocks in order, in one interpreter, in a folder holding the example map (under the
    names the README uses) and a home folder with the README's ``~/mymod`` (an empty mod)."""
    for name in ("example.bsp", "de_example.bsp"):
        (tmp_path / name).write_bytes(example_map_bytes())
    (tmp_path / "mymod").mkdir()
    (tmp_path / "mymod" / "gameinfo.txt").write_text(GAMEINFO, encoding="utf-8")
    # The studio model block's barrel: a small model built in code, beside the script and in the mod.
    write_model(tmp_path, "barrel01", box_spec())
    write_model(tmp_path / "mymod" / "models" / "props", "barrel01", box_spec())
    script = tmp_path / "readme_blocks.py"
    script.write_text("\n".join(_python_blocks()), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env={**_env(), "HOME": str(tmp_path)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # The content block: the example's oil drum (a stock model) is in no search path of an empty mod.
    assert "SB101 error models/props_c17/oildrum001.mdl (model) is in no search path" in done.stdout
    # The library block's first line, as its comment says.
    assert "\n20 orange_box\n" in done.stdout
    for written in ("example_edited.bsp", "example.glb", "example.vmf"):
        assert (tmp_path / written).stat().st_size > 1000, written
    assert "mygame" in done.stdout

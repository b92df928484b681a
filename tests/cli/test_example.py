"""``sourcebsp example``."""
from __future__ import annotations

from pathlib import Path

import pytest

from sourcebsp.cli import main
from sourcebsp.examples import example_map_bytes


def test_cli_writes_the_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "example.bsp"
    assert main(["example", "-o", str(out)]) == 0
    assert out.read_bytes() == example_map_bytes()
    assert "example.bsp" in capsys.readouterr().out
    assert main(["info", str(out)]) == 0
    assert "4 entities" in capsys.readouterr().out
    # The missing folders of an output are made, as for every command that writes.
    assert main(["example", "-o", str(tmp_path / "missing" / "x.bsp")]) == 0
    assert (tmp_path / "missing" / "x.bsp").read_bytes() == example_map_bytes()


def test_cli_example_twice_leaves_the_same_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second run finds the example map already written: success, file untouched; any other
    file at the path is still refused without --overwrite."""
    out = tmp_path / "example.bsp"
    assert main(["example", "-o", str(out)]) == 0
    before = out.stat().st_mtime_ns
    capsys.readouterr()
    assert main(["example", "-o", str(out)]) == 0
    assert "already holds the example map" in capsys.readouterr().out and out.stat().st_mtime_ns == before
    other = tmp_path / "other.bsp"
    other.write_bytes(example_map_bytes()[:-1])  # one byte short: not the example map
    assert main(["example", "-o", str(other)]) == 1
    assert "exists: give --overwrite" in capsys.readouterr().err
    assert main(["example", "-o", str(other), "--overwrite"]) == 0
    assert other.read_bytes() == example_map_bytes()

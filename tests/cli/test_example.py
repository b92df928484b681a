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
    assert main(["example", "-o", str(tmp_path / "missing" / "x.bsp")]) == 1
    assert "error" in capsys.readouterr().err

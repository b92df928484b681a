"""The commands' progress bars: rich's on a terminal, nothing (and no rich import) otherwise."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ..conftest import ROOT

_BODY = """
import sys
from sourcebsp.cli._progress import busy, counter, steps
with steps("work", ["one", "two"]) as advance:
    advance("one")
    advance("two")
with busy("wait"):
    pass
with counter("count", 3) as add:
    add(1)
    add(2)
print("rich" in sys.modules)
"""


def _run(environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "FORCE_COLOR")}
    return subprocess.run([sys.executable, "-c", _BODY], capture_output=True, text=True, timeout=120,
                          env={**env, **environ, "PYTHONPATH": str(ROOT / "src")})


def test_no_terminal_no_bar_and_no_rich() -> None:
    done = _run({})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False" and done.stderr == ""


@pytest.mark.parametrize("variable", ["FORCE_COLOR", "TTY_COMPATIBLE"])
def test_a_terminal_forced_by_the_environment_gets_rich_bars(variable: str) -> None:
    pytest.importorskip("rich")
    done = _run({variable: "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    assert "work" in done.stderr and "wait" in done.stderr and "count" in done.stderr  # the bars, on stderr

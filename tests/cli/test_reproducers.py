"""Every command on every fuzzing reproducer: exit 0, 1 or 2, one error line, never a traceback.

The reproducers (``../shared/fuzz``, beside the corpus, or ``SOURCEBSP_FUZZ``) are hostile
maps that once crashed the library.  Each command runs in its own process under
a 2 GiB address-space limit, with an ASCII-only locale (``LC_ALL=C``,
``PYTHONIOENCODING=ascii``) so that text the terminal cannot show is tested too.
Every stderr line must be one of ours (``sourcebsp: error: ...``, or a Python
warning the CLI prints as one ``sourcebsp: warning: ...`` line).  An unexpected
exception would end in one ``sourcebsp: internal error: ...`` line (and memory
running out in ``out of memory``): this test accepts neither, since every
reproducer must end in success or a ``BspError``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import CORPUS, IN_CI, ROOT

# Beside the corpus (../shared/fuzz next to ../shared/corpus) unless SOURCEBSP_FUZZ says otherwise.
FUZZ = Path(os.environ.get("SOURCEBSP_FUZZ", CORPUS.parent / "fuzz")).resolve()
REPRODUCERS = sorted(FUZZ.glob("*.bsp"))
LIMIT = 2 << 30  # bytes of address space per command
TIMEOUT = 120  # seconds; the library's own time bounds are tested with the library


def commands(path: Path, out: Path) -> dict[str, list[str]]:
    """Every command with the options that reach the most code, writing under ``out``."""
    m = str(path)
    return {
        "info": ["info", m],
        "info-strict": ["info", m, "--strict", "--json"],
        "entities": ["entities", m],
        "entities-ent": ["entities", m, "--ent"],
        "edit-entities": ["edit-entities", m, "-o", str(out / "edit.bsp"), "--all", "--set", "fuzz=1"],
        "props": ["props", m],
        "pak-list": ["pak", m, "list"],
        "pak-extract": ["pak", m, "extract", str(out / "pak")],
        "vis-cluster": ["vis", m, "--cluster", "0"],
        "vis-point": ["vis", m, "--point", "0", "0", "0"],
        "export-glb": ["export", m, "-o", str(out / "x.glb")],
        "export-obj": ["export", m, "-o", str(out / "x.obj")],
        "lightmaps": ["lightmaps", m, "-o", str(out / "atlas.png")],
        "render": ["render", m, "-o", str(out / "top.png"), "--size", "64x64"],
        "decompile": ["decompile", m, "-o", str(out / "x.vmf")],
        "repack": ["repack", m, "-o", str(out / "same.bsp"), "--reencode"],
        "repack-compress": ["repack", m, "-o", str(out / "lzma.bsp"), "--compress", "--force"],
        "lump-extract": ["lump", m, "extract", "0", "-o", str(out / "x.lmp")],
    }


def _limit() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "LC_ALL": "C", "LANG": "C",
           "PYTHONIOENCODING": "ascii", "PYTHONUTF8": "0"}
    env.pop("SOURCEBSP_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "sourcebsp", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, encoding="ascii", errors="backslashreplace", timeout=TIMEOUT,
                          preexec_fn=_limit if sys.platform != "win32" else None)


def problems(name: str, result: subprocess.CompletedProcess[str]) -> list[str]:
    """What breaks the command-line promise in one run (empty when it holds)."""
    found = []
    if result.returncode not in (0, 1, 2):
        found.append(f"{name}: exit code {result.returncode}")
    lines = result.stderr.strip().splitlines()
    if "Traceback" in result.stderr:
        found.append(f"{name}: traceback: {lines[-1]}")
    elif any(not line.startswith("sourcebsp") for line in lines):
        found.append(f"{name}: stderr not in the one-line form: {result.stderr.strip()[:300]}")
    elif "internal error" in result.stderr or "out of memory" in result.stderr:
        # Each reproducer must end in a typed error from the library, not the CLI's last resort.
        found.append(f"{name}: not a BspError: {result.stderr.strip()[:300]}")
    elif result.returncode == 1 and sum("error: " in line for line in lines) != 1:
        found.append(f"{name}: not one error line: {result.stderr.strip()[:300]}")
    return found


def _params() -> list:
    if not REPRODUCERS:
        if IN_CI:
            raise FileNotFoundError(f"no fuzz reproducers in {FUZZ}")
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no reproducers in {FUZZ}"))]
    return [pytest.param(p, id=p.stem) for p in REPRODUCERS]


@pytest.mark.slow
@pytest.mark.parametrize("path", _params())
def test_every_command_on_a_reproducer(path: Path, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    todo = commands(path, tmp_path)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(todo, pool.map(lambda args: run_cli(args, tmp_path), todo.values())))
    found = [p for name, result in results.items() for p in problems(name, result)]
    assert not found, "\n".join(found)

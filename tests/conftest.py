"""Shared fixtures: the real map corpus and small synthetic maps.

The corpus is found through ``SOURCEBSP_CORPUS`` (default ``../shared/corpus``
relative to the project root).  Without it the corpus tests are skipped on a
developer's machine, but fail when ``CI=true``.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("SOURCEBSP_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()
MAPS = sorted(CORPUS.glob("*.bsp"))
VMF_DIR = CORPUS / "vmf"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

if IN_CI and not MAPS:
    raise RuntimeError(
        f"CI=true but the map corpus is missing: no .bsp files in {CORPUS} "
        "(set SOURCEBSP_CORPUS to its folder)"
    )


def corpus_maps() -> list:
    """pytest params: one per corpus map, named after the file."""
    if not MAPS:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS}"))]
    return [pytest.param(path, id=path.stem) for path in MAPS]


def corpus_map(name: str) -> Path:
    path = CORPUS / name
    if not path.exists():
        if IN_CI:
            raise FileNotFoundError(path)
        pytest.skip(f"corpus map {name} not found")
    return path


@pytest.fixture(params=corpus_maps())
def map_path(request: pytest.FixtureRequest) -> Path:
    """Each corpus map in turn (read-only: copy before writing)."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def all_maps() -> list[Path]:
    """Every corpus map at once (skips, or fails in CI, when there is none)."""
    if not MAPS:
        pytest.skip(f"no corpus at {CORPUS}")
    return MAPS


@pytest.fixture(scope="session")
def vmf_dir() -> Path:
    if not VMF_DIR.is_dir():
        if IN_CI:
            raise FileNotFoundError(VMF_DIR)
        pytest.skip(f"no Hammer sources at {VMF_DIR}")
    return VMF_DIR


@pytest.fixture(scope="session")
def corpus_file():
    """A function giving the path of a named corpus map (skip, or fail in CI, if missing)."""
    return corpus_map

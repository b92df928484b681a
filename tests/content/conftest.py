from __future__ import annotations

from pathlib import Path

import pytest

from ._maps import open_deathmatch_dir


@pytest.fixture
def open_deathmatch() -> Path:
    return open_deathmatch_dir()

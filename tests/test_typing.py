"""The package type-checks (it ships ``py.typed``)."""
from __future__ import annotations

from pathlib import Path


from mypy import api  # in the test extra

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "sourcebsp"


def test_mypy_is_clean() -> None:
    out, err, status = api.run([str(PACKAGE), "--no-error-summary", "--cache-dir", "/tmp/sourcebsp-mypy-cache"])
    assert status == 0, out + err

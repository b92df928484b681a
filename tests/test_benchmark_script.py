"""benchmarks/bench.py runs, reports every library, and never crashes on a failure.

No timing assertions: only that the script produces its rows.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

from .conftest import MAPS, corpus_map

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("sourcebsp_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def small_map() -> Path:
    if not MAPS:
        return corpus_map("tf2_mp_lobby.bsp")  # skips, or fails in CI
    return min(MAPS, key=lambda p: p.stat().st_size)


def test_main_reports_sourcebsp_rows(bench: ModuleType, small_map: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    rows = bench.main(["--map", str(small_map), "--repeat", "1"])
    mine = {r["operation"]: r for r in rows if r["library"] == "sourcebsp"}
    assert set(mine) == {*bench.OPERATIONS, bench.MEMORY}
    for operation in bench.OPERATIONS:
        assert mine[operation]["error"] is None, mine[operation]["error"]
        assert mine[operation]["seconds"] > 0
        assert mine[operation]["runs"] == 1
        assert mine[operation]["ratio"] == pytest.approx(1.0)
    memory = mine[bench.MEMORY]
    if memory["error"] != "resource module unavailable on this platform":
        assert memory["error"] is None, memory["error"]
        assert memory["peak_bytes"] > memory["baseline_bytes"] > 0
    # every library has a row per operation: a time, "not installed" or an error
    for library in bench.LIBRARIES:
        ops = {r["operation"] for r in rows if r["library"] == library}
        assert set(bench.OPERATIONS) <= ops
    out = capsys.readouterr().out
    assert small_map.name in out and "open+decode" in out


def test_json_output(bench: ModuleType, small_map: Path, capsys: pytest.CaptureFixture[str],
                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "LIBRARIES", {"sourcebsp": bench.LIBRARIES["sourcebsp"]})
    rows = bench.main(["--map", str(small_map), "--repeat", "1", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in report["maps"]] == [small_map.name]
    assert report["maps"][0]["size"] == small_map.stat().st_size
    assert len(report["maps"][0]["rows"]) == len(rows)


def test_missing_and_failing_libraries_are_reported(bench: ModuleType, small_map: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*args: object) -> None:
        raise ValueError("cannot read this map")

    missing = bench.Adapter("missing", "no_such_module_for_bench", "no-such-dist",
                            broken, broken, broken)
    failing = bench.Adapter("failing", "json", "no-such-dist", broken, broken, broken,
                            converts=(("export obj", lambda path, out: broken(path)),))
    monkeypatch.setattr(bench, "LIBRARIES", {"sourcebsp": bench.LIBRARIES["sourcebsp"],
                                             "missing": missing, "failing": failing})
    rows = bench.main(["--map", str(small_map), "--repeat", "1"])
    by = {(r["library"], r["operation"]): r for r in rows}
    for operation in bench.OPERATIONS:
        assert by[("missing", operation)]["error"] == "not installed"
        offered = operation not in bench.CONVERSIONS or operation == "export obj"
        expected = "ValueError: cannot read this map" if offered else "not offered"
        assert by[("failing", operation)]["error"] == expected
        assert by[("failing", operation)]["seconds"] is None
        assert by[("sourcebsp", operation)]["seconds"] > 0
    out = capsys.readouterr().out
    assert "not installed" in out and "cannot read this map" in out

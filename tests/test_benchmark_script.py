"""benchmarks/bench.py: every library and operation gets a row, figures are measured, nothing crashes.

No timing assertions (the machine may be busy): only that the script
measures what it says, on a small map.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

import sourcebsp

from .conftest import MAPS, corpus_map

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"
SOURCE = Path(sourcebsp.__file__).resolve().parent.parent


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


def test_every_operation_in_process(bench, small_map, capsys) -> None:
    rows = bench.main(["--map", str(small_map), "--repeat", "1", "--no-process", "--no-limits"])
    mine = {r["operation"]: r for r in rows if r["library"] == "sourcebsp"}
    assert set(mine) == set(bench.OPERATIONS)
    for operation, row in mine.items():
        assert row["error"] is None, (operation, row["error"])
        assert row["seconds"] > 0 and row["runs"] == 1 and row["ratio"] == pytest.approx(1.0)
    # every library has a row per operation: a time, "not installed", "not offered" or an error
    for library in bench.LIBRARIES:
        assert {r["operation"] for r in rows if r["library"] == library} == set(bench.OPERATIONS)
    with sourcebsp.open(small_map) as bsp:
        keys = sum(len(entity) for entity in bsp.entities)
        assert mine["entities"]["note"] == f"{len(bsp.entities)} entities, {keys} keys"
    out = capsys.readouterr().out
    assert small_map.name in out and "open+decode" in out and "save after edit" in out


def test_whole_processes_report_time_and_peak_rss(bench, small_map, monkeypatch, capsys) -> None:
    monkeypatch.setattr(bench, "LIBRARIES", {"sourcebsp": bench.LIBRARIES["sourcebsp"]})
    rows = bench.main(["--map", str(small_map), "--repeat", "1", "--process-repeat", "1",
                       "--ops", "open+decode,cli info", "--no-limits"])
    process = {r["operation"]: r for r in rows if r["mode"] == "process"}
    assert set(process) == {"import", "open+decode", "cli info"}
    for operation, row in process.items():
        assert row["error"] is None, (operation, row["error"])
        assert row["seconds"] > row["cpu"] * 0.1 > 0
        assert 1 << 20 < row["peak_rss"] < 1 << 32
    # The import-only interpreter is the baseline: work cannot lower the peak.
    assert process["open+decode"]["peak_rss"] >= process["import"]["peak_rss"] * 0.9
    size = small_map.stat().st_size
    above = process["open+decode"]["above_import"]
    # Measured inside the same interpreter, after its imports: part of its peak, and the
    # map's lumps were read (a 46 KB map cannot make the imports' 20+ MiB).
    assert 0 <= above < process["open+decode"]["peak_rss"] - (16 << 20)
    assert process["open+decode"]["file_multiple"] == pytest.approx(above / size)
    assert "peak RSS" in capsys.readouterr().out


def test_machine_limits_and_lzma_streams(bench, corpus_file, tmp_path) -> None:
    lzma_map = corpus_file("tf2c_vipr_downfall.bsp")
    rows = {r["operation"]: r for r in bench.machine_limits(lzma_map, 1, tmp_path)}
    assert rows["memcpy of the file"]["seconds"] > 0
    assert rows["write+fsync of the file"]["seconds"] > 0
    assert not list(tmp_path.iterdir())
    with sourcebsp.open(lzma_map) as bsp:
        compressed = [entry for _, entry in bsp.iter_lumps() if entry.compressed]
        # the streams decode to the sizes the lump headers give
        assert sorted(size for _, size in bench._lzma_lumps(lzma_map)) == sorted(e.fourcc for e in compressed)
    assert f"{len(compressed)} lumps" in rows["liblzma decode of the lumps"]["note"]
    assert bench._lzma_lumps(corpus_file("tf2_mp_lobby.bsp")) == []


def test_process_floors(bench, tmp_path) -> None:
    rows = {r["operation"]: r for r in bench.process_floors(1, bench.child_environment(None, tmp_path))}
    bare = rows["python start and exit (whole process)"]
    with_numpy = rows["python and import numpy (whole process)"]
    assert bare["library"] == with_numpy["library"] == bench.MACHINE
    assert bare["seconds"] > 0 and with_numpy["seconds"] > 0
    # numpy's extension modules and OpenBLAS are mapped and touched: several MiB more.
    assert with_numpy["peak_rss"] > bare["peak_rss"] + (4 << 20)
    assert bench.LZMA_FLOOR + " (whole process)" not in rows


def test_lzma_floor_decodes_the_lumps(bench, corpus_file, tmp_path) -> None:
    lzma_map = corpus_file("tf2c_vipr_downfall.bsp")
    rows = {r["operation"]: r for r in bench.process_floors(1, bench.child_environment(None, tmp_path), lzma_map)}
    floor = rows[bench.LZMA_FLOOR + " (whole process)"]
    # The decoded lumps (3.5 MB) and liblzma's dictionaries are in its peak beside the bare interpreter.
    unpacked = sum(size for _, size in bench._lzma_lumps(lzma_map))
    assert floor["peak_rss"] > rows["python start and exit (whole process)"]["peak_rss"] + unpacked // 4
    assert floor["cpu"] > 0


def test_default_maps(bench, tmp_path) -> None:
    if not MAPS:
        pytest.skip("no corpus")
    plain, lzma_map, largest = bench.default_maps(tmp_path)
    assert not bench._lzma_lumps(plain) and bench._lzma_lumps(lzma_map)
    assert largest.stat().st_size == max(p.stat().st_size for p in MAPS)


def test_baseline_is_timed_beside(bench, small_map, monkeypatch) -> None:
    monkeypatch.setattr(bench, "LIBRARIES", {"sourcebsp": bench.LIBRARIES["sourcebsp"]})
    rows = bench.main(["--map", str(small_map), "--repeat", "1", "--ops", "open+decode", "--no-process",
                       "--no-limits", "--baseline", str(SOURCE), "--json"])
    baseline = [r for r in rows if r["library"] == bench.BASELINE]
    assert [r["operation"] for r in baseline] == ["open+decode"]
    assert baseline[0]["error"] is None and baseline[0]["seconds"] > 0 and baseline[0]["ratio"] > 0


def test_json_output(bench, small_map, capsys, monkeypatch) -> None:
    monkeypatch.setattr(bench, "LIBRARIES", {"sourcebsp": bench.LIBRARIES["sourcebsp"]})
    rows = bench.main(["--map", str(small_map), "--repeat", "1", "--json", "--no-process", "--ops", "entities"])
    report = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in report["maps"]] == [small_map.name]
    assert report["maps"][0]["size"] == small_map.stat().st_size
    assert len(report["maps"][0]["rows"]) == len(rows)
    assert {r["library"] for r in rows} == {"sourcebsp", bench.MACHINE}


def test_size_fit(bench) -> None:
    results = [{"size": mb * 1_000_000, "rows": [
        {"library": "sourcebsp", "operation": "open+decode", "mode": "in process", "seconds": 0.002 + 0.003 * mb}]}
        for mb in (1, 2, 5, 9)]
    fit = bench.size_fit(results, "sourcebsp")
    assert fit["fixed"] == pytest.approx(0.002) and fit["per_mb"] == pytest.approx(0.003)
    assert fit["r2"] == pytest.approx(1.0) and fit["maps"] == 4
    assert bench.size_fit(results[:2], "sourcebsp") is None


def test_missing_and_failing_libraries_are_reported(bench, small_map, monkeypatch, capsys) -> None:
    def broken(*args: object) -> None:
        raise ValueError("cannot read this map")

    missing = bench.Adapter("missing", "no_such_module_for_bench", "no-such-dist", {"open+decode": bench.Op(broken)})
    failing = bench.Adapter("failing", "json", "no-such-dist",
                            {"open+decode": bench.Op(broken), "export obj": bench.Op(broken)})
    monkeypatch.setattr(bench, "LIBRARIES", {"sourcebsp": bench.LIBRARIES["sourcebsp"],
                                             "missing": missing, "failing": failing})
    ops = "open+decode,export obj,render"
    rows = bench.main(["--map", str(small_map), "--repeat", "1", "--no-process", "--no-limits", "--ops", ops])
    by = {(r["library"], r["operation"]): r for r in rows}
    for operation in ops.split(","):
        assert by[("missing", operation)]["error"] == "not installed"
        expected = "not offered" if operation == "render" else "ValueError: cannot read this map"
        assert by[("failing", operation)]["error"] == expected and by[("failing", operation)]["seconds"] is None
        assert by[("sourcebsp", operation)]["seconds"] > 0
    out = capsys.readouterr().out
    assert "not installed" in out and "cannot read this map" in out


def test_readme_table_spans_the_maps() -> None:
    """readme_table.py: sourcebsp's fastest and slowest time, each peer's worst and best ratio over
    the maps it read (failures counted), and the machine's floor, from a run's JSON."""
    spec = importlib.util.spec_from_file_location("sourcebsp_readme_table", SCRIPT.with_name("readme_table.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def row(library: str, operation: str, mode: str, seconds: float | None, error: str | None = None) -> dict:
        return {"library": library, "operation": operation, "mode": mode, "seconds": seconds, "error": error}

    maps = []
    for ours, theirs, floor in ((0.002, 0.004, 0.0005), (0.010, None, 0.001)):
        rows = [row("sourcebsp", "open+decode", "in process", ours),
                row("srctools", "open+decode", "in process", theirs, None if theirs else "KeyError"),
                row("bsp_tool", "open+decode", "in process", 0.5 * ours),
                row("sourcepp", "open+decode", "in process", None, "not offered"),
                row("sourcebsp", "open+decode", "process", 10 * ours),
                row("machine", "memcpy of the file", "limit", floor)]
        for r in rows:  # as bench.py makes them: other / sourcebsp of the same operation and mode
            ref = next(o["seconds"] for o in rows if o["library"] == "sourcebsp" and
                       (o["operation"], o["mode"]) == (r["operation"], r["mode"])) if r["mode"] != "limit" else None
            r["ratio"] = r["seconds"] / ref if ref and r["seconds"] is not None else None
        maps.append({"rows": rows})
    lines = module.table({"maps": maps}).splitlines()
    assert lines[2] == "| open+decode | 2.0–10.0 | 2.00x (1 failed) | 0.50x | not offered | 0.50–1.0 |"
    assert lines[3] == "| open+decode (whole process) | 20.0–100 | not offered | not offered | not offered |  |"


def test_decompressed_size_and_goals(bench, corpus_file) -> None:
    """Issue 31's goal rows: each from this run's rows, beside its bound."""
    lzma_map, plain = corpus_file("tf2c_vipr_downfall.bsp"), corpus_file("tf2_mp_lobby.bsp")
    with sourcebsp.open(lzma_map) as bsp:
        compressed = [entry for _, entry in bsp.iter_lumps() if entry.compressed]
        unpacked = bsp.file_size + sum(entry.fourcc - entry.filelen for entry in compressed)
    # Lump lengths may include padding after the stream (a few bytes), not counted in the streams
    assert 0 <= unpacked - bench.decompressed_size(lzma_map) < 4 * 64
    assert bench.decompressed_size(plain) == plain.stat().st_size
    size = 1_000_000
    rows = [
        {"library": "sourcebsp", "operation": "open+decode", "mode": "in process", "seconds": 0.05},
        {"library": "machine", "operation": "liblzma decode of the lumps", "mode": "limit", "seconds": 0.04},
        {"library": "sourcebsp", "operation": "cli info", "mode": "process", "seconds": 0.06, "cpu": 0.06},
        {"library": "sourcepp", "operation": "open+decode", "mode": "process", "seconds": 0.08, "cpu": 0.03},
        {"library": "sourcebsp", "operation": "render", "mode": "process", "seconds": 1.0,
         "above_import": 4 * size + 32 * 2**20 + 1},
    ]
    found = bench.goals({"size": size, "rows": rows}, 2 * size)
    lzma = next(g for g in found if g["goal"].startswith("open+decode / liblzma"))
    assert (lzma["value"], lzma["bound"], lzma["met"]) == (1.25, 1.15, False)
    info = [g for g in found if g["goal"].startswith("cli info")]
    assert [(g["value"], g["met"]) for g in info] == [(0.75, True), (2.0, False)]  # wall, then CPU
    render = next(g for g in found if g["goal"].startswith("render"))
    assert render["met"] is False and render["bound"] == round((4 * size + 32 * 2**20) / 2**20, 1)
    # No LZMA row for a plain map, none for a peer that did not run.
    plain_goals = bench.goals({"size": size, "rows": rows}, size)
    assert not [g for g in plain_goals if "liblzma" in g["goal"] or "save" in g["goal"]]

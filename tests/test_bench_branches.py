"""benchmarks/bench_branches.py: a row for every branch with an example, figures measured."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from sourcebsp.examples.branches import example_branch_bytes, example_branches

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_branches.py"


def test_a_row_per_branch() -> None:
    spec = importlib.util.spec_from_file_location("sourcebsp_bench_branches", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.rows(1)
    assert [row[0] for row in rows] == [*example_branches(), "titanfall", "titanfall2"]
    assert all(row[1] == len(example_branch_bytes(row[0])) and row[2] > 0 and row[3] > 0 for row in rows)
    assert next(row[3] for row in rows if row[0] == "orange_box") == 1.0

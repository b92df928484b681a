"""Timing figures live in benchmarks/README.md, not in the code's comments and docstrings,
where they go stale unseen; the code says why, the benchmarks say how much."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "sourcebsp"
# "5 ms", "0.2 s", "65 us", "1.5-2 ms", "2.5x faster", "1690 MB/s" (words such as "a sixth slower" are left to review).
TIMING = re.compile(r"\b\d[\d.,]*(?:-\d[\d.]*)?(?:\s?(?:ms|us|µs|ns)|\s(?:s|seconds?))\b|\b\d[\d.]*x (?:faster|slower)\b"
                    r"|\b\d[\d.]*\s?[MG]B/s\b")


def _prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a module."""
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                found.append((node.body[0].lineno, doc))
    return found


def test_pattern_finds_the_figures_it_is_for() -> None:
    for text in ("# its import costs 3-5 ms", "(0.2 s per worker)", "saves 65 us per MB", "about 2.5x faster",
                 "1690 MB/s"):
        assert TIMING.search(text), text
    for text in ("# 17 bytes, packed", "lumps 1s and 2s", "# max 32 x the file size", "16 ms_per_frame"):
        assert not TIMING.search(text), text


def test_no_timing_figures_in_comments_or_docstrings() -> None:
    stale = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in _prose(path.read_text(encoding="utf-8")):
            for match in TIMING.finditer(text):
                stale.append(f"{path.relative_to(PACKAGE)}:{line}: {match.group(0)!r}")
    assert not stale, "\n".join(stale)

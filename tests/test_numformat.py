"""sourcebsp.numformat: format_lines / format_line_blocks byte for byte what the % operator prints,
format_many as Hammer writes numbers (the regex implementation it replaced is the reference).

The reference is Python's own ``%`` formatting (``(template * n) % values``,
what the OBJ writer used before); the awkward cases are the ones where a
vectorized rounding could go wrong: exact binary .5 ties, decimal ties one
ulp either side, negative zero and negatives that round to zero, numbers
too long for a field, NaN and infinities.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sourcebsp import numformat
from sourcebsp.converters.vmf import decompile
from sourcebsp.converters.vmf import writer as vmf_writer
from sourcebsp.converters.vmf.writer import format_number
from sourcebsp.numformat import format_line_blocks, format_lines, format_many


# The regex implementation format_many replaced (kept here as the reference its
# output must match byte for byte).
_TRAILING_ZEROS = re.compile(r"(\.\d*?)0+(?= |$)")
_BARE_POINT = re.compile(r"\.(?= |$)")
_NEGATIVE_ZERO = re.compile(r"(?<!\S)-0(?= |$)")


def _regex_format_many(values: np.ndarray, decimals: int = 6) -> list[str]:
    flat = np.asarray(values, np.float64).ravel()
    if not len(flat):
        return []
    flat = np.where(np.isfinite(flat), flat, 0.0)
    text = (f"%.{decimals}f " * len(flat))[:-1] % tuple(flat.tolist())
    text = _NEGATIVE_ZERO.sub("0", _BARE_POINT.sub("", _TRAILING_ZEROS.sub(r"\1", text)))
    return text.split(" ")


def _awkward_numbers() -> np.ndarray:
    rng = np.random.default_rng(13)
    special = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-300, -1e-300, 5e-324, -5e-324,
               1e300, -1e300, 2.0 ** 53, 2.0 ** 53 + 2, -(2.0 ** 63), 2.0 ** 64, 1e22, 1.7976931348623157e308,
               5e-7, -5e-7, 4.9999999e-7, -4.9999999e-7, 5.0000001e-7, -5.0000001e-7, 0.9999995, -0.9999995,
               0.0000005, -0.0000015, 0.00005, -0.00005, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 10.0, -10.0, 100.0,
               0.1, 0.2, 0.3, 1 / 3, -2 / 3, 123456.7890123, -4.37114e-08, 0.000001, -0.000001]
    scales = 10.0 ** rng.integers(-12, 16, 60000)
    noise = rng.normal(size=60000) * scales
    decimals = rng.integers(0, 8, 60000)
    rounded = np.round(rng.normal(size=60000) * 1000 * 10.0 ** decimals) / 10.0 ** decimals
    whole = rng.integers(-(2 ** 40), 2 ** 40, 30000).astype(np.float64)
    tiny = rng.uniform(-2e-6, 2e-6, 20000)
    halves = (rng.integers(-10 ** 6, 10 ** 6, 20000) + 0.5) / 10 ** rng.integers(0, 7, 20000)
    return np.concatenate([special, noise, rounded, whole, tiny, halves, np.float32(noise[:10000])])


@pytest.mark.parametrize("decimals", [0, 1, 4, 6, 9])
def test_identical_to_the_regex_implementation(decimals: int) -> None:
    values = _awkward_numbers()
    assert format_many(values, decimals) == _regex_format_many(values, decimals)


@pytest.mark.parametrize("kind", ["whole", "fractions", "mixed"])
def test_identical_on_each_path(kind: str) -> None:
    """Only whole numbers, none, and a mixture take three different branches."""
    values = _awkward_numbers()
    finite = values[np.isfinite(values)]
    if kind == "whole":
        values = finite[finite == np.trunc(finite)]
    elif kind == "fractions":
        values = finite[finite != np.trunc(finite)]
    assert len(values) > 1000
    assert format_many(values) == _regex_format_many(values)
    assert format_many(values.reshape(-1, 1)[: len(values) // 2 * 2].reshape(-1, 2)) == \
        _regex_format_many(values[: len(values) // 2 * 2])


def test_agrees_with_format_number() -> None:
    values = _awkward_numbers()[::7]
    assert format_many(values) == [format_number(v) for v in values]
    assert format_many(values, 4) == [format_number(v, 4) for v in values]


def test_edge_values() -> None:
    assert format_many([]) == []
    assert format_many(np.array([-0.0, -1e-9, np.nan, -np.inf, 16.0, 0.25, -4.5, 1e21, 2.5e-7])) == \
        ["0", "0", "0", "0", "16", "0.25", "-4.5", "1000000000000000000000", "0"]
    assert format_many([-0.4, -0.5, -0.6, 7.0], 0) == ["0", "0", "-1", "7"]


@pytest.fixture(autouse=True, scope="module")
def _vectorized_even_when_small():
    """Small inputs normally take the % operator itself; these tests are about the vectorized path."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(numformat, "_SMALL_INPUT", 0)
        yield


def _percent(template: str, values: np.ndarray) -> bytes:
    """The reference: the % operator on the template repeated once per row."""
    values = np.asarray(values)
    if not values.size:
        return b""
    rows = values.reshape(len(values), -1)
    return ((template * len(rows)) % tuple(rows.ravel().tolist())).encode("ascii")


def _ties(decimals: int) -> np.ndarray:
    """Numbers at a .5 tie of ``%.{decimals}f`` and the floats 1 and 2 ulp either side."""
    rng = np.random.default_rng(decimals)
    odd = 2 * rng.integers(0, 2 ** 20, 3000) + 1
    # (2q + 1) / 2**(d+1) * 10**d = (2q + 1) * 5**d / 2: exactly a half.
    binary = odd / 2.0 ** (decimals + 1) * 2.0 ** rng.integers(-3, 1, 3000)
    # k + 0.5 units of the last decimal, as near as a float gets: rarely exact.
    decimal = (rng.integers(0, 10 ** 9, 3000) + 0.5) / 10.0 ** decimals
    near = np.concatenate([binary, decimal, [0.5 / 10 ** decimals, 1.5 / 10 ** decimals, 2.5, 0.125, 0.375]])
    around = [near]
    for steps in (1, 2):
        up = down = near
        for _ in range(steps):
            up, down = np.nextafter(up, np.inf), np.nextafter(down, -np.inf)
        around += [up, down]
    values = np.concatenate(around)
    return np.concatenate([values, -values])


def _awkward() -> np.ndarray:
    rng = np.random.default_rng(5)
    magnitudes = 10.0 ** rng.integers(-12, 16, 40000)
    noise = rng.normal(size=40000) * magnitudes
    special = [0.0, -0.0, 1e-300, -1e-300, 5e-324, -5e-324, -1e-9, -4.9e-7, -5e-7, -5.0000001e-7, -0.4, -0.5,
               0.5, 1.5, 2.5, 0.9999995, -0.9999995, 9.9999995, 1e15, -1e15, 2.0 ** 52 / 1e6, 2.0 ** 52,
               4.5e15, 1e16, 123456789.123456789, float(np.float32(0.1)), float(np.float32(-16383.99))]
    return np.concatenate([special, noise, noise.astype(np.float32), _ties(5), _ties(6)])


TEMPLATES = ["v %.6f %.6f %.6f\n", "vt %.6f %.6f\n", "vn %.5f %.5f %.5f\n", "%.0f\n", "%.1f %.2f %.3f\n",
             "[%.9f, %.4f]", "%d %.6f;\n", "x%.6fy"]


@pytest.mark.parametrize("template", TEMPLATES)
def test_identical_to_the_percent_operator(template: str) -> None:
    columns = template.count("%")
    values = _awkward()
    values = values[: len(values) // columns * columns].reshape(-1, columns)
    assert format_lines(template, values) == _percent(template, values)


@pytest.mark.parametrize("decimals", [5, 6])
def test_ties_round_half_to_even_of_the_exact_value(decimals: int) -> None:
    template = f"%.{decimals}f\n"
    values = _ties(decimals)
    assert format_lines(template, values) == _percent(template, values)
    # 2**-(d+1) and 3 * 2**-(d+1) are exact ties (5**d / 2, 3 * 5**d / 2 units): one rounds down, one up.
    expected = {5: b"0.01562\n0.04688\n", 6: b"0.007812\n0.023438\n"}[decimals]
    assert format_lines(template, np.array([1, 3]) / 2.0 ** (decimals + 1)) == expected


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_widths(dtype: type) -> None:
    rng = np.random.default_rng(7)
    values = (rng.normal(size=(20000, 3)) * 10.0 ** rng.integers(-6, 9, (20000, 3))).astype(dtype)
    for template in ("v %.6f %.6f %.6f\n", "vn %.5f %.5f %.5f\n"):
        assert format_lines(template, values) == _percent(template, values)


def test_negative_zero_and_negatives_rounding_to_zero_keep_their_sign() -> None:
    values = np.array([-0.0, -1e-9, -4e-7, 0.0, 4e-7])
    assert format_lines("%.6f\n", values) == b"-0.000000\n-0.000000\n-0.000000\n0.000000\n0.000000\n"
    assert format_lines("%d\n", values) == b"0\n0\n0\n0\n0\n"  # %d truncates to an int: no sign


def test_integers() -> None:
    rng = np.random.default_rng(3)
    big = np.array([0, 1, -1, 9, 10, 99, 100, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 52 - 1, -(2 ** 52) + 1, 2 ** 52,
                    2 ** 62, -(2 ** 63), 2 ** 63 - 1], np.int64)
    values = np.concatenate([big, rng.integers(-(2 ** 62), 2 ** 62, 5000), rng.integers(1, 60000, 9000)])
    for template in ("%d\n", "f %d/%d/%d %d/%d/%d %d/%d/%d\n"):
        columns = template.count("%")
        rows = values[: len(values) // columns * columns].reshape(-1, columns)
        assert format_lines(template, rows) == _percent(template, rows)
    small = np.array([[0, 255, 7]], np.uint8)
    assert format_lines("%d %d %d\n", small) == b"0 255 7\n"
    unsigned = np.array([[0, 2 ** 63, 2 ** 64 - 1]], np.uint64)
    assert format_lines("%d %d %d\n", unsigned) == b"0 9223372036854775808 18446744073709551615\n"
    # Floats under %d truncate like int(x).
    floats = np.array([2.7, -2.7, -0.5, 1e15 + 0.5, -3.0])
    assert format_lines("%d\n", floats) == _percent("%d\n", floats)


def test_non_finite_and_huge_numbers_print_as_the_percent_operator() -> None:
    values = np.array([np.nan, -np.nan, np.inf, -np.inf, 1e22, -1e300, 1.7976931348623157e308, 1.0, -2.5])
    for template in ("%.6f\n", "%.0f\n", "%.5f;"):
        assert format_lines(template, values) == _percent(template, values)
    with pytest.raises(ValueError):
        format_lines("%d\n", np.array([np.nan]))  # as the % operator


def test_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunk boundaries, a chunk that needs the % operator among vectorized ones, blocks across chunks."""
    monkeypatch.setattr(numformat, "_CHUNK_NUMBERS", 12)
    values = _awkward()[:3000].reshape(-1, 3)
    values[500, 1] = np.nan
    template = "v %.6f %.6f %.6f\n"
    assert format_lines(template, values) == _percent(template, values)
    counts = [0, 1, 7, 0, 300, 192]
    blocks = format_line_blocks(template, values, counts)
    starts = np.cumsum([0, *counts])
    assert blocks == [_percent(template, values[a:b]) for a, b in zip(starts[:-1], starts[1:])]
    # A template without a newline: line lengths are counted instead.
    assert format_line_blocks("%.2f,", values[:, :1], [4, 996]) == \
        [_percent("%.2f,", values[:4, :1]), _percent("%.2f,", values[4:, :1])]


def test_small_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below ``_SMALL_INPUT`` numbers the % operator does the work; blocks are cut the same way."""
    monkeypatch.setattr(numformat, "_SMALL_INPUT", 1024)
    values = _awkward()[:300].reshape(-1, 3)
    assert format_lines("v %.6f %.6f %.6f\n", values) == _percent("v %.6f %.6f %.6f\n", values)
    assert format_line_blocks("v %.6f %.6f %.6f\n", values, [40, 0, 60]) == \
        [_percent("v %.6f %.6f %.6f\n", values[:40]), b"", _percent("v %.6f %.6f %.6f\n", values[40:])]
    assert format_line_blocks("%.2f,", values[:, :1], [4, 96]) == \
        [_percent("%.2f,", values[:4, :1]), _percent("%.2f,", values[4:, :1])]


def test_empty_and_bad_templates() -> None:
    assert format_lines("v %.6f %.6f %.6f\n", np.zeros((0, 3))) == b""
    assert format_line_blocks("v %.6f\n", np.zeros((0, 1)), [0, 0]) == [b"", b""]
    for bad in ("%s\n", "100%% %.6f\n", "%5.2f\n", "%.6e\n", "no field\n", "%.6f\0\n"):
        with pytest.raises(ValueError):
            format_lines(bad, np.zeros((2, 1)))
    with pytest.raises(ValueError):
        format_lines("%.6f %.6f\n", np.zeros((2, 3)))


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float32, np.float64]), st.integers(1, 60)),
       st.integers(0, 10))
def test_any_floats(values: np.ndarray, decimals: int) -> None:
    template = f"%.{decimals}f\n"
    assert format_lines(template, values) == _percent(template, values)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 60), elements=st.floats(-1e17, 1e17)), st.integers(0, 8))
def test_any_floats_hammer_style(values: np.ndarray, decimals: int) -> None:
    assert format_many(values, decimals) == _regex_format_many(values, decimals)


def _hammer_lines(template: str, values: np.ndarray, *, hammer: bool) -> bytes:
    """The reference for ``format_lines(..., hammer=True)``: each column by the regex reference, then joined."""
    assert hammer
    pieces = re.split(r"%\.(\d+)f", template)
    literals, decimals = pieces[::2], [int(d) for d in pieces[1::2]]
    rows = np.asarray(values, np.float64).reshape(len(values), -1)
    columns = [_regex_format_many(rows[:, i], d) if len(rows) else [] for i, d in enumerate(decimals)]
    lines = []
    for numbers in zip(*columns):
        lines.append(literals[0] + "".join(n + literal for n, literal in zip(numbers, literals[1:])))
    return "".join(lines).encode("ascii")


HAMMER_TEMPLATES = ["(%.6f %.6f %.6f) (%.6f %.6f %.6f) (%.6f %.6f %.6f)\n", "[%.6f %.6f %.6f %.4f] %.6f\n",
                    "%.0f;%.2f\n", "%.6f"]


@pytest.mark.parametrize("template", HAMMER_TEMPLATES)
def test_hammer_style_identical_to_the_reference(template: str, monkeypatch: pytest.MonkeyPatch) -> None:
    columns = template.count("%")
    values = np.concatenate([[np.nan, -np.inf, np.inf, -0.0, -1e-9, 1e21, -1e300], _awkward()])
    values = values[: len(values) // columns * columns].reshape(-1, columns)
    assert format_lines(template, values, hammer=True) == _hammer_lines(template, values, hammer=True)
    monkeypatch.setattr(numformat, "_CHUNK_NUMBERS", 50)  # chunks with and without huge numbers
    assert format_lines(template, values[:2000], hammer=True) == _hammer_lines(template, values[:2000], hammer=True)


def test_hammer_style_examples() -> None:
    assert format_lines("[%.6f %.4f] %.6f\n", np.array([[0.25, -0.00004, 16.0], [-4.5, 1e-5, np.nan]]),
                        hammer=True) == b"[0.25 0] 16\n[-4.5 0] 0\n"


def test_decompiled_vmf_identical_with_the_reference_formatter(map_path, tmp_path, monkeypatch):
    """Every number of a decompiled map, formatted by the regex reference instead, gives the same file."""
    decompile(map_path, tmp_path / "new.vmf")
    monkeypatch.setattr(vmf_writer, "format_many", _regex_format_many)
    monkeypatch.setattr(vmf_writer, "format_lines", _hammer_lines)
    decompile(map_path, tmp_path / "reference.vmf")
    assert (tmp_path / "new.vmf").read_bytes() == (tmp_path / "reference.vmf").read_bytes()

"""converters._common: number formatting shared by the OBJ and VMF writers."""
from __future__ import annotations

import re

import numpy as np
import pytest

from sourcebsp.converters._common import format_many
from sourcebsp.converters.vmf.writer import format_number

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

"""``sourcebsp vis``."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp.cli import main


def _open_leaf_centre(bsp: sourcebsp.BspFile) -> tuple[list[float], int]:
    """The box centre of a non-solid leaf that contains it, and that leaf."""
    leafs = bsp.leafs
    for leaf in np.flatnonzero(leafs["cluster"] >= 0).tolist():
        centre = ((leafs["mins"][leaf].astype(np.float64) + leafs["maxs"][leaf]) / 2).tolist()
        if bsp.leaf_at(centre) == leaf:
            return centre, leaf
    raise AssertionError("no leaf contains its own box centre")


def test_point_json(map_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sourcebsp.open(map_path) as bsp:
        point, leaf = _open_leaf_centre(bsp)
        cluster = int(bsp.leafs["cluster"][leaf])
        vis = bsp.visibility
        expected = np.flatnonzero(vis.pvs_matrix()[cluster]).tolist() if vis.present else list(range(bsp.num_clusters))
        count = int(bsp.leafs["cluster"].max()) + 1
    assert main(["vis", str(map_path), "--point", *map(str, point), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["leaf"] == leaf and report["cluster"] == cluster and report["solid"] is False
    assert report["point"] == point
    assert report["clusters"] == expected and report["count"] == len(expected)
    assert report["num_clusters"] == count
    assert report["has_visibility_data"] == vis.present
    assert cluster in report["clusters"]


def test_cluster_text_and_pas(map_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sourcebsp.open(map_path) as bsp:
        n = bsp.num_clusters
        last = n - 1
        pvs = int(bsp.pvs(last).sum())
        pas = np.flatnonzero(bsp.pas(last)).tolist()
    assert main(["vis", str(map_path), "--cluster", str(last)]) == 0
    out = capsys.readouterr().out
    assert f"cluster {last} sees {pvs} of {n} clusters" in out
    assert main(["vis", str(map_path), "--cluster", str(last), "--pas", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kind"] == "pas" and report["clusters"] == pas and report["leaf"] is None


def test_solid_and_errors(all_maps: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = next(p for p in all_maps if p.stem == "css_de_rats")
    # (0 0 0) lies in solid rock in de_rats (leaf 1, cluster -1)
    assert main(["vis", str(path), "--point", "0", "0", "0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cluster"] == -1 and report["solid"] and report["clusters"] == [] and report["count"] == 0
    assert main(["vis", str(path), "--cluster", "-1"]) == 0
    assert "solid" in capsys.readouterr().out
    assert main(["vis", str(path), "--cluster", "2002"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "2002" in err and "Traceback" not in err
    assert main(["vis", str(path / "missing.bsp"), "--cluster", "0"]) == 1
    with pytest.raises(SystemExit) as usage:
        main(["vis", str(path)])  # neither --cluster nor --point
    assert usage.value.code == 2


def test_map_without_visibility_data(all_maps: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = next(p for p in all_maps if p.stem == "csgo_tooltextures")
    with sourcebsp.open(path) as bsp:
        assert not bsp.visibility.present
        n = bsp.num_clusters
    assert main(["vis", str(path), "--cluster", "0"]) == 0
    out = capsys.readouterr().out
    assert "no visibility data" in out and f"sees {n} of {n} clusters" in out

"""``sourcebsp.scan.scan``: --since reuse, atomic output, a Dask client, order and bounded work in flight."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from sourcebsp.scan import TABLES, scan  # noqa: E402
from sourcebsp.scan import executors, rows  # noqa: E402
from sourcebsp.scan.tables import SCHEMAS, staged_folder  # noqa: E402

NAMES = ("tf2_test2.bsp", "css_2000.bsp", "x360_shack.bsp", "tf2_mp_lobby.bsp")


def tables(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {name: pq.read_table(folder / f"{name}.parquet").to_pylist() for name in TABLES}


def keyed(found: dict[str, list[dict[str, Any]]]) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of each table as sorted tuples: the same rows, whatever their order."""
    return {name: sorted(tuple(str(v) for v in row.values()) for row in found[name]) for name in found}


@pytest.fixture()
def folder(tmp_path: Path, corpus_file) -> Path:
    maps = tmp_path / "maps"
    maps.mkdir()
    for name in NAMES:
        shutil.copyfile(corpus_file(name), maps / name)
    return maps


def _paths(folder: Path) -> list[Path]:
    return sorted(folder.iterdir())


def test_since_copies_rows_of_known_maps_and_reads_only_the_new(folder: Path, tmp_path: Path, corpus_file,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    first = tmp_path / "first"
    report = scan(_paths(folder), first)
    assert (report.files, report.read, report.reused, report.errors) == (4, 4, 0, 0)
    # A week later: one map gone, one new, one renamed.
    (folder / "tf2_mp_lobby.bsp").unlink()
    shutil.copyfile(corpus_file("csgo_2000.bsp"), folder / "csgo_2000.bsp")
    (folder / "css_2000.bsp").rename(folder / "renamed.bsp")
    opened: list[str] = []
    real_open = rows.open_map
    monkeypatch.setattr(rows, "open_map", lambda path, *args, **kw: (opened.append(os.path.basename(path)),
                                                                      real_open(path, *args, **kw))[1])
    second = tmp_path / "second"
    report = scan(_paths(folder), second, since=first)
    assert opened == ["csgo_2000.bsp"]  # the only map whose sha256 the first scan does not hold
    assert (report.files, report.read, report.reused) == (4, 1, 3)
    monkeypatch.undo()
    fresh = tmp_path / "fresh"
    scan(_paths(folder), fresh)
    assert keyed(tables(second)) == keyed(tables(fresh))
    assert [r["path"] for r in tables(second)["maps"]] == [str(p) for p in _paths(folder)]
    # The since folder may be the output itself, replaced.
    report = scan(_paths(folder), second, since=second, overwrite=True)
    assert report.read == 0 and keyed(tables(second)) == keyed(tables(fresh))


def test_a_failed_scan_leaves_nothing_half_written(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    seen = []

    def stop(result: rows.MapResult) -> None:
        seen.append(result)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        scan(_paths(folder), out, progress=stop)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["maps"]  # no staging folder left beside it
    scan(_paths(folder)[:1], out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    seen.clear()
    with pytest.raises(KeyboardInterrupt):
        scan(_paths(folder), out, overwrite=True, progress=stop)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the old output, whole
    with pytest.raises(FileExistsError):
        scan(_paths(folder), out)


def test_staged_folder_replaces_only_on_success(tmp_path: Path) -> None:
    target = tmp_path / "t"
    with staged_folder(target) as path:
        Path(path, "a").write_text("1")
        assert not target.exists()
    assert (target / "a").read_text() == "1"
    with pytest.raises(RuntimeError):
        with staged_folder(target, overwrite=True) as path:
            Path(path, "b").write_text("2")
            raise RuntimeError
    assert [p.name for p in target.iterdir()] == ["a"]
    with staged_folder(target, overwrite=True) as path:
        Path(path, "b").write_text("2")
    assert [p.name for p in target.iterdir()] == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


@pytest.mark.slow
def test_dask_client_gives_the_rows_of_a_local_run(folder: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    local = tmp_path / "local"
    scan(_paths(folder), local)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        first = tmp_path / "dask"
        report = scan(_paths(folder), first, client=client)
        assert report.read == 4
        assert tables(first) == tables(local)  # same rows, same order
        again = tmp_path / "dask-since"
        report = scan(_paths(folder), again, client=client, since=first)  # the known ids go to the workers
        assert report.reused == 4 and keyed(tables(again)) == keyed(tables(local))
        # The command, given the running cluster's address (its client is closed, the cluster left running).
        from sourcebsp.cli import main

        assert main(["scan", str(folder), "-o", str(tmp_path / "cli"), "--dask", cluster.scheduler_address]) == 0
        assert tables(tmp_path / "cli") == tables(local)
        assert client.submit(sum, [1, 2]).result() == 3


def test_results_come_in_path_order_with_a_bounded_window() -> None:
    started: list[str] = []
    taken: list[str] = []

    def submit(path: str) -> str:
        started.append(path)
        assert len(started) - len(taken) <= 3  # never more than the window ahead of what was taken
        return path

    def result(path: str) -> rows.MapResult:
        taken.append(path)
        return rows.MapResult(path, path, 0, False, {})

    paths = [f"m{i}" for i in range(10)]
    assert [r.path for r in executors._ordered(submit, paths, 3, result)] == paths
    assert started == paths


def test_text_that_is_not_utf8_is_kept_as_escapes(tmp_path: Path) -> None:
    from sourcebsp.scan.tables import TableWriter

    writer = TableWriter(str(tmp_path))
    name = b"props/caf\xe9.mdl".decode("utf-8", "surrogateescape")  # a Latin-1 byte as the codecs keep it
    writer.add("materials", {"map_id": ["x"], "material": [name]})
    writer.close()
    assert pq.read_table(tmp_path / "materials.parquet").to_pylist() == [{"map_id": "x", "material": "props/caf\\xe9.mdl"}]
    for table in TABLES:
        assert pq.read_schema(tmp_path / f"{table}.parquet") == SCHEMAS[table]  # every table written, even empty


def test_error_message_is_the_cli_line(tmp_path: Path) -> None:
    from sourcebsp.errors import TruncatedError

    assert rows.error_message(TruncatedError("short", offset=16), "m.bsp") == "file offset 16 (0x10): short"
    assert rows.error_message(FileNotFoundError(2, "No such file or directory"), "m.bsp") == \
        "No such file or directory: m.bsp"
    assert rows.error_message(KeyError("x"), "m.bsp").startswith("internal error: KeyError: 'x'")
    missing = rows.map_result(str(tmp_path / "none.bsp"))
    assert missing.map_id is None and missing.error == f"No such file or directory: {tmp_path / 'none.bsp'}"


def test_each_worker_thread_mounts_its_own_game() -> None:
    """A map's check attaches its pakfile to the game: two maps read at once (a Dask worker's
    threads) must not share one (they did: one map's check looked in the other's pakfile)."""
    import threading

    mine = rows._game(None)
    assert rows._game(None) is mine  # mounted once per thread
    found: list[Any] = []
    thread = threading.Thread(target=lambda: found.append(rows._game(None)))
    thread.start()
    thread.join()
    assert found and found[0] is not mine


def test_a_value_no_column_holds_is_an_error_row(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = rows.map_result

    def odd(path: str, game: Any = None, known: Any = (), variant: Any = None) -> rows.MapResult:
        result = real(path, game, known, variant)
        if path.endswith("css_2000.bsp"):
            result.tables["props"]["skin"] = ["not a number"] * len(result.tables["props"]["skin"])
        return result

    monkeypatch.setattr(executors, "map_result", odd)
    report = scan(_paths(folder), tmp_path / "out")
    assert report.errors == 1 and report.read == 4
    found = tables(tmp_path / "out")
    [bad] = [r for r in found["maps"] if r["path"].endswith("css_2000.bsp")]
    assert bad["error"].startswith("internal error: ") and bad["map_id"] == rows.file_id(bad["path"])[0]
    assert bad["map_id"] not in {r["map_id"] for r in found["entities"]}  # none of its rows
    assert len({r["map_id"] for r in found["entities"]}) == 3


@pytest.mark.parametrize("text", [None, "", "1 2", "1 2 3", " 1\t-2.5   3e2 ", "1 2 3 4", "a b c", "nan inf -inf",
                                  "1,2,3", "0x1 2 3"])
def test_origin_columns_read_as_entity_origin(text: str | None) -> None:
    from sourcebsp.codecs.entities import Entity

    entity = Entity([("classname", "info_target")] + ([("ORIGIN", text)] if text is not None else []))
    expected = entity.origin
    found = rows._three_numbers(text)
    assert (found is None) == (expected is None)
    if found is not None and expected is not None:
        assert [repr(v) for v in found] == [repr(v) for v in expected]

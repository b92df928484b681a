"""``sourcebsp scan``: every table agrees with the CLI's JSON for each corpus map; error rows; the command."""
from __future__ import annotations

import bz2
import hashlib
import json
import os
import struct
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

pq = pytest.importorskip("pyarrow.parquet")

import sourcebsp  # noqa: E402
from sourcebsp import LumpId  # noqa: E402
from sourcebsp.cli import main  # noqa: E402

from ..conftest import CORPUS, MAPS  # noqa: E402

TABLES = ("maps", "lumps", "entities", "props", "materials", "pakfiles", "findings")


def read_tables(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {name: pq.read_table(folder / f"{name}.parquet").to_pylist() for name in TABLES}


def by_map(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[row["map_id"]].append(row)
    return grouped


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code = main(list(args))
    out = capsys.readouterr().out
    assert code in (0, 1), args  # check exits 1 on an error finding
    return json.loads(out)


@pytest.fixture(scope="module")
def corpus_scan(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The whole corpus (and the other engines' maps, which are error rows), scanned by the command."""
    if not MAPS:
        pytest.skip(f"no corpus at {CORPUS}")
    out = tmp_path_factory.mktemp("scan") / "tables"
    assert main(["scan", str(CORPUS), "-o", str(out)]) == 0
    tables = read_tables(out)
    return out, {name: by_map(rows) for name, rows in tables.items()} | {"_maps": tables["maps"]}


@pytest.mark.slow
def test_every_corpus_map_has_one_clean_maps_row(corpus_scan: tuple[Path, dict[str, Any]]) -> None:
    _, tables = corpus_scan
    rows = tables["_maps"]
    listed = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name.lower().endswith(".bsp"))
    assert sorted(Path(r["path"]) for r in rows) == listed  # the folder was walked to any depth
    for row in rows:
        path = Path(row["path"])
        assert row["map_id"] == sha256(path)
        assert row["size"] == path.stat().st_size
        # The other engines' maps are error rows, but for Titanfall's, which scan reads.
        assert (row["error"] is None) == (path.parent == CORPUS or path.name.startswith("titanfall")), row


def _maps_and_lumps_agree_with_info(capsys: pytest.CaptureFixture[str], path: str, maps: dict[str, Any],
                                    lumps: list[dict[str, Any]]) -> dict[str, Any]:
    """A map's ``maps`` row and ``lumps`` rows say what ``info --json`` says; its lump counts by name."""
    info = cli_json(capsys, "info", "--json", path)
    assert (maps["version"], maps["variant"], maps["revision"], maps["size"], maps["entity_count"]) == \
        (info["version"], info["variant"], info["map_revision"], info["file_size"], info["entity_count"])
    keys = ("index", "name", "version", "offset", "length", "compressed", "uncompressed_length")
    assert [{k: r[k] for k in keys} for r in lumps] == [{k: lump[k] for k in keys} for lump in info["lumps"]]
    return {lump["name"]: lump["count"] for lump in info["lumps"]}


@pytest.mark.slow
def test_tables_agree_with_the_cli_json(corpus_scan: tuple[Path, dict[str, Any]], map_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    _, tables = corpus_scan
    map_id = sha256(map_path)
    [maps] = tables["maps"][map_id]
    path = str(map_path)

    counts = _maps_and_lumps_agree_with_info(capsys, path, maps, tables["lumps"][map_id])
    assert maps["face_count"] == counts.get("FACES", 0)
    assert maps["brush_count"] == counts.get("BRUSHES", 0)

    entities = cli_json(capsys, "entities", "--json", path)
    rows = tables["entities"][map_id]
    assert len(rows) == len(entities) == maps["entity_count"]
    for row, entity in zip(rows, entities):
        pairs = entity["keyvalues"]
        assert row["index"] == entity["index"]
        assert json.loads(row["keyvalues"]) == pairs
        last = {k.lower(): v for k, v in pairs}  # the last value of a key, its case ignored
        assert (row["classname"], row["targetname"]) == (last.get("classname"), last.get("targetname"))
        origin = last.get("origin", "").split()
        try:
            expected = [float(v) for v in origin] if len(origin) == 3 else [None] * 3
        except ValueError:
            expected = [None] * 3
        assert [row["origin_x"], row["origin_y"], row["origin_z"]] == expected

    props = cli_json(capsys, "props", "--json", path)
    rows = tables["props"][map_id]
    assert len(rows) == len(props) == maps["static_prop_count"]
    for row, prop in zip(rows, props):
        assert (row["index"], row["model"], row["skin"], row["solid"]) == \
            (prop["index"], prop["model"], prop["skin"], prop["solid"])
        assert [row["origin_x"], row["origin_y"], row["origin_z"]] == prop["origin"]
        assert [row["pitch"], row["yaw"], row["roll"]] == prop["angles"]

    pak = cli_json(capsys, "pak", path, "list", "--json")
    assert [(r["name"], r["size"], r["compressed_size"]) for r in tables["pakfiles"][map_id]] == \
        [(e["name"], e["size"], e["compressed_size"]) for e in pak]
    assert maps["pak_file_count"] == len(pak)

    check = cli_json(capsys, "check", "--json", path)
    [report] = check["maps"]
    assert [(r["rule"], r["severity"], r["message"]) for r in tables["findings"][map_id]] == \
        [(f["rule"], f["severity"], f["message"]) for f in report["findings"]]

    assert [r["material"] for r in tables["materials"][map_id]] == _texdata_names(map_path)


def test_rbsp_tables_agree_with_the_cli_json(tmp_path: Path, corpus_file,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.examples.respawn import write_example_respawn

    folder = tmp_path / "maps"
    folder.mkdir()
    maps = [write_example_respawn(folder / f"mp_{v}.bsp", v) for v in ("titanfall", "titanfall2")]
    crossfire = folder / "mp_crossfire.bsp"
    crossfire.write_bytes(corpus_file("other-engines/titanfall2_mp_crossfire.bsp").read_bytes())
    (folder / "mp_crossfire_spawn.ent").write_bytes(  # a partition's entities, beside the map
        b'ENTITIES01\n{\n"classname" "info_spawnpoint_human"\n"origin" "64 0 0"\n}\n\0')
    maps.append(crossfire)
    out = tmp_path / "tables"
    assert main(["scan", str(folder), "-o", str(out)]) == 0
    tables = {name: by_map(rows) for name, rows in read_tables(out).items()}
    for map_path in maps:
        map_id, path = sha256(map_path), str(map_path)
        [row] = tables["maps"][map_id]
        assert row["error"] is None and row["face_count"] is None
        counts = _maps_and_lumps_agree_with_info(capsys, path, row, tables["lumps"][map_id])
        assert row["brush_count"] == counts["CM_BRUSHES"]
        entities = cli_json(capsys, "entities", "--json", path)
        assert [json.loads(r["keyvalues"]) for r in tables["entities"].get(map_id, [])] == \
            [e["keyvalues"] for e in entities]
        props = cli_json(capsys, "props", "--json", path)
        assert [(r["model"], [r["origin_x"], r["origin_y"], r["origin_z"]], r["skin"], r["solid"])
                for r in tables["props"].get(map_id, [])] == \
            [(p["model"], p["origin"], p["skin"], p["solid"]) for p in props]
        pak = cli_json(capsys, "pak", path, "list", "--json")
        assert len(tables["pakfiles"].get(map_id, [])) == len(pak) == row["pak_file_count"]
        assert map_id not in tables["findings"]
    crossfire_rows = tables["entities"][sha256(crossfire)]
    assert crossfire_rows[-1]["classname"] == "info_spawnpoint_human" and len(crossfire_rows) == 34
    assert [r["material"] for r in tables["materials"][sha256(maps[1])]] == ["dev/dev_measuregeneric01",
                                                                           "dev/dev_measurewall01a"]


def _texdata_names(path: Path) -> list[str]:
    """Each dtexdata_t's material, read from the lumps' bytes here (not through the library's texture code):
    nameStringTableID is the int after the 12-byte reflectivity of the 32-byte record; the string
    table gives the offset of its NUL-terminated name in TEXDATA_STRING_DATA."""
    with sourcebsp.open(path) as bsp:
        order = ">" if bsp.endian == ">" else "<"
        texdata = bytes(bsp.lump_bytes(LumpId.TEXDATA))
        table = bytes(bsp.lump_bytes(LumpId.TEXDATA_STRING_TABLE))
        strings = bytes(bsp.lump_bytes(LumpId.TEXDATA_STRING_DATA))
    offsets = struct.unpack(f"{order}{len(table) // 4}i", table)
    names = []
    for start in range(0, len(texdata), 32):
        (sid,) = struct.unpack_from(f"{order}i", texdata, start + 12)
        at = offsets[sid]
        names.append(strings[at:strings.index(b"\0", at)].decode("utf-8", "surrogateescape"))
    return names


def test_error_rows_carry_the_line_the_cli_prints(tmp_path: Path, corpus_file,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "maps"
    folder.mkdir()
    good = corpus_file("tf2_test2.bsp")
    (folder / "good.bsp").write_bytes(good.read_bytes())
    (folder / "Upper.BSP").write_bytes(good.read_bytes())  # found whatever its case; the same map as good.bsp
    (folder / "notes.bsp").write_text("not a map\n")
    (folder / "empty.bsp").write_bytes(b"")
    (folder / "truncated.bsp").write_bytes(good.read_bytes()[:5000])
    (folder / "packed.bsp.bz2").write_bytes(bz2.compress(good.read_bytes())[:3000])
    (folder / "quake.bsp").write_bytes(corpus_file("other-engines/quake3_mp_lobby.bsp").read_bytes())
    (folder / "readme.txt").write_text("not listed")
    out = tmp_path / "tables"
    assert main(["scan", str(folder), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "7 files" in err and "7 read" in err and "5 with errors" in err
    tables = read_tables(out)
    rows = {Path(r["path"]).name: r for r in tables["maps"]}
    assert sorted(rows) == sorted(p.name for p in folder.iterdir() if p.name != "readme.txt")
    assert rows["good.bsp"]["error"] is None and rows["Upper.BSP"]["error"] is None
    for name, row in rows.items():
        if name in ("good.bsp", "Upper.BSP"):
            continue
        assert main(["entities", str(folder / name)]) == 1
        printed = capsys.readouterr().err.strip()
        assert printed == f"sourcebsp: error: {row['error']}", name
        assert row["map_id"] == sha256(folder / name)
    # An error row is the map's only row; the map found twice has its rows once.
    good_id = rows["good.bsp"]["map_id"]
    assert rows["Upper.BSP"]["map_id"] == good_id
    for name in TABLES[1:]:
        ids = {r["map_id"] for r in tables[name]}
        assert ids <= {good_id}, name
    assert len(tables["entities"]) == rows["good.bsp"]["entity_count"] == 24
    assert rows["truncated.bsp"]["version"] is None or rows["truncated.bsp"]["version"] == 20


def test_bz2_maps_give_the_rows_of_the_plain_map(tmp_path: Path, corpus_file) -> None:
    folder = tmp_path / "maps"
    folder.mkdir()
    plain = corpus_file("css_2000.bsp")
    (folder / "a.bsp").write_bytes(plain.read_bytes())
    (folder / "b.bsp.bz2").write_bytes(bz2.compress(plain.read_bytes(), 1))
    out = tmp_path / "tables"
    assert main(["scan", str(folder), "-o", str(out)]) == 0
    tables = read_tables(out)
    a, b = (r["map_id"] for r in tables["maps"])
    assert a != b
    for name in TABLES:
        rows = by_map(tables[name])
        strip = [{k: v for k, v in r.items() if k not in ("map_id", "path", "size")} for r in rows[a]]
        assert strip == [{k: v for k, v in r.items() if k not in ("map_id", "path", "size")} for r in rows[b]]
        assert strip, name if name not in ("findings", "props") else True


def test_variant_reads_every_map_as_that_branch(tmp_path: Path, corpus_file,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """--variant NAME reads the maps as that branch, as every reading command's --variant does
    (info --json names it), in this process and in worker processes alike."""
    path = corpus_file("csgo_2000.bsp")
    forced = cli_json(capsys, "info", str(path), "--json", "--variant", "alien_swarm")["variant"]
    detected = cli_json(capsys, "info", str(path), "--json")["variant"]
    assert forced == "alien_swarm" != detected
    for jobs in ("1", "2"):
        out = tmp_path / f"tables{jobs}"
        assert main(["scan", str(path), str(corpus_file("css_2000.bsp")), "-o", str(out), "-j", jobs,
                     "--variant", "alien_swarm"]) == 0
        rows = read_tables(out)["maps"]
        assert [(r["variant"], r["error"]) for r in rows] == [(forced, None), (forced, None)]
    capsys.readouterr()
    assert main(["scan", str(path), "-o", str(tmp_path / "t3")]) == 0
    assert read_tables(tmp_path / "t3")["maps"][0]["variant"] == detected


def test_game_folder_reaches_the_check_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ..content._maps import build_game, build_map

    game = build_game(tmp_path / "game")
    path = build_map(tmp_path / "m.bsp", materials=["custom/nothere"], entities=[{"classname": "tf_gamerules"}])
    assert main(["scan", str(path), "-o", str(tmp_path / "with"), "--game", str(game)]) == 0
    assert main(["scan", str(path), "-o", str(tmp_path / "without")]) == 0
    capsys.readouterr()
    for folder, extra in (("with", ["--game", str(game)]), ("without", [])):
        [report] = cli_json(capsys, "check", "--json", str(path), *extra)["maps"]
        assert [(r["rule"], r["message"]) for r in read_tables(tmp_path / folder)["findings"]] == \
            [(f["rule"], f["message"]) for f in report["findings"]]
    missing = [r["message"] for r in read_tables(tmp_path / "with")["findings"] if r["rule"] == "SB101"]
    assert any("materials/custom/nothere.vmt" in m for m in missing)
    assert not [r for r in read_tables(tmp_path / "without")["findings"] if r["rule"] == "SB101"]


def test_refusals_and_usage(tmp_path: Path, corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_file("tf2_mp_lobby.bsp"))
    out = tmp_path / "tables"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    assert main(["scan", path, "-o", str(out)]) == 1
    assert "exists: give --overwrite" in capsys.readouterr().err
    assert (out / "mine.txt").read_text() == "keep"
    assert main(["scan", path, "-o", str(tmp_path / "x"), "--since", str(tmp_path / "none")]) == 1
    assert "--since" in capsys.readouterr().err
    assert main(["scan", path, "-o", str(tmp_path / "x"), "--since", str(tmp_path)]) == 1  # no tables in it
    assert "maps.parquet" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["scan", str(empty), "-o", str(tmp_path / "x")]) == 1
    assert "no .bsp" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    with pytest.raises(SystemExit) as usage:
        main(["scan", path])  # -o is required
    assert usage.value.code == 2
    with pytest.raises(SystemExit) as usage:
        main(["scan", path, "-o", str(tmp_path / "x"), "--jobs", "0"])
    assert usage.value.code == 2
    # --overwrite replaces the folder whole: nothing of the old one is left.
    assert main(["scan", path, "-o", str(out), "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.parquet" for n in TABLES)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left
    assert oct(out.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.slow
def test_jobs_and_dask_local_write_the_same_tables(tmp_path: Path, corpus_file) -> None:
    pytest.importorskip("dask.distributed")
    folder = tmp_path / "maps"
    folder.mkdir()
    for name in ("tf2_test2.bsp", "css_2000.bsp", "x360_shack.bsp", "other-engines/quake1_mp_lobby.bsp"):
        (folder / Path(name).name).write_bytes(corpus_file(name).read_bytes())
    outs = {}
    for label, extra in {"one": [], "two": ["-j", "2"], "dask": ["--dask", "local", "-j", "1"]}.items():
        outs[label] = tmp_path / label
        assert main(["scan", str(folder), "-o", str(outs[label]), *extra]) == 0
    first = read_tables(outs["one"])
    assert first["entities"]
    for label in ("two", "dask"):
        assert read_tables(outs[label]) == first, label


def test_a_bug_is_an_error_row_and_a_warning(tmp_path: Path, corpus_file, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.scan import rows

    def broken(bsp: Any, fs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(rows, "_tables", broken)
    path = corpus_file("tf2_mp_lobby.bsp")
    assert main(["scan", str(path), "-o", str(tmp_path / "t")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {path}: an internal error" in err
    [row] = read_tables(tmp_path / "t")["maps"]
    assert row["error"].startswith("internal error: ZeroDivisionError: a bug")
    assert row["version"] == 20  # the header was read

"""``sourcebsp entities`` and ``sourcebsp edit-entities``."""
from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path
from typing import Any

import pytest

import sourcebsp
from sourcebsp.cli import main

srctools_bsp = pytest.importorskip("srctools.bsp")


def srctools_ents(path: Path) -> list[Any]:
    """srctools' entities; for maps it cannot open (Xbox 360), its parser on our lump text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            vmf = srctools_bsp.BSP(path).ents
        except ValueError:
            with sourcebsp.open(path) as bsp:
                text = bytes(bsp.lump_bytes(0))
            stub = srctools_bsp.BSP.__new__(srctools_bsp.BSP)
            stub.out_comma_sep = None
            vmf = srctools_bsp.BSP._lmp_read_ents(stub, text)
    return [vmf.spawn, *vmf.entities]


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


# ---- entities -------------------------------------------------------------------------
def test_entities_json_shape_on_every_map(map_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing = run_json(capsys, "entities", str(map_path), "--json")
    theirs = srctools_ents(map_path)
    assert isinstance(listing, list) and len(listing) == len(theirs)
    assert [item["index"] for item in listing] == list(range(len(listing)))
    for item, other in zip(listing, theirs):
        assert set(item) == {"index", "keyvalues"}
        assert all(isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
                   for p in item["keyvalues"])
        keys = {k.casefold() for k, _ in item["keyvalues"]}
        # srctools keeps outputs apart from its keys; every key it has is in our pairs.
        assert {k.casefold() for k in other} <= keys
        assert dict((k.casefold(), v) for k, v in item["keyvalues"])["classname"] == other["classname"]
    assert dict(listing[0]["keyvalues"])["classname"] == "worldspawn"


def test_entities_filters(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_file("tf2_test2.bsp"))
    everything = run_json(capsys, "entities", path, "--json")
    lights = run_json(capsys, "entities", path, "--json", "--class", "LIGHT_*")
    expected = [e["index"] for e in everything
                if dict(e["keyvalues"])["classname"].startswith("light_")]
    assert [e["index"] for e in lights] == expected and len(expected) == 3
    named = run_json(capsys, "entities", path, "--json", "--name", "cp1")
    assert len(named) == 1 and ["targetname", "cp1"] in named[0]["keyvalues"]
    # Repeated keys stay in file order in the listing.
    outputs = [k for k, _ in named[0]["keyvalues"] if k.startswith("OnCap")]
    assert outputs == ["OnCapTeam1", "OnCapTeam2"]
    assert run_json(capsys, "entities", path, "--json", "--class", "light_spot", "--name", "cp1") == []


def test_entities_human_listing(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["entities", str(corpus_file("l4d2_map_cannals_escape01.bsp"))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[0] worldspawn\n")
    assert "\x1b" not in out and "\\x1b" in out  # ESC separators shown, not sent to the terminal
    assert out.rstrip().endswith("56 of 56 entities")


def test_entities_bad_map_is_one_line_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             corpus_file) -> None:
    data = bytearray(corpus_file("tf2_mp_lobby.bsp").read_bytes())
    fileofs, filelen = struct.unpack_from("<ii", data, 8)
    data[fileofs + filelen - 3] = ord("{")  # the last '}' becomes a '{'
    bad = tmp_path / "bad.bsp"
    bad.write_bytes(bytes(data))
    assert main(["entities", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ENTITIES" in err and "line" in err and "file offset" in err


# ---- edit-entities --------------------------------------------------------------------
@pytest.mark.slow
def test_edit_set_rename_delete_add(map_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.bsp"
    before = run_json(capsys, "entities", str(map_path), "--json")
    report = run_json(
        capsys, "edit-entities", str(map_path), "-o", str(out), "--json",
        "--match-class", "worldspawn", "--set", "skyname=sky_cli", "--rename", "mapversion=old_mapversion",
        "--add-output", "OnUser1=!self,Kill,,0.5,1",
        "--add", "classname=info_target,targetname=cli_added,origin=0 0 64",
        "--add", '{"classname": "info_null", "targetname": "cli,comma"}',
    )
    assert report == {"output": str(out), "matched": 1, "changed": 1, "deleted": 0, "added": 2,
                      "bytes_before": map_path.stat().st_size, "bytes_after": out.stat().st_size}
    after = run_json(capsys, "entities", str(out), "--json")
    assert len(after) == len(before) + 2
    world = after[0]["keyvalues"]
    assert ["skyname", "sky_cli"] in world
    if any(k == "mapversion" for k, _ in before[0]["keyvalues"]):
        assert not any(k == "mapversion" for k, _ in world) and any(k == "old_mapversion" for k, _ in world)
    # Untouched entities are listed exactly as before.
    assert after[1:-2] == before[1:]
    assert dict(after[-2]["keyvalues"]) == {"classname": "info_target", "targetname": "cli_added",
                                            "origin": "0 0 64"}
    assert dict(after[-1]["keyvalues"])["targetname"] == "cli,comma"
    theirs = srctools_ents(out)
    assert len(theirs) == len(after)
    assert theirs[0]["skyname"] == "sky_cli"
    [kill] = [o for o in theirs[0].outputs if o.output == "OnUser1"]
    assert (kill.target, kill.input, kill.delay, kill.times) == ("!self", "Kill", 0.5, 1)
    assert any(e["targetname"] == "cli_added" and e["origin"] == "0 0 64" for e in theirs)


def test_edit_delete_and_delete_key(corpus_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = corpus_file("tf2_test2.bsp")
    out = tmp_path / "out.bsp"
    before = run_json(capsys, "entities", str(src), "--json")
    assert main(["edit-entities", str(src), "-o", str(out), "--match-class", "light_spot", "--delete"]) == 0
    assert "matched 2" in capsys.readouterr().out
    after = run_json(capsys, "entities", str(out), "--json")
    assert len(after) == len(before) - 2
    assert not any(dict(e["keyvalues"])["classname"] == "light_spot" for e in after)
    assert not any(e["classname"] == "light_spot" for e in srctools_ents(out))
    out2 = tmp_path / "out2.bsp"
    assert main(["edit-entities", str(src), "-o", str(out2), "--all", "--delete-key", "hammerid"]) == 0
    capsys.readouterr()
    stripped = run_json(capsys, "entities", str(out2), "--json")
    assert len(stripped) == len(before)
    assert not any(k == "hammerid" for e in stripped for k, _ in e["keyvalues"])
    assert all("hammerid" not in e for e in srctools_ents(out2))


def test_edit_rules_file(corpus_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = corpus_file("css_de_rats.bsp")  # a map with comma-separated outputs
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([
        {"match": {"classname": "info_player_*"}, "set": {"angles": "0 90 0"}},
        {"match": {"classname": "worldspawn"}, "add_outputs": ["OnUser2=relay,Trigger,,2,-1"]},
        {"add": [["classname", "logic_relay"], ["targetname", "relay"]]},
    ]))
    out = tmp_path / "out.bsp"
    report = run_json(capsys, "edit-entities", str(src), "-o", str(out), "--rules", str(rules), "--json")
    with sourcebsp.open(src) as bsp:
        spawns = len(bsp.entities.find(classname="info_player_*"))
    assert report["matched"] == spawns + 1 and report["added"] == 1
    with sourcebsp.open(out) as bsp:
        entities = bsp.entities
        assert all(e["angles"] == "0 90 0" for e in entities.find(classname="info_player_*"))
        assert entities.worldspawn.get_all("OnUser2") == ["relay,Trigger,,2,-1"]  # the map's comma separator
        assert entities.first(targetname="relay").classname == "logic_relay"


def test_edit_never_writes_the_input_unless_asked(corpus_file, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "map.bsp"
    src.write_bytes(corpus_file("tf2_mp_lobby.bsp").read_bytes())
    original = src.read_bytes()
    assert main(["edit-entities", str(src), "-o", str(src), "--all", "--set", "x=1"]) == 1
    assert "overwrite" in capsys.readouterr().err
    assert src.read_bytes() == original
    assert main(["edit-entities", str(src), "-o", str(src), "--all", "--set", "x=1", "--overwrite"]) == 0
    with sourcebsp.open(src) as bsp:
        assert all(e["x"] == "1" for e in bsp.entities)


@pytest.mark.parametrize("args", [
    ["--set", "skyname=x"],  # a change with no match
    ["--match-class", "light", "--set", "novalue"],  # not KEY=VALUE
    ["--match-class", "light"],  # nothing to do
    ["--all", "--match-class", "light", "--delete"],
])
def test_edit_usage_errors_exit_2(args: list[str], corpus_file, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["edit-entities", str(corpus_file("tf2_mp_lobby.bsp")), "-o", str(tmp_path / "o.bsp"), *args])
    assert info.value.code == 2
    assert not (tmp_path / "o.bsp").exists()


@pytest.mark.parametrize("rules", [
    "not json",
    '{"match": {"classname": "light"}, "frobnicate": 1}',
    '[{"set": {"a": "b"}}]',
    '[{"match": {"classname": "light"}, "set": {"message": "say \\"hi\\""}}]',
])
def test_edit_bad_rules_exit_1(rules: str, corpus_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rules.json"
    path.write_text(rules)
    out = tmp_path / "o.bsp"
    assert main(["edit-entities", str(corpus_file("tf2_mp_lobby.bsp")), "-o", str(out), "--rules", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sourcebsp: error:") and err.count("\n") == 1
    assert not out.exists()


# ---- .ent text: dump and re-import ------------------------------------------------------
def test_ent_dump_is_the_lump_text(map_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["entities", str(map_path), "--ent"]) == 0
    dumped = capsysbinary.readouterr().out
    with sourcebsp.open(map_path) as bsp:
        lump = bytes(bsp.lump_bytes(0))
    assert dumped == lump.split(b"\0", 1)[0]


@pytest.mark.slow
def test_ent_edit_and_reimport(map_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ent = tmp_path / "map.ent"
    assert main(["entities", str(map_path), "--ent", "-o", str(ent)]) == 0
    capsys.readouterr()
    text = ent.read_bytes()
    # Edit the text as a user would in an editor: a new entity at the end.
    ent.write_bytes(text.rstrip(b"\r\n") + b'\n{\n"classname" "info_target"\n"targetname" "from_ent_file"\n}\n')
    out = tmp_path / "out.bsp"
    assert main(["edit-entities", str(map_path), "--from-ent", str(ent), "-o", str(out)]) == 0
    assert "after reading" in capsys.readouterr().out
    before = run_json(capsys, "entities", str(map_path), "--json")
    after = run_json(capsys, "entities", str(out), "--json")
    assert after[:-1] == before
    assert after[-1]["keyvalues"] == [["classname", "info_target"], ["targetname", "from_ent_file"]]
    with sourcebsp.open(out) as bsp:
        assert bytes(bsp.lump_bytes(0)).endswith(b"}\n\x00")  # NUL-terminated for the engine


def test_bad_ent_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.examples import write_example_map

    write_example_map(tmp_path / "a.bsp")
    (tmp_path / "bad.ent").write_bytes(b'{\n"classname" "light"\n')
    assert main(["edit-entities", str(tmp_path / "a.bsp"), "--from-ent", str(tmp_path / "bad.ent"),
                 "-o", str(tmp_path / "b.bsp")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.ent" in err and not (tmp_path / "b.bsp").exists()


# ---- the documented rules file ------------------------------------------------------------
def test_rules_example_file_does_what_the_help_says(corpus_file, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from sourcebsp.cli.edit_entities import RULES_HELP

    example = Path(__file__).resolve().parents[2] / "docs" / "rules_example.json"
    rules = json.loads(example.read_text())
    for rule in rules:  # every key the file uses is documented in --help
        for key in rule:
            assert f'"{key}"' in RULES_HELP
    src = corpus_file("valvebsp_testmap.bsp")
    before = run_json(capsys, "entities", str(src), "--json")
    out = tmp_path / "out.bsp"
    report = run_json(capsys, "edit-entities", str(src), "-o", str(out), "--rules", str(example), "--json")
    after = run_json(capsys, "entities", str(out), "--json")

    def classes(listing: Any) -> list[str]:
        return [dict(e["keyvalues"]).get("classname", "") for e in listing]

    spawns = classes(before).count("info_player_teamspawn")
    assert spawns >= 1 and report["deleted"] == spawns and "info_player_teamspawn" not in classes(after)
    assert report["added"] == 1 and after[-1]["keyvalues"][1] == ["targetname", "added_by_rules"]
    lights = [dict(e["keyvalues"]) for e in after if dict(e["keyvalues"]).get("classname") == "light"]
    assert len(lights) == classes(before).count("light") >= 1
    assert all(light["_light"] == "255 200 150 300" for light in lights)
    world = dict(after[0]["keyvalues"])
    assert world["classname"] == "worldspawn" and "detailvbsp" not in world and "detailmaterial" not in world
    assert len(after) == len(before) - spawns + 1


def test_help_documents_the_rules_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["edit-entities", "--help"])
    out = capsys.readouterr().out
    for key in ("match", "all", "rename", "set", "delete_keys", "add_outputs", "delete", "add"):
        assert f'"{key}"' in out


def test_cli_reference_shows_the_example_rules_file() -> None:
    root = Path(__file__).resolve().parents[2]
    reference = (root / "docs" / "cli.md").read_text(encoding="utf-8")
    block = reference.split("```json\n", 1)[1].split("```", 1)[0]
    assert json.loads(block) == json.loads((root / "docs" / "rules_example.json").read_text())

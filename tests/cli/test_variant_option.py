"""``--variant NAME`` on every command that reads a map, and ``info`` saying when it guessed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.variants import VARIANTS, chosen_variant

# Every command that reads a map (example writes one; it has its own --variant in time).
READERS = ["check", "decompile", "deps", "edit-entities", "entities", "export", "info", "lightmaps", "lump", "pack",
           "pak", "props", "render", "repack", "vis"]


@pytest.mark.parametrize("command", READERS)
def test_every_reading_command_takes_variant(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "--variant NAME" in text and "left4dead2" in text


def test_a_forced_variant_reads_the_map_as_that_branch(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_file("csgo_2000.bsp"))
    assert main(["info", path, "--json"]) == 0
    detected = json.loads(capsys.readouterr().out)
    assert detected["variant"] == "csgo" and detected["variant_guessed"]
    # Its static props are v10, which Portal 2's compiler does not write (v9); Alien Swarm's is not known.
    assert detected["variant_alternatives"] == ["alien_swarm"]
    # Left 4 Dead 2 reads slot 22 as prop collision records (8 bytes) where CS:GO has a face
    # brush list: the forced reading changes what the lump decodes to (here: a damaged lump).
    code = main(["info", path, "--json", "--variant", "left4dead2"])
    forced = json.loads(capsys.readouterr().out)
    assert forced["variant"] == "left4dead2" and not forced["variant_guessed"]
    by_name = {row["name"]: row for row in forced["lumps"]}
    assert by_name["PROPCOLLISION"]["damaged"] and code == 1
    assert chosen_variant(None) is None  # the command's choice does not outlive it


def test_info_text_says_it_guessed_and_how_to_force(corpus_file, capsys: pytest.CaptureFixture[str]) -> None:
    # BSP 21 with CS:GO's v10 props and no Alien Swarm entity: CS:GO or Alien Swarm (whose prop
    # versions are not known, so its props do not rule it out).
    assert main(["info", str(corpus_file("csgo_2000.bsp"))]) == 0
    out = capsys.readouterr().out
    assert "variant csgo" in out and "guessed" in out and "--variant NAME" in out and "alien_swarm" in out
    # BSP 20 with v5 props of 60 bytes: not The Ship's (188 bytes, a targetname each): no guess.
    assert main(["info", str(corpus_file("css_2000.bsp"))]) == 0
    out = capsys.readouterr().out
    assert "variant orange_box" in out and "guessed" not in out
    assert main(["info", str(corpus_file("l4d2_tooltextures.bsp"))]) == 0
    assert "guessed" not in capsys.readouterr().out  # the L4D2 lump_t order tells
    # BSP 20 with v10 props: only the Orange Box branch writes those (not L4D's 7-8, Black Mesa's 11...).
    assert main(["info", str(corpus_file("tf2_mp_lobby.bsp"))]) == 0
    out = capsys.readouterr().out
    assert "variant orange_box" in out and "guessed" not in out


def test_export_and_decompile_follow_the_variant(corpus_file, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = str(corpus_file("tf2_mp_lobby.bsp"))
    # Read as the leaked HL2 beta's layouts, its 896 bytes of faces are no whole number of the beta's
    # 72-byte dface_t: decompiling must say so, in one line.
    code = main(["decompile", path, "-o", str(tmp_path / "a.vmf"), "--variant", "hl2_beta"])
    err = capsys.readouterr().err
    assert code == 1 and "FACES" in err and "72-byte" in err and len(err.strip().splitlines()) == 1
    assert main(["decompile", path, "-o", str(tmp_path / "d.vmf"), "--variant", "dota2_v22"]) == 0
    assert main(["decompile", path, "-o", str(tmp_path / "b.vmf"), "--variant", "left4dead"]) == 0
    assert main(["export", path, "-o", str(tmp_path / "c.glb"), "--variant", "the_ship"]) == 0
    # Zeno Clash's prop sub-lump holds a second name array (BSPSource's StaticPropLumpReader reads it
    # for every Zeno Clash map): the map's 12-byte sprp, read so, ends before its prop count.
    capsys.readouterr()
    assert main(["export", path, "-o", str(tmp_path / "z.glb"), "--variant", "zeno_clash"]) == 1
    err = capsys.readouterr().err
    assert "GAME_LUMP/sprp" in err and "file offset" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "z.glb").exists()


@pytest.mark.parametrize("name", [name for name, v in VARIANTS.items() if v.container == "source"])
def test_open_with_every_variant_name(name: str, corpus_file) -> None:
    with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp"), variant=name) as bsp:
        assert bsp.variant is VARIANTS[name] and bsp.variant_alternatives == ()
    with sourcebsp.variants.reading_as(name):
        with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp")) as bsp:
            assert bsp.variant is VARIANTS[name]
        with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp"), variant="orange_box") as bsp:
            assert bsp.variant.name == "orange_box"  # an explicit choice wins over the block's
    with sourcebsp.open(corpus_file("tf2_mp_lobby.bsp")) as bsp:
        assert bsp.variant.name == "orange_box"

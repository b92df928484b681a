"""``sourcebsp render``: one map, batches, the overview file, refusals and messages."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from sourcebsp.cli import main

pytest.importorskip("PIL.Image")


def test_one_overview_with_its_text_file(tmp_path, corpus_file, capsys):
    out = tmp_path / "office.png"
    code = main(["render", str(corpus_file("css_de_office_h2.bsp")), "-o", str(out), "--size", "200x200",
                 "--markers", "--overview-txt"])
    assert code == 0
    said = capsys.readouterr().out
    assert "200x200 overview view" in said and re.search(r"\d+% covered", said)
    text = (tmp_path / "office.txt").read_text()
    assert '"css_de_office_h2"' in text and '"pos_x"' in text and '"scale"' in text
    assert out.read_bytes()[:4] == b"\x89PNG"
    # The picture exists now: a second run refuses to replace it, unless told.
    assert main(["render", str(corpus_file("css_de_office_h2.bsp")), "-o", str(out), "--size", "64x64"]) == 1
    assert "exists" in capsys.readouterr().err
    assert main(["render", str(corpus_file("css_de_office_h2.bsp")), "-o", str(out), "--size", "64x64",
                 "--overwrite"]) == 0


def test_player_view_with_a_camera_and_jpeg(tmp_path, corpus_file, capsys):
    out = tmp_path / "shack.jpg"
    code = main(["render", str(corpus_file("x360_shack.bsp")), "-o", str(out), "--camera", "0", "0", "64", "10", "90",
                 "--size", "160x90", "--fov", "100"])
    assert code == 0 and out.read_bytes()[:3] == b"\xff\xd8\xff"
    assert "player view" in capsys.readouterr().out
    with pytest.raises(SystemExit) as usage:
        main(["render", str(corpus_file("x360_shack.bsp")), "-o", str(tmp_path / "x.jpg"), "--camera", "1", "2"])
    assert usage.value.code == 2


def test_no_drawn_faces_is_one_line_and_exit_1(tmp_path, corpus_file, capsys):
    out = tmp_path / "v42.png"
    assert main(["render", str(corpus_file("v42_rot_main.bsp")), "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no drawn faces" in err and not out.exists()


def test_bad_extension_and_huge_size_are_refused(tmp_path, corpus_file, capsys):
    assert main(["render", str(corpus_file("x360_shack.bsp")), "-o", str(tmp_path / "x.bmp")]) == 1
    assert ".png" in capsys.readouterr().err
    assert main(["render", str(corpus_file("x360_shack.bsp")), "-o", str(tmp_path / "x.png"), "--size",
                 "16000x16000"]) == 1
    assert "million pixels" in capsys.readouterr().err and not (tmp_path / "x.png").exists()


def test_batch_of_a_glob(tmp_path, corpus_file, capsys):
    folder = corpus_file("x360_shack.bsp").parent
    out = tmp_path / "thumbs"
    code = main(["render", str(folder / "tf2_*lobby.bsp"), str(corpus_file("v42_rot_main.bsp")), "-o", str(out),
                 "--size", "64x64", "--format", "webp"])
    captured = capsys.readouterr()
    assert code == 1  # the v42 map has nothing to draw
    assert sorted(p.name for p in out.iterdir()) == ["tf2_mp_lobby.webp"]
    assert "1 of 2 maps rendered" in captured.out and "v42_rot_main.bsp" in captured.err


def test_height_range_override(tmp_path, corpus_file, capsys):
    out = tmp_path / "office.webp"
    assert main(["render", str(corpus_file("css_de_office_h2.bsp")), "-o", str(out), "--size", "96x96",
                 "--height-range", "-300", "-100", "--sections"]) == 0
    said = capsys.readouterr().out
    assert "heights -300..-100" in said and out.read_bytes()[:4] == b"RIFF"
    text = (tmp_path / "office.txt").read_text()
    assert '"AltitudeMin"\t"-300"' in text and '"AltitudeMax"\t"-100"' in text


def test_textures_that_cannot_be_read_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """"1 textures could not be read" named none: the warning names them, in the right number."""
    pytest.importorskip("srctools")
    from sourcebsp.examples import example_map_bytes

    game = tmp_path / "game"
    for k, name in enumerate(("dev_measuregeneric01b", "dev_measuregeneric01")):
        (game / "materials" / "dev").mkdir(parents=True, exist_ok=True)
        (game / "materials" / "dev" / f"{name}.vmt").write_text(
            f'"LightmappedGeneric" {{ "$basetexture" "dev/broken{k}" }}')
        (game / "materials" / "dev" / f"broken{k}.vtf").write_bytes(b"VTF\0 not a texture")
    room = tmp_path / "room.bsp"
    room.write_bytes(example_map_bytes())
    assert main(["render", str(room), "-o", str(tmp_path / "x.png"), "--game", str(game)]) == 0
    err = capsys.readouterr().err
    assert "2 textures could not be read (dev/broken0, dev/broken1); their average colour is used" in err
    (game / "materials" / "dev" / "dev_measuregeneric01.vmt").unlink()
    assert main(["render", str(room), "-o", str(tmp_path / "y.png"), "--game", str(game)]) == 0
    assert "1 texture could not be read (dev/broken0); its average colour is used" in capsys.readouterr().err


def test_the_camera_is_described_in_words() -> None:
    from types import SimpleNamespace

    import numpy as np

    from sourcebsp.cli.render import _summary

    def text(source: str) -> str:
        result = SimpleNamespace(image=np.zeros((2, 3, 3)), lit=True, textured=False, view="player", triangles=1,
                                 covered=0.5, props=0, props_missing=0, overview=None, camera_source=source,
                                 warnings=[])
        return _summary(Path("x.png"), result)

    assert text("above a floor").endswith(", camera above a floor")
    assert text("outside the map").endswith(", camera outside the map")
    assert text("entity spawn1").endswith(", camera at entity spawn1")
    assert text("info_player_start 0").endswith(", camera at info_player_start 0")

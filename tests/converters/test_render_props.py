"""Static props in previews: their models' meshes coloured by their textures, boxes when only the .mdl
is found, markers in the overview when nothing is."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sourcebsp.converters import render as rd
from sourcebsp.converters.render.scene import MARKER
from sourcebsp.examples import build_example_map
from sourcebsp.examples.room import PROP_MODEL, PROP_ORIGIN

from ..content._studiomodels import Spec, build_mdl, build_vtx, build_vvd, quad
from ..content._textures import vtf_bytes

pytest.importorskip("srctools.vtf")


def _pixel(result: rd.RenderResult, point: tuple[float, float]) -> np.ndarray:
    col, row = result.overview.to_pixels(np.array(point, float)).astype(int)
    return result.image[row, col].astype(int)


def _plate_game(root: Path, with_mesh: bool = True) -> None:
    """The example's prop model as a blue 120-unit plate 20 units above the floor, with its texture."""
    spec = Spec(bodyparts=[("b", [("m", [quad(0, z=20.0, size=120.0)])])], skins=[[0]], textures=["plate"],
                cdmaterials=["models/test/"], hull=((-30.0, -30.0, 0.0), (30.0, 30.0, 40.0)))
    model = root / PROP_MODEL
    model.parent.mkdir(parents=True)
    model.write_bytes(build_mdl(spec))
    if with_mesh:
        model.with_suffix(".vvd").write_bytes(build_vvd(spec))
        model.with_suffix(".dx90.vtx").write_bytes(build_vtx(spec))
    (root / "materials/models/test").mkdir(parents=True)
    (root / "materials/models/test/plate.vmt").write_text('"VertexLitGeneric" { "$basetexture" "models/test/blue" }')
    (root / "materials/models/test/blue.vtf").write_bytes(vtf_bytes((10, 20, 240, 255), 16))


def _plate_middle(bsp) -> tuple[float, float]:
    """The plate spans (0..120, 0..120) around the prop's origin, turned by its angles: its middle."""
    yaw = np.radians(bsp.static_props.props["angles"][0].astype(float)[1])
    turn = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
    middle = np.array(PROP_ORIGIN[:2]) + turn @ [60, 60]
    return float(middle[0]), float(middle[1])


def test_props_drawn_as_meshes_in_their_texture_colour(tmp_path: Path) -> None:
    _plate_game(tmp_path)
    bsp = build_example_map()
    bare = rd.render(bsp, view="overview", size=(128, 128), props=False)
    drawn = rd.render(bsp, view="overview", size=(128, 128), game=tmp_path)
    assert (drawn.props, drawn.props_missing) == (1, 0)
    # The plate's middle is blue.
    middle = _plate_middle(bsp)
    r, g, b = _pixel(drawn, middle)
    assert b > r + 40 and b > g + 20
    assert not np.array_equal(_pixel(bare, middle), [r, g, b])


def test_model_without_mesh_files_is_a_box_and_no_model_a_marker(tmp_path: Path) -> None:
    _plate_game(tmp_path, with_mesh=False)
    bsp = build_example_map()
    boxed = rd.render(bsp, view="overview", size=(128, 128), game=tmp_path)
    assert (boxed.props, boxed.props_missing) == (1, 0)
    bare = rd.render(bsp, view="overview", size=(128, 128), props=False)
    assert not np.array_equal(_pixel(boxed, PROP_ORIGIN[:2]), _pixel(bare, PROP_ORIGIN[:2]))  # the hull box
    marked = rd.render(bsp, view="overview", size=(128, 128))  # no game: the model is found nowhere
    assert (marked.props, marked.props_missing) == (0, 1)
    r, g, b = _pixel(marked, PROP_ORIGIN[:2])
    assert r > g + 40 and r > b + 40  # the orange marker, not the grey floor
    assert MARKER[0] > MARKER[1] > MARKER[2]
    player = rd.render(bsp, view="player", size=(64, 36))  # markers are for the overview only
    assert (player.props, player.props_missing) == (0, 1)


def test_a_prop_texture_in_a_later_cdmaterials_folder_is_found(tmp_path: Path) -> None:
    """The preview loads props with the one studio model loader: the cdmaterials folder that holds
    the material, as the engine tries them and as the glTF export does (it once took the first)."""
    _plate_game(tmp_path)
    spec = Spec(bodyparts=[("b", [("m", [quad(0, z=20.0, size=120.0)])])], skins=[[0]], textures=["plate"],
                cdmaterials=["models/elsewhere/", "models/test/"], hull=((-30.0, -30.0, 0.0), (30.0, 30.0, 40.0)))
    (tmp_path / PROP_MODEL).write_bytes(build_mdl(spec))
    (tmp_path / PROP_MODEL).with_suffix(".vvd").write_bytes(build_vvd(spec))
    (tmp_path / PROP_MODEL).with_suffix(".dx90.vtx").write_bytes(build_vtx(spec))
    bsp = build_example_map()
    drawn = rd.render(bsp, view="overview", size=(128, 128), game=tmp_path)
    assert (drawn.props, drawn.props_missing) == (1, 0)
    r, g, b = _pixel(drawn, _plate_middle(bsp))
    assert b > r + 40 and b > g + 20


def test_a_model_over_the_size_limit_counts_as_missing(tmp_path: Path, monkeypatch) -> None:
    from sourcebsp.content import mount
    from sourcebsp.content.studiomodel import load_model
    from sourcebsp.converters.render import textures as rt

    _plate_game(tmp_path)
    fs = mount(tmp_path)
    size = (tmp_path / PROP_MODEL).stat().st_size
    assert load_model(fs, PROP_MODEL, max_size=size) is not None
    assert load_model(fs, PROP_MODEL.upper(), max_size=size - 1) is None
    monkeypatch.setattr(rt, "_MAX_FILE", size - 1)
    marked = rd.render(build_example_map(), view="overview", size=(64, 64), game=tmp_path)
    assert (marked.props, marked.props_missing) == (0, 1)

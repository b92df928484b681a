"""One entry per converter: ``decompile`` and ``render`` take any map (a Source map, a Titanfall
map, or the path of either) and ask the map itself which builder it needs.

What is checked: a path and the map opened from it give the same VMF text and the same
picture; the steps a decompile reports are the ones ``decompile_steps`` announces for that map;
``build_vmf`` of a Titanfall map is the rBSP builder's document; the command modules make no test
of their own for rBSP, and the converters' rBSP modules import nothing private of their Source
twins.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import sourcebsp
from sourcebsp.converters import render as rd
from sourcebsp.converters.vmf import (
    DECOMPILE_STEPS, DecompileOptions, build_vmf, decompile, decompile_steps, decompile_text,
)
from sourcebsp.converters.vmf.respawn import RESPAWN_STEPS, build_respawn_vmf
from sourcebsp.examples import write_example_map
from sourcebsp.examples.respawn import write_example_respawn
from sourcebsp.model.respawn import is_respawn_map
from sourcebsp.respawn import RespawnBsp

SRC = Path(sourcebsp.__file__).parent
#: Each example map, and the steps its decompile reports.
EXAMPLES: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "source": (write_example_map, DECOMPILE_STEPS),
    "titanfall": (lambda path: write_example_respawn(path, "titanfall"), RESPAWN_STEPS),
    "titanfall2": (lambda path: write_example_respawn(path, "titanfall2"), RESPAWN_STEPS),
}


@pytest.mark.parametrize("kind", list(EXAMPLES))
def test_decompile_takes_a_map_or_its_path_of_either_container(kind: str, tmp_path: Path) -> None:
    write, expected_steps = EXAMPLES[kind]
    path = write(tmp_path / "room.bsp")
    done: list[str] = []
    stats = decompile(path, tmp_path / "from_path.vmf", progress=done.append)
    with sourcebsp.open(path) as bsp:
        assert is_respawn_map(bsp) == (kind != "source") == isinstance(bsp, RespawnBsp)
        assert decompile_steps(bsp) == expected_steps
        again = decompile(bsp, tmp_path / "from_map.vmf")
        text, _ = decompile_text(bsp)
    assert done == list(expected_steps)
    written = (tmp_path / "from_path.vmf").read_bytes()
    assert written == (tmp_path / "from_map.vmf").read_bytes() == text.encode("utf-8")
    assert stats == again and stats.solids > 0 and stats.point_entities > 0


@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_build_vmf_of_a_titanfall_map_is_the_rbsp_builders(variant: str, tmp_path: Path) -> None:
    path = write_example_respawn(tmp_path / "room.bsp", variant)
    vmf, stats = build_vmf(RespawnBsp.open(path))
    theirs, their_stats = build_respawn_vmf(RespawnBsp.open(path))
    assert vmf.to_text() == theirs.to_text() and stats == their_stats
    with pytest.raises(ValueError, match="io_format"):
        build_vmf(RespawnBsp.open(path), DecompileOptions(io_format="bad"))


@pytest.mark.parametrize("kind", list(EXAMPLES))
@pytest.mark.parametrize("view", ["top", "player"])
def test_render_takes_a_map_or_its_path_of_either_container(kind: str, view: "rd.View", tmp_path: Path) -> None:
    path = EXAMPLES[kind][0](tmp_path / "room.bsp")
    done: list[str] = []
    from_path = rd.render(path, view=view, size=(96, 64), progress=done.append)
    with sourcebsp.open(path) as bsp:
        from_map = rd.render(bsp, view=view, size=(96, 64))
    assert done == list(rd.RENDER_STEPS)
    assert np.array_equal(from_path.image, from_map.image) and from_path.covered == from_map.covered > 0.2
    assert from_path.triangles == from_map.triangles > 0


def _source(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


@pytest.mark.parametrize("command", ["decompile", "render"])
def test_the_commands_make_no_test_of_their_own_for_rbsp(command: str) -> None:
    tree = _source(SRC / "cli" / f"{command}.py")
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not {"_respawn", "respawn", "converters.vmf.respawn"} & imported
    assert not {"is_rbsp", "is_respawn", "is_respawn_map", "RespawnBsp", "RESPAWN_STEPS"} & names


@pytest.mark.parametrize("converter", ["vmf", "render"])
def test_the_rbsp_modules_import_nothing_private(converter: str) -> None:
    tree = _source(SRC / "converters" / converter / "respawn.py")
    private = [f"{node.module}.{alias.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for alias in node.names if alias.name.startswith("_")]
    assert private == []

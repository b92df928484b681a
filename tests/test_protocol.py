"""One map protocol: a function written only against ``MapReader`` reads a Source map and a
Titanfall map alike, and a member a branch cannot have raises the same typed error in both.

The containers are opened only through ``sourcebsp.open``, which picks them by the file's
first bytes (mypy checks that both satisfy the protocol: tests/test_typing.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId
from sourcebsp.errors import ClosedMapError, LumpNotInBranchError
from sourcebsp.examples.respawn import write_example_respawn
from sourcebsp.protocols import MapReader

from .conftest import CORPUS, MAPS

CROSSFIRE = CORPUS / "other-engines" / "titanfall2_mp_crossfire.bsp"


def summary(bsp: MapReader) -> dict[str, Any]:
    """What a tool author's script reads of any map: written against the protocol alone."""
    planes = bsp.planes
    assert planes is bsp["planes"] is bsp[LumpId.PLANES] is bsp.get_lump(LumpId.PLANES)
    assert bsp.count(LumpId.PLANES) == len(planes) == len(bsp.lump_bytes("planes")) // planes.dtype.itemsize
    lumps = list(bsp.iter_lumps())
    assert all(bsp.has_lump(index) and bsp.entry(index) == entry for index, entry in lumps)
    entities = bsp.entities
    props = bsp.static_props
    return {
        "variant": bsp.variant.name,
        "lumps": len(lumps),
        "planes": len(planes),
        "normals": np.asarray(planes["normal"], np.float64).shape,
        "vertices": bsp.vertexes.shape[0],
        "entities": len(entities),
        "worldspawn": entities[0].classname if len(entities) else None,
        "entity_sets": sum(len(found) for _, found in bsp.entity_sets()),
        "props": len(props),
        "prop_models": len(props.model_names()),
        "prop_scales": props.scale_vectors().shape,
        "pak_files": len(bsp.pakfile.entries()),
        "bytes_equal": bsp.to_bytes() == Path(str(bsp.path)).read_bytes(),
    }


def _sources() -> list[Any]:
    maps = [pytest.param(path, id=path.stem) for path in MAPS]
    maps.append(pytest.param(CROSSFIRE, id="titanfall2_mp_crossfire",
                             marks=pytest.mark.skipif(not CROSSFIRE.is_file(), reason="no rBSP map")))
    return maps


@pytest.mark.parametrize("path", _sources())
def test_one_function_reads_every_map_of_the_corpus(path: Path) -> None:
    with sourcebsp.open(path) as bsp:
        found = summary(bsp)
        assert found["bytes_equal"] and found["lumps"] > 0 and found["planes"] > 0
        assert found["normals"] == (found["planes"], 3) and found["vertices"] > 0
        assert found["worldspawn"] == "worldspawn"
        assert found["prop_models"] == found["props"] and found["prop_scales"] == (found["props"], 3)
        assert found["entity_sets"] >= found["entities"]
        assert found["variant"].startswith("titanfall") == (path == CROSSFIRE)


@pytest.mark.parametrize("variant", ["titanfall", "titanfall2"])
def test_one_function_reads_the_example_rooms_of_both_containers(variant: str, tmp_path: Path) -> None:
    """The same summary of a Source room and an rBSP room, each built by the package's writer."""
    from sourcebsp.examples import write_example_map

    rooms = {"source": write_example_map(tmp_path / "room.bsp"),
             variant: write_example_respawn(tmp_path / f"mp_{variant}.bsp", variant)}
    found = {}
    for name, path in rooms.items():
        with sourcebsp.open(path) as bsp:
            found[name] = summary(bsp)
    assert found["source"]["variant"] == "orange_box" and found[variant]["variant"] == variant
    for room in found.values():
        assert room["bytes_equal"] and room["worldspawn"] == "worldspawn" and room["planes"] > 0


def test_a_lump_the_branch_lacks_raises_the_same_typed_error(tmp_path: Path) -> None:
    path = write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2")
    with sourcebsp.open(path) as bsp:
        for read in (lambda: bsp.faces, lambda: bsp["faces"], lambda: bsp[LumpId.BRUSHSIDES],
                     lambda: bsp.lump_or_none(LumpId.VISIBILITY), lambda: bsp.leaf_at([0, 0, 0]),
                     lambda: bsp.num_clusters):
            with pytest.raises(LumpNotInBranchError) as raised:
                read()
            assert isinstance(raised.value, sourcebsp.UnsupportedError)
            assert "Titanfall 2" in str(raised.value)
        assert bsp.detail_props is None and bsp.decompressed_size == 0
        with pytest.raises(KeyError):  # no lump of any branch
            bsp["no_such_lump"]


@pytest.mark.parametrize("make", ["source", "titanfall2"])
def test_entities_set_and_saved_through_the_protocol(make: str, tmp_path: Path) -> None:
    """An entity edit made through the protocol's attribute is saved by either container, and
    the protocol's ``close`` ends reading for both alike."""
    from sourcebsp.examples import write_example_map

    path = (write_example_map(tmp_path / "room.bsp") if make == "source"
            else write_example_respawn(tmp_path / "mp_room.bsp", make))
    out = tmp_path / "out" / path.name
    out.parent.mkdir()
    with sourcebsp.open(path) as bsp:
        entities = bsp.entities
        entities[0]["message"] = "edited through MapReader"
        bsp.entities = entities
        assert bsp.save(out) == out
        with pytest.raises(FileExistsError if make != "source" else sourcebsp.BspError):
            bsp.save(path)  # never over the input unasked
    with pytest.raises(ClosedMapError):
        bsp.planes
    with sourcebsp.open(out) as again:
        assert again.entities[0]["message"] == "edited through MapReader"
        assert again.variant.name == ("orange_box" if make == "source" else make)


def test_an_rbsp_static_prop_edit_is_refused_not_dropped(tmp_path: Path) -> None:
    """rBSP's sprp game lump is written as read: a save after a prop edit raises instead of
    silently leaving the edit out; an untouched read saves byte for byte."""
    path = write_example_respawn(tmp_path / "mp_room.bsp", "titanfall2")
    with sourcebsp.open(path) as bsp:
        props = bsp.static_props
        assert len(props) >= 1
        assert bsp.to_bytes() == path.read_bytes()  # read, not edited
        props.props = props.props[1:]  # one prop fewer
        with pytest.raises(sourcebsp.UnsupportedError, match="edited static props"):
            bsp.to_bytes()
    with sourcebsp.open(path) as bsp:
        bsp.static_props.dictionary[0] = b"models/renamed.mdl"  # a name changed in place
        with pytest.raises(sourcebsp.UnsupportedError, match="edited static props"):
            bsp.save(tmp_path / "out.bsp")

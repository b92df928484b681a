"""Writing: an in-place edit of any decoded value is saved, and writing never changes the map."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import sourcebsp
from sourcebsp import BspFile, LumpId, RawLump
from sourcebsp.writeplan import plan_write

ROOT = Path(__file__).resolve().parent.parent


def _reopen_after(source: Path, tmp_path: Path, edit: Callable[[BspFile], Any]) -> tuple[Any, BspFile]:
    """Apply ``edit`` to an opened map, save it, and reopen the saved file."""
    out = tmp_path / "edited.bsp"
    with sourcebsp.open(source) as bsp:
        token = edit(bsp)
        bsp.save(out)
    assert out.read_bytes() != source.read_bytes(), "the edit was lost"
    return token, sourcebsp.open(out)


# ---- one in-place edit per codec whose decoded value can be edited -------------------

def _edit_entities(bsp: BspFile) -> Any:
    bsp.entities[0]["sourcebsp_test"] = "kept"
    return lambda b: b.entities[0]["sourcebsp_test"] == "kept"


def _edit_string_data(bsp: BspFile) -> Any:
    offset = bsp.texdata_string_data.add("sourcebsp/test_material")
    return lambda b: b.texdata_string_data.at(offset) == "sourcebsp/test_material"


def _edit_pakfile(bsp: BspFile) -> Any:
    bsp.pakfile.add("materials/sourcebsp_test.txt", b"hello")
    return lambda b: b.pakfile.read("materials/sourcebsp_test.txt") == b"hello"


def _edit_static_props(bsp: BspFile) -> Any:
    bsp.static_props.move(0, origin=(1.0, 2.0, 3.0))
    return lambda b: tuple(b.static_props.props["origin"][0]) == (1.0, 2.0, 3.0)


def _edit_game_lump_directory(bsp: BspFile) -> Any:
    bsp.game_lumps.add("test", 3, b"abcd")
    return lambda b: (b.game_lumps["test"].version, b.game_lumps["test"].data) == (3, b"abcd")


def _edit_detail_props(bsp: BspFile) -> Any:
    props = bsp.detail_props
    assert props is not None and len(props)
    props.props["origin"][0] += 8.0
    expected = props.props["origin"][0].copy()
    return lambda b: np.array_equal(b.detail_props.props["origin"][0], expected)


def _edit_detail_lighting(bsp: BspFile) -> Any:
    lump = bsp.game_lumps["dplt"]
    value = np.zeros(2, lump.value.dtype)
    value["style"] = 7
    lump.value = value
    return lambda b: b.game_lumps["dplt"].value["style"].tolist() == [7, 7]


def _edit_lighting(bsp: BspFile) -> Any:
    lightmaps = bsp.lighting
    samples = lightmaps.samples.copy()
    samples["r"][0] ^= 0x55
    lightmaps.samples = samples
    return lambda b: b.lighting.samples["r"][0] == samples["r"][0]


def _edit_occlusion(bsp: BspFile) -> Any:
    occlusion = bsp.occlusion
    occluders = occlusion.occluders.copy()
    occluders["flags"][0] ^= 1
    occlusion.occluders = occluders
    return lambda b: b.occlusion.occluders["flags"][0] == occluders["flags"][0]


def _edit_physcollide(bsp: BspFile) -> Any:
    model = bsp.physcollide.models[0]
    model.keydata_tail = model.keydata_tail + b"\x00\x00\x00\x00"
    tail = model.keydata_tail
    return lambda b: b.physcollide.models[0].keydata_tail == tail


def _edit_physdisp(bsp: BspFile) -> Any:
    physdisp = bsp.physdisp
    data = physdisp.data.copy()
    data[-1] ^= 0xFF
    physdisp.data = data
    return lambda b: np.array_equal(b.physdisp.data, data)


def _edit_raw_lump(bsp: BspFile) -> Any:
    raw = bsp.get_lump(LumpId.OCCLUSION)
    assert isinstance(raw, RawLump)  # VTMB's version 0 occlusion lump has no layout
    raw.data = b"\x01\x02\x03\x04"
    return lambda b: bytes(b.lump_bytes(LumpId.OCCLUSION)) == b"\x01\x02\x03\x04"


EDITS = [
    ("entities", "tf2_mp_lobby.bsp", _edit_entities),
    ("entities_lzma", "tf2c_vipr_downfall.bsp", _edit_entities),
    ("texdata_string_data", "tf2_mp_lobby.bsp", _edit_string_data),
    ("texdata_string_data_lzma", "tf2c_vipr_downfall.bsp", _edit_string_data),
    ("pakfile", "css_2000.bsp", _edit_pakfile),
    ("static_props", "css_2000.bsp", _edit_static_props),
    ("static_props_lzma", "tf2c_vipr_downfall.bsp", _edit_static_props),
    ("game_lump_directory", "tf2_test2.bsp", _edit_game_lump_directory),
    ("detail_props", "valvebsp_testmap.bsp", _edit_detail_props),
    ("detail_prop_lighting", "valvebsp_testmap.bsp", _edit_detail_lighting),
    ("lighting", "tf2_test2.bsp", _edit_lighting),
    ("lighting_lzma", "tf2c_vipr_downfall.bsp", _edit_lighting),
    ("occlusion", "valvebsp_testmap.bsp", _edit_occlusion),
    ("physcollide", "tf2_test_physcollide.bsp", _edit_physcollide),
    ("physdisp", "valvebsp_testmap.bsp", _edit_physdisp),
    ("raw_lump", "vtmb_sp_genesisdevice_1.bsp", _edit_raw_lump),
]


@pytest.mark.parametrize(("what", "name", "edit"), EDITS, ids=[e[0] for e in EDITS])
def test_in_place_edit_is_saved(what: str, name: str, edit: Callable[[BspFile], Any], corpus_file,
                                tmp_path: Path) -> None:
    check, saved = _reopen_after(corpus_file(name), tmp_path, edit)
    with saved:
        assert check(saved), what


def test_visibility_cannot_be_edited_in_place(corpus_file) -> None:
    # Its one array is read-only: a new value comes from Visibility.replace and set_lump.
    with sourcebsp.open(corpus_file("tf2_test2.bsp")) as bsp:
        with pytest.raises(ValueError):
            bsp.visibility.bitofs[0, 0] = 1


def test_every_editable_codec_is_covered() -> None:
    """Each codec whose decode gives something other than a read-only array has an edit above."""
    from sourcebsp.codecs.arrays import ArrayCodec
    from sourcebsp.codecs.base import Deferred, Record
    from sourcebsp.codecs.gamelumps import SUB_CODECS
    from sourcebsp.variants import VARIANTS

    codecs = {type(codec.codec() if isinstance(codec, Deferred) else codec).__name__
              for variant in VARIANTS.values() for versions in variant.layouts.values()
              for codec in versions.values() if not isinstance(codec, np.dtype | ArrayCodec | Record)}
    assert {"LightmapsCodec", "VisibilityCodec", "StringDataCodec"} <= codecs
    codecs |= {type(codec).__name__ for codec in SUB_CODECS.values()}
    covered = {"EntitiesCodec", "StringDataCodec", "PakfileCodec", "GameLumpCodec", "StaticPropsCodec",
               "DetailPropsCodec", "DetailPropLightingCodec", "LightmapsCodec", "OcclusionCodec",
               "PhysCollideCodec", "PhysDispCodec", "VisibilityCodec"}
    assert codecs <= covered, codecs - covered


def test_loading_everything_changes_nothing(map_path: Path) -> None:
    """Every decoded value encodes back to the file's bytes: nothing is rewritten for nothing."""
    data = map_path.read_bytes()
    with sourcebsp.open(map_path) as bsp:
        bsp.decode_all()
        for lump in bsp.game_lumps:
            lump.value
        plan = plan_write(bsp)
        assert len(plan.pieces) == 1, "an unedited map is one copy of the file"
        assert plan.to_bytes() == data


# ---- writing never changes the map ---------------------------------------------------

def test_to_bytes_leaves_the_map_as_it_was(corpus_file) -> None:
    path = corpus_file("tf2_mp_lobby.bsp")
    data = path.read_bytes()
    assert len(data) == 46528
    with sourcebsp.open(path) as bsp:
        compressed = bsp.to_bytes(compression="lzma")
        assert len(compressed) < len(data)
        assert not any(bsp.is_loaded(i) for i in range(64))
        assert bsp.to_bytes() == data
        assert bsp.to_bytes(compression="none") == data  # nothing was compressed
    again = BspFile.from_bytes(compressed)
    assert [g.compressed for g in again.game_lumps] == [True] * len(again.game_lumps)
    with sourcebsp.open(path) as bsp:
        game = bsp.game_lumps
        bsp.to_bytes(compression="lzma")
        assert [g.compressed for g in game] == [False] * len(game)
        assert bsp.to_bytes() == data


def test_decompressing_leaves_the_map_as_it_was(corpus_file) -> None:
    path = corpus_file("tf2c_vipr_downfall.bsp")
    data = path.read_bytes()
    with sourcebsp.open(path) as bsp:
        plain = bsp.to_bytes(compression="none")
        assert bsp.to_bytes() == data
    with BspFile.from_bytes(plain) as bsp:
        assert not any(e.compressed for e in bsp.header.lumps)
        assert not any(g.compressed for g in bsp.game_lumps)


def test_save_writes_what_to_bytes_gives(corpus_file, tmp_path: Path) -> None:
    """In-kernel copies of the file's regions give the same bytes as the in-memory path."""
    for name in ("css_de_rats.bsp", "tf2c_vipr_downfall.bsp"):
        with sourcebsp.open(corpus_file(name)) as bsp:
            bsp.save(tmp_path / "same.bsp", fsync=False)
            assert (tmp_path / "same.bsp").read_bytes() == corpus_file(name).read_bytes()
            bsp.entities[0]["message"] = "edited"
            bsp.save(tmp_path / "edited.bsp")
            assert (tmp_path / "edited.bsp").read_bytes() == bsp.to_bytes()


def test_save_after_an_entity_edit_needs_little_memory(corpus_file, tmp_path: Path) -> None:
    """Peak memory of the save stays under 1.5x the file (the largest corpus map)."""
    path = corpus_file("css_de_rats.bsp")
    script = (
        "import resource, sys, sourcebsp\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "with sourcebsp.open(sys.argv[1]) as bsp:\n"
        "    bsp.entities[0]['message'] = 'edited'\n"
        "    bsp.save(sys.argv[2])\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "out.bsp")],
                            capture_output=True, text=True, env=env, check=True)
    assert int(result.stdout) <= 1.5 * path.stat().st_size
    with sourcebsp.open(tmp_path / "out.bsp") as bsp:
        assert bsp.entities[0]["message"] == "edited"


def _unaligned_map() -> tuple[bytes, dict[int, bytes]]:
    """A v20 map whose lumps sit at odd offsets, with zeros after one and junk after another."""
    from sourcebsp.header import HEADER_SIZE, Header, LumpEntry

    lumps = {
        int(LumpId.ENTITIES): b'{\n"classname" "worldspawn"\n}\n\x00',  # 32 bytes
        int(LumpId.PLANES): b"\x01" * 7,
        int(LumpId.TEXDATA): b"\x02" * 5,  # the file has zeros after it: copied as one region with it
        int(LumpId.VERTEXES): b"\x03" * 9,  # junk after it: new zeros are written instead
        int(LumpId.VISIBILITY): b"\x04" * 3,
    }
    gaps = {int(LumpId.ENTITIES): b"", int(LumpId.PLANES): b"\x00", int(LumpId.TEXDATA): b"\x00\x00\x00",
            int(LumpId.VERTEXES): b"\xee\xee\xee", int(LumpId.VISIBILITY): b""}
    entries = [LumpEntry()] * 64
    body = b""
    for index, data in lumps.items():
        entries[index] = LumpEntry(HEADER_SIZE + 1 + len(body), len(data))
        body += data + gaps[index]
    return Header(b"VBSP", 20, entries).to_bytes() + b"\xee" + body, lumps


def test_relaid_lumps_are_aligned_and_gathered_whatever_the_file_pads_with() -> None:
    data, lumps = _unaligned_map()
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        bsp.entities[0]["message"] = "grown"
        plan = plan_write(bsp)
        written = plan.to_bytes()
    # Every piece is already as gathered as it can be: no two neighbouring regions of the file.
    kinds = [type(piece).__name__ for piece in plan.pieces]
    assert not any(a == b == "Region" for a, b in zip(kinds, kinds[1:])), kinds
    with sourcebsp.BspFile.from_bytes(written) as saved:
        assert saved.entities[0]["message"] == "grown"
        entries = saved.header.lumps
        order = sorted(lumps, key=lambda i: entries[i].fileofs)
        assert order == list(lumps)  # the file's order is kept
        for index in lumps:
            assert entries[index].fileofs % 4 == 0
            if index != LumpId.ENTITIES:
                assert bytes(saved.raw_lump(index)) == lumps[index]
        for index, after in zip(order, order[1:]):
            end = entries[index].fileofs + entries[index].filelen
            assert written[end:entries[after].fileofs] == bytes(-end % 4)  # padding is zeros, never junk


@pytest.mark.skipif(not hasattr(os, "copy_file_range"), reason="in-kernel copies are Linux's")
def test_a_save_completes_where_in_kernel_copies_stop_or_fail(corpus_file, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Regions copied in the kernel fall back to writes from the memory map for what a copy
    left (copy_file_range stops short, or fails between two filesystems)."""
    from sourcebsp import writeplan

    monkeypatch.setattr(writeplan, "_COPY_IN_KERNEL_FROM", 1)  # every region a kernel copy
    real = os.copy_file_range
    calls: list[int] = []

    def copy_then_fail(src: int, dst: int, count: int, offset_src: int | None = None) -> int:
        calls.append(count)
        if len(calls) % 3 == 0:
            raise OSError(18, "Invalid cross-device link")  # EXDEV
        return real(src, dst, min(count, 1000), offset_src)

    monkeypatch.setattr(os, "copy_file_range", copy_then_fail)
    with sourcebsp.open(corpus_file("css_2000.bsp")) as bsp:
        bsp.entities[0]["message"] = "edited"
        bsp.save(tmp_path / "edited.bsp", fsync=False)
        assert (tmp_path / "edited.bsp").read_bytes() == bsp.to_bytes()
    assert len(calls) >= 3

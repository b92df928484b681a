"""Physics lumps (codecs/physics.py): PHYSCOLLIDE (29), PHYSDISP (28), PHYSCOLLIDESURFACE (49, BSP <= 19)."""
from __future__ import annotations

import copy
import pickle
import re
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId, RawLump
from sourcebsp.codecs.base import LumpContext
from sourcebsp.codecs.physics import (
    PHYSCOLLIDE_CODEC,
    PHYSDISP_CODEC,
    PHYSDISP_V2_CODEC,
    PhysCollide,
    PhysDisp,
    PhysModel,
    parse_keydata,
)

# Blocks of the key data that describe one solid each (their "index" numbers the solids).
SOLID_BLOCKS = ("solid", "staticsolid", "fluid")


def _encoded(bsp: sourcebsp.BspFile, lump: LumpId, value: object = None) -> bytes:
    """The lump's decoded value (or ``value``) encoded again."""
    codec = bsp.codec(lump)
    assert codec is not None
    return codec.encode(bsp.get_lump(lump) if value is None else value, bsp._context(int(lump)))


def _log_number(log: str, pattern: str) -> int | None:
    match = re.search(pattern, log, re.MULTILINE)
    return int(match.group(1)) if match else None


# ---- PHYSCOLLIDE ------------------------------------------------------------------
def test_physcollide_round_trips(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        value = bsp.physcollide
        assert isinstance(value, PhysCollide)
        assert len(value) > 0  # every corpus map has at least the world's collision model
        assert _encoded(bsp, LumpId.PHYSCOLLIDE) == bytes(bsp.lump_bytes(LumpId.PHYSCOLLIDE))
        assert bsp.count(LumpId.PHYSCOLLIDE) == len(value)


def test_decoded_solids_are_views_of_the_map_that_outlive_it(map_path: Path, tmp_path: Path) -> None:
    """Solids are read-only views of the lump's bytes (no copy), still readable once the map is
    closed; one replaced by bytes is written, the others as they were."""
    with sourcebsp.open(map_path) as bsp:
        raw = bytes(bsp.lump_bytes(LumpId.PHYSCOLLIDE))
        models = bsp.physcollide.models
        first = models[0].solids[0]
        bsp.physcollide.models[0].solids[0] = b"VPHY replaced by a test"
        bsp.save(tmp_path / "edited.bsp")
    position, solids = 0, 0
    for model in models:
        position += 16
        for solid in model.solids if model is not models[0] else [first, *model.solids[1:]]:
            size = struct.unpack_from(bsp.endian + "i", raw, position)[0]
            assert isinstance(solid, memoryview) and solid.readonly and solid.nbytes == size
            assert solid == raw[position + 4 : position + 4 + size]  # read after the close
            position += 4 + size
            solids += 1
        position += len(model.keydata) + len(model.keydata_tail)
    assert solids == sum(len(m.solids) for m in models) > 0
    with sourcebsp.open(tmp_path / "edited.bsp") as edited:
        again = edited.physcollide
        assert again.models[0].solids[0] == b"VPHY replaced by a test"
        assert [list(map(bytes, m.solids)) for m in again[1:]] == [list(map(bytes, m.solids)) for m in models[1:]]
        # Pickled or deep-copied, a decoded lump holds the bytes of its solids, equal to the views.
        for copied in (pickle.loads(pickle.dumps(again)), copy.deepcopy(again)):
            assert copied == again and all(type(s) is bytes for m in copied for s in m.solids)
            assert _encoded(edited, LumpId.PHYSCOLLIDE, copied) == bytes(edited.lump_bytes(LumpId.PHYSCOLLIDE))


def test_physcollide_terminator_and_sizes(map_path: Path) -> None:
    """The lump walks from model to model with dataSize + keydataSize and ends at -1."""
    with sourcebsp.open(map_path) as bsp:
        value, raw = bsp.physcollide, bytes(bsp.lump_bytes(LumpId.PHYSCOLLIDE))
        position = 0
        for model in value:
            index, data_size, keydata_size, solid_count = struct.unpack_from(bsp.endian + "4i", raw, position)
            assert (index, solid_count) == (model.model_index, len(model.solids))
            assert data_size == model.data_size()
            assert keydata_size == len(model.keydata) + len(model.keydata_tail)
            position += 16 + data_size + keydata_size
        assert value.terminator == raw[position:]
        assert struct.unpack_from(bsp.endian + "i", raw, position)[0] == -1


def test_phys_model_indices_are_valid_and_ascend(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        indices = bsp.physcollide.model_indices()
        assert indices[0] == 0  # the world
        assert (indices < len(bsp.models)).all()
        assert (np.diff(indices) > 0).all()


def test_keydata_parses_into_one_block_per_solid(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        for model in bsp.physcollide:
            blocks = model.blocks()
            assert blocks and all(isinstance(name, str) for name, _ in blocks)
            numbered = sorted(int(dict(pairs)["index"]) for name, pairs in blocks if name in SOLID_BLOCKS)
            assert numbered == list(range(len(model.solids))), model.model_index
            assert model.keydata_tail.startswith(b"\x00") and not model.keydata_tail.strip(b"\x00")
            # Modern solids carry vphysics' "VPHY" header (byte-swapped on big-endian consoles).
            if bsp.version >= 19:
                assert all(s[:4] in (b"VPHY", b"YHPV") for s in model.solids)


def test_physcollide_matches_srctools(all_maps: list[Path]) -> None:
    """srctools reads the same solids and key values for every brush model it links to an entity."""
    from srctools.bsp import BSP

    maps_compared = 0
    for map_path in all_maps:
        with sourcebsp.open(map_path) as bsp:
            if bsp.version < 19 or bsp.endian == ">":
                continue  # srctools reads neither BSP 17 nor big-endian maps
            ours = {tuple(map(bytes, m.solids)): m for m in bsp.physcollide}
            compared = 0
            for bmodel in BSP(map_path).bmodels.values():
                if not bmodel._phys_solids:
                    continue
                model = ours[tuple(bmodel._phys_solids)]
                expected = [
                    (block.real_name, [(kv.real_name, kv.value) for kv in block])
                    for block in bmodel.phys_keyvalues
                ]
                assert model.blocks() == expected, (map_path.name, model.model_index)
                compared += 1
            assert compared >= 1, map_path.name
            maps_compared += 1
    assert maps_compared >= 20


def test_sizes_match_compile_logs(vmf_dir: Path) -> None:
    """vbsp prints the PHYSCOLLIDE and PHYSDISP sizes it wrote ("physics", "physics terrain")."""
    checked = 0
    for log_path in sorted(vmf_dir.glob("*.log")):
        map_path = vmf_dir.parent / f"{log_path.stem}.bsp"
        log = log_path.read_text(errors="replace")
        physics = _log_number(log, r"^physics\s+\[variable\]\s+(\d+)/")
        terrain = _log_number(log, r"^physics terrain\s+\[variable\]\s+(\d+)/")
        if not map_path.exists() or physics is None:
            continue
        with sourcebsp.open(map_path) as bsp:
            assert len(_encoded(bsp, LumpId.PHYSCOLLIDE)) == physics
            assert len(_encoded(bsp, LumpId.PHYSDISP)) == terrain
        checked += 1
    assert checked >= 3


def test_physcollidesurface_of_bsp19_uses_the_same_format(all_maps: list[Path]) -> None:
    """CS:S maps of BSP 19 keep lump 49 (PHYSCOLLIDESURFACE) as a second dphysmodel_t list."""
    checked = 0
    for map_path in all_maps:
        with sourcebsp.open(map_path) as bsp:
            if bsp.version > 19 or not bsp.entry(LumpId.PROP_BLOB).filelen:
                continue
            surface = bsp.get_lump(LumpId.PROP_BLOB)
            assert isinstance(surface, PhysCollide)
            assert _encoded(bsp, LumpId.PROP_BLOB) == bytes(bsp.lump_bytes(LumpId.PROP_BLOB))
            # Same brush models as lump 29.
            assert list(surface.model_indices()) == list(bsp.physcollide.model_indices())
            checked += 1
    assert checked >= 4


def _damaged_copy(tmp_path: Path, corpus_file, edit) -> tuple[Path, int]:
    source = corpus_file("tf2_test_physcollide.bsp")
    path = tmp_path / "damaged.bsp"
    shutil.copy(source, path)
    data = bytearray(path.read_bytes())
    with sourcebsp.open(source) as bsp:
        entry = bsp.entry(LumpId.PHYSCOLLIDE)
    edit(data, entry)
    path.write_bytes(bytes(data))
    return path, entry.fileofs


def test_truncated_physcollide_names_the_offset(tmp_path: Path, corpus_file) -> None:
    def shorten(data: bytearray, entry) -> None:
        # lump_t.filelen of lump 29: cut the lump inside the first model's solid.
        struct.pack_into("<i", data, 8 + 16 * LumpId.PHYSCOLLIDE + 4, 100)

    path, fileofs = _damaged_copy(tmp_path, corpus_file, shorten)
    with sourcebsp.open(path) as bsp, pytest.raises(sourcebsp.TruncatedError) as caught:
        bsp.physcollide
    assert caught.value.offset == fileofs + 16  # where model 0's data starts
    assert caught.value.lump == "PHYSCOLLIDE"
    assert f"file offset {fileofs + 16}" in str(caught.value)


def test_solid_size_past_the_end(tmp_path: Path, corpus_file) -> None:
    def huge_solid(data: bytearray, entry) -> None:
        struct.pack_into("<i", data, entry.fileofs + 16, 0x7FFFFFF0)

    path, fileofs = _damaged_copy(tmp_path, corpus_file, huge_solid)
    with sourcebsp.open(path) as bsp, pytest.raises(sourcebsp.TruncatedError) as caught:
        bsp.physcollide
    assert caught.value.offset == fileofs + 16  # the size field of solid 0


def test_missing_terminator(tmp_path: Path, corpus_file) -> None:
    def drop_terminator(data: bytearray, entry) -> None:
        struct.pack_into("<i", data, 8 + 16 * LumpId.PHYSCOLLIDE + 4, entry.filelen - 16)

    path, fileofs = _damaged_copy(tmp_path, corpus_file, drop_terminator)
    with sourcebsp.open(path) as bsp:
        end = fileofs + bsp.entry(LumpId.PHYSCOLLIDE).filelen
        with pytest.raises(sourcebsp.TruncatedError, match="terminator") as caught:
            bsp.physcollide
    assert caught.value.offset == end


def test_datasize_disagreeing_with_solids() -> None:
    ctx = LumpContext(29, "PHYSCOLLIDE", 0, 20, "<", 1000)
    body = struct.pack("<i", 4) + b"VPHY"
    raw = struct.pack("<4i", 0, len(body) + 4, 1, 1) + body + b"\0\0\0\0" + b"\0" + struct.pack("<4i", -1, -1, 0, 0)
    with pytest.raises(sourcebsp.BspFormatError, match="dataSize") as caught:
        PHYSCOLLIDE_CODEC.decode(memoryview(raw), ctx)
    assert caught.value.offset == 1000


@pytest.mark.parametrize("endian", ["<", ">"])
def test_edited_physcollide_encodes_consistent_headers(endian: str) -> None:
    ctx = LumpContext(29, "PHYSCOLLIDE", 0, 20, endian, 0)
    value = PhysCollide([PhysModel(0, [b"VPHY" + bytes(10), b"VPHY"], 'solid {\n"index" "0"\n}\n')])
    value.models.append(PhysModel(3, [], "", b""))
    raw = PHYSCOLLIDE_CODEC.encode(value, ctx)
    assert struct.unpack_from(endian + "4i", raw, 0) == (0, 4 + 14 + 4 + 4, len(value[0].keydata) + 1, 2)
    assert struct.unpack_from(endian + "4i", raw, len(raw) - 16) == (-1, -1, 0, 0)
    again = PHYSCOLLIDE_CODEC.decode(memoryview(raw), ctx)
    assert again.models == value.models
    assert PHYSCOLLIDE_CODEC.encode(again, ctx) == raw


def test_parse_keydata_rejects_malformed_text() -> None:
    assert parse_keydata('a {\n"k" "v"\n"k" "w"\n}\nb {}\n') == [("a", [("k", "v"), ("k", "w")]), ("b", [])]
    for bad in ('solid { "index" }', "solid {", 'solid "index" "0" }', "{ }"):
        with pytest.raises(sourcebsp.BspFormatError):
            parse_keydata(bad)


def test_edited_physcollide_survives_save(tmp_path: Path, corpus_file) -> None:
    source = corpus_file("tf2_test_physcollide.bsp")
    with sourcebsp.open(source) as bsp:
        value = bsp.physcollide
        value[1].keydata = value[1].keydata.replace('"surfaceprop" "concrete"', '"surfaceprop" "metal"')
        out = bsp.save(tmp_path / "edited.bsp")
    with sourcebsp.open(out) as bsp:
        blocks = dict(bsp.physcollide[1].blocks()[0][1])
        assert blocks["surfaceprop"] == "metal"
        assert len(bsp.physcollide) == 3


# ---- PHYSDISP ---------------------------------------------------------------------
def test_physdisp_round_trips(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        if not bsp.entry(LumpId.PHYSDISP).filelen:
            assert isinstance(bsp.physdisp, PhysDisp) and len(bsp.physdisp) == 0
            return
        value = bsp.physdisp
        assert isinstance(value, PhysDisp)
        assert _encoded(bsp, LumpId.PHYSDISP) == bytes(bsp.lump_bytes(LumpId.PHYSDISP))


def test_physdisp_has_one_blob_per_displacement(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        value = bsp.physdisp
        dispinfo = bsp.dispinfo
        if isinstance(dispinfo, RawLump):
            pytest.fail("DISPINFO should decode")
        if value.has_count:
            assert len(value) == len(dispinfo)
        else:
            # Older compilers (CS:S BSP 19/20) wrote no PHYSDISP lump at all, even with displacements.
            assert bsp.version <= 20 and len(value) == 0
        assert int(np.sum(value.sizes)) == len(value.data)
        blobs = list(value)
        assert [len(b) for b in blobs] == [int(s) for s in value.sizes]
        assert b"".join(blobs) == value.data.tobytes()
        if len(value):
            assert (np.asarray(value.sizes) > 0).all()


def test_physdisp_v2_and_errors() -> None:
    ctx0 = LumpContext(28, "PHYSDISP", 0, 20, "<", 500)
    ctx2 = LumpContext(28, "PHYSDISP", 2, 25, ">", 500)
    value = PhysDisp.from_blobs([b"abc", b"", b"defgh"])
    wide = PHYSDISP_V2_CODEC.encode(value, ctx2)
    assert wide[:4] == struct.pack(">I", 3) and wide[4:16] == struct.pack(">3I", 3, 0, 5)
    assert list(PHYSDISP_V2_CODEC.decode(memoryview(wide), ctx2)) == [b"abc", b"", b"defgh"]
    narrow = PHYSDISP_CODEC.encode(value, ctx0)
    assert narrow == struct.pack("<4H", 3, 3, 0, 5) + b"abcdefgh"
    with pytest.raises(sourcebsp.TruncatedError) as caught:
        PHYSDISP_CODEC.decode(memoryview(narrow[:-1]), ctx0)
    assert caught.value.offset == 500 + 8  # where the blobs start
    with pytest.raises(sourcebsp.TruncatedError):
        PHYSDISP_CODEC.decode(memoryview(struct.pack("<2H", 5, 1)), ctx0)
    with pytest.raises(sourcebsp.LumpSizeError):
        PHYSDISP_CODEC.decode(memoryview(narrow + b"x"), ctx0)
    with pytest.raises(sourcebsp.BspFormatError):
        PHYSDISP_CODEC.encode(PhysDisp.from_blobs([bytes(70000)]), ctx0)

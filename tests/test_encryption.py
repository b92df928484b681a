"""Tactical Intervention's encrypted maps: read decrypted, written back encrypted with the same key.

The independent facts: BSPSource's ``XORUtils.xor`` (byte ``i`` XOR key byte ``i % 32``), its
``BspFile.createBuffer`` (the key is bytes 384-416 of the encrypted file; the first four bytes
decrypt to ``VBSP``), bsp_tool 0.7.0's ``extensions/decrypt_xor.py`` (the same).  The XOR is
checked here with plain Python over the bytes, not with the numpy code under test.
"""
from __future__ import annotations

import bz2
import json
import os
import struct
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp import BspFile, LumpId, RawLump
from sourcebsp.cli import main
from sourcebsp.encryption import KEY_OFFSET, KEY_SIZE, NEW_FILE_KEY, decrypt, encrypt, find_key, xor
from sourcebsp.examples.branches import example_branch_bytes
from sourcebsp.fuzz.mutate import Mutation, apply, seeds

# A key of the kind the game's files hold (any 32 bytes): maps "from the game" are made with it,
# so that the tests show the key of each file is the one used, not sourcebsp's own.
GAME_LIKE_KEY = bytes(range(101, 101 + 2 * KEY_SIZE, 2))


def python_xor(data: bytes, key: bytes) -> bytes:
    return bytes(byte ^ key[i % len(key)] for i, byte in enumerate(data))


@pytest.fixture(scope="module")
def plain_room() -> bytes:
    """The Tactical Intervention example room, decrypted by plain Python."""
    data = example_branch_bytes("tactical_intervention")
    return python_xor(data, data[KEY_OFFSET:KEY_OFFSET + KEY_SIZE])


@pytest.fixture()
def game_map(plain_room: bytes, tmp_path: Path) -> Path:
    path = tmp_path / "mis_room.bsp"
    path.write_bytes(python_xor(plain_room, GAME_LIKE_KEY))
    return path


def test_the_example_is_encrypted_with_sourcebsp_s_key(plain_room: bytes) -> None:
    data = example_branch_bytes("tactical_intervention")
    assert len(NEW_FILE_KEY) == KEY_SIZE
    assert data[KEY_OFFSET:KEY_OFFSET + KEY_SIZE] == NEW_FILE_KEY  # zeros XOR key
    assert plain_room[:8] == b"VBSP" + struct.pack("<i", 21)
    assert plain_room[KEY_OFFSET:KEY_OFFSET + KEY_SIZE] == bytes(KEY_SIZE)
    # The ciphertext is not the plain map: every byte whose key byte is not zero differs.
    assert sum(a != b for a, b in zip(data, plain_room)) == len(data)
    assert data[:4] != b"VBSP"


def test_decryption_is_the_plain_python_xor(plain_room: bytes, game_map: Path) -> None:
    data = game_map.read_bytes()
    assert find_key(data[:1036]) == GAME_LIKE_KEY
    assert bytes(decrypt(data, GAME_LIKE_KEY)) == plain_room
    assert bytes(encrypt(plain_room, GAME_LIKE_KEY)) == data
    for size in (0, 1, 31, 33, 95):  # lengths that are not whole rows of the key
        assert xor(data[:size], GAME_LIKE_KEY).tobytes() == python_xor(data[:size], GAME_LIKE_KEY)


def test_plain_and_short_files_are_not_encrypted(plain_room: bytes) -> None:
    assert find_key(plain_room) is None
    assert find_key(example_branch_bytes("orange_box")) is None
    data = python_xor(plain_room, GAME_LIKE_KEY)
    assert find_key(data[:KEY_OFFSET + KEY_SIZE - 1]) is None  # too short to hold the key
    assert find_key(b"XXXX" + data[4:]) is None  # the ident does not decrypt to VBSP


def test_open_detects_decrypts_and_saves_with_the_file_s_key(game_map: Path, tmp_path: Path) -> None:
    with sourcebsp.open(game_map) as bsp:
        assert bsp.variant.name == "tactical_intervention" and bsp.variant_alternatives == ()
        assert bsp.xor_key == GAME_LIKE_KEY and "encrypted" in repr(bsp)
        assert bsp.header.ident == b"VBSP" and bsp.version == 21
        assert [e["classname"] for e in bsp.entities][0] == "worldspawn"
        assert len(bsp.planes) > 0 and len(bsp.faces) > 0
        for reencode in (False, True):
            out = tmp_path / f"same{reencode}.bsp"
            bsp.save(out, reencode=reencode)
            assert out.read_bytes() == game_map.read_bytes()
        assert bsp.to_bytes() == game_map.read_bytes()
        with pytest.raises(sourcebsp.BspError, match="refusing to overwrite"):
            bsp.save(game_map)


def test_an_edited_map_is_written_encrypted(game_map: Path, plain_room: bytes, tmp_path: Path) -> None:
    out = tmp_path / "edited.bsp"
    with sourcebsp.open(game_map) as bsp:
        bsp.entities[0]["message"] = "an edit that grows the entity lump"
        bsp.save(out)
    data = out.read_bytes()
    assert data[:4] != b"VBSP" and len(data) > len(plain_room)
    plain = python_xor(data, GAME_LIKE_KEY)
    assert plain[:4] == b"VBSP" and plain[KEY_OFFSET:KEY_OFFSET + KEY_SIZE] == bytes(KEY_SIZE)
    with sourcebsp.open(out) as again:
        assert again.xor_key == GAME_LIKE_KEY
        assert again.entities[0]["message"] == "an edit that grows the entity lump"
        assert len(again.planes) == len(BspFile.from_bytes(plain_room).planes)


def test_a_map_whose_key_place_is_used_cannot_be_encrypted(game_map: Path) -> None:
    with sourcebsp.open(game_map) as bsp:
        bsp.set_lump(LumpId.PROPHULLVERTS, sourcebsp.RawLump(bytes(24), "test"))  # lump 24: bytes 392-408
        with pytest.raises(sourcebsp.BspFormatError, match="384"):
            bsp.to_bytes()


def test_named_variant_and_plain_files(game_map: Path, plain_room: bytes, tmp_path: Path) -> None:
    with sourcebsp.open(game_map, variant="tactical_intervention") as bsp:
        assert bsp.variant.name == "tactical_intervention" and bsp.xor_key == GAME_LIKE_KEY
    with sourcebsp.open(game_map, variant="orange_box") as bsp:  # another reading, the same file key
        assert bsp.variant.name == "orange_box" and bsp.to_bytes() == game_map.read_bytes()
    # A plain map read as Tactical Intervention's stays plain: the key belongs to the file.
    plain = tmp_path / "plain.bsp"
    plain.write_bytes(plain_room)
    with sourcebsp.open(plain, variant="tactical_intervention") as bsp:
        assert bsp.xor_key is None and bsp.to_bytes() == plain_room
    with sourcebsp.open(plain) as bsp:
        assert bsp.variant.name != "tactical_intervention"  # an unencrypted file is not detected as TI


def test_a_new_map_of_the_branch_uses_sourcebsp_s_key() -> None:
    bsp = BspFile(variant="tactical_intervention")
    data = bsp.to_bytes()
    assert bsp.xor_key == NEW_FILE_KEY and find_key(data) == NEW_FILE_KEY
    assert BspFile.from_bytes(data).variant.name == "tactical_intervention"


def test_bzip2_of_an_encrypted_map(game_map: Path, tmp_path: Path) -> None:
    packed = tmp_path / "mis_room.bsp.bz2"
    packed.write_bytes(bz2.compress(game_map.read_bytes()))
    with sourcebsp.open(packed) as bsp:
        assert bsp.xor_key == GAME_LIKE_KEY and bsp.to_bytes() == game_map.read_bytes()


def test_damaged_encrypted_files_end_in_bsp_errors(game_map: Path) -> None:
    data = game_map.read_bytes()
    with pytest.raises(sourcebsp.TruncatedError):  # cut inside the directory
        BspFile.from_bytes(data[:800])
    cut = BspFile.from_bytes(data[:5000])  # lumps past the end: raised when read
    with pytest.raises(sourcebsp.TruncatedError):
        cut.get_lump(LumpId.PAKFILE if cut.entry(LumpId.PAKFILE).filelen else LumpId.GAME_LUMP)
    version = bytearray(data)
    version[4:8] = python_xor(struct.pack("<i", 19), GAME_LIKE_KEY[4:8])  # no encrypted branch has 19
    with pytest.raises(sourcebsp.UnsupportedError, match="encrypted BSP version 19"):
        BspFile.from_bytes(bytes(version))


def test_info_says_encrypted(game_map: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(game_map), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["variant"] == "tactical_intervention" and report["encrypted"] and report["ident"] == "VBSP"
    assert report["damaged"] == [] and report["entity_count"] == 4
    assert main(["info", str(game_map)]) == 0
    out = capsys.readouterr().out
    assert "variant tactical_intervention" in out and "encrypted" in out
    assert main(["info", str(game_map), "--json", "--variant", "tactical_intervention"]) == 0
    assert json.loads(capsys.readouterr().out)["encrypted"]


def test_entities_after_extra_nuls_are_read(game_map: Path, tmp_path: Path) -> None:
    """Tactical Intervention's entity lumps hold NULs between blocks (Tsuey/Tactically-Decompiled):
    every block is an entity of the map, whatever NULs come between."""
    out = tmp_path / "nuls.bsp"
    with sourcebsp.open(game_map) as bsp:
        text = bytes(bsp.lump_bytes(LumpId.ENTITIES)).rstrip(b"\0")
        extra = text + b"\0\0\0" + b'{\n"classname" "info_player_ctstart_A1"\n}\n\0\n' + \
            b'{\n"classname" "ti_trigger_once"\n}\n\0'
        bsp.set_lump(LumpId.ENTITIES, RawLump(extra, "the lump as the game's compiler wrote it"))
        bsp.save(out)
    assert python_xor(out.read_bytes(), GAME_LIKE_KEY).count(b"ti_trigger_once") == 1
    with sourcebsp.open(out) as again:
        names = [e["classname"] for e in again.entities]
        assert len(names) == 6 and names[-2:] == ["info_player_ctstart_A1", "ti_trigger_once"]
        assert bytes(again.lump_bytes(LumpId.ENTITIES)) == extra
        assert again.to_bytes() == out.read_bytes()


def test_the_fuzzer_mutates_the_plain_map_inside() -> None:
    seed = seeds()["example_tactical_intervention"]
    assert seed == example_branch_bytes("tactical_intervention")
    mutation = [Mutation("dir", int(LumpId.TEXINFO), 2, value=7)]
    changed = apply(seed, mutation)
    plain, plain_changed = python_xor(seed, NEW_FILE_KEY), python_xor(changed, NEW_FILE_KEY)
    assert plain_changed == apply(plain, mutation) and plain_changed != plain
    with BspFile.from_bytes(changed) as bsp:
        assert bsp.xor_key == NEW_FILE_KEY and bsp.entry(LumpId.TEXINFO).version == 7


def test_open_keeps_one_decrypted_copy(game_map: Path) -> None:
    """Decrypted in memory: no file is written beside the map, and the lumps are views of
    the one decrypted buffer."""
    before = sorted(os.listdir(game_map.parent))
    with sourcebsp.open(game_map) as bsp:
        planes = bsp.planes
        assert planes.base is not None and not planes.flags.writeable
    assert sorted(os.listdir(game_map.parent)) == before

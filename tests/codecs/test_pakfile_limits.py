"""Pakfile limits (entry size, total size, ratio), encrypted entries, and all-or-nothing extraction."""
from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from sourcebsp.codecs.pakfile import Pakfile, PakLimits
from sourcebsp.errors import BspError, BspFormatError, LimitExceededError, UnsupportedError

MIB = 1 << 20


def archive(*files: tuple[str, bytes, int]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data, method in files:
            z.writestr(zipfile.ZipInfo(name), data, method)
    return out.getvalue()


def test_defaults() -> None:
    assert PakLimits() == PakLimits(max_entry_size=256 * MIB, max_total_size=1024 * MIB, max_ratio=1000.0,
                                    ratio_exempt=MIB)
    assert Pakfile().limits == PakLimits()


def test_entry_size_limit() -> None:
    pak = Pakfile(archive(("big.bin", bytes(range(256)) * 8192, zipfile.ZIP_STORED)))  # 2 MiB
    assert len(pak.read("big.bin")) == 2 * MIB
    with pytest.raises(LimitExceededError) as info:
        pak.read("big.bin", limits=PakLimits(max_entry_size=MIB))
    error = info.value
    assert isinstance(error, BspError) and error.limit == "max_entry_size"
    assert error.needed == 2 * MIB and error.available == MIB
    assert "max_entry_size" in str(error) and "limits=PakLimits" in str(error)
    pak.limits = PakLimits(max_entry_size=MIB)  # the pakfile's own limits apply when none are given
    with pytest.raises(LimitExceededError):
        list(pak.iter_files())


def test_ratio_limit_applies_past_the_exempt_size() -> None:
    zeros = archive(("zeros.raw", bytes(4 * MIB), zipfile.ZIP_DEFLATED), ("small.raw", bytes(64 << 10),
                                                                           zipfile.ZIP_DEFLATED))
    pak = Pakfile(zeros)
    ratio = pak.get_entry("zeros.raw").size / pak.get_entry("zeros.raw").compressed_size
    assert ratio > 1000  # deflate squeezes zeros a thousand times: a bomb's ratio
    with pytest.raises(LimitExceededError, match="expands") as info:
        pak.read("zeros.raw")
    assert info.value.limit == "max_ratio" and info.value.needed == 4 * MIB
    assert len(pak.read("zeros.raw", limits=PakLimits(max_ratio=2000))) == 4 * MIB
    # The small one compresses as much but is under ratio_exempt.
    assert pak.get_entry("small.raw").size / pak.get_entry("small.raw").compressed_size > 100
    assert len(pak.read("small.raw", limits=PakLimits(max_ratio=100))) == 64 << 10


def test_total_limit_is_checked_before_anything_is_read() -> None:
    pak = Pakfile(archive(*[(f"f{i}.bin", bytes([i]) * 100_000, zipfile.ZIP_STORED) for i in range(3)]))
    limits = PakLimits(max_total_size=250_000)
    assert len(pak.read("f2.bin", limits=limits)) == 100_000  # one file is within the total
    files = pak.iter_files(limits=limits)
    with pytest.raises(LimitExceededError, match="f2.bin") as info:
        next(files)  # refused before the first file is given
    assert info.value.limit == "max_total_size"


def encrypted(data: bytes) -> bytes:
    """The archive with the 'encrypted' flag set on its first entry (local and central headers)."""
    out = bytearray(data)
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = out.find(signature)
        struct.pack_into("<H", out, at + flags_at, struct.unpack_from("<H", out, at + flags_at)[0] | 1)
    return bytes(out)


def test_encrypted_entry_is_a_bsp_error() -> None:
    pak = Pakfile(encrypted(archive(("secret.txt", b"x" * 100, zipfile.ZIP_STORED))), offset=1000)
    with pytest.raises(UnsupportedError, match="encrypted") as info:
        pak.read("secret.txt")
    assert info.value.offset == 1000  # the entry's local header, at the start of the lump
    with pytest.raises(UnsupportedError):
        pak.extract_all("/nonexistent/never/written")


# ---- extraction ---------------------------------------------------------------------
def two_files() -> Pakfile:
    return Pakfile(archive(("materials/a.vmt", b"A", zipfile.ZIP_STORED),
                           ("sound/b.wav", b"B" * 10, zipfile.ZIP_DEFLATED)))


def test_extract_refuses_existing_files_unless_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "sound").mkdir(parents=True)
    (out / "sound" / "b.wav").write_bytes(b"mine")
    with pytest.raises(BspError, match="refusing to overwrite .*b.wav.*overwrite=True"):
        two_files().extract_all(out)
    assert (out / "sound" / "b.wav").read_bytes() == b"mine" and not (out / "materials").exists()
    written = two_files().extract_all(out, overwrite=True)
    assert sorted(written) == [out / "materials" / "a.vmt", out / "sound" / "b.wav"]
    assert (out / "sound" / "b.wav").read_bytes() == b"B" * 10


def test_extract_failure_leaves_nothing(tmp_path: Path) -> None:
    data = bytearray(archive(("materials/a.vmt", b"A" * 50, zipfile.ZIP_STORED),
                             ("sound/b.wav", b"B" * 50, zipfile.ZIP_STORED)))
    at = data.find(b"B" * 50)
    data[at] = ord("C")  # the second file fails its CRC, after the first one was read
    out = tmp_path / "deep" / "out"
    with pytest.raises(BspFormatError, match="b.wav"):
        Pakfile(bytes(data)).extract_all(out)
    assert list(tmp_path.iterdir()) == []  # no folder, no temporary folder left beside it


def test_extract_chosen_files(tmp_path: Path) -> None:
    pak = two_files()
    assert pak.extract_all(tmp_path / "n", names=["SOUND\\B.WAV"]) == [tmp_path / "n" / "sound" / "b.wav"]
    assert pak.extract_all(tmp_path / "p", patterns=["materials/*.VMT"]) == [tmp_path / "p" / "materials" / "a.vmt"]
    assert pak.extract_all(tmp_path / "none", patterns=["*.mdl"]) == []
    with pytest.raises(KeyError):
        pak.extract_all(tmp_path / "k", names=["missing.txt"])


def test_extract_entries_that_clash(tmp_path: Path) -> None:
    pak = Pakfile(archive(("a", b"file", zipfile.ZIP_STORED), ("a/b", b"under a file", zipfile.ZIP_STORED)))
    with pytest.raises(BspFormatError, match="clashes"):
        pak.extract_all(tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_extract_respects_limits(tmp_path: Path) -> None:
    with pytest.raises(LimitExceededError):
        two_files().extract_all(tmp_path / "out", limits=PakLimits(max_total_size=5))
    assert list(tmp_path.iterdir()) == []


def test_rewriting_a_changed_pakfile_is_held_to_the_limits() -> None:
    pak = Pakfile(archive(("big.bin", bytes(range(256)) * 8192, zipfile.ZIP_STORED)))
    pak.limits = PakLimits(max_total_size=MIB)
    pak.add("new.txt", b"new")
    with pytest.raises(LimitExceededError, match="max_total_size"):
        pak.to_bytes()
    with pytest.raises(LimitExceededError):
        pak.set_compression("lzma")
    pak.limits = PakLimits()
    assert Pakfile(pak.to_bytes()).read("big.bin") == bytes(range(256)) * 8192


def test_lzma_dictionary_limit() -> None:
    data = bytearray(archive(("sound/a.raw", bytes(5000), zipfile.ZIP_LZMA)))
    pak = Pakfile(bytes(data))
    assert pak.read("sound/a.raw") == bytes(5000)
    # The entry's data: LZMA SDK version (2), properties size (2), lc/lp/pb (1), dictionary size (4).
    start = data.find(b"PK\x03\x04") + 30 + len("sound/a.raw")
    assert struct.unpack_from("<H", data, start + 2)[0] == 5
    assert struct.unpack_from("<I", data, start + 5)[0] <= 64 * MIB
    struct.pack_into("<I", data, start + 5, 0xFFFF0000)
    with pytest.raises(LimitExceededError, match="LZMA dictionary of 4294901760") as info:
        Pakfile(bytes(data)).read("sound/a.raw")
    assert info.value.limit == "max_dictionary_size"

"""Files that are not Source maps: named in one line, a NotSourceMapError (exit 1 in the CLI)."""
from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp.formats import describe_foreign
from sourcebsp.header import read_header

from .conftest import CORPUS, IN_CI

OTHER = sorted((CORPUS / "other-engines").glob("*.bsp"))

# The corpus names each file after its game (corpus README); what the header must be called.
_BY_PREFIX = {
    "quake1_": "a Quake (BSP 29) map",
    "quake2_": "a Quake 2 (IBSP 38) map",
    "quake3_": "a Quake 3 (IBSP 46) map",
    "remakequake_bsp2_": "a Quake BSP2 map",
    "titanfall2_": "a Titanfall 2 (rBSP 37) map",
}


def _expected(path: Path) -> str:
    return next(text for prefix, text in _BY_PREFIX.items() if path.name.startswith(prefix))


def _other_maps() -> list:
    if not OTHER:
        if IN_CI:
            raise RuntimeError(f"CI=true but {CORPUS / 'other-engines'} has no maps")
        return [pytest.param(None, marks=pytest.mark.skip(reason="no other-engines corpus"))]
    return [pytest.param(p, id=p.stem) for p in OTHER]


@pytest.mark.parametrize("path", _other_maps())
def test_other_engine_maps_are_named(path: Path) -> None:
    # The Source container names them all; sourcebsp.open reads rBSP 29/37 (tests/test_respawn.py).
    with pytest.raises(sourcebsp.NotSourceMapError) as info:
        sourcebsp.BspFile.open(path)
    message = str(info.value)
    assert message.startswith(_expected(path) + ":")
    assert "sourcebsp reads Source engine maps" in message
    assert isinstance(info.value, sourcebsp.UnsupportedError) and info.value.offset == 0


# info, entities, export, repack and decompile read Titanfall's rBSP (tests/test_respawn*.py,
# tests/converters/test_vmf_respawn.py); for the other engines' maps each command names the format.
_CLI_CASES = [pytest.param(p.values[0], command, id=f"{p.id}-{command}", marks=p.marks)
              for p in _other_maps() for command in ["info", "entities", "export", "repack", "decompile"]
              if p.values[0] is None or not (p.values[0].name.startswith("titanfall")
                                             and command in ("info", "entities", "export", "repack", "decompile"))]


@pytest.mark.parametrize("path, command", _CLI_CASES)
def test_cli_says_one_line_and_exits_1(path: Path, command: str, tmp_path: Path) -> None:
    out = {"export": ["-o", str(tmp_path / "x.glb")], "repack": ["-o", str(tmp_path / "x.bsp")],
           "decompile": ["-o", str(tmp_path / "x.vmf")]}.get(command, [])
    done = subprocess.run([sys.executable, "-m", "sourcebsp", command, str(path), *out],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and _expected(path) in lines[0], done.stderr
    assert "Traceback" not in done.stderr and not list(tmp_path.iterdir())


def _head(ident: bytes, version: int) -> bytes:
    return ident + struct.pack("<i", version) + bytes(2000)


@pytest.mark.parametrize("data, expected", [
    (struct.pack("<i", 30) + bytes(2000), "a GoldSrc (BSP 30) map: sourcebsp reads Source engine maps"),
    (struct.pack("<i", 29) + bytes(2000), "a Quake (BSP 29) map"),
    (_head(b"IBSP", 38), "a Quake 2 (IBSP 38) map"),
    (_head(b"IBSP", 46), "a Quake 3 (IBSP 46) map"),
    (_head(b"IBSP", 47), "IBSP 47"),
    (_head(b"IBSP", 12), "an IBSP map of version 12"),
    (b"BSP2" + bytes(2000), "a Quake BSP2 map"),
    (b"2PSB" + bytes(2000), "BSP2 (2PSB)"),
    (_head(b"rBSP", 29), "a Titanfall (rBSP 29) map"),
    (_head(b"rBSP", 37), "a Titanfall 2 (rBSP 37) map"),
    (_head(b"rBSP", 47), "an Apex Legends (rBSP 47) map"),
    (_head(b"rBSP", 50), "an Apex Legends (rBSP 50) map"),
    (b"BZh91AY&SY" + bytes(100), "bzip2"),
    (b"PK\x03\x04" + bytes(100), "ZIP archive"),
    (b"\x34\x12\xaa\x55" + bytes(100), "VPK"),
    (b"\xef\xbb\xbfversioninfo\n{\n" + bytes(10), ".vmf"),
])
def test_synthetic_headers_are_named(data: bytes, expected: str) -> None:
    with pytest.raises(sourcebsp.NotSourceMapError, match="sourcebsp reads Source engine maps") as info:
        read_header(data)
    assert expected in str(info.value)
    assert "\n" not in str(info.value) and "file offset" not in str(info.value)


@pytest.mark.parametrize("head", [b"VBSP" + struct.pack("<i", 20), b"PSBV" + struct.pack(">i", 20),
                                  b"ZBSP" + bytes(8), struct.pack("<i", 31) + bytes(8), b""])
def test_source_maps_and_unknown_bytes_are_not_named(head: bytes) -> None:
    assert describe_foreign(head) is None


def test_unknown_bytes_still_report_the_ident() -> None:
    with pytest.raises(sourcebsp.UnsupportedError, match="ZBSP") as info:
        read_header(b"ZBSP" + bytes(2000))
    assert not isinstance(info.value, sourcebsp.NotSourceMapError)

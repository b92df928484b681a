"""The Dota 2 betas (BSP 22, 23) and the leaked Half-Life 2 beta (BSP 17, 18) on a map with what the
example room lacks: tf2_test2.bsp (3 displacements, 2 overlays) carried over into each layout.

Their structs are held to BSPSource's read order in tests/codecs/test_dtypes.py; here the whole map:
the branch told from the file by its record sizes, every lump written back byte for byte, and the
decompiled VMF the same as the Orange Box original's (the fields these branches changed are read
where they moved to)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp.cli import main
from sourcebsp.converters.vmf import decompile_text
from sourcebsp.examples.branches import branch_bytes, example_branch_bytes

from .conftest import CORPUS

MAP = CORPUS / "tf2_test2.bsp"
CASES = [("dota2_v22", 22), ("dota2_v23", 23), ("hl2_beta", 17), ("hl2_beta", 18)]


@pytest.fixture(scope="module")
def original() -> sourcebsp.BspFile:
    if not MAP.exists():
        pytest.skip("corpus map missing")
    return sourcebsp.BspFile.from_bytes(MAP.read_bytes())


@pytest.fixture(scope="module")
def carried(original: sourcebsp.BspFile) -> dict[tuple[str, int], bytes]:
    return {(name, version): branch_bytes(original, name, bsp_version=version) for name, version in CASES}


@pytest.mark.parametrize("name, version", CASES)
def test_told_by_record_sizes_and_written_back(name: str, version: int, carried: dict[tuple[str, int], bytes]) -> None:
    data = carried[(name, version)]
    assert int.from_bytes(data[4:8], "little") == version
    with sourcebsp.BspFile.from_bytes(data) as bsp:
        # INFRA (22), Vampire (17) and Source 2004 (18) share these headers: the disp info, overlay
        # and face records (180/184, 356, 68/72 bytes) divide only this branch's lumps.
        assert bsp.variant.name == name and bsp.variant_alternatives == ()
        assert bsp.to_bytes() == data and bsp.to_bytes(reencode=True) == data


@pytest.mark.parametrize("name, version", CASES)
def test_changed_lumps_hold_the_original_values(name: str, version: int, original: sourcebsp.BspFile,
                                                carried: dict[tuple[str, int], bytes]) -> None:
    sizes = {"dota2_v22": (180, 356, 56), "dota2_v23": (184, 356, 56), "hl2_beta": (176, 352, 72)}[name]
    if (name, version) == ("hl2_beta", 17):
        sizes = (172, 352, 68)
    with sourcebsp.BspFile.from_bytes(carried[(name, version)]) as bsp:
        assert (bsp.dispinfo.dtype.itemsize, bsp.overlays.dtype.itemsize, bsp.faces.dtype.itemsize) == sizes
        assert len(bsp.dispinfo) == len(original.dispinfo) == 3 and len(bsp.overlays) == len(original.overlays) == 2
        for lump in ("DISPINFO", "OVERLAYS", "FACES", "ORIGINALFACES"):
            ours, theirs = bsp.get_lump(lump), original.get_lump(lump)
            common = [n for n in theirs.dtype.names if n in ours.dtype.names and n != "padding"]
            assert len(common) >= len(theirs.dtype.names) - 3, lump  # at most tri start, prims, padding left out
            for field in common:
                np.testing.assert_array_equal(ours[field], theirs[field], err_msg=f"{lump}.{field}")


_TAG_ROWS = re.compile(r'^\s*"row\d+" "[0-9 ]+"$')


def _without_triangle_tags(text: str) -> list[str]:
    """The VMF's lines but those of its ``triangle_tags`` blocks (the HL2 beta's BSP 17 has none)."""
    lines, out, skipping = text.splitlines(), [], False
    for line in lines:
        if line.strip() == "triangle_tags":
            skipping = True
        elif skipping and line.strip() == "}":
            skipping = False
            continue
        if not skipping:
            out.append(line)
    return out


@pytest.mark.parametrize("name, version", CASES)
def test_decompiles_as_the_original(name: str, version: int, original: sourcebsp.BspFile,
                                    carried: dict[tuple[str, int], bytes]) -> None:
    # Props left out: the HL2 beta's v4 static props lack the later keys (fade scale, DX levels).
    want, _ = decompile_text(original, props=False)
    with sourcebsp.BspFile.from_bytes(carried[(name, version)]) as bsp:
        got, stats = decompile_text(bsp, props=False)
    assert stats.overlays == 2 and got.count("dispinfo") == want.count("dispinfo") == 3
    if (name, version) == ("hl2_beta", 17):
        assert "triangle_tags" in got and any(_TAG_ROWS.match(line) and set(line.split('"')[3]) - {"0", " "}
                                              for line in want.splitlines())
        assert _without_triangle_tags(got) == _without_triangle_tags(want)
    else:
        assert got == want


def test_the_room_cannot_tell_dota2_v22_from_infra(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The room has no disp infos or overlays, the only lumps whose size tells BSP 22's branches apart:
    the more common one is read, and ``info`` says it guessed."""
    path = tmp_path / "room22.bsp"
    path.write_bytes(example_branch_bytes("dota2_v22"))
    with sourcebsp.open(path) as bsp:
        assert bsp.variant.name == "infra" and bsp.variant_alternatives == ("dota2_v22",)
    assert main(["info", str(path)]) == 0
    assert "guessed: the file cannot tell it from dota2_v22" in capsys.readouterr().out


def test_vampire_map_is_not_the_hl2_beta() -> None:
    """A real Bloodlines map (104-byte faces) is read as Vampire with no doubt left: its face lump is
    no whole number of the beta's 68-byte faces."""
    path = CORPUS / "vtmb_sp_genesisdevice_1.bsp"
    if not path.exists():
        pytest.skip("corpus map missing")
    with sourcebsp.open(path) as bsp:
        assert bsp.entry("FACES").filelen % 68 and not bsp.entry("FACES").filelen % 104
        assert bsp.variant.name == "vampire" and bsp.variant_alternatives == ()


def test_hl2_beta_example_at_bsp_17(tmp_path: Path) -> None:
    """The beta's BSP 17 room: its own faces, read by name or detected, decompiled."""
    path = tmp_path / "beta17.bsp"
    path.write_bytes(example_branch_bytes("hl2_beta", bsp_version=17))
    with sourcebsp.open(path) as bsp:
        assert bsp.version == 17 and bsp.variant.name == "hl2_beta" and bsp.variant_alternatives == ()
        assert bsp.faces.dtype.itemsize == 68 and "num_prims" not in (bsp.faces.dtype.names or ())
    with sourcebsp.open(path, variant="hl2_beta") as bsp:
        assert bsp.faces.dtype.itemsize == 68  # the BSP 17 table, named or detected
    out = tmp_path / "repack.bsp"
    assert main(["repack", str(path), "-o", str(out), "--reencode"]) == 0
    assert out.read_bytes() == path.read_bytes()
    assert main(["decompile", str(path), "-o", str(tmp_path / "beta17.vmf")]) == 0
    assert (tmp_path / "beta17.vmf").read_text().count("solid\n") >= 7

"""Variants: table-driven detection, choosing one by name, registering codecs and variants."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import sourcebsp
from sourcebsp import BspFile, LumpId
from sourcebsp import variants as variants_module
from sourcebsp.codecs.base import LumpContext
from sourcebsp.header import HEADER_SIZE, Header, LumpEntry
from sourcebsp.detection import detect_variant
from sourcebsp.variants import VARIANTS, DetectRule, LazyLayouts, variant_names

from .conftest import CORPUS

CORPUS_README = CORPUS / "README.md"


@pytest.fixture
def registry() -> Iterator[None]:
    """Put the registry back as it was after a test that registers things."""
    saved_variants = dict(variants_module._variants)
    saved_rules = list(variants_module._user_rules)
    yield
    variants_module._variants.clear()
    variants_module._variants.update(saved_variants)
    variants_module._user_rules[:] = saved_rules


# Which variant each (version, byte order, lump_t order) gets: from the engine branches' facts.
EXPECTED = [
    (17, "<", "std", "vampire"),
    (18, "<", "std", "source2004"),
    (19, "<", "std", "source2004"),
    (20, "<", "std", "orange_box"),
    (20, ">", "std", "orange_box_x360"),
    (21, "<", "std", "csgo"),
    (21, "<", "l4d2", "left4dead2"),
    (21, ">", "std", "console_v21"),
    (22, "<", "std", "infra"),
    (23, "<", "std", "dota2_v23"),
    (24, "<", "std", "v24"),
    (25, "<", "std", "strata"),
    (42, "<", "std", "v42"),
]


@pytest.mark.parametrize(("version", "endian", "order", "name"), EXPECTED)
def test_detection_table(version: int, endian: str, order: str, name: str) -> None:
    header = Header(ident=b"VBSP" if endian == "<" else b"PSBV", version=version, lump_order=order)  # type: ignore[arg-type]
    assert detect_variant(header).name == name


@pytest.mark.parametrize("version", [16, 26, 28, 29, 41, 43])
def test_versions_without_a_rule_are_not_guessed(version: int) -> None:
    with pytest.raises(sourcebsp.UnsupportedError, match=f"BSP version {version}"):
        detect_variant(Header(version=version))
    data = bytearray(BspFile().to_bytes())
    data[4:8] = version.to_bytes(4, "little")
    with pytest.raises(sourcebsp.UnsupportedError, match=f"BSP version {version}"):
        BspFile.from_bytes(data)


def test_corpus_maps_get_the_variant_of_their_header(map_path: Path) -> None:
    """The corpus README's ident/version/lump_t columns, read independently, pick the variant."""
    row = next(line for line in CORPUS_README.read_text().splitlines() if f"`{map_path.name}`" in line)
    cells = [c.strip() for c in row.split("|")]
    ident, version, endian = re.match(r"(\w+) (\d+) (LE|BE)", cells[3]).groups()  # type: ignore[union-attr]
    expected = next(e[3] for e in EXPECTED if e[0] == int(version) and e[1] == ("<" if endian == "LE" else ">")
                    and e[2] in (cells[4], "std") and (e[2] == cells[4] or int(version) != 21 or endian == "BE"))
    with sourcebsp.open(map_path) as bsp:
        assert bsp.variant.name == expected


def test_open_with_a_named_variant(corpus_file) -> None:
    path = corpus_file("csgo_2000.bsp")
    with sourcebsp.open(path) as bsp:
        assert bsp.variant.name == "csgo"
        assert len(bsp.get_lump(LumpId.PROPCOLLISION)) > 0
    with sourcebsp.open(path, variant="left4dead2") as bsp:
        assert bsp.variant is VARIANTS["left4dead2"]
        # Left 4 Dead 2 uses slots 22-25 for other records than CS:GO.
        with pytest.raises(sourcebsp.LumpSizeError, match="PROPCOLLISION"):
            bsp.get_lump(LumpId.PROPCOLLISION)
    with pytest.raises(ValueError, match="unknown variant 'nope'.*orange_box"):
        sourcebsp.open(path, variant="nope")


def test_a_named_variant_reads_a_version_no_rule_knows(corpus_file) -> None:
    data = bytearray(corpus_file("tf2_mp_lobby.bsp").read_bytes())
    data[4:8] = (27).to_bytes(4, "little")
    with pytest.raises(sourcebsp.UnsupportedError):
        BspFile.from_bytes(data)
    bsp = BspFile.from_bytes(data, variant="orange_box")
    assert bsp.version == 27 and len(bsp.planes) > 0
    assert bsp.to_bytes() == bytes(data)


def test_variant_names_are_the_registry_keys() -> None:
    assert variant_names() == list(VARIANTS)
    assert "orange_box" in variant_names() and "strata" in variant_names()


def test_registering_a_variant_adds_a_detection_rule(registry: None) -> None:
    mine = VARIANTS["orange_box"].renamed("contagion_like", "A game on BSP 27")
    sourcebsp.register_variant(mine, versions=[27])
    assert detect_variant(Header(version=27)) is mine
    assert detect_variant(Header(version=20)).name == "orange_box"  # built-ins still apply
    assert 27 in variants_module.supported_versions()
    assert variants_module.detection_rules()[0] == DetectRule("contagion_like", frozenset({27}))
    bsp = BspFile(Header(version=27))
    assert bsp.variant is mine


class _Doubled:
    """A codec from outside the package: the lump's bytes, twice (to tell it apart)."""

    mutable = False

    def decode(self, data: memoryview, ctx: LumpContext) -> bytes:
        return bytes(data) * 2

    def encode(self, value: Any, ctx: LumpContext) -> bytes:
        return bytes(value[: len(value) // 2])

    def count(self, value: Any) -> int:
        return len(value) // 2


def test_registering_a_codec_replaces_variants_without_changing_them(registry: None) -> None:
    before = VARIANTS["orange_box"]
    sourcebsp.register_codec(LumpId.PHYSLEVEL, None, _Doubled(), variants=["orange_box"])
    after = VARIANTS["orange_box"]
    assert after is not before and before.codec(LumpId.PHYSLEVEL, 0) is None  # the old value is intact
    assert isinstance(after.codec(LumpId.PHYSLEVEL, 5), _Doubled)
    assert VARIANTS["csgo"].codec(LumpId.PHYSLEVEL, 0) is None
    lumps = [LumpEntry()] * 64
    lumps[LumpId.PHYSLEVEL] = LumpEntry(HEADER_SIZE, 4, 0, 0)
    bsp = BspFile.from_bytes(Header(lumps=lumps).to_bytes() + b"abcd")
    assert bsp.physlevel == b"abcdabcd"
    assert bsp.to_bytes()[HEADER_SIZE:] == b"abcd"


def test_registering_a_dtype_codec_for_all_variants(registry: None) -> None:
    record = np.dtype([("a", "<i4"), ("b", "<f4")])
    sourcebsp.register_codec(LumpId.DISP_MULTIBLEND, 0, record)
    assert all(v.codec(LumpId.DISP_MULTIBLEND, 0) is not None for v in VARIANTS.values())
    big = VARIANTS["orange_box_x360"].codec(LumpId.DISP_MULTIBLEND, 0)
    assert big is not None and big.dtype["a"].byteorder == ">"  # type: ignore[attr-defined]


def test_registry_is_not_changed_by_importing() -> None:
    """Only the hooks change the registry: a fresh interpreter sees the built-in table."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    script = ("import sourcebsp.variants as v, sourcebsp.cli, sourcebsp.converters;"
              "print(len(v._user_rules), sorted(v.VARIANTS) == sorted(x.name for x in v._BUILTIN))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(root / "src"), "PATH": ""}).stdout
    assert out.split() == ["0", "True"]


def test_found_codecs_follow_their_table_and_stay_bounded() -> None:
    """Codec lookups are kept per layout table: a variant made with another codec finds that
    one, the first still finds its own, and junk lump versions from files do not pile up."""
    from sourcebsp import variants
    from sourcebsp.codecs.arrays import ArrayCodec

    base = variants.get_variant("orange_box")
    before = base.codec(LumpId.PLANES, 0)
    other = ArrayCodec(np.dtype([("a", "<i4")]))
    changed = base.with_codec(LumpId.PLANES, 0, other)
    assert changed.codec(LumpId.PLANES, 0) is other
    assert base.codec(LumpId.PLANES, 0) is before
    for junk in range(2 * variants._MAX_FOUND_CODECS):
        base.codec(LumpId.PLANES, 1000 + junk)
    assert len(variants._found_codecs) <= variants._MAX_FOUND_CODECS
    assert base.codec(LumpId.PLANES, 0) is before


def test_composed_tables_share_the_lumps_no_override_touches() -> None:
    """A branch built from another keeps the other's read-only version table for every lump
    it does not override (one object, not a copy), and its own merged table for the rest."""
    from types import MappingProxyType

    from sourcebsp import variants
    from sourcebsp.codecs import brushes, records, tables, tree

    built = tables.tables()
    sdk, source2004, l4d2 = built["SDK2013"], built["SOURCE2004"], built["LEFT4DEAD2"]
    assert isinstance(sdk, MappingProxyType) and all(isinstance(v, MappingProxyType) for v in sdk.values())
    overridden = set(brushes.LAYOUTS_V19) | set(tree.LAYOUTS_V19) | set(records.PHYSICS_V19)
    assert all(source2004[lump] is not sdk[lump] for lump in overridden & set(sdk))
    assert all(source2004[lump][v] is codec for lump in brushes.LAYOUTS_V19
               for v, codec in brushes.LAYOUTS_V19[lump].items())
    removed = tables.RECIPES["SOURCE2004"].remove
    untouched = set(sdk) - overridden - set(removed)
    assert LumpId.PLANES in untouched and all(source2004[lump] is sdk[lump] for lump in untouched)
    assert removed and all(lump not in source2004 for lump in removed)
    assert all(l4d2[lump] is sdk[lump] for lump in sdk if lump not in records.PROPCOLLISION_L4D2)
    # Tables from plain dicts are copied: changing the dict later changes no table.
    mine: dict[int, dict[Any, np.dtype]] = {LumpId.PLANES: {0: np.dtype("<f4")}}
    composed = variants.compose(mine)
    mine[LumpId.PLANES][1] = np.dtype("<f8")
    assert list(composed[LumpId.PLANES]) == [0]
    with pytest.raises(TypeError):
        composed[LumpId.PLANES][2] = np.dtype("<i4")  # type: ignore[index]


def test_every_variant_reads_with_a_built_in_table_or_its_own() -> None:
    """The table names are the recipes' (no second list): every built-in branch names one."""
    from sourcebsp.codecs import tables

    assert set(tables.tables()) == set(tables.RECIPES) == set(tables.names())
    named = {v.layouts.table for v in VARIANTS.values() if isinstance(v.layouts, LazyLayouts)}
    named |= {t.table for v in VARIANTS.values() for t in v.version_layouts.values() if isinstance(t, LazyLayouts)}
    assert named == set(tables.RECIPES)


def test_lumps_read_before_the_tables_are_built_are_those_of_every_table() -> None:
    """Entities, the pakfile and the game lump are read from their own modules until the tables
    are built (so that reading them, or saving after an edit, imports no other codec): the parts
    of a table's recipe from that module alone must give the very same versions and codecs as the
    whole table, or the answer would change once the tables are built."""
    from sourcebsp.codecs import tables

    assert set(tables.SOLE_MODULES) == {LumpId.ENTITIES, LumpId.PAKFILE, LumpId.GAME_LUMP}
    for name, table in tables.tables().items():
        for lump in tables.SOLE_MODULES:
            if lump not in table:  # rBSP: its pakfile and game lump are kept as bytes
                with pytest.raises(KeyError):
                    tables.sole_versions(name, lump)
                continue
            sole = tables.sole_versions(name, lump)
            assert dict(table[lump]) == dict(sole), (name, lump)
            assert all(table[lump][version] is codec for version, codec in sole.items())
    # Dark Messiah's own game lump directory is found from gamelumps' parts alone.
    assert tables.sole_versions("DARK_MESSIAH", LumpId.GAME_LUMP) != tables.sole_versions("SDK2013", LumpId.GAME_LUMP)
    # A built-in variant finds the same codec object whether it asked before or after the build.
    for variant in VARIANTS.values():
        if not isinstance(variant.layouts, LazyLayouts):
            continue
        for lump in tables.SOLE_MODULES:
            if lump in tables.table(variant.layouts.table):
                sole = tables.sole_versions(variant.layouts.table, lump)
                assert variant.codec(lump, 0) is tables.resolve(sole, 0)


def test_only_the_sole_module_lumps_of_the_built_in_tables_hold_file_offsets() -> None:
    """``Variant.relocator`` answers a built-in table without composing it, from
    ``SOLE_MODULES``: no other lump of any table may have a codec with ``relocated``."""
    from sourcebsp import variants
    from sourcebsp.codecs import tables
    from sourcebsp.codecs.base import Deferred

    holders = {(name, lump) for name, table in tables.tables().items() for lump, versions in table.items()
               for codec in versions.values()
               if hasattr(codec.codec() if isinstance(codec, Deferred) else codec, "relocated")}
    assert {lump for _, lump in holders} == {LumpId.GAME_LUMP, LumpId.PAKFILE}
    for variant in variants._BUILTIN:
        for lump in LumpId:
            found = variant.relocator(lump, 0)
            codec = variant.codec(lump, 0)
            assert found == getattr(codec, "relocated", None), (variant.name, lump)
    # A table composed with one's own codec is asked, whatever the lump.
    class Moving:
        def decode(self, data: memoryview, ctx: Any) -> bytes:
            return bytes(data)

        def encode(self, value: bytes, ctx: Any) -> bytes:
            return value

        def count(self, value: bytes) -> None:
            return None

        def relocated(self, data: memoryview, ctx: Any, file_offset: int) -> bytes:
            return bytes(data)

    mine = variants.VARIANTS["orange_box"].with_codec(LumpId.OCCLUSION, 2, Moving())
    assert mine.relocator(LumpId.OCCLUSION, 2) is not None
    assert variants.VARIANTS["orange_box"].relocator(LumpId.OCCLUSION, 2) is None


def test_bsp_27_without_lumps_is_contagion_whatever_the_order() -> None:
    """A directory with no lump of data cannot show Left 4 Dead 2's lump_t order, which
    Contagion's rule asks for: BSP 27 names the branch, and the file is written back as read."""
    for order in ("std", "l4d2"):
        data = BspFile(Header(version=27, lump_order=order)).to_bytes()
        bsp = BspFile.from_bytes(data)
        assert bsp.variant.name == "contagion" and bsp.to_bytes() == data
    with pytest.raises(sourcebsp.UnsupportedError, match="BSP version 27"):  # data in the standard order
        detect_variant(Header(version=27, lumps=[LumpEntry(1036, 4)] + [LumpEntry()] * 63))


# ---- detection by record sizes ------------------------------------------------------------------
def _header_with(version: int, **lengths: int) -> Header:
    sizes = {LumpId[name]: length for name, length in lengths.items()}
    return Header(version=version, lumps=[LumpEntry(fileofs=HEADER_SIZE if i in sizes else 0, filelen=sizes.get(i, 0))
                                          for i in range(len(LumpId))])


def test_record_sizes_tell_branches_sharing_a_header() -> None:
    from sourcebsp.detection import detect, refine_by_sizes

    # BSP 22: INFRA's 176-byte disp infos or Dota 2's 180-byte ones (BSPSource's DDispInfoBSP22).
    assert detect(_header_with(22)).variant.name == "infra"
    told = refine_by_sizes(detect(_header_with(22, DISPINFO=180 * 3)), _header_with(22, DISPINFO=180 * 3))
    assert (told.variant.name, told.alternatives) == ("dota2_v22", ())
    kept = refine_by_sizes(detect(_header_with(22, DISPINFO=176 * 3)), _header_with(22, DISPINFO=176 * 3))
    assert (kept.variant.name, kept.alternatives) == ("infra", ())
    # 180 x 44 = 176 x 45: a length both divide tells nothing.
    both = _header_with(22, DISPINFO=7920)
    assert refine_by_sizes(detect(both), both).alternatives == ("dota2_v22",)
    # BSP 17: Vampire's 104-byte faces, the HL2 beta's 68; 17 x 104 = 26 x 68 divides by both.
    for faces, want in ((104 * 5, ("vampire", ())), (68 * 5, ("hl2_beta", ())), (17 * 104, ("vampire", ("hl2_beta",)))):
        header = _header_with(17, FACES=faces)
        found = refine_by_sizes(detect(header), header)
        assert (found.variant.name, found.alternatives) == want, faces
    # A damaged lump no branch's records divide: the header's guess stands.
    header = _header_with(18, FACES=57)
    assert refine_by_sizes(detect(header), header) == detect(header)


def test_register_codec_reaches_every_bsp_version_of_a_branch() -> None:
    Lump = LumpId
    beta = VARIANTS["hl2_beta"].with_codec(Lump.CUBEMAPS, 0, np.dtype([("x", "<i4")]))
    for version in (17, 18):
        codec = beta.at_version(version).codec(Lump.CUBEMAPS, 0)
        assert codec is not None and getattr(codec, "dtype").itemsize == 4, version
    assert beta.at_version(17).codec(Lump.FACES, 0).dtype.itemsize == 68  # type: ignore[union-attr]
    assert beta.at_version(18).codec(Lump.FACES, 0).dtype.itemsize == 72  # type: ignore[union-attr]

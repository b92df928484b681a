"""One home for what a branch is: every branch fact elsewhere derives from the Variant table."""
from __future__ import annotations

import ast
import struct
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp import BspFile, detection, header, variants, writeplan
from sourcebsp.cli import _common
from sourcebsp.content import branches
from sourcebsp.converters.vmf.textures import TOOL_TEXTURES, game_of
from sourcebsp.header import Header
from sourcebsp.lump_ids import LumpId
from sourcebsp.variants import VARIANTS

SRC = Path(variants.__file__).resolve().parent

# The branch names of issue 26 that have their reading today (see docs/branches.md's branch table
# for the rest): each is a key of the registry.
NAMED = ["vampire", "source2004", "orange_box", "orange_box_x360", "left4dead", "left4dead2", "csgo",
         "alien_swarm", "portal2", "strata", "the_ship", "zeno_clash", "black_mesa", "infra", "dota2_v22",
         "dota2_v23", "dark_messiah", "vindictus", "source_xbox", "contagion", "tactical_intervention",
         "hl2_beta", "titanfall", "titanfall2"]


def test_issue_names_are_registered() -> None:
    assert set(NAMED) <= set(sourcebsp.variant_names())


def test_no_parallel_tables_remain() -> None:
    """The old second lists are gone: the header's version set, the write plan's
    never-compressed set, the detection rules written by hand."""
    assert not hasattr(header, "SUPPORTED_VERSIONS")
    assert not hasattr(writeplan, "_NEVER_COMPRESSED")
    derived = {(r.variant, r.versions, r.endian, r.lump_order) for r in variants._BUILTIN_RULES}
    table = {(v.name, v.versions, v.endian, v.lump_order) for v in variants._BUILTIN
             if v.detected and v.container == "source"}
    assert derived == table
    # rBSP headers are not dheader_t: their branches are told by ident and version alone.
    respawn = {v.name: v.versions for v in variants._BUILTIN if v.container == "respawn"}
    assert respawn == {"titanfall": {29}, "titanfall2": {37}}
    for name, versions in respawn.items():
        head = b"rBSP" + struct.pack("<i", min(versions))
        assert detection.detect_respawn(head) is VARIANTS[name]
    assert detection.detect_respawn(b"rBSP" + struct.pack("<i", 47)) is None  # Apex Legends
    assert detection.detect_respawn(b"VBSP" + struct.pack("<i", 29)) is None


def _literal_sets_of_versions(tree: ast.AST) -> list[ast.AST]:
    """Literal sets, lists or tuples of three or more BSP version numbers (17..42)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
            if len(values) >= 3 and len(values) == len(node.elts) and all(17 <= v <= 42 for v in values) \
                    and len(set(values)) == len(values) and sorted(values) == values:
                found.append(node)
    return found


def test_no_module_but_variants_lists_bsp_versions_or_branch_names() -> None:
    """A list of BSP versions, or a literal naming three or more branches, anywhere but the
    branch table is a second table that will drift."""
    names = set(VARIANTS)
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "variants.py" and path.parent == SRC:
            continue
        tree = ast.parse(path.read_text())
        offenders += [f"{path.name}:{n.lineno}" for n in _literal_sets_of_versions(tree)]  # type: ignore[attr-defined]
        for node in ast.walk(tree):
            if isinstance(node, (ast.Set, ast.List, ast.Tuple, ast.Dict)):
                elts = node.keys if isinstance(node, ast.Dict) else node.elts
                hits = [e.value for e in elts if isinstance(e, ast.Constant) and e.value in names]
                if len(hits) >= 3:
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_supported_versions_are_the_tables() -> None:
    table = frozenset().union(*(v.versions for v in variants._BUILTIN if v.detected and v.container == "source"))
    assert variants.supported_versions() == table
    for version in range(0, 64):
        data = bytearray(BspFile().to_bytes())
        data[4:8] = struct.pack("<i", version)
        if version in table:
            assert BspFile.from_bytes(data).version == version
        else:
            with pytest.raises(sourcebsp.UnsupportedError, match=f"BSP version {version} "):
                BspFile.from_bytes(data)


def test_content_branches_are_the_games_of_the_table() -> None:
    games = {game.id: game for v in VARIANTS.values() for game in v.games}
    assert branches.BRANCHES == games
    assert all(branches.BRANCHES[g.id] is g for v in VARIANTS.values() for g in v.games)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_facts_derive_from_the_variant(name: str) -> None:
    variant = VARIANTS[name]
    if variant.container == "respawn":  # its own container: the header of codecs.respawn
        from sourcebsp.codecs import respawn

        assert variant.ident == respawn.IDENT and variant.lump_count == respawn.NUM_LUMPS == 128
        assert variant.loads_lzma is False and not variant.static_prop_versions
        with pytest.raises(sourcebsp.UnsupportedError, match=r"sourcebsp\.open\(path\)"):
            BspFile(variant=variant)
        return
    version = min(variant.versions) if variant.versions else 20
    bsp = BspFile(Header(ident=variant.ident, version=version, lump_order=variant.lump_order or "std"),
                  variant=variant)
    # The CLI's --compress refusal: exactly the branches whose games do not load LZMA lumps.
    refused = _common.lzma_refusal(bsp) is not None
    assert refused == (variant.loads_lzma is False)
    # The decompiler's tool textures.
    assert game_of(bsp) == variant.tool_textures and variant.tool_textures in TOOL_TEXTURES
    # The header: its ident gives its byte order, its lump count is dheader_t's.
    assert header.IDENTS[variant.ident] == variant.endian and variant.lump_count == 64
    # The static prop versions it writes have layouts in the codec.
    from sourcebsp.codecs.staticprops import STATIC_PROP_LAYOUTS

    assert variant.static_prop_versions <= {layout.version for layout in STATIC_PROP_LAYOUTS}


def test_lzma_refusal_matches_the_games_facts() -> None:
    """Independent fact (VDC "BSP (Source)"): LZMA lumps came with BSP 20; older engines crash."""
    for variant in VARIANTS.values():
        if variant.versions and max(variant.versions) < 20:
            assert variant.loads_lzma is False, variant.name
        if variant.endian == ">":
            assert variant.loads_lzma is True, variant.name


def test_compression_never_touches_the_variant_s_exempt_lumps(corpus_file, tmp_path: Path) -> None:
    path = corpus_file("tf2_test2.bsp")
    with sourcebsp.open(path) as bsp:
        assert bsp.variant.never_lzma == {LumpId.PAKFILE, LumpId.XZIPPAKFILE, LumpId.GAME_LUMP}
        out = tmp_path / "c.bsp"
        bsp.save(out, compression="lzma")
    with sourcebsp.open(out) as written:
        compressed = {i for i, e in enumerate(written.header.lumps) if e.compressed}
        assert compressed and not compressed & written.variant.never_lzma


def test_detection_says_when_it_guessed() -> None:
    found = detection.detect(Header(version=20))
    assert found.variant.name == "orange_box" and found.guessed
    assert {"left4dead", "the_ship", "zeno_clash", "black_mesa"} <= set(found.alternatives)
    assert "orange_box_x360" not in found.alternatives  # another byte order: told by the ident
    l4d2 = detection.detect(Header(version=21, lump_order="l4d2"))
    assert l4d2.variant.name == "left4dead2" and not l4d2.guessed
    csgo = detection.detect(Header(version=21))
    assert csgo.variant.name == "csgo" and set(csgo.alternatives) == {"portal2", "alien_swarm", "dear_esther"}
    assert not detection.detect(Header(version=25)).guessed

"""The foundation's promises, on every map of the corpus."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import sourcebsp
from sourcebsp import LumpId, RawLump
from sourcebsp.codecs.arrays import ArrayCodec


def test_every_map_opens_and_decodes(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        decoded = bsp.decode_all()
        assert decoded, "a map with no lumps"
        for index, value in decoded.items():
            codec = bsp.codec(index)
            if isinstance(codec, ArrayCodec):
                # A fixed-size lump decodes to exactly length / itemsize records.
                length = len(bsp.lump_bytes(index))
                assert len(value) * codec.dtype.itemsize == length
                assert value.dtype.itemsize == codec.dtype.itemsize
                assert value.dtype.byteorder in ("=", "|", "<" if bsp.endian == "<" else ">") or \
                    value.dtype.isnative == (bsp.endian == "<")


# Lumps every Source map must decode (not stay raw) when present.
CORE_FIXED = [
    LumpId.PLANES, LumpId.VERTEXES, LumpId.EDGES, LumpId.SURFEDGES, LumpId.NODES, LumpId.LEAFS,
    LumpId.TEXINFO, LumpId.TEXDATA, LumpId.MODELS, LumpId.BRUSHES, LumpId.BRUSHSIDES,
    LumpId.LEAFFACES, LumpId.LEAFBRUSHES, LumpId.AREAS, LumpId.AREAPORTALS,
    LumpId.TEXDATA_STRING_TABLE, LumpId.TEXDATA_STRING_DATA, LumpId.LIGHTING, LumpId.LIGHTING_HDR,
    LumpId.FACES, LumpId.FACES_HDR, LumpId.ORIGINALFACES, LumpId.DISPINFO, LumpId.DISP_VERTS,
    LumpId.DISP_TRIS, LumpId.WORLDLIGHTS, LumpId.WORLDLIGHTS_HDR, LumpId.CUBEMAPS,
    LumpId.OVERLAYS, LumpId.LEAF_AMBIENT_LIGHTING, LumpId.LEAF_AMBIENT_LIGHTING_HDR,
    LumpId.MAP_FLAGS, LumpId.FACEIDS, LumpId.VERTNORMALS, LumpId.VERTNORMALINDICES,
]


def test_core_lumps_are_understood(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        for lump in CORE_FIXED:
            if bsp.entry(lump).filelen:
                assert not isinstance(bsp.get_lump(lump), RawLump), bsp.lump_name(lump)
                assert bsp.count(lump) is not None


def test_cross_references_are_in_range(map_path: Path) -> None:
    """Independent consistency facts: indices between lumps point inside their targets.

    A wrong struct layout shows up here as indices out of range.
    """
    with sourcebsp.open(map_path) as bsp:
        planes, nodes, leafs = len(bsp.planes), len(bsp.nodes), len(bsp.leafs)
        if nodes:
            assert bsp.nodes["planenum"].max() < planes
            children = bsp.nodes["children"].ravel()
            assert children.max() < nodes
            assert (-(children[children < 0] + 1)).max() < leafs
        assert bsp.brushsides["planenum"].max(initial=0) < planes
        brushes = bsp.brushes
        if len(brushes):
            assert (brushes["firstside"] + brushes["numsides"]).max() <= len(bsp.brushsides)
        edges = len(bsp.edges)
        assert np.abs(bsp.surfedges).max(initial=0) < edges
        assert bsp.edges["v"].max(initial=0) < len(bsp.vertexes)
        texinfo = bsp.texinfo
        if len(texinfo):
            used = texinfo["texdata"][texinfo["texdata"] >= 0]
            assert used.max(initial=0) < len(bsp.texdata)
        for lump in (LumpId.FACES, LumpId.FACES_HDR, LumpId.ORIGINALFACES):
            faces = bsp.get_lump(lump)
            if len(faces):
                assert (faces["firstedge"] + faces["numedges"]).max() <= len(bsp.surfedges)
                assert faces["planenum"].max() < planes
                if lump != LumpId.ORIGINALFACES:
                    # vbsp compacts texinfo after writing original faces, so their
                    # texinfo may be stale (seen on CS:GO maps); faces' must be valid.
                    assert faces["texinfo"].max() < len(texinfo)
        models = bsp.models
        assert len(models) >= 1
        faces = bsp.faces if len(bsp.faces) else bsp.faces_hdr
        assert (models["firstface"] + models["numfaces"]).max() <= len(faces)
        if len(bsp.faceids):
            assert len(bsp.faceids) == len(faces)  # one Hammer face id per face


def test_old_portal_graph_is_consistent(all_maps) -> None:
    """BSP 17-19: every cluster's portals and every portal's vertices lie inside their lumps."""
    checked = 0
    for path in all_maps:
        with sourcebsp.open(path) as bsp:
            if bsp.version >= 20 or not bsp.entry(LumpId.PROPCOLLISION).filelen:
                continue
            portals, clusters = bsp.get_lump(LumpId.PROPCOLLISION), bsp.get_lump(LumpId.PROPHULLS)
            portal_verts, cluster_portals = bsp.get_lump(LumpId.PROPHULLVERTS), bsp.get_lump(LumpId.PROPTRIS)
            assert (clusters["firstportal"] + clusters["numportals"]).max() <= len(cluster_portals)
            assert cluster_portals.max() < len(portals)
            assert (portals["firstportalvert"] + portals["numportalverts"]).max() <= len(portal_verts)
            assert portals["cluster"].max() < len(clusters)
            assert portals["planenum"].max() < len(bsp.planes)
            # Each portal joins two clusters, so it is listed twice.
            assert len(cluster_portals) == 2 * len(portals)
            checked += 1
    assert checked >= 1


def test_texture_names_are_text(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        data, table = bsp.texdata_string_data, bsp.texdata_string_table
        names = [data.at(int(offset)) for offset in table]
        assert names and all(re.fullmatch(r"[\x20-\x7e]+", name) for name in names)
        for row in bsp.texdata:
            assert 0 <= row["name_string_table_id"] < len(table)


def test_unedited_save_is_byte_identical(map_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.bsp"
    with sourcebsp.open(map_path) as bsp:
        bsp.save(out)
    assert out.read_bytes() == map_path.read_bytes()


def test_unsynced_saves_over_the_same_file_write_what_the_plan_says(map_path: Path, tmp_path: Path) -> None:
    """``save(fsync=False)`` to a new file, then an edit saved over it (swapped in where the
    system can), then the map as found again: each time exactly the planned bytes, with no
    space left reserved past them and nothing else left in the folder."""
    out = tmp_path / "out.bsp"
    with sourcebsp.open(map_path) as bsp:
        bsp.save(out, fsync=False)
        assert out.read_bytes() == map_path.read_bytes()
        bsp.entities[0]["sourcebsp_test"] = "1"
        edited = bsp.to_bytes()
        bsp.save(out, fsync=False)
        assert out.read_bytes() == edited and edited != map_path.read_bytes()
    with sourcebsp.open(map_path) as bsp:
        bsp.save(out, fsync=False)
    assert out.read_bytes() == map_path.read_bytes()
    if hasattr(out.stat(), "st_blocks"):  # the reservation covers the file and no more (4 KiB blocks)
        assert out.stat().st_blocks * 512 <= out.stat().st_size + (1 << 16)
    assert [p.name for p in tmp_path.iterdir()] == ["out.bsp"]


def test_reencoded_save_is_byte_identical(map_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.bsp"
    with sourcebsp.open(map_path) as bsp:
        bsp.save(out, reencode=True)
    assert out.read_bytes() == map_path.read_bytes()


def _contents(path: Path) -> dict[int, bytes]:
    with sourcebsp.open(path) as bsp:
        return {i: bytes(bsp.lump_bytes(i)) for i in range(64) if i != LumpId.GAME_LUMP}


def _game_lumps(path: Path) -> list[tuple[str, int, bytes]]:
    with sourcebsp.open(path) as bsp:
        return [(g.id, g.version, g.data) for g in bsp.game_lumps]


def test_compress_then_decompress_restores_contents(map_path: Path, tmp_path: Path) -> None:
    packed, unpacked = tmp_path / "packed.bsp", tmp_path / "unpacked.bsp"
    with sourcebsp.open(map_path) as bsp:
        bsp.save(packed, compression="lzma")
    with sourcebsp.open(packed) as bsp:
        for index, entry in enumerate(bsp.header.lumps):
            if entry.filelen and index not in (LumpId.PAKFILE, LumpId.GAME_LUMP):
                assert entry.compressed, bsp.lump_name(index)
        assert not bsp.entry(LumpId.PAKFILE).compressed
        assert all(g.compressed for g in bsp.game_lumps if g.data)
        bsp.save(unpacked, compression="none")
    with sourcebsp.open(unpacked) as bsp:
        assert not any(e.compressed for e in bsp.header.lumps)
        assert not any(g.compressed for g in bsp.game_lumps)
    original = _contents(map_path)
    assert _contents(packed) == original
    assert _contents(unpacked) == original
    assert _game_lumps(packed) == _game_lumps(map_path) == _game_lumps(unpacked)


# ---- counts against the compile logs of the maps built from the Hammer sources ------------

# vbsp/vrad's "Object names" table row -> lump
LOG_ROWS = {
    "models": LumpId.MODELS, "brushes": LumpId.BRUSHES, "brushsides": LumpId.BRUSHSIDES,
    "planes": LumpId.PLANES, "vertexes": LumpId.VERTEXES, "nodes": LumpId.NODES,
    "texinfos": LumpId.TEXINFO, "texdata": LumpId.TEXDATA, "dispinfos": LumpId.DISPINFO,
    "disp_verts": LumpId.DISP_VERTS, "disp_tris": LumpId.DISP_TRIS, "faces": LumpId.FACES,
    "hdr faces": LumpId.FACES_HDR, "origfaces": LumpId.ORIGINALFACES, "leaves": LumpId.LEAFS,
    "leaffaces": LumpId.LEAFFACES, "leafbrushes": LumpId.LEAFBRUSHES, "areas": LumpId.AREAS,
    "surfedges": LumpId.SURFEDGES, "edges": LumpId.EDGES, "LDR worldlights": LumpId.WORLDLIGHTS,
    "HDR worldlights": LumpId.WORLDLIGHTS_HDR, "leafwaterdata": LumpId.LEAFWATERDATA,
    "waterstrips": LumpId.PRIMITIVES, "waterverts": LumpId.PRIMVERTS,
    "waterindices": LumpId.PRIMINDICES, "cubemapsamples": LumpId.CUBEMAPS,
    "overlays": LumpId.OVERLAYS, "LDR ambient table": LumpId.LEAF_AMBIENT_INDEX,
    "HDR ambient table": LumpId.LEAF_AMBIENT_INDEX_HDR,
    "LDR leaf ambient": LumpId.LEAF_AMBIENT_LIGHTING, "HDR leaf ambient": LumpId.LEAF_AMBIENT_LIGHTING_HDR,
}
ROW = re.compile(r"^(?P<name>[A-Za-z_ ]+?)\s+(?P<count>\d+)/\d+\s+(?P<bytes>\d+)/\d+", re.M)


def test_counts_match_compile_logs(vmf_dir: Path) -> None:
    logs = sorted(vmf_dir.glob("*.log"))
    assert logs
    checked = 0
    for log in logs:
        bsp_path = vmf_dir.parent / f"{log.stem}.bsp"
        table = {m["name"].strip(): (int(m["count"]), int(m["bytes"])) for m in ROW.finditer(log.read_text("latin-1"))}
        assert "planes" in table, log
        with sourcebsp.open(bsp_path) as bsp:
            for row, lump in LOG_ROWS.items():
                if row not in table:
                    continue
                count, size = table[row]
                assert bsp.count(lump) == count, (log.name, row)
                assert len(bsp.lump_bytes(lump)) == size, (log.name, row)
                checked += 1
    assert checked >= 4 * 25


def test_brush_counts_bounded_by_hammer_sources(vmf_dir: Path) -> None:
    # Every compiled brush comes from a Hammer solid; the compiler only removes some
    # (displacement brushes, areaportal/occluder volumes) or splits none.
    for vmf in sorted(vmf_dir.glob("*.vmf")):
        bsp_path = vmf_dir.parent / f"{vmf.stem}.bsp"
        solids = len(re.findall(r"^\s*solid\s*$", vmf.read_text("latin-1"), re.M))
        with sourcebsp.open(bsp_path) as bsp:
            assert 0 < len(bsp.brushes) <= solids, vmf.name

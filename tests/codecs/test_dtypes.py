"""Every declared struct has the size bspfile.h gives it, and every layout table is sane."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from sourcebsp.codecs import brushes, displacements, geometry, records, textures, tree, zip_directory
from sourcebsp.codecs import respawn as respawn_codec
from sourcebsp.codecs.arrays import COLOR_RGB_EXP32
from sourcebsp.codecs.base import Record, fields_dtype, fields_struct, record_struct
from sourcebsp.codecs.gamelumps import GAMELUMP, GAMELUMP_FIELDS
from sourcebsp.compression import LZMA_HEADER
from sourcebsp.lumpfile import LUMPFILE_HEADER, LUMPFILE_HEADER_FIELDS
from sourcebsp.variants import VARIANTS

# Respawn's rBSP: the sizes of bsp_tool 0.7.0's struct formats (respawn.titanfall / titanfall2),
# written out here from their _format strings, not read from bsp_tool.
_TF1 = {lump: versions[None] for lump, versions in respawn_codec.LAYOUTS_TITANFALL.items()}
_TF2 = {lump: versions[None] for lump, versions in respawn_codec.LAYOUTS_TITANFALL2.items()}
RESPAWN_SIZES = {
    "Plane (rBSP, quake3.Plane 4f)": (_TF1[0x01], 16),
    "TextureData (rBSP, 3f6i)": (_TF1[0x02], 36),
    "Model (rBSP, 6f2I)": (_TF1[0x0E], 32),
    "VertexUnlit (rBSP, 2I2f4B)": (_TF1[0x47], 20),
    "VertexLitFlat (rBSP, 2I2f4B4f)": (_TF1[0x48], 36),
    "VertexLitBump (rBSP, 2I2f4B4f2i)": (_TF1[0x49], 44),
    "VertexUnlitTS (rBSP, 2I2f4B2i)": (_TF1[0x4A], 28),
    "VertexBlinnPhong (rBSP, 2I4B20f)": (_TF1[0x4B], 92),
    "Mesh (Titanfall, I4H4b2h2BHI)": (_TF1[0x50], 28),
    "Mesh (Titanfall 2, I3H6b2h2BHI)": (_TF2[0x50], 28),
    "MeshBounds (rBSP, 8f)": (_TF1[0x51], 32),
    "MaterialSort (rBSP, 4hi)": (_TF1[0x52], 12),
    "Brush (rBSP, 3f2Bh3fi)": (_TF1[0x5C], 32),
    "Grid (rBSP, f6i; MRVN-Radiant's CMGrid_t)": (_TF1[0x55], 28),
    "TextureVector (rBSP, 8f)": (_TF1[0x5F], 32),
    "GridCell (rBSP, 2H; MRVN-Radiant's CMGridCell_t)": (_TF1[0x56], 4),
    "GeoSet (rBSP, 2HI; MRVN-Radiant's CMGeoSet_t)": (_TF1[0x57], 8),
    "StaticPropv12 (Titanfall, 6f3H2B2h6f4b4Bif2I; LibBSP and bsp_tool's C++ header: 0x54)":
        (respawn_codec.static_prop_v12(), 84),
    "StaticPropv13 (Titanfall 2, 7fH2B2H4f4b4B2H)": (respawn_codec.static_prop_v13(), 64),
    "Unknown3 (Titanfall 2 sprp, 12f4i)": (respawn_codec.static_prop_extra_v13(), 64),
}

# sizeof() of each struct as documented in bspfile.h / the VDC "Source BSP File Format"
# article, and for the v17 / v25 branches as published by their reverse-engineers.
DOCUMENTED_SIZES = {
    **RESPAWN_SIZES,
    "dplane_t": (geometry.PLANE, 20),
    "dvertex_t": (geometry.VECTOR, 12),
    "dedge_t": (geometry.EDGE, 4),
    "dedge_t (v25)": (geometry.EDGE_V25, 8),
    "surfedge": (geometry.SURFEDGE, 4),
    "dface_t": (geometry.FACE, 56),
    "dface_t (v17)": (geometry.FACE_V17, 104),
    "dface_t (v25)": (geometry.FACE_V25, 72),
    # BSPSource's getSize() of DFaceBSP17, DFaceBSP18 (the leaked HL2 beta), DDispInfoBSP17,
    # DDispInfoBSP22, DDispInfoBSP23 and DOverlayDota2 (DOverlay's 352 + 4).
    "dface_t (HL2 beta, BSP 17)": (geometry.FACE_HL2_BETA17, 68),
    "dface_t (HL2 beta, BSP 18)": (geometry.FACE_HL2_BETA18, 72),
    "ddispinfo_t (HL2 beta, BSP 17)": (displacements.DISPINFO_HL2_BETA17, 172),
    "ddispinfo_t (Dota 2, BSP 22)": (displacements.DISPINFO_DOTA2_V22, 180),
    "ddispinfo_t (Dota 2, BSP 23)": (displacements.DISPINFO_DOTA2_V23, 184),
    "ddispinfo_t (Vindictus)": (displacements.DISPINFO_VINDICTUS, 232),
    "doverlay_t (Dota 2)": (records.OVERLAY_DOTA2, 356),
    "dprimitive_t": (geometry.PRIMITIVE, 10),
    "dprimitive_t (v25)": (geometry.PRIMITIVE_V25, 20),
    "dareaportal_t (v25)": (tree.AREAPORTAL_V25, 20),
    "dleafambientindex_t (v25)": (records.LEAF_AMBIENT_INDEX_V25, 8),
    "doverlay_t (v25)": (records.OVERLAY_V25, 356),
    "dwateroverlay_t (v25)": (records.WATEROVERLAY_V25, 1124),
    "dnode_t": (tree.NODE, 32),
    "dnode_t (v25)": (tree.NODE_V25, 48),
    "dleaf_version_0_t": (tree.LEAF_V0, 56),
    "dleaf_t": (tree.LEAF, 32),
    "dleaf_t (v25)": (tree.LEAF_V25, 56),
    "dmodel_t": (tree.MODEL, 48),
    "dleaf_t (Vindictus)": (tree.LEAF_VINDICTUS, 56),
    "dnode_t (Vindictus)": (tree.NODE_VINDICTUS, 48),
    "dface_t v2 (Vindictus)": (geometry.FACE_V2_VINDICTUS, 76),
    "LightmapPageInfo (Xbox)": (records.LIGHTMAP_PAGE_INFO, 8),
    "dmodel_t (Dark Messiah)": (tree.MODEL_DARK_MESSIAH, 52),
    "dportal_t": (tree.PORTAL, 16),
    "dcluster_t": (tree.CLUSTER, 8),
    "darea_t": (tree.AREA, 8),
    "dareaportal_t": (tree.AREAPORTAL, 12),
    "dleafwaterdata_t": (tree.LEAFWATERDATA, 12),
    "dbrush_t": (brushes.BRUSH, 12),
    "dbrushside_t": (brushes.BRUSHSIDE, 8),
    "dbrushside_t (v19)": (brushes.BRUSHSIDE_V19, 8),
    "dbrushside_t (v25)": (brushes.BRUSHSIDE_V25, 16),
    "texinfo_t": (textures.TEXINFO, 72),
    "texinfo_t (Dark Messiah)": (textures.TEXINFO_DARK_MESSIAH, 96),
    "dtexdata_t": (textures.TEXDATA, 32),
    "CDispSubNeighbor": (displacements.DISP_SUB_NEIGHBOR, 6),
    "CDispNeighbor": (displacements.DISP_NEIGHBOR, 12),
    "CDispCornerNeighbors": (displacements.DISP_CORNER_NEIGHBORS, 10),
    "ddispinfo_t": (displacements.DISPINFO, 176),
    "ddispinfo_t (v25)": (displacements.DISPINFO_V25, 232),
    "CDispVert": (displacements.DISPVERT, 20),
    "CDispTri": (displacements.DISPTRI, 2),
    "ColorRGBExp32": (COLOR_RGB_EXP32, 4),
    "dworldlight_t (version 0)": (records.WORLDLIGHT_V0, 88),
    "dworldlight_t": (records.WORLDLIGHT, 100),
    "dworldlight_t (Dark Messiah)": (records.WORLDLIGHT_DARK_MESSIAH, 92),
    "dleafambientindex_t": (records.LEAF_AMBIENT_INDEX, 4),
    "dleafambientlighting_t": (records.LEAF_AMBIENT_LIGHTING, 28),
    "CompressedLightCube": (records.LEAF_AMBIENT_CUBE, 24),
    "doverlay_t": (records.OVERLAY, 352),
    "dwateroverlay_t": (records.WATEROVERLAY, 1120),
    "doverlayfade_t": (records.OVERLAY_FADE, 8),
    "doverlaysystemlevel_t": (records.OVERLAY_SYSTEM_LEVEL, 4),
    "dcubemapsample_t": (records.CUBEMAP, 16),
    "dflagslump_t": (records.MAP_FLAGS, 4),
    "dgamelump_t": (GAMELUMP, 16),
    "lumpfileheader_t": (LUMPFILE_HEADER, 20),
    "lzma_header_t": (LZMA_HEADER, 17),
    # Slots 22-25 from BSP 21 on, physics and occlusion (codecs/propcollision.py, physics.py, occlusion.py).
    "dpropcollision_t": (records.PROPCOLLISION, 8),
    "dprophull_t": (records.PROPHULL, 16),
    "dvertex_t (prop hull vertex)": (records.PROPHULLVERT, 12),
    "dprophulltris_t": (records.PROPHULLTRIS, 8),
    "dfacebrushlist_t": (records.FACEBRUSHLIST, 4),
    "dfacebrushlist_t (v25)": (records.FACEBRUSHLIST_V25, 8),
    "dphysmodel_t": (records.PHYSMODEL, 16),
    "doccluderdataV1_t": (records.OCCLUDER_V1, 36),
    "doccluderdata_t": (records.OCCLUDER, 40),
    "doccluderpolydata_t": (records.OCCLUDER_POLY, 12),
}


# Declared for the standard library's struct (read without numpy): the struct, its (field, code) pairs.
DOCUMENTED_STRUCTS = {
    "ZIP_EndOfCentralDirRecord (zip_uncompressed.h, packed)": (zip_directory.EOCD, zip_directory.EOCD_FIELDS, 22),
    "ZIP_FileHeader (zip_uncompressed.h, packed)": (zip_directory.FILE_HEADER, zip_directory.FILE_HEADER_FIELDS, 46),
    "dgamelump_t (struct)": (fields_struct(GAMELUMP_FIELDS), GAMELUMP_FIELDS, 16),
    "lumpfileheader_t (struct)": (fields_struct(LUMPFILE_HEADER_FIELDS), LUMPFILE_HEADER_FIELDS, 20),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED_SIZES))
def test_itemsize_matches_documented_sizeof(name: str) -> None:
    record, size = DOCUMENTED_SIZES[name]
    assert np.dtype(record).itemsize == size
    if isinstance(record, Record):  # its size counted without numpy, as info counts
        assert record.size == size


@pytest.mark.parametrize("name", sorted(DOCUMENTED_STRUCTS))
def test_struct_size_matches_documented_sizeof(name: str) -> None:
    record, fields, size = DOCUMENTED_STRUCTS[name]
    assert record.size == size == sum(struct.calcsize("<" + code) for _, code in fields)
    assert record.format == "<" + "".join(code for _, code in fields)
    assert len({field for field, _ in fields}) == len(fields) == len(record.unpack(bytes(size)))


@pytest.mark.parametrize("name", sorted(DOCUMENTED_STRUCTS))
@pytest.mark.parametrize("endian", ["<", ">"])
def test_fields_make_the_same_record_for_numpy_and_struct(name: str, endian: str) -> None:
    _, fields, size = DOCUMENTED_STRUCTS[name]
    dtype = fields_dtype(fields, endian)
    assert dtype.itemsize == size and list(dtype.names or ()) == [field for field, _ in fields]
    assert record_struct(dtype, endian).format == fields_struct(fields, endian).format


def _records_in_tables():
    for variant in VARIANTS.values():
        for lump, versions in variant.layouts.items():
            for version, layout in versions.items():
                if isinstance(layout, Record):
                    yield variant.name, lump, version, layout


def test_every_table_record_is_documented_or_scalar() -> None:
    documented = {id(d) for d, _ in DOCUMENTED_SIZES.values()}
    found = list(_records_in_tables())
    assert len(found) > 100
    for variant, lump, version, record in found:
        assert not record.names or id(record) in documented, (variant, lump, version)
        assert record.size == record.dtype.itemsize and list(record.dtype.names or ()) == list(record.names)


def test_dtypes_cover_every_byte() -> None:
    # No implicit holes: the fields (padding included) add up to the itemsize.
    def covered(dtype: np.dtype) -> int:
        if dtype.names is None:
            return dtype.itemsize if dtype.subdtype is None else (
                covered(dtype.subdtype[0]) * int(np.prod(dtype.subdtype[1])))
        return sum(covered(dtype.fields[n][0]) for n in dtype.names)

    for record, _ in DOCUMENTED_SIZES.values():
        dtype = np.dtype(record)
        assert covered(dtype) == dtype.itemsize, dtype


def test_big_endian_variant_decodes_same_values() -> None:
    values = np.zeros(3, geometry.FACE)
    values["planenum"] = [1, 2, 65535]
    values["area"] = [0.5, 1e6, -3.25]
    values["lightmap_texture_size_in_luxels"] = [[3, 4], [5, 6], [7, 8]]
    codec = VARIANTS["orange_box_x360"].codec(7, 1)
    assert codec is not None
    big = values.astype(geometry.FACE.dtype.newbyteorder(">")).tobytes()
    assert big != values.tobytes()
    decoded = codec.decode(memoryview(big), None)  # type: ignore[arg-type]
    for name in ("planenum", "area", "lightmap_texture_size_in_luxels"):
        np.testing.assert_array_equal(decoded[name], values[name])
    assert codec.encode(decoded, None) == big  # type: ignore[arg-type]


# ---- record_struct: the same record read one at a time with the standard library -------
def _flat(dtype: np.dtype) -> bool:
    return all(dtype.fields[name][0].shape == () and dtype.fields[name][0].kind in "iufS"
               for name in dtype.names or ()) if dtype.names else dtype.kind in "iufS"


@pytest.mark.parametrize("name", sorted(DOCUMENTED_SIZES))
@pytest.mark.parametrize("endian", ["<", ">"])
def test_record_struct_reads_and_writes_what_numpy_does(name: str, endian: str) -> None:
    record = DOCUMENTED_SIZES[name][0]
    dtype = np.dtype(record)
    packed = dtype.names is None or dtype.itemsize == sum(dtype.fields[n][0].itemsize for n in dtype.names)
    if not (_flat(dtype) and packed):
        with pytest.raises(ValueError, match="not"):
            record_struct(dtype, endian)
        if isinstance(record, Record) and record.fields and any(isinstance(f[1], Record) for f in record.fields):
            with pytest.raises(ValueError, match="not"):
                record.struct(endian)
        return
    values = np.zeros(3, dtype.newbyteorder(endian))
    rng = np.random.default_rng(7)
    for field in dtype.names or [None]:
        kind = (dtype if field is None else dtype.fields[field][0]).kind
        column = rng.integers(0, 255, 3) if kind in "uS" else rng.integers(-100, 100, 3)
        if field is None:
            values[:] = column
        else:
            values[field] = column
    data = values.tobytes()
    rows = values.tolist() if dtype.names else [(value,) for value in values.tolist()]
    for reader in (record_struct(dtype, endian), *([record.struct(endian)] if isinstance(record, Record) else [])):
        assert list(reader.iter_unpack(data)) == rows
        assert b"".join(reader.pack(*row) for row in rows) == data


# ---- the branch layouts against BSPSource's read order -------------------------------------
# Each as BSPSource's read() takes the record apart, field by field (struct codes; "88s" is its
# byte array of neighbours, "x" what it skips): a record packed so, then decoded with our dtype,
# gives each value back under the bspfile.h name.
_NEIGHBOURS = bytes(range(88))
_BSPSRC_ORDER = {
    "DDispInfoBSP17": (displacements.DISPINFO_HL2_BETA17, [
        ("start_position", "3f", (1.5, -2.0, 3.25)), ("disp_vert_start", "i", 7), ("power", "i", 3),
        ("min_tess", "i", -5), ("smoothing_angle", "f", 45.0), ("contents", "i", 1), ("map_face", "H", 65000),
        (None, "2x", None), ("lightmap_alpha_start", "i", 11), ("lightmap_sample_position_start", "i", 12),
        ("neighbours", "88s", _NEIGHBOURS), ("allowed_verts", "10I", tuple(range(100, 110)))]),
    "DDispInfoBSP22": (displacements.DISPINFO_DOTA2_V22, [
        ("start_position", "3f", (1.5, -2.0, 3.25)), ("disp_vert_start", "i", 7), ("disp_tri_start", "i", 8),
        ("power", "i", 3), ("min_tess", "i", -5), ("smoothing_angle", "f", 45.0), ("contents", "i", 1),
        ("map_face", "H", 65000), (None, "2x", None), ("lightmap_alpha_start", "i", 11),
        ("lightmap_sample_position_start", "i", 12), ("unknown", "i", -99), ("neighbours", "88s", _NEIGHBOURS),
        ("allowed_verts", "10I", tuple(range(100, 110)))]),
    "DDispInfoBSP23": (displacements.DISPINFO_DOTA2_V23, [
        ("start_position", "3f", (1.5, -2.0, 3.25)), ("disp_vert_start", "i", 7), ("disp_tri_start", "i", 8),
        ("power", "i", 3), ("min_tess", "i", -5), ("smoothing_angle", "f", 45.0), ("contents", "i", 1),
        ("unknown1", "i", 77), ("map_face", "H", 65000), (None, "2x", None), ("lightmap_alpha_start", "i", 11),
        ("lightmap_sample_position_start", "i", 12), ("unknown2", "i", -99), ("neighbours", "88s", _NEIGHBOURS),
        ("allowed_verts", "10I", tuple(range(100, 110)))]),
    # Vindictus: BSPSource reads the map face as an unsigned short and skips two bytes; we read an
    # unsigned int (bsp_tool's "I"): the same value when those bytes are zero, as here.  Trusted over
    # BSPSource's for the width because Vindictus widened its other face indices to 32 bits.
    "DDispInfoVin": (displacements.DISPINFO_VINDICTUS, [
        ("start_position", "3f", (1.5, -2.0, 3.25)), ("disp_vert_start", "i", 7), ("disp_tri_start", "i", 8),
        ("power", "i", 3), ("smoothing_angle", "f", 45.0), ("unknown", "i", -5), ("contents", "i", 1),
        ("map_face", "H", 65000), (None, "2x", None), ("lightmap_alpha_start", "i", 11),
        ("lightmap_sample_position_start", "i", 12), ("neighbours_vin", "144s", bytes(range(144))),
        ("allowed_verts", "10I", tuple(range(100, 110)))]),
    "DFaceBSP17": (geometry.FACE_HL2_BETA17, [
        ("avg_light_color", "16s", bytes(range(16))), ("planenum", "H", 60000), ("side", "B", 1), ("on_node", "B", 0),
        ("firstedge", "i", 123456), ("numedges", "h", 5), ("texinfo", "h", 9), ("dispinfo", "h", -1),
        ("surface_fog_volume_id", "h", -1), ("styles", "4B", (0, 1, 255, 255)), ("lightofs", "i", 4096),
        ("area", "f", 1024.5), ("lightmap_texture_mins_in_luxels", "2i", (-3, 4)),
        ("lightmap_texture_size_in_luxels", "2i", (15, 16)), ("orig_face", "i", 42),
        ("smoothing_groups", "I", 0x80000001)]),
    "DFaceBSP18": (geometry.FACE_HL2_BETA18, [
        ("avg_light_color", "16s", bytes(range(16))), ("planenum", "H", 60000), ("side", "B", 1), ("on_node", "B", 0),
        ("firstedge", "i", 123456), ("numedges", "h", 5), ("texinfo", "h", 9), ("dispinfo", "h", -1),
        ("surface_fog_volume_id", "h", -1), ("styles", "4B", (0, 1, 255, 255)), ("lightofs", "i", 4096),
        ("area", "f", 1024.5), ("lightmap_texture_mins_in_luxels", "2i", (-3, 4)),
        ("lightmap_texture_size_in_luxels", "2i", (15, 16)), ("orig_face", "i", 42), ("first_prim_id", "H", 300),
        ("num_prims", "H", 2), ("smoothing_groups", "I", 0x80000001)]),
    "DOverlayDota2": (records.OVERLAY_DOTA2, [
        ("id", "i", 17), ("texinfo", "h", 3), ("face_count_and_render_order", "H", 0x4002),
        ("faces", "64i", tuple(range(64))), ("u", "2f", (0.0, 1.0)), ("v", "2f", (0.25, 0.75)),
        ("uv_points", "12f", tuple(float(i) for i in range(12))), ("origin", "3f", (1.0, 2.0, 3.0)),
        ("basis_normal", "3f", (0.0, 0.0, 1.0)), ("unknown", "i", -7)]),
}


@pytest.mark.parametrize("name", sorted(_BSPSRC_ORDER))
def test_branch_layout_reads_fields_where_bspsource_does(name: str) -> None:
    layout, fields = _BSPSRC_ORDER[name]
    dtype = layout.dtype
    fmt = "<" + "".join(code for _, code, _ in fields)
    values = [v for _, code, value in fields if value is not None
              for v in (value if isinstance(value, tuple) else (value,))]
    data = struct.pack(fmt, *values)
    assert len(data) == dtype.itemsize == layout.size
    record = np.frombuffer(data, dtype)[0]
    for field, _, value in fields:
        if field is None:
            continue
        if field in ("neighbours", "neighbours_vin"):  # CDispNeighbor[4], CDispCornerNeighbors[4]
            got = record["edge_neighbors"].tobytes() + record["corner_neighbors"].tobytes()
        elif field == "avg_light_color":
            got = record[field].tobytes()
        else:
            got = record[field]
        if isinstance(value, bytes):
            assert got == value, (name, field)
        else:  # values exact in float32
            np.testing.assert_array_equal(np.ravel(got), np.ravel(value), err_msg=f"{name}.{field}")
    assert np.frombuffer(data, dtype).tobytes() == data

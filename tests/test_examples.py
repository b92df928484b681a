"""``sourcebsp.examples``: the example map built in code, read back by sourcebsp and by srctools."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sourcebsp
from sourcebsp import LumpId, RawLump, rgbexp_to_float
from sourcebsp.cli import main
from sourcebsp.codecs.arrays import COLOR_RGB_EXP32
from sourcebsp.examples import (
    BUTTON_BOX,
    BUTTON_ORIGIN,
    LIGHT_ORIGIN,
    PLAYER_START,
    PROP_ANGLES,
    PROP_MODEL,
    PROP_ORIGIN,
    ROOM,
    WALL_THICKNESS,
    WORLD_BOUNDS,
    build_example_map,
    example_map_bytes,
    write_example_map,
)
from sourcebsp.examples.helpers import to_rgbexp
from sourcebsp.model.geometry import face_polygons
from sourcebsp.model.lightmaps import face_lightmap

CONTENTS_SOLID = 1
SURF_NODRAW, SURF_NOLIGHT = 0x80, 0x400
WALL_POINT = (ROOM.maxs[0] + WALL_THICKNESS / 2, 0.0, 128.0)  # inside the east wall


@pytest.fixture(scope="module")
def example_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_example_map(tmp_path_factory.mktemp("example") / "example.bsp")


@pytest.fixture()
def bsp(example_path: Path):
    with sourcebsp.open(example_path) as opened:
        yield opened


# ---- what was built --------------------------------------------------------------------
def _expected_counts() -> dict[LumpId, int]:
    """The size of every lump, worked out from the room's description (not from the builder)."""
    inside = np.subtract(ROOM.maxs, ROOM.mins)  # 512 x 512 x 256

    def samples(a: float, b: float) -> int:  # lightmap samples of an a x b face, 16 units a luxel
        return int((np.ceil(a / 16) + 1) * (np.ceil(b / 16) + 1))

    world_samples = 2 * samples(inside[0], inside[1]) + 2 * samples(inside[1], inside[2]) \
        + 2 * samples(inside[0], inside[2])
    # The button's faces are not aligned to the luxel grid: each spans 2 luxels plus the edges.
    button_samples = 6 * 9
    # Plane positions: x and y: the room's walls (4 each) and the button (2 each); z: 4 for the
    # room plus the button's +-16, whose -16 is also the floor's underside.
    planes = 2 * (6 + 6 + 5)
    return {
        LumpId.ENTITIES: 4,  # worldspawn, light, info_player_start, func_button
        LumpId.PLANES: planes,
        LumpId.TEXDATA: 3,  # wall, button, nodraw
        LumpId.VERTEXES: 8 + 8,  # the room's corners and the button's
        LumpId.VISIBILITY: 1,  # one cluster
        LumpId.NODES: 6 + 6,  # one node per box plane, in each model
        LumpId.TEXINFO: 3 * 3,  # three materials, three axis orientations each
        LumpId.FACES: 6 + 6,
        LumpId.ORIGINALFACES: 6 + 6,
        LumpId.LIGHTING: world_samples + button_samples + 12,  # + one average colour per face
        LumpId.LEAFS: 1 + 7 + 7,  # dummy, the world's 7, the button's 7
        LumpId.FACEIDS: 12,
        LumpId.EDGES: 1 + 12 + 12,  # dummy edge 0, and a box's 12 edges twice
        LumpId.SURFEDGES: 12 * 4 * 2,  # every face and original face has 4
        LumpId.MODELS: 2,
        LumpId.WORLDLIGHTS: 1,
        LumpId.LEAFFACES: 6 + 6,  # the room lists its 6 faces; each empty button leaf 1
        LumpId.LEAFBRUSHES: 3 * 4 + 1 + 1 + 1,  # solid world leaves beside a wall see 3 brushes
        LumpId.BRUSHES: 7,
        LumpId.BRUSHSIDES: 42,
        LumpId.AREAS: 2,
        LumpId.AREAPORTALS: 1,
        LumpId.PHYSDISP: 0,
        LumpId.PHYSCOLLIDE: 0,
        LumpId.VERTNORMALS: 6,
        LumpId.VERTNORMALINDICES: 48,
        LumpId.GAME_LUMP: 2,  # sprp, dprp
        LumpId.PAKFILE: 0,
        LumpId.TEXDATA_STRING_DATA: 3,
        LumpId.TEXDATA_STRING_TABLE: 3,
        LumpId.LEAFMINDISTTOWATER: 15,
        LumpId.FACE_MACRO_TEXTURE_INFO: 12,
        LumpId.LEAF_AMBIENT_INDEX: 15,
        LumpId.LEAF_AMBIENT_LIGHTING: 1 + 6,  # one sample per empty leaf
        LumpId.MAP_FLAGS: 1,
        LumpId.OCCLUSION: 0,
    }


def test_every_lump_decodes_with_the_counts_built(bsp) -> None:
    assert (bsp.version, bsp.variant.name, bsp.endian, bsp.map_revision) == (20, "orange_box", "<", 1)
    expected = _expected_counts()
    present = {lump for lump, _ in bsp.iter_lumps()}
    assert present == set(expected)
    for lump in present:
        assert not isinstance(bsp.get_lump(lump), RawLump), lump
        assert bsp.count(lump) == expected[lump], lump.name
    # Lump versions of the SDK 2013 tools.
    versions = {lump: bsp.entry(lump).version for lump in present if bsp.entry(lump).version}
    assert versions == {LumpId.FACES: 1, LumpId.LEAFS: 1, LumpId.LIGHTING: 1, LumpId.OCCLUSION: 2,
                        LumpId.LEAF_AMBIENT_LIGHTING: 1}


def test_build_gives_the_written_bytes(example_path: Path) -> None:
    data = example_map_bytes()
    assert example_path.read_bytes() == data == build_example_map().to_bytes()
    assert example_map_bytes() == data  # deterministic


def test_round_trip_is_byte_identical(example_path: Path, tmp_path: Path) -> None:
    data = example_path.read_bytes()
    with sourcebsp.open(example_path) as bsp:
        assert bsp.to_bytes(reencode=True) == data
    out = tmp_path / "again.bsp"
    assert main(["repack", str(example_path), "-o", str(out), "--reencode"]) == 0
    assert out.read_bytes() == data


# ---- internal consistency ---------------------------------------------------------------
def test_planes_come_in_flipped_pairs(bsp) -> None:
    planes = bsp.planes
    assert len(planes) % 2 == 0
    normal, dist = planes["normal"], planes["dist"]
    assert np.array_equal(normal[1::2], -normal[0::2]) and np.array_equal(dist[1::2], -dist[0::2])
    axis = np.abs(normal).argmax(axis=1)
    assert np.array_equal(planes["type"], axis)  # PLANE_X / Y / Z for axial planes
    assert (normal[0::2][np.arange(len(planes) // 2), axis[0::2]] == 1).all()  # the even one faces +axis
    assert (np.abs(normal).sum(axis=1) == 1).all()
    assert not np.signbit(normal[normal == 0]).any()  # no negative zeros
    assert len({(tuple(n), d) for n, d in zip(normal.tolist(), dist.tolist())}) == len(planes)


def test_cross_references_are_in_range(bsp) -> None:
    nodes, leafs, faces, planes = bsp.nodes, bsp.leafs, bsp.faces, bsp.planes
    children = nodes["children"].ravel()
    assert ((children >= 0) & (children < len(nodes)) | (children < 0) & (-children - 1 < len(leafs))).all()
    # A tree: every node but the two heads and every leaf but leaf 0 has exactly one parent.
    heads = set(bsp.models["headnode"].tolist())
    assert heads == {0, 6}
    assert sorted(children[children >= 0].tolist()) == sorted(set(range(len(nodes))) - heads)
    assert sorted((-children[children < 0] - 1).tolist()) == list(range(1, len(leafs)))
    assert (nodes["planenum"] % 2 == 0).all() and (nodes["planenum"] < len(planes)).all()
    assert (faces["planenum"] < len(planes)).all()
    assert np.array_equal(faces["side"], faces["planenum"] & 1)
    # Node faces cover every face once, and each lies on its node's plane.
    spans = [range(int(n["firstface"]), int(n["firstface"] + n["numfaces"])) for n in nodes]
    assert sorted(i for span in spans for i in span) == list(range(len(faces)))
    for node, span in zip(nodes, spans):
        assert all(int(faces["planenum"][i]) // 2 * 2 == node["planenum"] for i in span)
    # Edges, surfedges, vertexes.
    surfedges, edges = bsp.surfedges, bsp.edges
    assert ((faces["firstedge"] + faces["numedges"]) <= len(surfedges)).all()
    assert ((np.abs(surfedges) > 0) & (np.abs(surfedges) < len(edges))).all()
    assert (edges["v"] < len(bsp.vertexes)).all()
    # Textures.
    texinfo, texdata = bsp.texinfo, bsp.texdata
    assert (faces["texinfo"] < len(texinfo)).all() and (texinfo["texdata"] < len(texdata)).all()
    assert (texdata["name_string_table_id"] < len(bsp.texdata_string_table)).all()
    names = [bsp.texdata_string_data.at(int(o)) for o in bsp.texdata_string_table]
    assert names == ["DEV/DEV_MEASUREGENERIC01B", "DEV/DEV_MEASUREGENERIC01", "TOOLS/TOOLSNODRAW"]
    # Models: consecutive face ranges covering every face.
    models = bsp.models
    assert models["firstface"].tolist() == [0, 6] and models["numfaces"].tolist() == [6, 6]
    # Leaves: face and brush lists inside their lumps.
    assert ((leafs["firstleafface"] + leafs["numleaffaces"]) <= len(bsp.leaffaces)).all()
    assert ((leafs["firstleafbrush"] + leafs["numleafbrushes"]) <= len(bsp.leafbrushes)).all()
    assert (bsp.leaffaces < len(faces)).all() and (bsp.leafbrushes < len(bsp.brushes)).all()
    # Brushes and sides.
    brushes, sides = bsp.brushes, bsp.brushsides
    assert (brushes["firstside"] + brushes["numsides"]).max() == len(sides)
    assert (brushes["contents"] == CONTENTS_SOLID).all()
    assert (sides["planenum"] < len(planes)).all() and (sides["texinfo"] < len(texinfo)).all()
    assert (sides["bevel"] == 0).all()
    # Original faces and face ids.
    assert np.array_equal(faces["orig_face"], np.arange(len(faces)))
    assert np.array_equal(bsp.originalfaces["planenum"], faces["planenum"])
    assert len(set(bsp.faceids.tolist())) == len(faces)
    # Vertex normals: one per face corner, each the face's normal.
    normals = bsp.vertnormals["point"][bsp.vertnormalindices]
    assert np.array_equal(normals, np.repeat(planes["normal"][faces["planenum"]], 4, axis=0))


def test_faces_are_closed_clockwise_quads_on_their_planes(bsp) -> None:
    faces, planes = bsp.faces, bsp.planes
    vertexes = bsp.vertexes["point"].astype(np.float64)
    edges = bsp.edges["v"]
    surfedges = bsp.surfedges
    for k, face in enumerate(faces):
        loop = surfedges[face["firstedge"] : face["firstedge"] + face["numedges"]]
        starts = np.where(loop > 0, edges[np.abs(loop), 0], edges[np.abs(loop), 1])
        ends = np.where(loop > 0, edges[np.abs(loop), 1], edges[np.abs(loop), 0])
        assert np.array_equal(ends, np.roll(starts, -1)), k  # a closed loop
        points = vertexes[starts]
        normal, dist = planes["normal"][face["planenum"]], planes["dist"][face["planenum"]]
        assert np.allclose(points @ normal, dist)
        cross = np.cross(points[1] - points[0], points[2] - points[0])
        assert cross @ normal < 0  # clockwise seen from the front, as the engine stores faces
        area = np.linalg.norm(cross)  # a rectangle: twice the triangle
        assert face["area"] == pytest.approx(area)
    indices, offsets = face_polygons(bsp)  # the model layer reads the same corners
    assert np.array_equal(np.diff(offsets), np.full(len(faces), 4))


def test_world_faces_look_into_the_room_and_the_button_out(bsp) -> None:
    faces, planes, vertexes = bsp.faces, bsp.planes, bsp.vertexes["point"]
    indices, offsets = face_polygons(bsp)
    room_center = np.array(ROOM.center)
    for k in range(12):
        corners = vertexes[indices[offsets[k] : offsets[k + 1]]].astype(np.float64)
        normal = planes["normal"][faces["planenum"][k]]
        toward_center = (room_center if k < 6 else np.zeros(3)) - corners.mean(axis=0)
        assert (toward_center @ normal > 0) == (k < 6)
        inside = ROOM if k < 6 else BUTTON_BOX
        assert all(inside.contains(c) for c in corners)


def test_lightmap_extents_match_the_lightmap_vecs(bsp) -> None:
    faces, texinfo = bsp.faces, bsp.texinfo
    indices, offsets = face_polygons(bsp)
    vertexes = bsp.vertexes["point"].astype(np.float64)
    assert (np.abs(texinfo["lightmap_vecs"][:, :, :3]).max(axis=2) == 1 / 16).all()
    ends = []
    for k, face in enumerate(faces):
        vecs = texinfo["lightmap_vecs"][face["texinfo"]].astype(np.float64)
        luxels = vertexes[indices[offsets[k] : offsets[k + 1]]] @ vecs[:, :3].T + vecs[:, 3]
        mins, maxs = np.floor(luxels.min(axis=0)), np.ceil(luxels.max(axis=0))
        assert face["lightmap_texture_mins_in_luxels"].tolist() == mins.tolist()
        assert face["lightmap_texture_size_in_luxels"].tolist() == (maxs - mins).tolist()
        assert face["styles"].tolist() == [0, 255, 255, 255]
        count = int(np.prod(face["lightmap_texture_size_in_luxels"] + 1))
        ends.append((int(face["lightofs"]) - 4, int(face["lightofs"]) + 4 * count))
    # Blocks (average colour, then the samples) follow each other without gaps or overlaps.
    ends.sort()
    assert ends[0][0] == 0 and ends[-1][1] == 4 * len(bsp.lighting)
    assert all(a[1] == b[0] for a, b in zip(ends, ends[1:]))


def test_lighting_is_the_light_of_the_light_entity(bsp) -> None:
    floor = next(k for k, f in enumerate(bsp.faces) if tuple(bsp.planes["normal"][f["planenum"]]) == (0, 0, 1))
    light = face_lightmap(bsp, floor)
    assert light is not None and light.shape == (33, 33, 3)
    # The sample under the light: 400 / 255 (linear white at brightness 400) at 100 units,
    # falling off with the square of the distance, plus a small fill.
    below = light[16, 16]
    expected = 400 / 255 * (100 / LIGHT_ORIGIN[2]) ** 2
    assert below == pytest.approx(expected + np.array([0.03, 0.03, 0.035]), rel=0.01)
    assert (light[0, 0] < below / 10).all()  # the corners are much darker
    # The button is lit where its entity puts it: its front (facing -x, toward the light) at
    # BUTTON_ORIGIN + (-4, 0, 0); its back, against the wall, by the fill only.
    normals = [tuple(bsp.planes["normal"][bsp.faces["planenum"][k]]) for k in range(6, 12)]
    front = face_lightmap(bsp, 6 + normals.index((-1, 0, 0)))
    back = face_lightmap(bsp, 6 + normals.index((1, 0, 0)))
    to_light = np.subtract(LIGHT_ORIGIN, np.add(BUTTON_ORIGIN, (BUTTON_BOX.mins[0], 0, 0)))
    cosine = to_light @ (-1, 0, 0) / np.linalg.norm(to_light)
    expected = 400 / 255 * 100**2 * cosine / (to_light @ to_light) + 0.03
    assert front is not None and front.shape == (3, 3, 3) and front[1, 1, 0] == pytest.approx(expected, rel=0.01)
    assert back is not None and back[..., 0] == pytest.approx(np.full((3, 3), 0.03), rel=0.01)
    # The average stored before each block is the mean of the block.
    raw = np.frombuffer(bsp.raw_lump(LumpId.LIGHTING), COLOR_RGB_EXP32)
    average = rgbexp_to_float(raw[int(bsp.faces["lightofs"][floor]) // 4 - 1])
    assert average == pytest.approx(light.reshape(-1, 3).mean(axis=0), rel=0.01)
    # The world light is the light entity as vrad writes it.
    worldlight = bsp.worldlights[0]
    assert tuple(worldlight["origin"]) == LIGHT_ORIGIN and worldlight["type"] == 1  # emit_point
    assert worldlight["intensity"] == pytest.approx(np.full(3, 400 / 255 * 100**2))
    assert worldlight["quadratic_attn"] == 1 and worldlight["cluster"] == bsp.cluster_at(LIGHT_ORIGIN)
    # One ambient cube per empty leaf; the room's sample, a quarter of the way up, is lit from above.
    index = bsp.leaf_ambient_index
    empty = bsp.leafs["contents"] == 0
    assert np.array_equal(index["ambient_sample_count"], empty.astype(int))
    assert sorted(index["first_ambient_sample"][empty].tolist()) == list(range(int(empty.sum())))
    room_leaf = bsp.leaf_at(PLAYER_START)
    # Stored as vrad does, a 255th of the light (the engine's ColorRGBExp32ToVector multiplies it back).
    cube = rgbexp_to_float(bsp.leaf_ambient_lighting["cube"][index["first_ambient_sample"][room_leaf]]) * 255
    assert cube[4, 0] > 10 * cube[5, 0]  # from +z: the light; from -z: the fill only
    assert cube[5] == pytest.approx([0.03, 0.03, 0.035], rel=0.02)


def test_rgbexp_encoding_round_trips() -> None:
    linear = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, 0.25], [37.0, 1.0, 0.0], [1e-4, 2e-4, 3e-4]])
    decoded = rgbexp_to_float(to_rgbexp(linear))
    assert decoded == pytest.approx(linear, rel=1 / 128, abs=1e-6)


# ---- queries ------------------------------------------------------------------------------
def test_leaf_at_finds_the_room_and_the_walls(bsp) -> None:
    leafs = bsp.leafs
    room = bsp.leaf_at(PLAYER_START)
    assert (leafs["contents"][room], leafs["cluster"][room], leafs["area_flags"][room]) == (0, 0, 1)
    wall = bsp.leaf_at(WALL_POINT)
    assert (leafs["contents"][wall], leafs["cluster"][wall]) == (CONTENTS_SOLID, -1)
    assert bsp.is_visible(PLAYER_START, LIGHT_ORIGIN) is True
    assert bsp.is_visible(PLAYER_START, WALL_POINT) is False
    assert bsp.cluster_at(WALL_POINT) == -1
    # Every solid leaf has cluster -1 (leaf 0 included), every empty world leaf cluster 0.
    solid = leafs["contents"] == CONTENTS_SOLID
    assert (leafs["cluster"][solid] == -1).all()
    assert leafs[0]["contents"] == CONTENTS_SOLID and leafs[0]["numleaffaces"] == 0


def test_leaves_partition_space(bsp) -> None:
    rng = np.random.default_rng(7)
    outer = WORLD_BOUNDS.grow(8)
    points = rng.uniform(outer.mins, outer.maxs, (20000, 3))
    leaf = bsp.leaf_at(points)
    leafs = bsp.leafs
    inside = np.all((points > ROOM.mins) & (points < ROOM.maxs), axis=1)
    assert inside.any() and (~inside).any()
    assert (leaf[inside] == bsp.leaf_at(PLAYER_START)).all()
    assert (leafs["contents"][leaf[~inside]] == CONTENTS_SOLID).all()
    # Each point is inside the bounds of its leaf; all 7 world leaves but the dummy are reached.
    assert ((points >= leafs["mins"][leaf]) & (points <= leafs["maxs"][leaf])).all()
    assert set(leaf.tolist()) == set(range(1, 8))
    # A solid leaf's brushes are the walls whose volume it shares (boxes from their side planes).
    for number in set(leaf[~inside].tolist()):
        first, count = leafs["firstleafbrush"][number], leafs["numleafbrushes"][number]
        listed = bsp.leafbrushes[first : first + count].tolist()
        overlapping = [b for b in range(6) if _overlap(_brush_box(bsp, b), leafs[number])]
        assert listed == overlapping and 1 <= len(listed) <= 3


def _brush_box(bsp, brush: int) -> tuple[np.ndarray, np.ndarray]:
    first, count = bsp.brushes["firstside"][brush], bsp.brushes["numsides"][brush]
    mins, maxs = np.full(3, -np.inf), np.full(3, np.inf)
    for side in bsp.brushsides[first : first + count]:
        normal, dist = bsp.planes["normal"][side["planenum"]], bsp.planes["dist"][side["planenum"]]
        axis = int(np.abs(normal).argmax())
        if normal[axis] > 0:
            maxs[axis] = dist
        else:
            mins[axis] = -dist
    return mins, maxs


def _overlap(box: tuple[np.ndarray, np.ndarray], leaf) -> bool:
    return bool(np.all((box[0] < leaf["maxs"]) & (leaf["mins"] < box[1])))


def test_button_model_has_its_own_tree(bsp) -> None:
    local = np.random.default_rng(3).uniform(-32, 32, (5000, 3))
    leaf = bsp.leaf_at(local, model=1)
    leafs = bsp.leafs
    in_box = np.all((local > BUTTON_BOX.mins) & (local < BUTTON_BOX.maxs), axis=1)
    assert (leafs["contents"][leaf[in_box]] == CONTENTS_SOLID).all()
    assert (leafs["contents"][leaf[~in_box]] == 0).all() and (leafs["cluster"][leaf] == -1).all()
    solid_leaf = int(leaf[in_box][0])
    brush = bsp.leafbrushes[leafs["firstleafbrush"][solid_leaf]]
    assert brush == 6 and leafs["numleafbrushes"][solid_leaf] == 1
    assert tuple(bsp.models[1]["mins"]) == BUTTON_BOX.mins and tuple(bsp.models[1]["maxs"]) == BUTTON_BOX.maxs


def test_visibility_has_one_cluster(bsp) -> None:
    assert bsp.num_clusters == 1
    assert bsp.pvs(0).tolist() == [True] and bsp.pas(0).tolist() == [True]
    assert bsp.pvs(-1).tolist() == [False]


# ---- entities and props --------------------------------------------------------------------
def test_entities(bsp) -> None:
    ents = bsp.entities
    assert [e.classname for e in ents] == ["worldspawn", "light", "info_player_start", "func_button"]
    world = ents.worldspawn
    assert world["world_mins"] == "-272 -272 -16" and world["world_maxs"] == "272 272 272"
    assert world["skyname"] and world["mapversion"] == str(bsp.map_revision)
    assert ents.first("light").origin == LIGHT_ORIGIN
    assert ents.first("light")["_light"] == "255 255 255 400"
    assert ents.first("info_player_start").origin == PLAYER_START
    button = ents.first("func_button")
    assert button.model_index == 1 and ents.by_model(1) is button
    assert button.origin == BUTTON_ORIGIN
    assert bsp.raw_lump(LumpId.ENTITIES)[-1] == 0  # NUL-terminated


def test_static_prop(bsp) -> None:
    props = bsp.static_props
    assert len(props) == 1 and props.version == 10 and props.layout.name == "v10_sdk2013"
    prop = props[0]
    assert prop.model == PROP_MODEL and prop.origin == PROP_ORIGIN and prop.angles == PROP_ANGLES
    assert prop.solid == 6 and prop.skin == 0
    assert props.leafs_of(0).tolist() == [bsp.leaf_at(PROP_ORIGIN)] == [bsp.leaf_at(PLAYER_START)]
    assert bsp.game_lumps.ids() == ["sprp", "dprp"] and len(bsp.detail_props) == 0


# ---- srctools reads the same map ------------------------------------------------------------
def test_srctools_reads_the_same_map(example_path: Path, bsp) -> None:
    from srctools import Vec
    from srctools.bsp import BSP

    theirs = BSP(str(example_path))
    # Entities.
    ours = [e.items() for e in bsp.entities]
    their_ents = [theirs.ents.spawn, *theirs.ents.entities]
    assert [sorted(e.items()) for e in their_ents] == [sorted(pairs) for pairs in ours]
    # Static props.
    [prop] = theirs.props
    assert prop.model == PROP_MODEL and tuple(prop.origin) == PROP_ORIGIN
    assert tuple(prop.angles) == PROP_ANGLES and prop.solidity == 6
    assert [theirs.visleafs.index(leaf) for leaf in prop.visleafs] == [bsp.leaf_at(PROP_ORIGIN)]
    # Planes, brushes, textures.
    assert [(tuple(p.normal), p.dist, p.type.value) for p in theirs.planes] == [
        (tuple(p["normal"]), p["dist"], p["type"]) for p in bsp.planes]
    assert len(theirs.brushes) == 7
    for brush, side_count in zip(theirs.brushes, bsp.brushes["numsides"]):
        assert brush.contents.value == CONTENTS_SOLID and len(brush.sides) == side_count
    visible = [s for b in theirs.brushes for s in b.sides if not s.texinfo.flags.value & SURF_NODRAW]
    assert len(visible) == 6 + 6  # the room's inner sides and the button's
    assert theirs.textures == ["DEV/DEV_MEASUREGENERIC01B", "DEV/DEV_MEASUREGENERIC01", "TOOLS/TOOLSNODRAW"]
    # Faces: the same corners in the same order.
    indices, offsets = face_polygons(bsp)
    vertexes = bsp.vertexes["point"]
    assert len(theirs.faces) == 12
    for k, face in enumerate(theirs.faces):
        corners = [tuple(edge.a) for edge in face.edges]
        assert corners == [tuple(v) for v in vertexes[indices[offsets[k] : offsets[k + 1]]].tolist()]
        assert face.lightmap_size == tuple(bsp.faces["lightmap_texture_size_in_luxels"][k])
        assert face.texinfo.mat in ("DEV/DEV_MEASUREGENERIC01B", "DEV/DEV_MEASUREGENERIC01")
    # Leaves, with srctools' reading of the area/flags bit field (area in the high bits).
    leafs = bsp.leafs
    assert [(leaf.contents.value, leaf.cluster_id, (leaf.area << 7) | leaf.flags.value) for leaf in theirs.visleafs] \
        == list(zip(leafs["contents"].tolist(), leafs["cluster"].tolist(), leafs["area_flags"].tolist()))
    # Its tree walk and its visibility agree with ours.
    tree = theirs.vis_tree()
    start = tree.test_point(Vec(*PLAYER_START))
    assert theirs.visleafs.index(start) == bsp.leaf_at(PLAYER_START) and start.cluster_id == 0
    assert len(start.faces) == 6
    wall = tree.test_point(Vec(*WALL_POINT))
    assert wall.contents.value == CONTENTS_SOLID and theirs.visleafs.index(wall) == bsp.leaf_at(WALL_POINT)
    light = tree.test_point(Vec(*LIGHT_ORIGIN))
    assert theirs.is_potentially_visible(start, light) == (True, True)
    # Brush models: the world and the button, each with its faces.
    models = {ent["classname"]: model for ent, model in theirs.bmodels.items()}
    assert set(models) == {"worldspawn", "func_button"}
    assert tuple(models["worldspawn"].mins) == WORLD_BOUNDS.mins and len(models["worldspawn"].faces) == 6
    assert tuple(models["func_button"].maxes) == BUTTON_BOX.maxs and len(models["func_button"].faces) == 6


def test_preview_render_shows_the_lit_room(bsp) -> None:
    from sourcebsp.converters.render import render

    top = render(bsp, view="top", size=(96, 96))
    assert top.lit and top.covered > 0.8
    player = render(bsp, view="player", size=(128, 72))
    assert player.lit and player.covered == 1.0  # inside a closed room every pixel shows a wall
    # The floor under the light is brighter than the room's corners.
    assert top.image[48, 48].sum() > top.image[8, 8].sum()

"""func_viscluster rebuilt from leaf clusters (``--visclusters``).

vbsp gives each non-solid world leaf its own cluster except the leaves a
func_viscluster covers and the leaves of a 3D skybox area; the tests set the
cluster array of the example map to make each case, and on the corpus count
the multi-leaf clusters with their own walk of the tree.
"""
from __future__ import annotations

import numpy as np
import srctools.vmf

from sourcebsp.container import BspFile
from sourcebsp.converters.vmf import DecompileOptions, build_vmf, check_vmf, decompile_report, decompile_text
from sourcebsp.examples.room import build_example_map
from sourcebsp.lump_ids import LumpId

from ._cluster_map import CEILING_LEAF, ROOM_LEAF, room_with

def _visclusters(vmf) -> list:
    return [e for e in vmf.entities if e.classname == "func_viscluster"]


def test_two_leaves_in_one_cluster_make_one_viscluster_around_both():
    bsp = room_with(cluster=0)
    leafs = bsp.get_lump(LumpId.LEAFS)
    vmf, stats = build_vmf(bsp, DecompileOptions(visclusters=True))
    found = _visclusters(vmf)
    assert len(found) == 1 and stats.visclusters == 1
    corners = np.vstack([side.vertices for side in found[0].solids[0].sides])
    both = leafs[[ROOM_LEAF, CEILING_LEAF]]
    assert np.allclose(corners.min(axis=0), both["mins"].min(axis=0))
    assert np.allclose(corners.max(axis=0), both["maxs"].max(axis=0))
    assert {s.material.casefold() for s in found[0].solids[0].sides} == {"tools/toolstrigger"}
    assert len(found[0].solids[0].sides) == 6
    assert check_vmf(vmf) == []
    parsed = srctools.vmf.VMF.parse(srctools.keyvalues.Keyvalues.parse(vmf.to_text()))
    made = [e for e in parsed.entities if e["classname"] == "func_viscluster"]
    assert len(made) == 1 and len(made[0].solids) == 1
    reconstructed = next(v for v in vmf.visgroups if v[1] == "Reconstructed")[0]
    assert reconstructed in found[0].visgroups


def test_visclusters_are_off_by_default():
    vmf, stats = build_vmf(room_with(cluster=0))
    assert _visclusters(vmf) == [] and stats.visclusters == 0


def test_leaves_with_their_own_clusters_make_no_viscluster():
    vmf, stats = build_vmf(room_with(cluster=1), DecompileOptions(visclusters=True))
    assert _visclusters(vmf) == [] and stats.visclusters == 0


def test_the_3d_skybox_cluster_is_not_a_viscluster():
    # Both leaves in the sky_camera's area: vbsp's one sky cluster, not a func_viscluster.
    vmf, _ = build_vmf(room_with(cluster=0, area=1, sky_camera=True), DecompileOptions(visclusters=True))
    assert _visclusters(vmf) == []
    # One of them in another area: only a func_viscluster joins them.
    vmf, _ = build_vmf(room_with(cluster=0, area=0, sky_camera=True), DecompileOptions(visclusters=True))
    assert len(_visclusters(vmf)) == 1


def test_a_solid_leaf_with_a_cluster_means_no_clusters_were_numbered():
    bsp = build_example_map()
    leafs = bsp.get_lump(LumpId.LEAFS).copy()
    leafs["cluster"][CEILING_LEAF] = 0  # as vbsp leaves them when the map leaks
    bsp.set_lump(LumpId.LEAFS, leafs)
    vmf, stats = build_vmf(BspFile.from_bytes(bsp.to_bytes()), DecompileOptions(visclusters=True))
    assert _visclusters(vmf) == []
    assert any("never numbered" in r for r in stats.not_rebuilt)


# ---- the corpus: the rule counted with a walk of the tree of our own ------------------------------
def _world_leaves(bsp: BspFile) -> list[int]:
    nodes = bsp.get_lump(LumpId.NODES)
    stack, seen, out = [int(bsp.get_lump(LumpId.MODELS)["headnode"][0])], set(), []
    while stack:
        n = stack.pop()
        if n < 0:
            out.append(-1 - n)
        elif n not in seen:
            seen.add(n)
            stack.extend(int(c) for c in nodes["children"][n])
    return out


def _leaf_of(bsp: BspFile, point: np.ndarray) -> int:
    nodes, planes = bsp.get_lump(LumpId.NODES), bsp.get_lump(LumpId.PLANES)
    n = int(bsp.get_lump(LumpId.MODELS)["headnode"][0])
    while n >= 0:
        plane = planes[int(nodes["planenum"][n])]
        n = int(nodes["children"][n][0 if float(np.dot(plane["normal"], point)) >= float(plane["dist"]) else 1])
    return -1 - n


def _expected_count(bsp: BspFile) -> int:
    leafs = bsp.get_lump(LumpId.LEAFS)
    area_bits = 0x1FFFF if leafs.dtype["area_flags"].itemsize == 4 else 0x1FF
    world = _world_leaves(bsp)
    if any(leafs["contents"][i] & 1 and leafs["cluster"][i] >= 0 for i in world):
        return 0  # never numbered (a leaked map)
    sky = {int(leafs["area_flags"][_leaf_of(bsp, np.array([float(v) for v in e["origin"].split()]))]) & area_bits
           for e in bsp.get_lump(LumpId.ENTITIES) if e.classname == "sky_camera"}
    members: dict[int, list[int]] = {}
    for i in world:
        if not leafs["contents"][i] & 1 and leafs["cluster"][i] >= 0:
            members.setdefault(int(leafs["cluster"][i]), []).append(i)
    return sum(1 for leaves in members.values()
               if len(leaves) > 1 and any(int(leafs["area_flags"][i]) & area_bits not in sky for i in leaves))


def test_corpus_visclusters_parse_check_and_count(map_path):
    text, stats = decompile_text(map_path, visclusters=True, check=True)
    assert stats.problems == []
    parsed = srctools.vmf.VMF.parse(srctools.keyvalues.Keyvalues.parse(text))
    written = [e for e in parsed.entities if e["classname"] == "func_viscluster"]
    with BspFile.open(map_path) as bsp:
        expected = _expected_count(bsp)
    assert len(written) == stats.visclusters == expected
    assert decompile_report(stats, map_path.stem)["reconstructed"]["visclusters"] == expected

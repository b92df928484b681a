"""Brush entities of a decompile: rotation rules, and the texture alignment a rotation keeps."""
from __future__ import annotations

import numpy as np

from sourcebsp.converters.vmf.decompile import ANGLES_ZEROED_CLASSES, MOVEDIR_CLASSES, rotation_rule
from sourcebsp.converters.vmf import DecompileOptions, build_vmf
from sourcebsp.examples.helpers import Box

from ._brush_entity_map import brush_entity_map
from ._vmf_reference import parse_vmf, polygons, side_plane

BAR = Box((-32.0, -8.0, -4.0), (32.0, 8.0, 4.0))  # long in x: a yaw of 90 makes it long in y


def _solid_corners(solid) -> np.ndarray:
    planes = [side_plane(s) for s in solid.sides]
    return np.vstack(polygons(np.array([p[0] for p in planes]), np.array([p[1] for p in planes])))


def _decompiled(options: DecompileOptions | None = None):
    bsp = brush_entity_map([("func_brush", (0.0, 64.0, 64.0), "0 90 0"),
                            ("func_door", (0.0, -64.0, 64.0), "0 90 0"),
                            ("func_illusionary", (-128.0, 0.0, 64.0), "0 90 0"),
                            ("func_brush", (128.0, 0.0, 64.0), None)], BAR)
    vmf, stats = build_vmf(bsp, options)
    parsed = parse_vmf(vmf.to_text())
    by_origin = {e["origin"]: e for e in parsed.entities if e.solids}
    return bsp, parsed, by_origin, stats


def test_rotated_brush_entity_is_turned_and_loses_its_angles():
    bsp, _, ents, stats = _decompiled()
    turned = ents["0 64 64"]
    corners = _solid_corners(turned.solids[0])
    # Yaw 90 turns x into y: the bar now runs along y, around its origin.
    assert np.allclose(corners.min(axis=0), [-8, 64 - 32, 60], atol=1e-3)
    assert np.allclose(corners.max(axis=0), [8, 64 + 32, 68], atol=1e-3)
    assert "angles" not in turned
    rules = {(c, rule) for c, _, rule in stats.entity_rotation}
    assert rules == {("func_brush", "rotated"), ("func_door", "movedir"), ("func_illusionary", "angles-zeroed")}


def test_rotation_keeps_each_corner_at_its_texture_coordinate():
    """A texel stays on the same corner: u = p . axis / scale + shift, before and after the turn."""
    bsp, _, ents, _ = _decompiled()
    texinfo = bsp.texinfo
    brushes, sides = bsp.brushes, bsp.brushsides
    model_brush = int(np.flatnonzero(brushes["numsides"] > 0)[-4])  # the first added bar's brush
    rotation = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])  # yaw 90
    origin = np.array([0, 64, 64.0])
    solid = ents["0 64 64"].solids[0]
    first = int(brushes["firstside"][model_brush])
    for side in solid.sides:
        n, _ = side_plane(side)
        n_model = rotation.T @ n
        row = next(r for r in range(first, first + 6)
                   if np.allclose(bsp.planes["normal"][sides["planenum"][r]], n_model, atol=1e-6))
        vecs = texinfo["texture_vecs"][sides["texinfo"][row]].astype(float)
        corner_model = np.array([-32.0, -8.0, -4.0]) if n_model @ [-1, -1, -1] > 0 else np.array([32.0, 8.0, 4.0])
        corner_world = rotation @ corner_model + origin
        for axis, vec in ((side.uaxis, vecs[0]), (side.vaxis, vecs[1])):
            mine = corner_world @ np.array(tuple(axis.vec())) / axis.scale + axis.offset
            theirs = corner_model @ vec[:3] + vec[3]
            assert abs(mine - theirs) < 1e-2


def test_movement_and_zeroed_classes_stay_as_stored_with_their_angles():
    _, _, ents, _ = _decompiled()
    for origin in ("0 -64 64", "-128 0 64"):
        ent = ents[origin]
        corners = _solid_corners(ent.solids[0])
        o = np.array([float(v) for v in origin.split()])
        assert np.allclose(corners.min(axis=0), o + [-32, -8, -4], atol=1e-3)
        assert ent["angles"] == "0 90 0"
    plain = _solid_corners(ents["128 0 64"].solids[0])
    assert np.allclose(plain.max(axis=0), [160, 8, 68], atol=1e-3)


def test_no_rotation_fix_keeps_solids_and_angles():
    _, _, ents, stats = _decompiled(DecompileOptions(rotation_fix=False))
    ent = ents["0 64 64"]
    corners = _solid_corners(ent.solids[0])
    assert np.allclose(corners.min(axis=0), [-32, 56, 60], atol=1e-3) and ent["angles"] == "0 90 0"
    assert ("func_brush", "*2", "kept") in stats.entity_rotation


def test_rotation_rules():
    assert rotation_rule("func_brush", np.array([0, 90, 0.0])) == "rotated"
    assert rotation_rule("FUNC_DOOR", np.array([0, 90, 0.0])) == "movedir"
    assert rotation_rule("func_brush", np.array([0, 360, 0.0])) == "none"
    assert rotation_rule("func_brush", None) == "none"
    assert rotation_rule("func_brush", np.array([0, 90, 0.0]), rotation_fix=False) == "kept"
    assert not MOVEDIR_CLASSES & ANGLES_ZEROED_CLASSES


def test_areaportals_without_data_get_no_made_up_geometry(corpus_file):
    """With the AREAPORTALS lump emptied, areaportal brushes stay what they are and nothing is invented."""
    import sourcebsp
    from sourcebsp.lump_ids import LumpId

    with sourcebsp.open(corpus_file("valvebsp_testmap.bsp")) as bsp:
        portals = bsp.areaportals
        brushes = int(np.count_nonzero(bsp.brushes["contents"] & 0x8000))  # CONTENTS_AREAPORTAL
        bsp.set_lump(LumpId.AREAPORTALS, portals[:0])
        vmf, stats = build_vmf(bsp)
    ents = [e for e in vmf.entities if e.classname == "func_areaportal"]
    solids = [s for e in ents for s in e.solids]
    assert len(solids) == brushes
    assert {side.material.lower() for s in solids for side in s.sides} == {"tools/toolsareaportal"}
    # The lump's func_areaportal entities get one brush each (vbsp's order, see
    # test_decompile_areaportals): none is left without a solid, no entity is made for a brush.
    assert len(ents) == brushes and all(len(e.solids) == 1 for e in ents)
    assert stats.not_rebuilt == [] and stats.areaportal_owners["order"] == brushes


def test_format_sets_the_output_separator(corpus_file):
    """--format old writes outputs with commas (Hammer 4.x), new with ESC; the fields stay the same."""
    from sourcebsp.codecs.entities import Output
    from sourcebsp.converters.vmf import decompile_text

    for name in ("l4d2_map_cannals_escape01.bsp", "css_de_rats.bsp"):
        path = corpus_file(name)
        texts = {fmt: decompile_text(path, io_format=fmt)[0] for fmt in ("map", "old", "new")}
        from srctools.keyvalues import Keyvalues

        def connections(text):
            return [(kv.real_name, kv.value) for block in Keyvalues.parse(text).find_all("entity")
                    for sub in block.find_all("connections") for kv in sub]

        stored, old, new = (connections(texts[f]) for f in ("map", "old", "new"))
        assert stored and len(stored) == len(old) == len(new)
        for (k, v), (_, o), (_, n) in zip(stored, old, new):
            fields = Output.parse(k, v)
            assert "\x1b" not in o or any("," in f for f in v.split(fields.separator))
            assert n.split("\x1b") == v.split(fields.separator)
            assert Output.parse(k, o).target == Output.parse(k, n).target == fields.target
